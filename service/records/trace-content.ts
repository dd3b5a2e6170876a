/**
 * @module What a trace keeps of an event: every string redacted and capped before it is kept —
 * summary fields at `SUMMARY_FIELD_BYTES`, a hook's own strings (rule, error, reason, …) at
 * `HOOK_FIELD_BYTES`, its stdin, stdout and stderr at the configured `captureBytes`. The
 * environment of a hook the operator configured is shown as names only. Pure, but for the yields of
 * a long build (`BUILD_SLICE_MS`).
 */
import type { EventResult, HookRecord, HookTrace } from "../../engine/index.js";
import { payloadValue, payloadValueBytes } from "../../engine/payload.js";
import { afterIO } from "../../engine/turns.js";
import { capRedactSteps, headBytes, inSlices, isSecretName, keep, keepStrings, redactJsonSteps, REDACT_MARGIN_CHARS, REDACTED } from "./redact.js";

/** session_id, tool_name, reason, … of a listed event; @default 1 KiB — a page lists up to 500 */
export const SUMMARY_FIELD_BYTES = 1024;
/** a hook's rule, error, reason, systemMessage, name and origin (its env: ENV_FIELD_BYTES); @default 4 KiB */
export const HOOK_FIELD_BYTES = 4096;
/** @default 256 — each env name and value a trace keeps: a hook may carry 64 of each, and an event a thousand hooks. */
export const ENV_FIELD_BYTES = 256;
/** @default 16 — env variables a trace lists per hook; the rest are counted */
export const ENV_FIELDS_KEPT = 16;
/**
 * @default 8 MiB — the most of one event's trace (hooks' JSON, in bytes) whose hooks are kept as above: an event may
 * run a thousand hooks, and JSON escaping can make each one's few KiB of fields and streams six
 * times longer. Past it, each further hook keeps its outcome and decision, its other fields at
 * `OMITTED_FIELD_BYTES`, and no input, output or env: one event's trace stays a few MiB, in memory
 * while it is built and on disk.
 */
export const MAX_TRACE_EVENT_BYTES = 8 * 1024 * 1024;
/** @default 64 — each string field of a hook past MAX_TRACE_EVENT_BYTES */
export const OMITTED_FIELD_BYTES = 64;
/**
 * @default 2 Mi — characters one event's trace may redact (each hook's kept streams and fields,
 * counted before they are redacted). Redaction is linear, but text made of its patterns' trigger
 * words costs up to about 4 microseconds a character: a thousand hooks printing such text would
 * cost the shared thread tens of seconds; this, a few seconds, in slices. Past it, each further hook is kept as past MAX_TRACE_EVENT_BYTES.
 */
export const MAX_TRACE_REDACT_CHARS = 2 * 1024 * 1024;
/** what stands for a stream of a hook past MAX_TRACE_EVENT_BYTES or MAX_TRACE_REDACT_CHARS */
export const TRACE_FULL = `[omitted: this event's trace passed ${MAX_TRACE_EVENT_BYTES / (1024 * 1024)} MiB, or ${MAX_TRACE_REDACT_CHARS / (1024 * 1024)} Mi characters to redact]`;
/**
 * @default 32 MiB — what one tenant's traces not yet written may hold of their events (the event each
 * hook read, its kept output): a flood of large events outruns the writer, and each would hold its
 * body until written. Past it, a further trace keeps each hook's outcome and decision only (as past
 * MAX_TRACE_EVENT_BYTES), said by PENDING_FULL.
 */
export const MAX_PENDING_TRACE_BYTES = 32 * 1024 * 1024;
/** what stands for a stream of a hook whose trace came past MAX_PENDING_TRACE_BYTES */
export const PENDING_FULL = `[omitted: this tenant's traces waiting to be written held more than ${MAX_PENDING_TRACE_BYTES / (1024 * 1024)} MiB]`;

/** What a trace still to be built holds of its event: its hooks' records and runs, nothing else of the result. */
export interface TraceHooks {
  records: EventResult["hooks"];
  runs: HookTrace[];
  /** set: every hook is kept as its outcome only, its streams this text */
  omitted?: string;
}

/**
 * The part of a result a trace is built from, and the bytes it holds and its build redacts: each
 * distinct stdin once, the kept streams, and each record's texts (names, origins, rules, reasons,
 * messages, errors — a thousand hooks of long names cost a build as much as their streams).
 */
