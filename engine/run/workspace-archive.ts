/**
 * @module A stored workspace as the tar a pre-started container unpacks into its own /workspace at
 * hand-over (handover.ts), so that one warm pool serves every workspace. Built once per stored
 * workspace from disk — readdir and lstat, files opened with O_NOFOLLOW and read no further than
 * their size, links kept as links (the store checked them) — a few at a time, tenants in turn
 * (fair-slots.ts), and kept in memory (archive-cache.ts). A workspace too large to stream is
 * `null`: it runs cold, on its overlay.
 */
import { constants } from "node:fs";
import { lstat, open, readdir, readlink, stat } from "node:fs/promises";
import { join, posix } from "node:path";
import { pack } from "tar-stream";
import { FairSlots, type SlotTurn } from "../fair-slots.js";
import { ARCHIVE_CACHE_BYTES, ARCHIVE_CACHE_ENTRIES, ArchiveCache, type Built } from "./archive-cache.js";
import { waitAtMost } from "./run-guard.js";

/** 2: archive builds running at once, all tenants together (each takes one of libuv's four threads while it reads). */
export const MAX_ARCHIVE_BUILDS_AT_ONCE = 2;

/** 16 MiB: past this a workspace runs cold on its copy-on-write overlay instead of being streamed. */
export const MAX_ARCHIVE_BYTES = 16 * 1024 * 1024;

export interface ArchiveOptions {
  /** @default MAX_ARCHIVE_BYTES */
  maxArchiveBytes?: number;
  /** @default ARCHIVE_CACHE_BYTES */
  maxCacheBytes?: number;
  /** @default ARCHIVE_CACHE_ENTRIES */
  maxCacheEntries?: number;
  /** @default MAX_ARCHIVE_BUILDS_AT_ONCE */
  buildsAtOnce?: number;
}

/** Who waits for an archive, and for how long. */
export interface ArchiveWait {
  /** whose workspace (the tenant): its builds take turns with other tenants', its archives are counted as its */
  party?: string;
  /** the longest to wait for a build (the hook's timeout); then null. @default no limit */
  waitMs?: number;
  /** stops the wait at once (the event was cancelled); then null */
  signal?: AbortSignal;
  /** the stored workspace's upload (WorkspaceStore's `version`): part of what the archive is known by */
  version?: string;
}

interface Build {
  /** gets waiting for it; at 0 before its turn, it never starts */
  waiters: number;
  turn: SlotTurn | undefined;
  done: Promise<{ archive: Built | null }>;
}

export class WorkspaceArchives {
  private readonly cache: ArchiveCache;
  private readonly building = new Map<string, Build>();
  private readonly turns: FairSlots;
  private readonly maxArchiveBytes: number;

  constructor(options: ArchiveOptions = {}) {
    this.maxArchiveBytes = options.maxArchiveBytes ?? MAX_ARCHIVE_BYTES;
    this.cache = new ArchiveCache(options.maxCacheBytes ?? ARCHIVE_CACHE_BYTES, options.maxCacheEntries ?? ARCHIVE_CACHE_ENTRIES);
    this.turns = new FairSlots(options.buildsAtOnce ?? MAX_ARCHIVE_BUILDS_AT_ONCE);
  }

  /**
   * The tar of `dir` (null: larger than `maxArchiveBytes`, or it or its unpacked footprint larger than `limitBytes`,
   * or not built within `wait`, or its build failed). A re-uploaded workspace is a new folder at the same path: its inode, ctime and
   * the upload's own name (`wait.version`) tell the two apart. A build waits for its turn (fair-slots.ts); one whose every waiter gave up before it is
   * dropped, never started. One that has started goes on and is kept: the next event of that workspace finds it.
   */
  async get(dir: string, limitBytes = Infinity, wait: ArchiveWait = {}): Promise<Buffer | null> {
    const st = await stat(dir);
    // The upload's own name where the store gives one: an inode a delete frees comes back at once,
    // and a ctime of whole seconds (some file systems') may too.
    const key = `${st.ino}:${st.ctimeMs}:${wait.version ?? ""}`;
    let archive = this.cache.get(dir, key)?.archive;
    if (archive === undefined) {
      const id = `${dir}\n${key}`;
      const build = this.building.get(id) ?? this.build(id, dir, key, wait.party ?? "");
      build.waiters++;
      const got = await waitAtMost(build.done, wait.waitMs ?? Infinity, wait.signal);
      build.waiters--;
      if (build.waiters === 0 && build.turn?.cancel()) this.building.delete(id);
      if (!got) return null;
      archive = got.archive;
    }
    return archive && Math.max(archive.tar.length, archive.footprint) <= limitBytes ? archive.tar : null;
  }

