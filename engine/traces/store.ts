/**
 * @module Per-event traces (kept `retentionMs`, at most `maxEvents` and `maxBytes` together, in
 * `data_dir/traces`, surviving a restart): per hook its source, sandbox, rule, outcome, exit code,
 * timings and the first `captureBytes` of stdin, stdout and stderr — secrets redacted, tool inputs
 * kept only where the tenant allows it. Tenant-scoped reads, paged listing, live subscription.
 */
import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { EventResult, HookRecord } from "../index.js";
import { redactEnv, redactText, redactValue } from "./redact.js";

export interface TraceLimits {
  /** @default 24 h */
  retentionMs: number;
  /** @default 10 000 */
  maxEvents: number;
  /** @default 256 MiB */
  maxBytes: number;
  /** of each hook's stdin, stdout and stderr; @default 4 KiB */
  captureBytes: number;
}

export const DEFAULT_TRACE_LIMITS: TraceLimits = { retentionMs: 24 * 3600_000, maxEvents: 10_000, maxBytes: 256 * 1024 * 1024, captureBytes: 4096 };

export interface StoredHook extends HookRecord {
  warm: boolean;
  /** from the start of the event's hooks to this hook's start */
  offset_ms: number;
  stdin: string;
  stdout: string;
  stderr: string;
  env: Record<string, string>;
  truncated: { stdin: boolean; stdout: boolean; stderr: boolean };
}

export interface StoredTrace {
  event_id: string;
  tenant: string;
  time: string;
  event: string;
  session_id: string | null;
  tool_name: string | null;
  workspace: string | null;
  decision: EventResult["decision"];
  reason: string | null;
  duration_ms: number;
  queued_ms: number;
  cancelled: boolean;
  /** the hook whose block decided the event */
  blocked_by: string | null;
  hooks: StoredHook[];
}

export type TraceSummary = Omit<StoredTrace, "hooks" | "tenant"> & { hooks: number };

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

/** Tool inputs and prompts: what a trace leaves out unless the tenant keeps them. */
const INPUT_FIELDS = ["tool_input", "toolArgs", "tool_response", "toolResult", "prompt", "initialPrompt"];

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
    const blocking = result.decision === "block" ? result.hooks.find((h) => h.effective && h.decision === "block") : undefined;
    const summary: TraceSummary = {
      event_id: result.event_id,
      time: new Date().toISOString(),
      event: result.event,
      session_id: result.session_id ?? null,
      tool_name: result.tool_name ?? null,
      workspace: extra.workspace ?? null,
      decision: result.decision,
      reason: result.reason !== undefined ? redactText(result.reason) : null,
      duration_ms: Math.round(extra.durationMs),
      queued_ms: result.trace.queued_ms,
      cancelled: extra.cancelled,
      blocked_by: blocking?.name ?? null,
      hooks: result.hooks.length,
    };
    let built: StoredTrace | undefined;
    const build = () => (built ??= { ...summary, tenant: tenant.name, hooks: this.hooksOf(result, tenant.traceToolInput) });
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

  private hooksOf(result: EventResult, keepInputs: boolean): StoredHook[] {
    const cap = this.limits.captureBytes;
    return result.hooks.map((record, i) => {
      const t = result.trace.hooks[i]!;
      const stdin = captured(stdinText(t.stdin, keepInputs), cap, false);
      const stdout = captured(t.stdout, cap);
      const stderr = captured(t.stderr, cap);
      return {
        ...record,
        ...(record.reason ? { reason: redactText(record.reason) } : {}),
        warm: t.warm,
        offset_ms: t.offset_ms,
        stdin: stdin.text,
        stdout: stdout.text,
        stderr: stderr.text,
        env: redactEnv(t.env),
        truncated: { stdin: stdin.cut, stdout: stdout.cut, stderr: stderr.cut },
      };
    });
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

/** Room past the cap that is redacted too, so a secret straddling the cut is still recognised. */
const REDACT_MARGIN_BYTES = 512;

/**
 * The first `max` bytes of a hook's stream, redacted (stdin comes redacted already). Only those
 * bytes and a margin are scanned: a hook may print megabytes, a trace keeps a few KB.
 */
function captured(text: string, max: number, redact = true): { text: string; cut: boolean } {
  const bytes = Buffer.from(text);
  const head = bytes.subarray(0, max + REDACT_MARGIN_BYTES).toString("utf8");
  const redacted = Buffer.from(redact ? redactText(head) : head);
  return bytes.length > max ? { text: redacted.subarray(0, max).toString("utf8"), cut: true } : { text: redacted.toString("utf8"), cut: false };
}

/** The event a hook read, redacted; tool inputs and prompts left out unless kept. */
function stdinText(stdin: Uint8Array, keepInputs: boolean): string {
  const text = Buffer.from(stdin).toString("utf8");
  try {
    const value = JSON.parse(text) as Record<string, unknown>;
    if (!keepInputs) for (const f of INPUT_FIELDS) if (f in value) value[f] = "[omitted]";
    return JSON.stringify(redactValue(value));
  } catch {
    return redactText(text);
  }
}
