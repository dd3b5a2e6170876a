/**
 * @module Per-event traces (kept `retentionMs`, at most `maxEvents` and `maxBytes` per tenant, in
 * `data_dir/traces/<tenant key>`, surviving a restart): what trace-content.ts keeps of each event, redacted and
 * capped. Tenant-scoped reads, paged listing, live subscription.
 */
import { createHash } from "node:crypto";
import { mkdir, open, readdir, readFile, rm, unlink, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { BadRequestError, DEFAULT_TRACE_LIMITS, type EventResult, type TraceLimits } from "../../engine/index.js";
import { mapLimited } from "../../engine/map-limited.js";
import { NO_SESSION_ID } from "./sessions.js";
import { TraceFiles } from "./trace-files.js";
import { MAX_PENDING_TRACE_BYTES, outcomesOnly, summaryOf, traceHooksOf, traceText, type AnsweredOtherwise, type KeptFields, type StoredTrace, type TraceSummary } from "./trace-content.js";

export type { StoredHook, StoredTrace, TraceSummary } from "./trace-content.js";

/**
 * @default 256 — traces out to the writer's thread at once (TraceFiles): each holds its text until
 * it is written, so this bounds what the writer holds, however far behind the disk is.
 */
export const TRACE_WRITES_AT_ONCE = 256;
/** @default 16 MiB — and at most this much of their text (one event's trace may keep about 8 MiB) */
export const TRACE_WRITE_BYTES_AT_ONCE = 16 * 1024 * 1024;

/**
 * @default 4096 — kept summaries a listing looks at before it lets the event loop in: a filter that
 * matches nothing walks a tenant's whole shelf (up to MAX_TRACE_EVENTS), never in one go.
 */
export const TRACE_LIST_SLICE = 4096;

/** Stored trace files read at once at start-up (in the background: the service listens before). */
export const STORED_READS_AT_ONCE = 16;

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
  /** on disk; 0 until written */
  bytes: number;
  file: string;
  /** dropped from its shelf (expired or past a limit): not to be written, or to be removed */
  gone: boolean;
  /** its place in the shelf's order, which only grows: what a page's cursor names */
  seq: number;
}

/** The place a cursor names; one this service did not give is a 400. */
function cursorSeq(cursor: string): number {
  const m = /^s([0-9]{1,15})$/.exec(Buffer.from(cursor, "base64url").toString("latin1"));
  if (!m) throw new BadRequestError("cursor: not a next_cursor this service gave", "cursor");
  return Number(m[1]);
}

/**
 * One tenant's traces, oldest first: the limits apply to each shelf on its own. Those before
 * `head` are gone: a trace dropped is passed over, not moved out — the array is cut only once
 * half of it is gone, so a full shelf's drop of its oldest on every event costs no copy of the rest.
 */
interface Shelf {
  entries: Entry[];
  head: number;
  byId: Map<string, Entry>;
  bytes: number;
}

/** The shelf's traces not yet gone, oldest first (a copy). */
const kept = (shelf: Shelf): Entry[] => shelf.entries.slice(shelf.head);

/** What a dropped trace's place holds until its shelf's array is cut: nothing of the trace. */
const DROPPED: Entry = { tenantKey: "", summary: {} as TraceSummary, timeMs: 0, bytes: 0, file: "", gone: true, seq: 0 };

/** Gone places at the start of a shelf past which its array is cut (and past half of it). */
const SHELF_CUT_AT = 1024;

interface Pending {
  entry: Entry;
  /** what its event's parts it keeps until written hold (traceHooksOf), counted in its tenant's pending bytes */
  bytes: number;
  /** the trace's JSON, built once: for the writer and for every read until it is on disk */
  text: () => Promise<string>;
}

/** @default 50 — decisions a page of `GET /v1/events` lists when `limit` is not given */
export const LIST_PAGE_DEFAULT = 50;
/** @default 500 — the most a page lists, whatever `limit` asks: a page is built whole before it is sent */
export const LIST_PAGE_MAX = 500;

