/**
 * @module Unpacking an uploaded tar or tar.gz into a new folder, streamed to disk (SERVICE.md §3).
 * Every decompressed byte that reaches the tar parser is counted (headers, padding and zeros
 * included), as is the ratio of decompressed to uploaded bytes, so a gzip bomb stops within its
 * first megabytes. Refused with a clear error, nothing written outside the folder: absolute paths,
 * `..`, paths more than MAX_ENTRY_DEPTH levels deep, entries under a link, links that point out or
 * through another link, hard links, devices, duplicate entries, too many entries (the folders an
 * entry's name implies included), too many bytes, a size field that does not read as a size. It
 * ends by the caller's deadline too, whatever the archive holds: the parser is stopped, the entry
 * being written with it.
 */
import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { chmod, chown, lchown, lstat, mkdir, realpath, symlink } from "node:fs/promises";
import { join, posix, resolve, sep } from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { extract, type Header } from "tar-stream";
import { BadRequestError, HookboxError } from "./errors.js";
import { HOOK_GID, HOOK_UID } from "./names.js";
import { blocksOf, checkLinks, FOLDER_BYTES, readTree } from "./workspace-tree.js";

export interface UnpackLimits {
  /** @default 10 000 ([server] max_workspace_entries) */
  maxEntries: number;
  /** decompressed bytes the tar parser may see, headers and padding included; @default 4 × [server] max_body_bytes */
  maxUnpackedBytes: number;
  /** decompressed bytes per uploaded byte, judged once UNPACK_RATIO_FLOOR_BYTES are decompressed; @default 200 ([server] max_unpack_ratio) */
  maxUnpackRatio: number;
}

/** 1 MiB — below it any ratio is fine: a small, very compressible archive is no bomb */
export const UNPACK_RATIO_FLOOR_BYTES = 1024 * 1024;
/** Linux's PATH_MAX: longer entry names and link targets are refused (they would be kept in memory) */
const MAX_NAME_BYTES = 4096;
/** @default 64 — deepest entry path, in components: each is a folder to make and check; deeper is refused (400 archive_refused) */
export const MAX_ENTRY_DEPTH = 64;

/**
 * 9 KiB — the most of one extended header: a pax header (`x`, or the global `g` that `git archive`
 * writes), a GNU long name (`L`) or long link target (`K`). A pax header holds a name and a link
 * target of MAX_NAME_BYTES each and a few short records; more is refused before it is decoded — a
 * 4 MiB one costs the parser half a second, and each later pax header copies every record of the
 * global one.
 */
export const MAX_META_HEADER_BYTES = 2 * MAX_NAME_BYTES + 1024;
/**
 * @default 64 — records in one pax header (path, linkpath, size, times, owner, a few extended
 * attributes): tar-stream decodes each, and copies every record of the global header into each
 * later pax header, so ten thousand headers of a thousand records cost the shared thread many
 * seconds. More is refused (400 archive_refused).
 */
export const MAX_PAX_RECORDS = 64;
/** tar-stream's extended-header types, as its headers name them */
const META_TYPES: ReadonlySet<string> = new Set(["pax-header", "pax-global-header", "gnu-long-path", "gnu-long-link-path"]);

/** gunzip's output chunks: fewer, larger chunks through the counter and the tar parser */
const GUNZIP_CHUNK_BYTES = 64 * 1024;

export interface Unpacked {
  digest: string;
  files: number;
  /** regular files' bytes together */
  bytes: number;
  /** folders made, explicit or implied by entry names; each reserved FOLDER_BYTES of the quota */
  folders: number;
  /** what it reserved of the quota: files in whole blocks, a block for each folder and link */
  charged: number;
}

const refuse = (name: string, why: string) => new BadRequestError(`archive entry ${JSON.stringify(name.slice(0, 200))}: ${why}`, "body", "archive_refused");
const tooLarge = (why: string) => new BadRequestError(`the archive ${why}`, "body", "archive_too_large");