export function traceHooksOf(result: EventResult): { hooks: TraceHooks; bytes: number } {
  const stdins = new Set<Uint8Array>();
  let bytes = 0;
  for (const t of result.trace.hooks) {
    // its bytes, and the parsed value its trace will be read from (payloadValue), alive with them
    if (!stdins.has(t.stdin)) bytes += t.stdin.byteLength + payloadValueBytes(t.stdin);
    stdins.add(t.stdin);
    bytes += 2 * (t.stdout.length + t.stderr.length);
  }
  for (const r of result.hooks) bytes += 2 * (r.name.length + r.origin.length + r.rule.length + (r.reason?.length ?? 0) + (r.systemMessage?.length ?? 0) + (r.error?.length ?? 0));
  return { hooks: { records: result.hooks, runs: result.trace.hooks }, bytes };
}

/** The same hooks with nothing of what they read or printed: what a trace past MAX_PENDING_TRACE_BYTES keeps. */
export function outcomesOnly(hooks: TraceHooks): TraceHooks {
  const empty = new Uint8Array(0);
  return { records: hooks.records, runs: hooks.runs.map((t) => ({ ...t, stdin: empty, stdout: "", stderr: "", env: {} })), omitted: PENDING_FULL };
}
/** what an operator-configured hook's env values show as: they may hold the operator's secrets */
export const HIDDEN = "[hidden]";

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

/**
 * What the client was answered when that is not what the record decides: its deadline came first
 * (what the hooks finished by then decided, or the tenant's failure mode), or the event expired
 * waiting for a run slot. Null when the client got the record's decision.
 */
export interface AnsweredOtherwise {
  decision: EventResult["decision"];
  why: string;
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
  /** what the client was answered instead of `decision`, if so (older traces: absent) */
  answered?: AnsweredOtherwise | null;
  /** the hook whose block decided the event */
  blocked_by: string | null;
  hooks: StoredHook[];
}

export type TraceSummary = Omit<StoredTrace, "hooks" | "tenant"> & { hooks: number };

/**
 * The fields of an event a trace keeps for a tenant that does not keep inputs: who, where, when and
 * which tool, in every agent's spelling. Everything else — tool inputs and results, prompts, file
 * contents (Cursor's `content`), shell commands, model requests and replies (Gemini's `llm_request`),
 * edits, errors, messages, the last assistant message — shows as `[omitted]`, whatever it is called.
 */
const METADATA_FIELDS = new Set([
  "hook_event_name", "hookEventName", "session_id", "sessionId", "conversation_id", "generation_id", "turn_id",
  "transcript_path", "agent_transcript_path", "cwd", "workspace_roots", "timestamp", "tool_name", "toolName",
  "tool_use_id", "toolUseId", "permission_mode", "source", "reason", "trigger", "stop_hook_active",
  "notification_type", "agent_id", "agent_type", "model", "cursor_version",
]);
const OMITTED = "[omitted]";

/** @default 64 KiB — a hook's stdin that is no payload of the event's (payloadValue) is parsed for its trace only up to this size; a larger one is kept as redacted text */
export const PARSED_STDIN_BYTES = 64 * 1024;

const field = (text: string | undefined, maxBytes = SUMMARY_FIELD_BYTES) => (text === undefined ? null : keep(text, maxBytes));

/**
 * An event's session id, tool name and reason as its records keep them (redacted, at most
 * SUMMARY_FIELD_BYTES each), made once: its trace, its audit line and its session's entry take the
 * same copies, so a text made to be slow to redact (`password=password=…`) costs it once an event.
 */
export interface KeptFields {
  session_id: string | null;
  tool_name: string | null;
  reason: string | null;
}

export function keptFields(result: Pick<EventResult, "session_id" | "tool_name" | "reason">): KeptFields {
  return { session_id: field(result.session_id), tool_name: field(result.tool_name), reason: field(result.reason) };
}