export class TraceStore {
  private readonly shelves = new Map<string, Shelf>();
  /**
   * Per tenant, the last place given to one of its traces: its own count (telling nothing of other
   * tenants'), kept when its shelf empties so that a cursor given before still pages back from it.
   */
  private readonly places = new Map<string, number>();
  private nextPlace(tenantKey: string): number {
    const n = (this.places.get(tenantKey) ?? 0) + 1;
    this.places.set(tenantKey, n);
    return n;
  }
  private readonly listeners = new Map<string, Set<(s: TraceSummary) => void>>();
  /**
   * Traces accepted but not yet on disk, oldest first: written off the answer's path, by the
   * writer's thread (TraceFiles), a short window's at once. An entry dropped from its shelf leaves
   * this too, so what waits is bounded by the shelves' `maxEvents`, however far the writer falls behind.
   */
  private readonly pending = new Map<string, Pending>();
  /**
   * The same traces in each tenant's own line, the tenants in turn: the writer takes the oldest of
   * the tenant whose turn it is, which then goes to the back. One tenant's flood (ten thousand
   * traces, each of up to seconds of redaction) waits behind itself, never in front of another
   * tenant's trace — which would sit in memory meanwhile, and past MAX_PENDING_TRACE_BYTES lose its streams.
   */
  private readonly lines = new Map<string, Map<string, Pending>>();
  /**
   * Per tenant with traces waiting: the writer's time spent building its traces since it last had
   * none. The writer serves the tenant that has had the least: a tenant whose every trace takes a
   * third of a second to build (a thousand hooks of long names) gets no more of its time than one
   * whose traces take milliseconds, whose traces then never wait behind the other's long enough to
   * pass MAX_PENDING_TRACE_BYTES. A tenant that starts waiting starts level with the least served.
   */
  private readonly builtMs = new Map<string, number>();
  private writer: Promise<void> | undefined;
  /** per tenant: bytes its pending traces hold, bounded by MAX_PENDING_TRACE_BYTES */
  private readonly pendingBytes = new Map<string, number>();
  private readonly madeDirs = new Set<string>();
  private readonly files = new TraceFiles();

  constructor(
    private readonly dir: string,
    private readonly limits: TraceLimits = DEFAULT_TRACE_LIMITS,
    private readonly onWriteError: (err: unknown) => void = () => undefined,
  ) {}

  private readonly keys = new Map<string, string>();

  /** A tenant's folder name: its name hashed (tenant names come from the configuration, a bounded set). */
  private key(tenant: string): string {
    let key = this.keys.get(tenant);
    if (key === undefined) this.keys.set(tenant, (key = createHash("sha256").update(tenant).digest("hex").slice(0, 16)));
    return key;
  }

  private shelf(tenantKey: string): Shelf {
    let shelf = this.shelves.get(tenantKey);
    if (!shelf) this.shelves.set(tenantKey, (shelf = { entries: [], head: 0, byId: new Map(), bytes: 0 }));
    return shelf;
  }

  /** What earlier runs stored, read (`startLoading`): until then, reads of traces wait for it. */
  private loaded: Promise<void> = Promise.resolve();

  /** Reads what earlier runs stored, dropping what has expired since; resolves when it is all read. */
  async load(): Promise<void> {
    await this.startLoading();
    await this.loaded;
  }

  /**
   * Lists what earlier runs stored (names only: quick), then reads it in the background, at most
   * STORED_READS_AT_ONCE files at once — so that the service listens at once after a restart,
   * however many traces its tenants keep (10,000 of one tenant's took seconds). Events are
   * recorded meanwhile; listing, reading and opening a trace wait until the files are read (so a
   * cursor is only ever given over the whole shelf). Resolves once the names are listed: a file
   * written after that is a new event's, never read twice.
   */
  async startLoading(): Promise<void> {
    // A tenant's traces are its own: no other user of the machine reads them (0700 folders, 0600 files).
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    this.shelves.clear();
    const stored: { tenantKey: string; files: string[] }[] = [];
    for (const tenantKey of await readdir(this.dir)) {
      const files: string[] = [];
      for (const name of await readdir(join(this.dir, tenantKey)).catch(() => [] as string[])) {
        // A write a crash cut short: never a trace.
        if (name.endsWith(".json.part")) await removeFile(join(this.dir, tenantKey, name));
        else if (name.endsWith(".json")) files.push(join(this.dir, tenantKey, name));
      }
      if (files.length > 0) stored.push({ tenantKey, files });
    }
    // What cannot be read is said (onWriteError) and left out: reads never wait on a failure.
    this.loaded = this.readStored(stored).catch((err: unknown) => this.onWriteError(err));
  }

