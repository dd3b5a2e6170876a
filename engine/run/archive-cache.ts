/**
 * @module The workspace archives kept in memory (workspace-archive.ts) and what the builds running
 * may grow to, within one budget of bytes. Over it, the tenant holding the most gives up its least
 * recently used archive: a tenant cycling through its workspaces pushes out its own, another
 * tenant's only while that one holds more — and a lone tenant may use it all. The count of entries
 * is shared the same way: over it, the tenant with the most gives up its least recently used.
 */

/**
 * 256 MiB: the archives kept and the builds running, together (a build counts as `maxArchiveBytes`,
 * what it may grow to, from its start to its end).
 */
export const ARCHIVE_CACHE_BYTES = 256 * 1024 * 1024;
/**
 * 4096: the workspaces whose archive (or that it is too large) is kept, whatever their bytes — a
 * deleted one's entry goes with time, its tenant's first
 */
export const ARCHIVE_CACHE_ENTRIES = 4096;

/** A workspace's tar, and what it takes unpacked on tmpfs (whole pages). */
export interface Built {
  tar: Buffer;
  footprint: number;
}

export interface Kept {
  /** which upload of the workspace (its folder's inode and ctime) */
  key: string;
  /** whose workspace (the tenant) */
  party: string;
  /** null: too large to stream */
  archive: Built | null;
}

interface Holder {
  /** its archives kept and its builds running */
  bytes: number;
  /** all its entries, least recently used first */
  all: Map<string, Kept>;
  /** its archives that hold bytes, least recently used first */
  kept: Map<string, Kept>;
}

const bytesOf = (k: Kept) => k.archive?.tar.length ?? 0;

export class ArchiveCache {
  /** dir → what is kept of it (Map order: least recently used first) */
  private readonly entries = new Map<string, Kept>();
  private readonly holders = new Map<string, Holder>();
  private heldBytes = 0;

  constructor(
    private readonly maxBytes = ARCHIVE_CACHE_BYTES,
    private readonly maxEntries = ARCHIVE_CACHE_ENTRIES,
  ) {}

  /** What is kept of `dir`'s upload `key`, now the most recently used; undefined when nothing is. */
  get(dir: string, key: string): Kept | undefined {
    const hit = this.entries.get(dir);
    if (hit?.key !== key) return undefined;
    this.entries.delete(dir);
    this.entries.set(dir, hit);
    const h = this.holders.get(hit.party);
    for (const m of h ? [h.all, h.kept] : []) if (m.delete(dir)) m.set(dir, hit);
    return hit;
  }

  keep(dir: string, entry: Kept): void {
    const old = this.entries.get(dir);
    if (old) this.drop(dir, old);
    this.entries.set(dir, entry);
    const bytes = bytesOf(entry);
    const h = this.holder(entry.party);
    h.all.set(dir, entry);
    if (bytes > 0) h.kept.set(dir, entry);
    this.count(entry.party, bytes);
    this.makeRoom();
  }

  /** Counts `bytes` more (or fewer) for `party` — a build running — making room when more. */
  hold(party: string, bytes: number): void {
    this.count(party, bytes);
    if (bytes > 0) this.makeRoom();
  }

  private count(party: string, bytes: number): void {
    const h = this.holder(party);
    h.bytes += bytes;
    this.heldBytes += bytes;
    if (h.bytes === 0 && h.all.size === 0) this.holders.delete(party);
  }

  private holder(party: string): Holder {
    let h = this.holders.get(party);
    if (!h) this.holders.set(party, (h = { bytes: 0, all: new Map(), kept: new Map() }));
    return h;
  }

  private drop(dir: string, entry: Kept): void {
    this.entries.delete(dir);
    const h = this.holders.get(entry.party);
    h?.all.delete(dir);
    h?.kept.delete(dir);
    this.count(entry.party, -bytesOf(entry));
  }

  /**
   * Over the entries, the least recently used of the tenant with the most go; over the bytes, the
   * archive the largest holder used least recently.
   */
  private makeRoom(): void {
    while (this.entries.size > this.maxEntries) {
      let most: Holder | undefined;
      for (const h of this.holders.values()) if (!most || h.all.size > most.all.size) most = h;
      const [dir, entry] = most!.all.entries().next().value!;
      this.drop(dir, entry);
    }
    while (this.heldBytes > this.maxBytes) {
      let most: Holder | undefined;
      for (const h of this.holders.values()) if (h.kept.size > 0 && (!most || h.bytes > most.bytes)) most = h;
      // Only builds running are left: they end soon, and give their bytes back.
      if (!most) return;
      const [dir, entry] = most.kept.entries().next().value!;
      this.drop(dir, entry);
    }
  }
}