/**
 * Unpacks `body` into the empty folder `dest`. `reserve` is told each file's size in whole blocks
 * (`blocksOf`), and FOLDER_BYTES for each folder and link, before it is made, and may refuse it (the
 * tenant's quota) by throwing. `deadline`: once it aborts, the unpack stops and throws its reason.
 */
export async function unpack(body: AsyncIterable<Uint8Array>, dest: string, limits: UnpackLimits, reserve: (bytes: number) => void, deadline?: AbortSignal): Promise<Unpacked> {
  deadline?.throwIfAborted();
  const hash = createHash("sha256");
  const rootReal = await realpath(dest);
  let charged = 0;
  const charge = (n: number) => {
    reserve(n);
    charged += n;
  };
  /** entries' paths, as digests (`nameKey`): ten thousand 4 KiB names would hold 40 MB for as long as an upload lasts */
  const seen = new Set<string>();
  /** folders (relative paths, as digests) made here or checked to be real folders: nothing in an unpack removes one or puts a link in its place */
  const folders = new Set<string>([nameKey("")]);
  let files = 0;
  let made = 0;
  let bytes = 0;
  let entries = 0;
  /** whether the archive named its root (`./`) yet */
  let rootNamed = false;
  let uploaded = 0;
  let unpacked = 0;

  // gzip or plain tar, told apart by the first two bytes; every byte goes through the digest.
  const iter = body[Symbol.asyncIterator]();
  // The first two bytes, however the body is cut into chunks (a one-byte first chunk included).
  const head: Uint8Array[] = [];
  let headBytes = 0;
  let ended = false;
  while (headBytes < 2) {
    const n = await iter.next();
    if (n.done) {
      ended = true;
      break;
    }
    head.push(n.value);
    headBytes += n.value.length;
  }
  const byteAt = (i: number): number | undefined => {
    for (const c of head) {
      if (i < c.length) return c[i];
      i -= c.length;
    }
    return undefined;
  };
  const gzip = byteAt(0) === 0x1f && byteAt(1) === 0x8b;
  const chunks = (async function* () {
    yield* head;
    if (ended) return;
    for (let n = await iter.next(); !n.done; n = await iter.next()) yield n.value;
  })();
  // Counted as the decompressor takes them, not as the network brings them: the ratio is of bytes actually inflated.
  const intake = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      uploaded += chunk.byteLength;
      hash.update(chunk);
      done(null, chunk);
    },
  });
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      unpacked += chunk.byteLength;
      if (unpacked > limits.maxUnpackedBytes) return done(tooLarge(`unpacks to more than ${limits.maxUnpackedBytes} bytes (4 × server.max_body_bytes)`));
      if (unpacked > UNPACK_RATIO_FLOOR_BYTES && unpacked > limits.maxUnpackRatio * uploaded)
        return done(tooLarge(`unpacks to more than ${limits.maxUnpackRatio} times its size (server.max_unpack_ratio)`));
      done(null, chunk);
    },
  });

  const countEntry = () => {
    entries++;
    if (entries > limits.maxEntries) throw new BadRequestError(`the archive has more than ${limits.maxEntries} entries`, "body", "archive_too_many_entries");
  };
  /**
   * The folder `rel`: made — a new entry unless the archive names it itself, charged FOLDER_BYTES
   * either way — or, when something is already there, checked with lstat to be a real folder.
   */
  const folder = async (entry: string, rel: string, named: boolean): Promise<void> => {
    const target = join(rootReal, rel);
    try {
      await mkdir(target);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const st = await lstat(target);
      if (st.isSymbolicLink()) throw refuse(entry, `${rel} is a symbolic link: nothing is unpacked through a link`);
      if (!st.isDirectory()) throw refuse(entry, `${rel} is not a directory`);
      folders.add(nameKey(rel));
      return;
    }
    folders.add(nameKey(rel));
    made++;
    if (!named) countEntry();
    charge(FOLDER_BYTES);
    await chown(target, HOOK_UID, HOOK_GID);
    await chmod(target, 0o755);
  };
  /**
   * The folder `rel` (an entry's parent) under the root, made where missing. Linear in the name:
   * one lookup when it is known, else one per level up to the deepest known folder; from there
   * down, each level is made or checked once — no link is ever followed.
   */
  const parentFolder = async (entry: string, rel: string): Promise<string> => {
    if (rel === "." || rel === "") return rootReal;
    const missing: number[] = [];
    for (let end = rel.length; end > 0 && !folders.has(nameKey(rel.slice(0, end))); end = rel.lastIndexOf("/", end - 1)) missing.push(end);
    for (let i = missing.length - 1; i >= 0; i--) await folder(entry, rel.slice(0, missing[i]), false);
    return join(rootReal, rel);
  };

  const ex = extract();
  guardMetaHeaders(ex, limits.maxEntries);
  const endBlocks = endBlocksOf(ex);
  /**
   * The current entry's work, and the first refusal of any: tar-stream may end (its pipeline
   * resolved) while the last entry is still being written — an archive without its end blocks
   * ends right after that entry's header — so the work is awaited, and its refusal thrown, before
   * the tree is judged.
   */
  let entryWork: Promise<void> = Promise.resolve();
  let refused: Error | undefined;
  /**
   * Aborted once the archive has failed (cut short, too large, the client gone): the entry being
   * written then stops too. Its stream, destroyed with the extractor — perhaps while its folder was
   * being made, before it was piped — would otherwise hold its pipeline, and the upload, for ever.
   */
  const failed = new AbortController();
  // The deadline stops the entry being written too, should it come once the parser is done.
  const stop = () => failed.abort();
  deadline?.addEventListener("abort", stop, { once: true });
  ex.on("entry", (header: Header, stream, next) => {
    // A refused archive destroys the extractor, which errors the entry's stream: the error is ours, already reported.
    stream.on("error", () => undefined);
    entryWork = (async () => {
      // tar-stream 3.2 reads a base-256 size whose first byte is not 0x80 or 0xFF as null, and its
      // entry then never ends: the upload would wait for it for ever.
      if (endBlocks.pastEnd()) throw refuse(header.name, PAST_END);
      const size = header.size;
      if (size === undefined || !Number.isSafeInteger(size) || size < 0) throw refuse(header.name, "invalid size field");
      const path = entryPath(header.name);
      // The archive's own root (`./`, as `tar -C dir .` writes it first): once, no entry of the
      // workspace; said again, it counts as one.
      if (path === "" && !rootNamed) {
        rootNamed = true;
        return stream.resume();
      }
      countEntry();
      if (path === "") return stream.resume();
      const key = nameKey(path);
      if (seen.has(key)) throw refuse(header.name, "duplicate entry");
      seen.add(key);
      const parent = await parentFolder(header.name, posix.dirname(path));
      const target = join(parent, posix.basename(path));
      switch (header.type) {
        case "directory":
          // Already counted as an entry; charged when made here, not when a file's name made it first.
          if (!folders.has(nameKey(path))) await folder(header.name, path, true);
          return stream.resume();
        case "file":
        case "contiguous-file": {
          if (bytes + size > limits.maxUnpackedBytes) throw tooLarge(`unpacks to more than ${limits.maxUnpackedBytes} bytes (4 × server.max_body_bytes)`);
          charge(blocksOf(size));
          bytes += size;
          files++;
          // "wx": O_CREAT|O_EXCL — never opens what is already there, a link included.
          await pipeline(stream, createWriteStream(target, { flags: "wx", mode: 0o644 }), { signal: failed.signal });
          await chown(target, HOOK_UID, HOOK_GID);
          await chmod(target, (header.mode ?? 0o644) & 0o111 ? 0o755 : 0o644);
          return;
        }
        case "symlink": {
          // Decided here by the text of the target; by where it physically resolves once the whole archive is unpacked.
          const link = header.linkname ?? "";
          if (link === "") throw refuse(header.name, "link with an empty target");
          if (link.includes("\0")) throw refuse(header.name, "NUL in the link target");
          // A path the file system takes is shorter than PATH_MAX, its NUL included.
          const linkBytes = Buffer.byteLength(link);
          if (linkBytes >= MAX_NAME_BYTES) throw refuse(header.name, `link target of ${linkBytes} bytes: at most ${MAX_NAME_BYTES - 1}`);
          if (posix.isAbsolute(link)) throw refuse(header.name, `link to an absolute path (${link}) is not accepted`);
          if (!inside(rootReal, resolve(parent, link))) throw refuse(header.name, `link points outside the workspace (${link})`);
          charge(FOLDER_BYTES);
          await symlink(link, target);
          await lchown(target, HOOK_UID, HOOK_GID);
          return stream.resume();
        }
        case "link":
          throw refuse(header.name, "hard links are not accepted");
        default:
          throw refuse(header.name, `${header.type ?? "unknown"} entries are not accepted`);
      }
    })().then(
      () => next(),
      (err: unknown) => {
        // What the file system refused is said of the entry, never as an archive that is not tar.
        const why = fsRefusal(err);
        const e = why !== undefined ? refuse(header.name, why) : err instanceof Error ? err : new Error(String(err));
        // Stopped because the archive failed: that failure is the one to report.
        if (!failed.signal.aborted) refused ??= e;
        ex.destroy(e);
      },
    );
  });

  const asBadArchive = (err: unknown): Error => {
    if (err instanceof HookboxError) return err;
    // A file system error's message names the host path it failed on: only its code is said.
    const fsErr = err as NodeJS.ErrnoException;
    const stored = storageFailure(fsErr);
    if (stored) return stored;
    const why = fsErr.syscall !== undefined ? `an entry could not be written (${fsErr.code ?? fsErr.syscall})` : fsErr.message.replaceAll(rootReal, "…");
    return new BadRequestError(`the body is not a tar or tar.gz archive: ${why}`, "body", "archive_invalid");
  };
  try {
    try {
      // The deadline destroys every stream of the pipeline, which then rejects at once.
      const options = deadline ? { signal: deadline } : {};
      if (gzip) await pipeline(Readable.from(chunks), intake, createGunzip({ chunkSize: GUNZIP_CHUNK_BYTES }), counter, ex, options);
      else await pipeline(Readable.from(chunks), intake, counter, ex, options);
    } catch (err) {
      failed.abort();
      await entryWork;
      // Stopped by the deadline (the parser destroyed): its reason, unless the archive was refused before.
      if (!(err instanceof HookboxError) && refused === undefined) deadline?.throwIfAborted();
      // The archive's own refusal (its size, its ratio) first: an entry cut short by it fails too, after it.
      throw asBadArchive(err instanceof HookboxError ? err : (refused ?? err));
    }
    await entryWork;
    if (refused) throw asBadArchive(refused);
    deadline?.throwIfAborted();
    // An archive of nothing at all — an empty body, or the end blocks a tar that failed writes — is
    // no workspace: stored, it would replace the last one with none, its guards gone. (An empty
    // folder's archive names its root: that one is stored.)
    if (entries === 0 && !rootNamed) throw new BadRequestError("the archive holds no entry (an empty body, or a tar of nothing: did the command that made it fail?): nothing was stored", "body", "archive_invalid");
    await checkLinks(await readTree(rootReal), rootReal);
    // (after its links are judged: a link out is refused as such)
    // Cut off between its entries (the command that made it killed, the pipe to the upload ended
    // early): what came reads as a smaller archive, which stored would replace the workspace without
    // the hook files that were still to come. Every tar ends in two blocks of zeros where the next
    // header would stand (zeros a file's own bytes end in are no end).
    if (endBlocks.pastEnd()) throw new BadRequestError(`the archive goes on ${PAST_END}`, "body", "archive_invalid");
    if (endBlocks.zeros() < TAR_END_BLOCKS) throw new BadRequestError("the archive ends without the two zero blocks that end a tar: it was cut off (did the command that made it fail?): nothing was stored", "body", "archive_invalid");
    return { digest: `sha256:${hash.digest("hex")}`, files, bytes, folders: made, charged };
  } finally {
    deadline?.removeEventListener("abort", stop);
  }
}