  /** Resolves when the traces stored before the start are read (startLoading); never rejects. */
  whenLoaded(): Promise<void> {
    return this.loaded;
  }

  /** The files listed at start-up, read and put on their shelves before what arrived since. */
  private async readStored(stored: { tenantKey: string; files: string[] }[]): Promise<void> {
    for (const { tenantKey, files } of stored) {
      const read = await mapLimited(files, STORED_READS_AT_ONCE, async (file): Promise<Entry | undefined> => {
        let text: string;
        try {
          text = await readFile(file, "utf8");
        } catch (err) {
          // Not read (out of descriptors, an I/O error): said and left, never taken for a bad trace.
          this.onWriteError(err);
          return undefined;
        }
        try {
          const trace = JSON.parse(text) as StoredTrace;
          const timeMs = Date.parse(trace.time);
          // A time no clock reads would keep the trace from ever being listed or expiring.
          if (!Number.isFinite(timeMs)) throw new Error("no time");
          return { tenantKey, summary: summarize(trace), timeMs, bytes: Buffer.byteLength(text), file, gone: false, seq: 0 };
        } catch {
          // Not a trace: removed — or, when even that fails (a folder of that name), said and left,
          // never the end of reading the others.
          await rm(file, { force: true }).catch((err: unknown) => this.onWriteError(err));
          return undefined;
        }
      });
      const shelf = this.shelf(tenantKey);
      const loaded = read.filter((e): e is Entry => e !== undefined && !shelf.byId.has(e.summary.event_id)).sort((a, b) => a.timeMs - b.timeMs);
      if (loaded.length === 0) {
        if (shelf.entries.length === shelf.head) this.shelves.delete(tenantKey);
        continue;
      }
      // Older than anything recorded since the start: first on the shelf. No cursor was given yet
      // (listing waited for this), so the shelf's places are given again, in its order.
      shelf.entries = [...loaded, ...kept(shelf)];
      shelf.head = 0;
      this.places.delete(tenantKey);
      for (const e of shelf.entries) e.seq = this.nextPlace(tenantKey);
      for (const e of loaded) shelf.byId.set(e.summary.event_id, e);
      shelf.bytes += loaded.reduce((n, e) => n + e.bytes, 0);
    }
    await this.sweep();
  }

  /**
   * Records an event. Its summary is listed and sent to followers at once; the full trace (the
   * hooks' input and output, redacted) is built and written after the answer, off its path, and
   * built from memory until it is on disk. Past `maxEvents`, the tenant's oldest trace goes at once.
   */
  async add(tenant: { name: string; traceToolInput: boolean }, result: EventResult, extra: { workspace?: string; durationMs: number; cancelled: boolean; answered?: AnsweredOtherwise | null; kept?: KeptFields }): Promise<TraceSummary> {
    const summary = summaryOf(result, extra);
    const tenantKey = this.key(tenant.name);
    // Only the hooks' part of the result is kept until written (the summary holds capped copies of
    // the rest: a 1 MiB session id is not kept whole); past the tenant's pending bytes, their outcomes only.
    const held = traceHooksOf(result);
    const waiting = this.pendingBytes.get(tenantKey) ?? 0;
    const over = waiting > 0 && waiting + held.bytes > MAX_PENDING_TRACE_BYTES;
    const hooks = over ? outcomesOnly(held.hooks) : held.hooks;
    const bytes = over ? 0 : held.bytes;
    this.pendingBytes.set(tenantKey, waiting + bytes);
    let built: Promise<string> | undefined;
    const text = () => (built ??= traceText(summary, tenant.name, hooks, tenant.traceToolInput, this.limits.captureBytes));
    const file = join(this.dir, tenantKey, `${summary.event_id}.json`);
    const shelf = this.shelf(tenantKey);
    const entry: Entry = { tenantKey, summary, timeMs: Date.parse(summary.time), bytes: 0, file, gone: false, seq: this.nextPlace(tenantKey) };
    shelf.entries.push(entry);
    shelf.byId.set(summary.event_id, entry);
    const pending: Pending = { entry, text, bytes };
    this.pending.set(file, pending);
    let line = this.lines.get(tenantKey);
    if (!line) {
      this.lines.set(tenantKey, (line = new Map()));
      this.builtMs.set(tenantKey, this.leastBuiltMs(tenantKey));
    }
    line.set(file, pending);
    const gone = this.trim(shelf, Date.now());
    if (gone.length > 0) void this.removeFiles(gone).catch(this.onWriteError);
    this.kick();
    for (const listener of this.listeners.get(tenantKey) ?? []) listener(summary);
    return summary;
  }

