/**
 * @module Per-event traces (kept `retentionMs`, at most `maxEvents` and `maxBytes` together, in
 * `data_dir/traces`, surviving a restart): what trace-content.ts keeps of each event, redacted and
 * capped. Tenant-scoped reads, paged listing, live subscription.
 */
import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DEFAULT_TRACE_LIMITS, type EventResult, type TraceLimits } from "../../engine/index.js";
import { hooksOf, summaryOf, type StoredTrace, type TraceSummary } from "./trace-content.js";

export type { StoredHook, StoredTrace, TraceSummary } from "./trace-content.js";

export interface TraceQuery {
  session_id?: string;
  decision?: "allow" | "block" | "ask" | "none";
  /** epoch ms */
  since?: number;
  limit?: number;
  cursor?: string;
}

interface Entry {
  tenantKey: string;
  summary: TraceSummary;
  timeMs: number;
  bytes: number;
  file: string;
}

export class TraceStore {
  private entries: Entry[] = [];
  private bytes = 0;
  private readonly listeners = new Map<string, Set<(s: TraceSummary) => void>>();
  /** traces accepted but not yet on disk: written one after another, off the answer's path */
  private readonly pending = new Map<string, () => StoredTrace>();
  private writing: Promise<void> = Promise.resolve();
  private readonly madeDirs = new Set<string>();

  constructor(
    private readonly dir: string,
    private readonly limits: TraceLimits = DEFAULT_TRACE_LIMITS,
    private readonly onWriteError: (err: unknown) => void = () => undefined,
  ) {}

  private key(tenant: string): string {
    return createHash("sha256").update(tenant).digest("hex").slice(0, 16);
  }

  /** Reads what earlier runs stored, dropping what has expired since. */
  async load(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const loaded: Entry[] = [];
    for (const tenantKey of await readdir(this.dir)) {
      for (const name of await readdir(join(this.dir, tenantKey)).catch(() => [] as string[])) {
        if (!name.endsWith(".json")) continue;
        const file = join(this.dir, tenantKey, name);
        try {
          const text = await readFile(file, "utf8");
          const trace = JSON.parse(text) as StoredTrace;
          loaded.push({ tenantKey, summary: summarize(trace), timeMs: Date.parse(trace.time), bytes: Buffer.byteLength(text), file });
        } catch {
          await rm(file, { force: true });
        }
      }
    }
    this.entries = loaded.sort((a, b) => a.timeMs - b.timeMs);
    this.bytes = loaded.reduce((n, e) => n + e.bytes, 0);
    await this.sweep();
  }

  /**
   * Records an event. Its summary is listed and sent to followers at once; the full trace (the
   * hooks' input and output, redacted) is built and written after the answer, off its path, and
   * read from memory until it is on disk.
   */
  async add(tenant: { name: string; traceToolInput: boolean }, result: EventResult, extra: { workspace?: string; durationMs: number; cancelled: boolean }): Promise<TraceSummary> {
    const summary = summaryOf(result, extra);
    let built: StoredTrace | undefined;
    const build = () => (built ??= { ...summary, tenant: tenant.name, hooks: hooksOf(result, tenant.traceToolInput, this.limits.captureBytes) });
    const tenantKey = this.key(tenant.name);
    const file = join(this.dir, tenantKey, `${summary.event_id}.json`);
    const entry: Entry = { tenantKey, summary, timeMs: Date.parse(summary.time), bytes: 0, file };
    this.entries.push(entry);
    this.pending.set(file, build);
    this.writing = this.writing.then(async () => {
      try {
        if (!this.madeDirs.has(tenantKey)) {
          await mkdir(join(this.dir, tenantKey), { recursive: true });
          this.madeDirs.add(tenantKey);
        }
        if (!this.entries.includes(entry)) return; // swept before it was written
        const text = JSON.stringify(build());
        await writeFile(file, text);
        entry.bytes = Buffer.byteLength(text);
        this.bytes += entry.bytes;
        await this.sweep();
      } finally {
        this.pending.delete(file);
      }
    });
    this.writing = this.writing.catch(this.onWriteError);
    for (const listener of this.listeners.get(tenantKey) ?? []) listener(summary);
    return summary;
  }

  /** Resolves when every trace accepted so far is on disk. */
  flush(): Promise<void> {
    return this.writing;
  }

  private live(e: Entry, nowMs = Date.now()): boolean {
    return nowMs - e.timeMs <= this.limits.retentionMs;
  }

  async get(tenant: string, eventId: string): Promise<StoredTrace | undefined> {
    const tenantKey = this.key(tenant);
    const entry = this.entries.find((e) => e.tenantKey === tenantKey && e.summary.event_id === eventId && this.live(e));
    if (!entry) return undefined;
    return this.pending.get(entry.file)?.() ?? (JSON.parse(await readFile(entry.file, "utf8")) as StoredTrace);
  }

  /** Newest first, `limit` at a time; `next_cursor` pages on. */
  list(tenant: string, q: TraceQuery): { events: TraceSummary[]; next_cursor: string | null } {
    const tenantKey = this.key(tenant);
    const limit = Math.min(Math.max(q.limit ?? 50, 1), 500);
    const [beforeMs, beforeId] = q.cursor ? Buffer.from(q.cursor, "base64url").toString().split("|") : [];
    const out: Entry[] = [];
    for (let i = this.entries.length - 1; i >= 0 && out.length <= limit; i--) {
      const e = this.entries[i]!;
      if (e.tenantKey !== tenantKey || !this.live(e)) continue;
      if (beforeMs !== undefined && (e.timeMs > Number(beforeMs) || (e.timeMs === Number(beforeMs) && e.summary.event_id >= beforeId!))) continue;
      if (q.session_id !== undefined && e.summary.session_id !== q.session_id) continue;
      if (q.decision !== undefined && (e.summary.decision ?? "none") !== q.decision) continue;
      if (q.since !== undefined && e.timeMs < q.since) break;
      out.push(e);
    }
    const more = out.length > limit;
    const page = out.slice(0, limit);
    const last = page.at(-1);
    return {
      events: page.map((e) => e.summary),
      next_cursor: more && last ? Buffer.from(`${last.timeMs}|${last.summary.event_id}`).toString("base64url") : null,
    };
  }

  /** Calls `fn` with each new trace of the tenant until the returned function is called. */
  subscribe(tenant: string, fn: (s: TraceSummary) => void): () => void {
    const tenantKey = this.key(tenant);
    let set = this.listeners.get(tenantKey);
    if (!set) this.listeners.set(tenantKey, (set = new Set()));
    set.add(fn);
    return () => set.delete(fn);
  }

  /** Drops what is past its retention, then the oldest until count and bytes fit. */
  async sweep(nowMs = Date.now()): Promise<number> {
    let drop = 0;
    while (
      drop < this.entries.length &&
      (nowMs - this.entries[drop]!.timeMs > this.limits.retentionMs || this.entries.length - drop > this.limits.maxEvents || this.bytes > this.limits.maxBytes)
    ) {
      this.bytes -= this.entries[drop]!.bytes;
      drop++;
    }
    const gone = this.entries.splice(0, drop);
    for (const e of gone) this.pending.delete(e.file);
    await Promise.all(gone.map((e) => rm(e.file, { force: true })));
    return gone.length;
  }
}

function summarize(t: StoredTrace): TraceSummary {
  const { hooks, tenant: _tenant, ...rest } = t;
  return { ...rest, hooks: hooks.length };
}
