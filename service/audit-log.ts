/**
 * @module The audit log (SERVICE.md §7): one JSON line per decision in `data_dir/audit.jsonl`,
 * appended before the response is sent. Tool inputs and prompts are left out unless the
 * configuration asks for them.
 */
import { open, type FileHandle } from "node:fs/promises";
import type { EventResult } from "../engine/index.js";

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
  hooks: { name: string; source: string; sandbox: string; outcome: string; exit_code: number | null; duration_ms: number; decision: string | null; effective: boolean; rule: string }[];
  tool_input?: unknown;
  prompt?: unknown;
}

export class AuditLog {
  private handle: Promise<FileHandle> | undefined;
  /** lines waiting for the write under way to finish; they go out together in the next one */
  private batch: { lines: string[]; done: Promise<void> } | undefined;
  private tail: Promise<void> = Promise.resolve();

  constructor(readonly file: string) {}

  /** Appends one line; lines never interleave. Resolves once the line is written. */
  write(entry: AuditEntry): Promise<void> {
    this.handle ??= open(this.file, "a", 0o600);
    const line = `${JSON.stringify(entry)}\n`;
    if (this.batch) {
      this.batch.lines.push(line);
      return this.batch.done;
    }
    const batch = { lines: [line], done: Promise.resolve() };
    batch.done = this.tail.then(async () => {
      this.batch = undefined; // later lines start the next batch
      await (await this.handle!).write(batch.lines.join(""));
    });
    this.batch = batch;
    this.tail = batch.done.catch(() => undefined);
    return batch.done;
  }

  async close(): Promise<void> {
    await this.tail;
    if (this.handle) await (await this.handle).close();
    this.handle = undefined;
  }
}

export function auditEntry(opts: {
  result: EventResult;
  tenant: string;
  workspace: string | undefined;
  durationMs: number;
  cancelled: boolean;
  body: Record<string, unknown>;
  includeInputs: boolean;
}): AuditEntry {
  const { result, body } = opts;
  return {
    time: new Date().toISOString(),
    event_id: result.event_id,
    tenant: opts.tenant,
    session_id: result.session_id ?? null,
    event: result.event,
    tool_name: result.tool_name ?? null,
    workspace: opts.workspace ?? null,
    decision: result.decision,
    reason: result.reason ?? null,
    duration_ms: Math.round(opts.durationMs),
    cancelled: opts.cancelled,
    hooks: result.hooks.map((h) => ({
      name: h.name, source: h.source, sandbox: h.sandbox, outcome: h.outcome, exit_code: h.exit_code,
      duration_ms: h.duration_ms, decision: h.decision, effective: h.effective, rule: h.rule,
    })),
    ...(opts.includeInputs ? { tool_input: body.tool_input ?? body.toolArgs, prompt: body.prompt } : {}),
  };
}