export function summaryOf(result: EventResult, extra: { workspace?: string; durationMs: number; cancelled: boolean; answered?: AnsweredOtherwise | null; kept?: KeptFields }): TraceSummary {
  const kept = extra.kept ?? keptFields(result);
  const blocking = result.decision === "block" ? result.hooks.find((h) => h.effective && h.decision === "block") : undefined;
  return {
    event_id: result.event_id,
    time: new Date().toISOString(),
    event: result.event,
    session_id: kept.session_id,
    tool_name: kept.tool_name,
    workspace: field(extra.workspace),
    decision: result.decision,
    reason: kept.reason,
    duration_ms: Math.round(extra.durationMs),
    queued_ms: result.trace.queued_ms,
    cancelled: extra.cancelled,
    answered: extra.answered ? { decision: extra.answered.decision, why: keep(extra.answered.why, SUMMARY_FIELD_BYTES) } : null,
    blocked_by: field(blocking?.name, HOOK_FIELD_BYTES), // as the hook's own name is kept
    hooks: result.hooks.length,
  };
}

/**
 * How long building one trace holds the event loop before it lets other work in: a trace may have
 * a thousand hooks. @default 10 ms
 */
export const BUILD_SLICE_MS = 10;

/**
 * The stored trace's JSON text: the summary, then every hook, each hook written to JSON in the same
 * slices as it is built (one `JSON.stringify` over a thousand hooks' escaped output would hold the
 * event loop in one piece). Hooks of one dialect share one stdin buffer, so each distinct buffer is
 * parsed and redacted once per trace, not once per hook. Parses to the same `StoredTrace` as
 * stringifying it whole.
 */
export async function traceText(summary: TraceSummary, tenant: string, from: TraceHooks, keepInputs: boolean, captureBytes: number): Promise<string> {
  const stdins = new Map<Uint8Array, Kept>();
  let written = 0; // bytes of JSON so far
  let redacted = 0; // characters redacted so far
  // The event loop is let in between the parts of a hook too — its stdin, each stream, its fields,
  // its env: text made to cost the redactor most costs a few microseconds a character, and one
  // hook's parts together are tens of thousands of characters.
  const slice = slicer();
  const hooks: string[] = [];
  for (let i = 0; i < from.records.length; i++) {
    await slice();
    const record = from.records[i]!;
    const t = from.runs[i]!;
    let hook: StoredHook;
    if (from.omitted !== undefined) hook = omittedHookOf(record, t, from.omitted);
    else if (written > MAX_TRACE_EVENT_BYTES || redacted > MAX_TRACE_REDACT_CHARS) hook = omittedHookOf(record, t);
    else {
      redacted += toRedact(record, t, captureBytes);
      let stdin = stdins.get(t.stdin);
      if (!stdin) {
        redacted += captureBytes + REDACT_MARGIN_CHARS;
        stdins.set(t.stdin, (stdin = await stdinOf(t.stdin, keepInputs, captureBytes, slice)));
        await slice();
      }
      // Each stream redacted in steps: one made to cost the redactor most holds the loop no longer than a slice.
      const stdout = await inSlices(capRedactSteps(t.stdout, captureBytes, t.stdoutBytes), slice);
      await slice();
      const stderr = await inSlices(capRedactSteps(t.stderr, captureBytes, t.stderrBytes), slice);
      await slice();
      const fields = keepStrings(record, HOOK_FIELD_BYTES);
      await slice();
      hook = {
        ...fields,
        warm: t.warm,
        offset_ms: t.offset_ms,
        stdin: stdin.text,
        stdout: stdout.text,
        stderr: stderr.text,
        env: envOf(record, t),
        truncated: { stdin: stdin.cut, stdout: stdout.cut, stderr: stderr.cut },
      };
    }
    const text = JSON.stringify(hook);
    written += Buffer.byteLength(text);
    hooks.push(text);
  }
  // The summary's count of hooks is not written: the list follows, and a key said twice is refused
  // by strict readers (Go's encoding/json, serde) where JSON.parse keeps the last.
  const { hooks: _count, ...fields } = summary;
  const head = JSON.stringify({ ...fields, tenant } satisfies Omit<StoredTrace, "hooks">);
  return `${head.slice(0, -1)},"hooks":[${hooks.join(",")}]}`;
}

/** The characters `traceText` redacts of one hook: its streams, its string fields and its env (its stdin is counted once per distinct buffer). */
function toRedact(record: HookRecord, t: HookTrace, captureBytes: number): number {
  const room = (text: string, cap: number) => Math.min(text.length, cap + REDACT_MARGIN_CHARS);
  let n = room(t.stdout, captureBytes) + room(t.stderr, captureBytes);
  for (const v of Object.values(record)) if (typeof v === "string") n += room(v, HOOK_FIELD_BYTES);
  for (const [k, v] of Object.entries(t.env).slice(0, ENV_FIELDS_KEPT)) n += room(k, ENV_FIELD_BYTES) + room(v, ENV_FIELD_BYTES);
  return n;
}