/** the blocks of zeros every tar ends in */
const TAR_END_BLOCKS = 2;
const PAST_END = "after the two zero blocks that end a tar, where tar stops reading (archives appended one to another?): nothing was stored";

/**
 * How many blocks of zeros the archive ends in where a header would stand: tar-stream reads such
 * a block as no header and goes on to the next (`_consumeHeader`, tar-stream 3.2, pinned); each
 * header it reads is seen here after that step, a block of zeros counted, any other header
 * starting the count again. (One step reads one header: the unpacker lets tar-stream go on to the
 * next entry only from a later turn — its work `.then(() => next())` —, never from inside this one.)
 * `pastEnd`: a header came after the end blocks, where tar stops reading; tar-stream reads on.
 */
function endBlocksOf(ex: ReturnType<typeof extract>): { zeros: () => number; pastEnd: () => boolean } {
  const inner = ex as unknown as { _header: Header | null; _locked: boolean; _consumeHeader: () => boolean };
  if (typeof inner._consumeHeader !== "function") throw new Error("tar-stream's header step is missing: hookbox cannot tell where an archive ends");
  const consume = inner._consumeHeader.bind(inner);
  let zeros = 0;
  let pastEnd = false;
  inner._consumeHeader = () => {
    // (locked: the step reads nothing until the entry before is done)
    if (inner._locked) return consume();
    // A header after the end blocks — another archive appended, say — is where tar stops reading:
    // set before the step, whose header (its entry) is seen inside it.
    const ended = zeros >= TAR_END_BLOCKS;
    const before = pastEnd;
    if (ended) pastEnd = true;
    const went = consume();
    zeros = inner._header === null ? zeros + 1 : 0;
    // (more zeros: the end's padding)
    if (ended && inner._header === null) pastEnd = before;
    return went;
  };
  return { zeros: () => zeros, pastEnd: () => pastEnd };
}