  private kick(): void {
    if (this.writer || this.pending.size === 0) return;
    this.writer = this.drain().finally(() => {
      this.writer = undefined;
      this.kick(); // accepted after the loop saw it empty
    });
  }

  /** The least build time of the tenants with traces waiting but `except` (0 when none waits). */
  private leastBuiltMs(except: string): number {
    let least: number | undefined;
    for (const [tenantKey, ms] of this.builtMs) if (tenantKey !== except && (least === undefined || ms < least)) least = ms;
    return least ?? 0;
  }

  /**
   * The next trace to write, taken off the turns (it stays pending, served from memory, until it is
   * written): the oldest of the tenant that has had the least of the writer's time (builtMs), which
   * then goes to the back of the turns (tenants level with it take turns).
   */
  private takeNext(): Pending | undefined {
    let chosen: string | undefined;
    let least = Infinity;
    for (const [tenantKey, line] of this.lines) {
      if (line.size === 0) continue;
      const ms = this.builtMs.get(tenantKey) ?? 0;
      if (ms < least) [chosen, least] = [tenantKey, ms];
    }
    if (chosen === undefined) return undefined;
    const line = this.lines.get(chosen)!;
    this.lines.delete(chosen);
    const next = first(line)!;
    line.delete(next.entry.file);
    if (line.size > 0) this.lines.set(chosen, line);
    return next;
  }

  /** `ms` of the writer's time went to building a trace of the tenant's: counted while it has traces waiting. */
  private charge(tenantKey: string, ms: number): void {
    if (this.lines.has(tenantKey)) this.builtMs.set(tenantKey, (this.builtMs.get(tenantKey) ?? 0) + ms);
    else this.builtMs.delete(tenantKey);
  }

  /**
   * Writes what is pending: each tenant's oldest first, the tenants in turn, each trace's text built
   * one after another, and at most TRACE_WRITES_AT_ONCE of them (TRACE_WRITE_BYTES_AT_ONCE of their
   * text) out to the writer's thread at once.
   */
  private async drain(): Promise<void> {
    const out = new Set<Promise<void>>();
    let outChars = 0;
    for (let next = this.takeNext(); next; next = this.takeNext()) {
      const { entry, text: textOf } = next;
      let handed = false;
      try {
        if (!this.madeDirs.has(entry.tenantKey)) {
          await mkdir(join(this.dir, entry.tenantKey), { recursive: true, mode: 0o700 });
          this.madeDirs.add(entry.tenantKey);
        }
        if (entry.gone) continue; // dropped before it was written
        const t0 = performance.now();
        const text = await textOf().finally(() => this.charge(entry.tenantKey, performance.now() - t0));
        if (entry.gone) continue;
        handed = true;
        outChars += text.length;
        const written = this.writeOne(entry, text).finally(() => {
          out.delete(written);
          outChars -= text.length;
        });
        out.add(written);
        while (out.size >= TRACE_WRITES_AT_ONCE || (outChars >= TRACE_WRITE_BYTES_AT_ONCE && out.size > 0)) await Promise.race(out);
      } catch (err) {
        // Its folder could not be made, or its text not built: not on disk, neither listed nor served.
        this.onWriteError(err);
        this.forget(entry);
      } finally {
        if (!handed) this.done(entry);
      }
    }
    await Promise.all(out);
  }

  /**
   * One trace, written whole or not at all: a write cut short (a full disk) is removed, and until
   * the write ends the trace is served from memory (it is still pending). One a crash cut short is
   * no JSON, and is removed when the files are read at the next start.
   */
  private async writeOne(entry: Entry, text: string): Promise<void> {
    let written = false;
    try {
      await this.files.write(entry.file, text);
      written = true;
      if (entry.gone) {
        await this.files.remove(entry.file); // dropped while it was being written
        return;
      }
      entry.bytes = Buffer.byteLength(text);
      const shelf = this.shelf(entry.tenantKey);
      shelf.bytes += entry.bytes;
      await this.removeFiles(this.trim(shelf, Date.now()));
    } catch (err) {
      this.onWriteError(err);
      // Not on disk whole (or its removal failed too, and part of it is): neither listed nor served
      // — and, where the writer's thread died with it written, not left on disk uncounted.
      if (!written) {
        this.forget(entry);
        await this.files.remove(entry.file).catch(() => undefined);
      }
    } finally {
      this.done(entry);
    }
  }