/** Resolves at once, or — `BUILD_SLICE_MS` after the last time it let the event loop in — after letting it in. */
function slicer(): () => Promise<void> {
  let sliceStart = performance.now();
  return async () => {
    if (performance.now() - sliceStart < BUILD_SLICE_MS) return;
    await afterIO();
    sliceStart = performance.now();
  };
}

/** `items.map(fn)`, letting the event loop in every `BUILD_SLICE_MS`: for per-hook work on a thousand hooks. */
export async function mapInSlices<T, U>(items: readonly T[], fn: (item: T, i: number) => U): Promise<U[]> {
  const out: U[] = [];
  let sliceStart = performance.now();
  for (let i = 0; i < items.length; i++) {
    if (performance.now() - sliceStart >= BUILD_SLICE_MS) {
      await afterIO();
      sliceStart = performance.now();
    }
    out.push(fn(items[i]!, i));
  }
  return out;
}

type Kept = { text: string; cut: boolean };

/** A hook past MAX_TRACE_EVENT_BYTES: what it decided and how it ended, without what it read or printed. */
function omittedHookOf(record: HookRecord, t: HookTrace, why = TRACE_FULL): StoredHook {
  return {
    ...keepStrings(record, OMITTED_FIELD_BYTES),
    warm: t.warm,
    offset_ms: t.offset_ms,
    stdin: why,
    stdout: why,
    stderr: why,
    env: {},
    truncated: { stdin: true, stdout: true, stderr: true },
  };
}

/**
 * A repository hook's env comes from the tenant's own files: shown redacted (a secret-named value whole). Any other hook's comes
 * from the operator's configuration and runs for every tenant: names only.
 */
function envOf(record: HookRecord, t: HookTrace): Record<string, string> {
  const own = record.source === "repository";
  const entries = Object.entries(t.env);
  const shown = Object.fromEntries(
    entries.slice(0, ENV_FIELDS_KEPT).map(([k, v]) => [keep(k, ENV_FIELD_BYTES), !own ? HIDDEN : isSecretName(k) ? REDACTED : keep(v, ENV_FIELD_BYTES)]),
  );
  if (entries.length > ENV_FIELDS_KEPT) shown["…"] = `${entries.length - ENV_FIELDS_KEPT} more not shown`;
  return shown;
}

/**
 * The event a hook read, redacted; all but its `METADATA_FIELDS` left out unless inputs are kept. Only about
 * `captureBytes` of it is ever redacted, however large the event.
 */
async function stdinOf(stdin: Uint8Array, keepInputs: boolean, captureBytes: number, slice: () => Promise<void>): Promise<Kept> {
  // The value the payload was made from (never parsed again: a mebibyte's JSON.parse would hold the
  // loop in one piece); a stdin of no payload's, parsed only when small.
  let value: unknown = payloadValue(stdin);
  if (value === undefined && stdin.byteLength <= PARSED_STDIN_BYTES) {
    try {
      value = JSON.parse(Buffer.from(stdin).toString("utf8"));
    } catch {
      // not JSON, or nested past the stack: kept as text
    }
  }
  let json: Kept | undefined;
  if (value !== undefined) {
    if (!keepInputs && value !== null && typeof value === "object" && !Array.isArray(value)) {
      // a copy: the payload's value is the event's own
      const shown: Record<string, unknown> = {};
      for (const f of Object.keys(value)) shown[f] = METADATA_FIELDS.has(f) ? (value as Record<string, unknown>)[f] : OMITTED;
      value = shown;
    }
    try {
      json = await inSlices(redactJsonSteps(value, captureBytes + REDACT_MARGIN_CHARS), slice);
    } catch {
      // nested past the stack: kept as text
    }
  }
  if (!json) return inSlices(capRedactSteps(Buffer.from(stdin).toString("utf8"), captureBytes), slice);
  const kept = headBytes(json.text, captureBytes);
  return { text: kept, cut: json.cut || kept.length < json.text.length };
}