/**
 * Every extended header is judged before tar-stream decodes it: one past MAX_META_HEADER_BYTES, or
 * more of them than an archive of `maxEntries` entries needs (two each — a GNU long name and long
 * link target, or a pax header and one of those — and one global), is refused.
 * tar-stream reads such a header whole (up to 4 MiB) and then decodes it in one step; this is the
 * step it takes each one through (`_decodeLongHeader`, tar-stream 3.2, pinned), and an error thrown
 * there ends the archive as invalid input does.
 */
function guardMetaHeaders(ex: ReturnType<typeof extract>, maxEntries: number): void {
  const inner = ex as unknown as { _header: Header | null; _decodeLongHeader: (buf: Buffer) => void };
  if (typeof inner._decodeLongHeader !== "function") throw new Error("tar-stream's extended-header step is missing: hookbox cannot bound it");
  const decode = inner._decodeLongHeader.bind(inner);
  let seen = 0;
  inner._decodeLongHeader = (buf: Buffer) => {
    const type = inner._header?.type ?? "extended header";
    if (!META_TYPES.has(type)) return decode(buf);
    if (buf.length > MAX_META_HEADER_BYTES) throw refuse(inner._header?.name ?? "", `${type} of ${buf.length} bytes: more than ${MAX_META_HEADER_BYTES} are not accepted`);
    if (type.startsWith("pax") && recordsIn(buf) > MAX_PAX_RECORDS) throw refuse(inner._header?.name ?? "", `${type} of more than ${MAX_PAX_RECORDS} records is not accepted`);
    if (++seen > 2 * maxEntries + 1) throw new BadRequestError(`the archive has more than ${2 * maxEntries + 1} extended headers`, "body", "archive_too_many_entries");
    decode(buf);
  };
}