  /** A trace the writer is through with leaves the pending ones (unless it left them already). */
  private done(entry: Entry): void {
    if (this.pending.get(entry.file)?.entry === entry) this.unpend(entry.file);
  }

  private removeFiles(gone: Entry[]): Promise<unknown> {
    return Promise.all(gone.map((e) => this.files.remove(e.file)));
  }

  /** A trace that could not be written: kept in its shelf's order (its count stays), never listed or served. */
  private forget(entry: Entry): void {
    entry.gone = true;
    const shelf = this.shelves.get(entry.tenantKey);
    if (shelf?.byId.get(entry.summary.event_id) === entry) shelf.byId.delete(entry.summary.event_id);
  }

  /** A trace leaves the write queue: what it held is given back to its tenant's pending bytes. */
  private unpend(file: string): void {
    const p = this.pending.get(file);
    if (!p) return;
    this.pending.delete(file);
    const line = this.lines.get(p.entry.tenantKey);
    line?.delete(file);
    if (line?.size === 0) {
      this.lines.delete(p.entry.tenantKey);
      this.builtMs.delete(p.entry.tenantKey);
    }
    const left = (this.pendingBytes.get(p.entry.tenantKey) ?? 0) - p.bytes;
    if (left > 0) this.pendingBytes.set(p.entry.tenantKey, left);
    else this.pendingBytes.delete(p.entry.tenantKey);
  }

  /** Bytes a tenant's traces waiting to be written hold (MAX_PENDING_TRACE_BYTES bounds it). */
  pendingBytesOf(tenant: string): number {
    return this.pendingBytes.get(this.key(tenant)) ?? 0;
  }

  /** Resolves when every trace accepted so far is on disk. */
  async flush(): Promise<void> {
    while (this.writer) await this.writer;
  }

  private live(e: Entry, nowMs = Date.now()): boolean {
    return nowMs - e.timeMs <= this.limits.retentionMs;
  }

  async get(tenant: string, eventId: string): Promise<StoredTrace | undefined> {
    const text = await this.getText(tenant, eventId);
    return text === undefined ? undefined : (JSON.parse(text) as StoredTrace);
  }

  /**
   * The trace's JSON as stored, to be served as it is, never parsed and written again: its text
   * while it waits to be written, else its file, open (a sweep after this cannot take it away).
   */
  async open(tenant: string, eventId: string): Promise<{ text: string } | { file: FileHandle } | undefined> {
    await this.loaded;
    const entry = this.shelves.get(this.key(tenant))?.byId.get(eventId);
    if (!entry || entry.gone || !this.live(entry)) return undefined;
    const pending = this.pending.get(entry.file);
    if (pending) return { text: await pending.text() };
    // Swept between the look-up and the open: gone, as if it never was.
    return open(entry.file, "r").then(
      (file) => ({ file }),
      (err: NodeJS.ErrnoException) => {
        if (err.code === "ENOENT") return undefined;
        throw err;
      },
    );
  }

  /** The trace's JSON as stored, whole (the route streams it with `open` instead). */
  async getText(tenant: string, eventId: string): Promise<string | undefined> {
    await this.loaded;
    const entry = this.shelves.get(this.key(tenant))?.byId.get(eventId);
    if (!entry || entry.gone || !this.live(entry)) return undefined;
    const pending = this.pending.get(entry.file);
    if (pending) return pending.text();
    // Swept between the look-up and the read: gone, as if it never was.
    return readFile(entry.file, "utf8").catch((err: NodeJS.ErrnoException) => {
      if (err.code === "ENOENT") return undefined;
      throw err;
    });
  }

