/**
 * @module Unpacking an uploaded tar or tar.gz into a new folder, streamed to disk (SERVICE.md §3).
 * Every decompressed byte that reaches the tar parser is counted (headers, padding and zeros
 * included), as is the ratio of decompressed to uploaded bytes, so a gzip bomb stops within its
 * first megabytes. Refused with a clear error, nothing written outside the folder: absolute paths,
 * `..`, links that point out or through another link, hard links, devices, duplicate entries, too
 * many entries, too many bytes.
 */
import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { chmod, chown, lchown, lstat, mkdir, realpath, stat, symlink } from "node:fs/promises";
import { join, posix, relative, resolve, sep } from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { extract, type Header } from "tar-stream";
import { BadRequestError, HookboxError } from "./errors.js";
import { HOOK_GID, HOOK_UID } from "./names.js";
import { checkLinks, readTree } from "./workspace-tree.js";

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
/** gunzip's output chunks: fewer, larger chunks through the counter and the tar parser */
const GUNZIP_CHUNK_BYTES = 64 * 1024;

export interface Unpacked {
  digest: string;
  files: number;
  bytes: number;
}

const refuse = (name: string, why: string) => new BadRequestError(`archive entry ${JSON.stringify(name.slice(0, 200))}: ${why}`, "body", "archive_refused");
const tooLarge = (why: string) => new BadRequestError(`the archive ${why}`, "body", "archive_too_large");

/**
 * Unpacks `body` into the empty folder `dest`. `reserve` is told each file's size before it is
 * written and may refuse it (the tenant's quota) by throwing.
 */
export async function unpack(body: AsyncIterable<Uint8Array>, dest: string, limits: UnpackLimits, reserve: (bytes: number) => void): Promise<Unpacked> {
  const hash = createHash("sha256");
  const rootReal = await realpath(dest);
  const seen = new Set<string>();
  let files = 0;
  let bytes = 0;
  let entries = 0;
  let uploaded = 0;
  let unpacked = 0;

  // gzip or plain tar, told apart by the first two bytes; every byte goes through the digest.
  const iter = body[Symbol.asyncIterator]();
  const first = await iter.next();
  const gzip = !first.done && first.value[0] === 0x1f && first.value[1] === 0x8b;
  const chunks = (async function* () {
    for (let n = first; !n.done; n = await iter.next()) yield n.value;
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

  const ex = extract();
  ex.on("entry", (header: Header, stream, next) => {
    // A refused archive destroys the extractor, which errors the entry's stream: the error is ours, already reported.
    stream.on("error", () => undefined);
    void (async () => {
      entries++;
      if (entries > limits.maxEntries) throw new BadRequestError(`the archive has more than ${limits.maxEntries} entries`, "body", "archive_too_many_entries");
      const path = entryPath(header.name);
      if (path === "") return stream.resume();
      if (seen.has(path)) throw refuse(header.name, "duplicate entry");
      seen.add(path);
      const parent = await mkdirInside(rootReal, posix.dirname(path));
      const target = join(parent, posix.basename(path));
      switch (header.type) {
        case "directory":
          await ensureDir(rootReal, target);
          return stream.resume();
        case "file":
        case "contiguous-file": {
          const size = header.size ?? 0;
          if (bytes + size > limits.maxUnpackedBytes) throw tooLarge(`unpacks to more than ${limits.maxUnpackedBytes} bytes (4 × server.max_body_bytes)`);
          reserve(size);
          bytes += size;
          files++;
          // "wx": O_CREAT|O_EXCL — never opens what is already there, a link included.
          await pipeline(stream, createWriteStream(target, { flags: "wx", mode: 0o644 }));
          await chown(target, HOOK_UID, HOOK_GID);
          await chmod(target, (header.mode ?? 0o644) & 0o111 ? 0o755 : 0o644);
          return;
        }
        case "symlink": {
          // Decided here by the text of the target; by where it physically resolves once the whole archive is unpacked.
          const link = header.linkname ?? "";
          if (Buffer.byteLength(link) > MAX_NAME_BYTES) throw refuse(header.name, `link target longer than ${MAX_NAME_BYTES} bytes`);
          if (posix.isAbsolute(link)) throw refuse(header.name, `link to an absolute path (${link}) is not accepted`);
          if (!inside(rootReal, resolve(parent, link))) throw refuse(header.name, `link points outside the workspace (${link})`);
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
      (err: unknown) => ex.destroy(err instanceof Error ? err : new Error(String(err))),
    );
  });

  try {
    if (gzip) await pipeline(Readable.from(chunks), intake, createGunzip({ chunkSize: GUNZIP_CHUNK_BYTES }), counter, ex);
    else await pipeline(Readable.from(chunks), intake, counter, ex);
  } catch (err) {
    if (err instanceof HookboxError) throw err;
    throw new BadRequestError(`the body is not a tar or tar.gz archive: ${(err as Error).message}`, "body", "archive_invalid");
  }
  await checkLinks(await readTree(rootReal));
  return { digest: `sha256:${hash.digest("hex")}`, files, bytes };
}

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
  return normal.startsWith("./") ? normal.slice(2) : normal;
}

function inside(root: string, path: string): boolean {
  return path === root || path.startsWith(root + sep);
}

/** A folder of the archive: created, or one already there that is a real folder (never a link, which chown would follow). */
async function ensureDir(rootReal: string, target: string): Promise<void> {
  try {
    await mkdir(target);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    if ((await lstat(target)).isDirectory()) return;
    throw refuse(relative(rootReal, target), "is already there and is not a directory");
  }
  await chown(target, HOOK_UID, HOOK_GID);
  await chmod(target, 0o755);
}

/** Creates `rel` under the root; refuses when, through links, it would land outside. */
async function mkdirInside(rootReal: string, rel: string): Promise<string> {
  let at = rootReal;
  if (rel === "." || rel === "") return at;
  for (const part of rel.split("/")) {
    const next = join(at, part);
    const st = await stat(next).catch(() => undefined);
    if (!st) {
      await mkdir(next);
      await chown(next, HOOK_UID, HOOK_GID);
      await chmod(next, 0o755);
    } else if (!st.isDirectory()) {
      throw refuse(rel, `${relative(rootReal, next)} is not a directory`);
    }
    at = await realpath(next);
    if (!inside(rootReal, at)) throw refuse(rel, "a link on its path points outside the workspace");
  }
  return at;
}