/**
 * The records of a pax header exactly as tar-stream's decoder (`decodePax`, tar-stream 3.2, pinned)
 * walks them — a length read as UTF-8 up to the first space, the record `length` bytes from its
 * start (a negative one: the last bytes of what is left), stopping where it stops (no length, no
 * `=`) — counted up to one past MAX_PAX_RECORDS. Its own steps, for the first records only.
 */
function recordsIn(header: Buffer): number {
  let buf = header;
  let n = 0;
  while (buf.length > 0 && n <= MAX_PAX_RECORDS) {
    let i = 0;
    while (i < buf.length && buf[i] !== 32) i++;
    const len = parseInt(buf.subarray(0, i).toString("utf8"), 10);
    if (!len) return n;
    if (buf.subarray(i + 1, len - 1).indexOf(61) === -1) return n;
    n++;
    buf = buf.subarray(len);
  }
  return n;
}

/** A name as the sets of one unpack keep it: a fixed-size digest, whatever the name's length. */
const nameKey = (name: string) => createHash("sha256").update(name).digest("base64");

/** A path inside the archive, normalised; refused when absolute or when it climbs out. */
function entryPath(name: string): string {
  if (Buffer.byteLength(name) > MAX_NAME_BYTES) throw refuse(name, `name longer than ${MAX_NAME_BYTES} bytes`);
  if (name.includes("\0")) throw refuse(name, "NUL in the name");
  if (posix.isAbsolute(name) || /^[A-Za-z]:/.test(name)) throw refuse(name, "absolute paths are not accepted");
  if (name.split("/").includes("..")) throw refuse(name, "'..' is not accepted");
  let normal = posix.normalize(name);
  let end = normal.length;
  while (end > 0 && normal[end - 1] === "/") end--;
  normal = normal.slice(0, end);
  if (normal === "." || normal === "") return "";
  normal = normal.startsWith("./") ? normal.slice(2) : normal;
  let depth = 1;
  for (let i = normal.indexOf("/"); i !== -1; i = normal.indexOf("/", i + 1)) depth++;
  if (depth > MAX_ENTRY_DEPTH) throw refuse(name, `more than ${MAX_ENTRY_DEPTH} levels deep`);
  if (normal.split("/").some((part) => Buffer.byteLength(part) > MAX_PART_BYTES)) throw refuse(name, `a part of the name is longer than ${MAX_PART_BYTES} bytes (NAME_MAX)`);
  return normal;
}

