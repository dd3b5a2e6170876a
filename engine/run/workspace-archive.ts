/**
 * @module A stored workspace as the tar a pre-started container unpacks into its own /workspace at
 * hand-over (handover.ts), so that one warm pool serves every workspace. Built once per stored
 * workspace from disk — readdir and lstat, files opened with O_NOFOLLOW and read no further than
 * their size, links kept as links (the store checked them) — and cached in memory, least recently
 * used first out. A workspace too large to stream is `null`: it runs cold, on its overlay.
 */
import { constants } from "node:fs";
import { lstat, open, readdir, readlink, stat } from "node:fs/promises";
import { join, posix } from "node:path";
import { pack } from "tar-stream";

/** 16 MiB: past this a workspace runs cold on its copy-on-write overlay instead of being streamed. */
export const MAX_ARCHIVE_BYTES = 16 * 1024 * 1024;
/** 256 MiB: the archives kept together; the least recently used go first. */
export const ARCHIVE_CACHE_BYTES = 256 * 1024 * 1024;
/** 4096: the workspaces whose archive (or that it is too large) is kept, whatever their bytes — a deleted one's entry goes with time */
export const ARCHIVE_CACHE_ENTRIES = 4096;

/** A workspace's tar, and what it takes unpacked on tmpfs (whole pages). */
export interface Built {
  tar: Buffer;
  footprint: number;
}

interface Entry {
  key: string;
  archive: Built | null;
}

export class WorkspaceArchives {
  /** dir → its archive (Map order: least recently used first) */
  private readonly cache = new Map<string, Entry>();
  private readonly building = new Map<string, Promise<Built | null>>();
  private cachedBytes = 0;

  constructor(private readonly maxArchiveBytes = MAX_ARCHIVE_BYTES, private readonly maxCacheBytes = ARCHIVE_CACHE_BYTES) {}

  /**
   * The tar of `dir` (null: larger than `maxArchiveBytes`, or it or its unpacked footprint larger than `limitBytes`). A
   * re-uploaded workspace is a new folder at the same path: its inode and ctime tell the two apart.
   */
  async get(dir: string, limitBytes = Infinity): Promise<Buffer | null> {
    const st = await stat(dir);
    const key = `${st.ino}:${st.ctimeMs}`;
    const hit = this.cache.get(dir);
    let archive: Built | null;
    if (hit?.key === key) {
      this.cache.delete(dir);
      this.cache.set(dir, hit);
      archive = hit.archive;
    } else {
      const id = `${dir}\n${key}`;
      let pending = this.building.get(id);
      if (!pending) {
        pending = buildArchive(dir, this.maxArchiveBytes).finally(() => this.building.delete(id));
        this.building.set(id, pending);
        void pending.then((built) => this.keep(dir, { key, archive: built }), () => undefined);
      }
      archive = await pending;
    }
    return archive && Math.max(archive.tar.length, archive.footprint) <= limitBytes ? archive.tar : null;
  }

  private keep(dir: string, entry: Entry): void {
    const old = this.cache.get(dir);
    if (old) this.cachedBytes -= old.archive?.tar.length ?? 0;
    this.cache.delete(dir);
    this.cache.set(dir, entry);
    this.cachedBytes += entry.archive?.tar.length ?? 0;
    for (const [k, e] of this.cache) {
      if (this.cachedBytes <= this.maxCacheBytes && this.cache.size <= ARCHIVE_CACHE_ENTRIES) break;
      this.cache.delete(k);
      this.cachedBytes -= e.archive?.tar.length ?? 0;
    }
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