  /** A build of `dir` waiting for `party`'s turn; kept once built. */
  private build(id: string, dir: string, key: string, party: string): Build {
    let settle!: (built: { archive: Built | null }) => void;
    let fail!: (err: unknown) => void;
    const done = new Promise<{ archive: Built | null }>((resolve, reject) => ((settle = resolve), (fail = reject)));
    // Its waiters may all have gone by the time it fails.
    done.catch(() => undefined);
    const build: Build = { waiters: 0, turn: undefined, done };
    this.building.set(id, build);
    build.turn = this.turns.enter(party, async () => {
      // Counted as what it may grow to from its start: builds running never push the cache past its bytes.
      this.cache.hold(party, this.maxArchiveBytes);
      try {
        const archive = await buildArchive(dir, this.maxArchiveBytes);
        this.cache.hold(party, -this.maxArchiveBytes);
        this.cache.keep(dir, { key, party, archive });
        settle({ archive });
      } catch (err) {
        this.cache.hold(party, -this.maxArchiveBytes);
        fail(err);
      } finally {
        this.building.delete(id);
      }
    });
    return build;
  }
}

/**
 * What tmpfs gives a file at least: a page for any non-empty one, and for a link whose target is
 * too long to sit in its inode. A workspace of 16 000 one-byte files is 16 MB of tar but 64 MB of
 * tmpfs. @default 4 KiB (a 64 KiB-page kernel only makes this an underestimate by the page ratio)
 */
export const TMPFS_PAGE_BYTES = 4096;
/** Link targets at least this long take a page of their own on tmpfs. */
const INLINE_LINK_CHARS = 60;
const pages = (bytes: number) => Math.ceil(bytes / TMPFS_PAGE_BYTES) * TMPFS_PAGE_BYTES;

/**
 * The tar of `root`'s contents (not `root` itself); null once it, or what it will take unpacked on
 * tmpfs (`TMPFS_PAGE_BYTES` rounding), grows past `maxBytes`.
 */
export async function buildArchive(root: string, maxBytes: number): Promise<Built | null> {
  const tar = pack();
  const chunks: Buffer[] = [];
  let bytes = 0;
  let footprint = 0;
  tar.on("data", (c: unknown) => { chunks.push(c as Buffer); bytes += (c as Buffer).length; });
  const ended = new Promise<void>((resolve, reject) => { tar.on("end", resolve); tar.on("error", reject); });
  const add = (header: Parameters<typeof tar.entry>[0], body?: Buffer) =>
    new Promise<void>((resolve, reject) => tar.entry(header, body ?? Buffer.alloc(0), (err) => (err ? reject(err) : resolve())));
  const pending: string[] = [""];
  for (let rel = pending.pop(); rel !== undefined; rel = pending.pop()) {
    for (const entry of await readdir(join(root, rel), { withFileTypes: true })) {
      const name = rel ? posix.join(rel, entry.name) : entry.name;
      const at = join(root, name);
      const st = await lstat(at);
      // No setuid, setgid or sticky bits; the hook's user owns everything it unpacks.
      const mode = st.mode & 0o777;
      if (entry.isDirectory()) {
        await add({ name, type: "directory", mode: mode | 0o700, mtime: st.mtime });
        pending.push(name);
      } else if (entry.isSymbolicLink()) {
        const linkname = await readlink(at);
        if (linkname.length >= INLINE_LINK_CHARS) footprint += TMPFS_PAGE_BYTES;
        await add({ name, type: "symlink", linkname, mode: 0o777, mtime: st.mtime });
      } else if (entry.isFile()) {
        footprint += pages(st.size);
        if (bytes + st.size > maxBytes || footprint > maxBytes) return null;
        await add({ name, type: "file", mode, mtime: st.mtime }, await readBounded(at, st.size));
      }
      if (bytes > maxBytes || footprint > maxBytes) return null;
    }
  }
  tar.finalize();
  await ended;
  return bytes > maxBytes ? null : { tar: Buffer.concat(chunks), footprint };
}

/** At most `size` bytes of a regular file, never through a link. */
async function readBounded(path: string, size: number): Promise<Buffer> {
  const file = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const buf = Buffer.alloc(size);
    let got = 0;
    while (got < size) {
      const { bytesRead } = await file.read(buf, got, size - got, got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return buf.subarray(0, got);
  } finally {
    await file.close();
  }
}