  /** Newest first, `limit` at a time; `next_cursor` pages on. */
  async list(tenant: string, q: TraceQuery): Promise<{ events: TraceSummary[]; next_cursor: string | null }> {
    await this.loaded;
    const shelf = this.shelves.get(this.key(tenant));
    const entries = shelf?.entries ?? [];
    const head = shelf?.head ?? 0;
    const limit = Math.min(Math.max(q.limit ?? LIST_PAGE_DEFAULT, 1), LIST_PAGE_MAX);
    // The cursor is the place of the page's last entry in the shelf's own order (the order the
    // walk goes in): events of the same millisecond are neither skipped nor listed twice.
    const before = q.cursor === undefined ? Infinity : cursorSeq(q.cursor);
    const out: Entry[] = [];
    // The array as it is now: a cut while the walk waits makes a new one, and what leaves this
    // one meanwhile is marked gone. Places rise along it: a cursor's walk starts below its place.
    for (let i = below(entries, head, before) - 1, seen = 0; i >= head && out.length <= limit; i--, seen++) {
      if (seen > 0 && seen % TRACE_LIST_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
      const e = entries[i]!;
      if (e.gone || !this.live(e)) continue;
      if (e.seq >= before) continue;
      if (q.session_id !== undefined && !sameSession(e.summary.session_id, q.session_id)) continue;
      if (q.decision !== undefined && (e.summary.decision ?? "none") !== q.decision) continue;
      if (q.since !== undefined && e.timeMs < q.since) break;
      out.push(e);
    }
    const more = out.length > limit;
    const page = out.slice(0, limit);
    const last = page.at(-1);
    return {
      events: page.map((e) => e.summary),
      next_cursor: more && last ? Buffer.from(`s${last.seq}`).toString("base64url") : null,
    };
  }

  /** Calls `fn` with each new trace of the tenant until the returned function is called. */
  /** How many live followers a tenant has now. */
  followers(tenant: string): number {
    return this.listeners.get(this.key(tenant))?.size ?? 0;
  }

  subscribe(tenant: string, fn: (s: TraceSummary) => void): () => void {
    const tenantKey = this.key(tenant);
    let set = this.listeners.get(tenantKey);
    if (!set) this.listeners.set(tenantKey, (set = new Set()));
    set.add(fn);
    return () => set.delete(fn);
  }

  /**
   * Drops, from each tenant's shelf on its own, what is past its retention, then its oldest until
   * its count fits `maxEvents` and its bytes `maxBytes`: one tenant's flood never evicts another's.
   */
  async sweep(nowMs = Date.now()): Promise<number> {
    const gone: Entry[] = [];
    for (const shelf of this.shelves.values()) gone.push(...this.trim(shelf, nowMs));
    await this.removeFiles(gone);
    return gone.length;
  }

  /** Takes one shelf's expired and excess entries off it (and off the write queue); returns them. */
  private trim(shelf: Shelf, nowMs: number): Entry[] {
    const { entries, head } = shelf;
    let drop = head;
    while (
      drop < entries.length &&
      (nowMs - entries[drop]!.timeMs > this.limits.retentionMs || entries.length - drop > this.limits.maxEvents || shelf.bytes > this.limits.maxBytes)
    ) {
      shelf.bytes -= entries[drop]!.bytes;
      drop++;
    }
    if (drop === head) return [];
    const gone = entries.slice(head, drop);
    // Their places keep no trace: what a dropped one held is freed now, not at the next cut.
    entries.fill(DROPPED, head, drop);
    shelf.head = drop;
    for (const e of gone) {
      e.gone = true;
      shelf.byId.delete(e.summary.event_id);
      this.unpend(e.file);
    }
    if (shelf.head === entries.length) this.shelves.delete(gone[0]!.tenantKey);
    else if (shelf.head >= SHELF_CUT_AT && shelf.head * 2 >= entries.length) {
      shelf.entries = kept(shelf);
      shelf.head = 0;
    }
    return gone;
  }
}

/** The first index from `head` whose place is `seq` or past it (entries.length if none), by halving. */
function below(entries: readonly Entry[], head: number, seq: number): number {
  let [lo, hi] = [head, entries.length];
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (entries[mid]!.seq < seq) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function first<T>(map: Map<string, T>): T | undefined {
  for (const v of map.values()) return v;
  return undefined;
}

/** One file, if it is there (a write a crash cut short, found at start-up). */
async function removeFile(file: string): Promise<void> {
  await unlink(file).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== "ENOENT") throw err;
  });
}

function summarize(t: StoredTrace): TraceSummary {
  const { hooks, tenant: _tenant, ...rest } = t;
  return { ...rest, hooks: hooks.length };
}

/** A listed event's session as a filter names it: NO_SESSION_ID (the sessions list's name) for the events that gave none too. */
function sameSession(kept: string | null, asked: string): boolean {
  return kept === asked || (asked === NO_SESSION_ID && (kept === null || kept === ""));
}