/** Linux's NAME_MAX: the most one part of a path may be */
const MAX_PART_BYTES = 255;

/**
 * The file system's own failures, whatever the archive holds: the service's data folder refused a
 * write (its permissions, a capability the service lacks), is full, read-only or failing, or the
 * process is out of files. Hookbox's to fix (500 `storage_failed`, its code said, never the host
 * path), not the client's archive — a 400 would send its user looking for what is wrong with it.
 */
const STORAGE_CODES = new Set(["EPERM", "EACCES", "ENOSPC", "EDQUOT", "EROFS", "EIO", "EMFILE", "ENFILE", "ENOMEM"]);

export function storageFailure(err: NodeJS.ErrnoException): HookboxError | undefined {
  if (err.syscall === undefined || !STORAGE_CODES.has(err.code ?? "")) return undefined;
  return new HookboxError(`hookbox could not store the workspace's files (${err.code} on ${err.syscall}): its data folder refused the write — the service's to fix, not the archive`, "storage_failed");
}

/**
 * Why the file system refused an entry for what the archive says (two entries of one name, a path
 * too long for it), in words with its code — never the host path it names. Undefined for anything
 * else (a full disk is the service's: `storageFailure`).
 */
function fsRefusal(err: unknown): string | undefined {
  switch ((err as NodeJS.ErrnoException).code) {
    case "EEXIST":
      return "something of that name is already there: the archive names it twice, as a folder and as a file or link (EEXIST)";
    case "ENOTDIR":
      return "a part of its path is a file, not a folder (ENOTDIR)";
    case "ENAMETOOLONG":
      return `its path is too long for the file system under the workspace's folder (ENAMETOOLONG; paths of about ${MAX_NAME_BYTES - 256} bytes fit)`;
    default:
      return undefined;
  }
}

function inside(root: string, path: string): boolean {
  return path === root || path.startsWith(root + sep);
}
