/**
 * @module The audit log (SERVICE.md §7): one JSON line per decision, in a file of the event's
 * tenant — `data_dir/audit/<tenant>.jsonl` — appended before the response is sent. Every string in
 * a line is redacted and capped at `AUDIT_FIELD_BYTES` (a cut one ends in `…[truncated N bytes]`);
 * tool inputs and prompts are left out unless the configuration asks for them. Past `maxBytes` a
 * file is rotated to `.1` … `.keep`, whole lines only: a tenant's flood of events rotates out its
 * own history, never another tenant's.
 */
import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import { open, rename, rm, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import type { EventResult } from "../../engine/index.js";
import { visibleJson } from "../../engine/visible-text.js";
import { headBytes, keep, keepStrings, redactJson } from "./redact.js";
import { keptFields, mapInSlices, SUMMARY_FIELD_BYTES, type AnsweredOtherwise, type KeptFields } from "./trace-content.js";

/**
 * each string of a line: session_id, reason, a hook's rule, …; @default 1 KiB — a trace summary's
 * cap, so the event's session id, tool name and reason are kept once for both (`KeptFields`)
 */
export const AUDIT_FIELD_BYTES = SUMMARY_FIELD_BYTES;
/** tool_input and prompt together (only with `audit_tool_input`), as JSON; @default 16 KiB */
export const AUDIT_INPUT_BYTES = 16 * 1024;

export interface AuditEntry {
  time: string;
  event_id: string;
  tenant: string;
  session_id: string | null;
  event: string;
  tool_name: string | null;
  workspace: string | null;
  decision: EventResult["decision"];
  reason: string | null;
  duration_ms: number;
  cancelled: boolean;
  /** what the client was answered instead of `decision`, if so */
  answered: AnsweredOtherwise | null;
  hooks: { name: string; source: string; sandbox: string; outcome: string; exit_code: number | null; duration_ms: number; decision: string | null; effective: boolean; rule: string }[];
  tool_input?: unknown;
  prompt?: unknown;
  /** a `hookbox doctor` canary: no hook ran, never a real decision */
  canary?: true;
}

export interface AuditRotation {
  /** the file is rotated before a line would take it past this; @default 64 MiB (`[server] audit_max_bytes`) */
  maxBytes: number;
  /** rotated files kept: <file>.1 (newest) … .keep; @default 5 (`[server] audit_keep`) */
  keep: number;
}

/** Where audit lines go: the service's per-tenant files, or one file (a test's). */
export interface AuditSink {
  write(tenant: string, entry: AuditEntry): Promise<void>;
  close(): Promise<void>;
  /** the bytes of lines taken and not yet written (a disk that stalls grows it) */
  backlogBytes?(): number;
}

/** Bytes of lines taken and not yet written, shared by a service's audit files. */
export interface AuditBacklog {
  bytes: number;
}

/**
 * A tenant's audit file name: its name where that is a plain file name (letters, digits, `.`, `_`,
 * `-`, at most 64, starting with a letter or digit), else `_` and the first 16 hex digits of its
 * SHA-256 — which no plain name can be.
 */
export function auditFileName(tenant: string): string {
  return /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(tenant) ? `${tenant}.jsonl` : `_${createHash("sha256").update(tenant).digest("hex").slice(0, 16)}.jsonl`;
}

/** One audit file per tenant under `dir`, each rotated on its own. */
export class TenantAuditLogs implements AuditSink {
  private readonly logs = new Map<string, AuditLog>();
  private readonly backlog: AuditBacklog = { bytes: 0 };
  constructor(
    readonly dir: string,
    private readonly rotation?: AuditRotation,
  ) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  write(tenant: string, entry: AuditEntry): Promise<void> {
    let log = this.logs.get(tenant);
    if (!log) this.logs.set(tenant, (log = new AuditLog(join(this.dir, auditFileName(tenant)), this.rotation, this.backlog)));
    return log.write(tenant, entry);
  }

  backlogBytes(): number {
    return this.backlog.bytes;
  }

  async close(): Promise<void> {
    await Promise.all([...this.logs.values()].map((l) => l.close()));
  }
}

/** One audit file, whatever the tenant. */
export class AuditLog implements AuditSink {
  private handle: Promise<FileHandle> | undefined;
  /** bytes in the current file */
  private size = 0;
  /** lines waiting for the write under way to finish; they go out together in the next one */
  private batch: { lines: string[]; chars: number; done: Promise<void> } | undefined;
  private tail: Promise<void> = Promise.resolve();

  constructor(
    readonly file: string,
    private readonly rotation: AuditRotation = { maxBytes: 64 * 1024 * 1024, keep: 5 },
    private readonly backlog: AuditBacklog = { bytes: 0 },
  ) {}

  backlogBytes(): number {
    return this.backlog.bytes;
  }

  /** Appends one line; lines never interleave. Resolves once the line is written. */
  write(_tenant: string, entry: AuditEntry): Promise<void> {
    // (C1 controls and bidi overrides a client sent, escaped: the file is read in terminals)
    const line = `${visibleJson(JSON.stringify(entry))}\n`;
    this.backlog.bytes += line.length;
    if (this.batch) {
      this.batch.lines.push(line);
      this.batch.chars += line.length;
      return this.batch.done;
    }
    const batch = { lines: [line], chars: line.length, done: Promise.resolve() };
    batch.done = this.tail.then(async () => {
      this.batch = undefined; // later lines start the next batch
      await this.append(batch.lines);
    }).finally(() => {
      this.backlog.bytes -= batch.chars;
    });
    this.batch = batch;
    this.tail = batch.done.catch(() => undefined);
    return batch.done;
  }

  /** Writes whole lines, rotating first whenever the next one would take the file past the limit. */
  private async append(lines: string[]): Promise<void> {
    let chunk = "";
    let chunkBytes = 0;
    for (const line of lines) {
      const bytes = Buffer.byteLength(line);
      if (this.size + chunkBytes + bytes > this.rotation.maxBytes && this.size + chunkBytes > 0) {
        await this.writeOut(chunk, chunkBytes);
        [chunk, chunkBytes] = ["", 0];
        await this.rotate();
      }
      chunk += line;
      chunkBytes += bytes;
    }
    await this.writeOut(chunk, chunkBytes);
  }

  /**
   * The chunk, whole: a short write (a full disk, a file size limit) goes on where it stopped, and a
   * write that fails takes back what it wrote of the chunk — no line is left cut in two, for the
   * next one to be appended to — and is counted as the error it is.
   */
  private async writeOut(chunk: string, bytes: number): Promise<void> {
    if (bytes === 0) return;
    const h = await this.opened();
    const buf = Buffer.from(chunk);
    let done = 0;
    try {
      while (done < buf.length) {
        const { bytesWritten } = await h.write(buf, done, buf.length - done);
        if (bytesWritten <= 0) throw new Error("the audit file took no more bytes");
        done += bytesWritten;
      }
    } catch (err) {
      if (done > 0) await h.truncate(this.size).catch(() => undefined);
      throw err;
    }
    this.size += bytes;
  }

  private opened(): Promise<FileHandle> {
    const handle = (this.handle ??= open(this.file, "a+", 0o600).then(async (h) => {
      try {
        this.size = (await h.stat()).size;
        // A last line cut off (a crash mid-write, a take-back that failed) ends here, so the next
        // line starts a line of its own rather than be swallowed by the cut one.
        if (this.size > 0) {
          const last = Buffer.alloc(1);
          await h.read(last, 0, 1, this.size - 1);
          if (last[0] !== 0x0a) {
            await h.write("\n");
            this.size += 1;
          }
        }
        return h;
      } catch (err) {
        // Not kept: closed here, opened again with the next line (never one descriptor per try).
        await h.close().catch(() => undefined);
        throw err;
      }
    }));
    // One that could not be opened is tried again with the next line, not kept as a failure.
    handle.catch(() => {
      if (this.handle === handle) this.handle = undefined;
    });
    return handle;
  }

  /** the file → .1 → .2 … → .keep; the oldest is dropped. */
  private async rotate(): Promise<void> {
    if (this.handle) await (await this.handle.catch(() => undefined))?.close();
    this.handle = undefined;
    const { keep } = this.rotation;
    const name = (i: number) => (i === 0 ? this.file : `${this.file}.${i}`);
    await rm(name(keep), { force: true });
    for (let i = keep - 1; i >= 0; i--) await rename(name(i), name(i + 1)).catch(ignoreMissing);
    this.size = 0;
  }

  async close(): Promise<void> {
    await this.tail;
    if (this.handle) await (await this.handle.catch(() => undefined))?.close();
    this.handle = undefined;
  }
}

const ignoreMissing = (err: NodeJS.ErrnoException) => {
  if (err.code !== "ENOENT") throw err;
};

/** The audit line of one event; built in slices (a thousand hooks' fields are each redacted). */
export async function auditEntry(opts: {
  result: EventResult;
  tenant: string;
  workspace: string | undefined;
  durationMs: number;
  cancelled: boolean;
  answered?: AnsweredOtherwise | null;
  /** the event's fields as its trace keeps them, when made already */
  kept?: KeptFields;
  body: Record<string, unknown>;
  includeInputs: boolean;
}): Promise<AuditEntry> {
  const { result, body } = opts;
  const field = (text: string | undefined) => (text === undefined ? null : keep(text, AUDIT_FIELD_BYTES));
  const kept = opts.kept ?? keptFields(result);
  return {
    time: new Date().toISOString(),
    event_id: result.event_id,
    tenant: keep(opts.tenant, AUDIT_FIELD_BYTES),
    session_id: kept.session_id,
    event: result.event,
    tool_name: kept.tool_name,
    workspace: field(opts.workspace),
    decision: result.decision,
    reason: kept.reason,
    duration_ms: Math.round(opts.durationMs),
    cancelled: opts.cancelled,
    answered: opts.answered ? { decision: opts.answered.decision, why: keep(opts.answered.why, AUDIT_FIELD_BYTES) } : null,
    hooks: await mapInSlices(result.hooks, (h) =>
      keepStrings({
        name: h.name, source: h.source, sandbox: h.sandbox, outcome: h.outcome, exit_code: h.exit_code,
        duration_ms: h.duration_ms, decision: h.decision, effective: h.effective, rule: h.rule,
      }, AUDIT_FIELD_BYTES),
    ),
    ...(opts.includeInputs ? inputsOf(body) : {}),
  };
}

/**
 * Tool input and prompt, as the operator asked to keep them: redacted, whole when their JSON fits
 * in `AUDIT_INPUT_BYTES`, else the first bytes of that JSON as one string, marked `…[truncated]`.
 */
function inputsOf(body: Record<string, unknown>): { tool_input?: unknown; prompt?: unknown } {
  const inputs = { tool_input: body.tool_input ?? body.toolArgs, prompt: body.prompt };
  const json = redactJson(inputs, AUDIT_INPUT_BYTES);
  if (!json.cut && Buffer.byteLength(json.text) <= AUDIT_INPUT_BYTES) return JSON.parse(json.text) as typeof inputs;
  return { tool_input: `${headBytes(json.text, AUDIT_INPUT_BYTES)}…[truncated]` };
}
