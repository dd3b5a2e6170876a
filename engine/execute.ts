/**
 * @module Runs the hooks an event selected (SERVICE.md §4): one step after another, a step being
 * one hook or a parallel batch; the first effective block stops the rest. Each hook goes to its
 * runner — policy hooks to the host, every other one to a new container.
 */
import { posix } from "node:path";
import { applyTrust, blockCounts, isEffective, MessageBudget, notificationOf, sameJson, type Judged, type Notification } from "./aggregate.js";
import type { Decision, Format } from "./events.js";
import type { HookDef } from "./hooks.js";
import { planSteps } from "./match.js";
import type { Limits } from "./names.js";
import { changeAsRun, interpret } from "./formats/registry.js";
import { clipWords, hookCalled, MAX_HOOK_MESSAGE_CHARS, wellFormedJson } from "./formats/shared.js";
import { DEFAULT_TRACE_LIMITS } from "./trace-limits.js";
import { MAX_EVENT_TOOL_NAMES, type Verdict } from "./verdict.js";
import type { PayloadCache } from "./payload.js";
import { STALE_WORKSPACE_ERROR, type RunRequest, type RunResult, type Runner, type Outcome } from "./run/types.js";
import type { SandboxConfig } from "./config.js";
import { mapLimited } from "./map-limited.js";
import { head, headOfWords } from "./detached.js";
import { jsonShapeProblem } from "./event-body.js";
import { heavyTurns, TURN_BODY_BYTES } from "./turns.js";
import { block } from "./visible-text.js";

/** One hook's line in a response and in the audit log. */
export interface HookRecord {
  name: string;
  source: HookDef["source"];
  sandbox: "host" | "container";
  format: Format;
  origin: string;
  decision: Decision | null;
  /** false where the event is not interceptable for this hook's format: recorded, changes nothing */
  effective: boolean;
  rule: string;
  outcome: Outcome;
  exit_code: number | null;
  timed_out: boolean;
  duration_ms: number;
  /** set-up before the hook ran (container create and start, or spawn) */
  start_ms: number;
  /** container removal before the answer (cold runs only; pooled containers go after it) */
  remove_ms: number | null;
  error: string | null;
  reason?: string;
  systemMessage?: string;
  /** "rewritten": the policy hooks' second pass, over the arguments other hooks changed */
  pass?: "rewritten";
}

/** What a trace keeps of one hook's run, beyond its record: what went in and came out, and when. */
export interface HookTrace {
  stdin: Uint8Array;
  /** the head of each stream (what a trace can show, and a margin) … */
  stdout: string;
  stderr: string;
  /** … and how long the whole stream was */
  stdoutBytes: number;
  stderrBytes: number;
  env: Record<string, string>;
  /** from the start of the event's hooks to this hook's start */
  offset_ms: number;
  warm: boolean;
}

export interface Runners {
  host: Runner;
  container: Runner;
}

export interface ExecuteOptions {
  runners: Runners;
  sandbox: SandboxConfig;
  payloads: PayloadCache;
  workspaceDir?: string;
  /** whether `workspaceDir` still holds the workspace whose hooks these are: no container runs a replaced one */
  workspaceCurrent?: () => boolean;
  /** the stored workspace's upload (WorkspaceStore): what its cached archive is known by */
  workspaceVersion?: string;
  signal?: AbortSignal;
  eventId?: string;
  /** the tenant: its share of the warm pool */
  party?: string;
  /** the tenant's `repository_may_rewrite`: its repositories' argument changes count */
  repositoryMayRewrite?: boolean;
  /** marks the records of a second pass (the policy hooks again, over rewritten arguments) */
  pass?: "rewritten";
  /**
   * A second pass: the changed arguments the policy hooks look at (as run). Every change one of them
   * makes is compared with them, as run, before a later change lets it go (`Executed.changedInTurn`).
   */
  changedFrom?: unknown;
  /** `[traces] capture_bytes`: how much of each stream a trace shows; @default DEFAULT_TRACE_LIMITS */
  traceCaptureBytes?: number;
  /**
   * `performance.now()` by which every hook of the event is done (`[sandbox] max_event_ms`): each
   * hook's timeout is cut to it, counted from the hook's start (a container's start, a warm
   * hand-over, may run past it by the engine's time)
   */
  deadline?: number;
  /**
   * each hook as it finishes, with its verdict under its tier (a stop, a replaced output, a change its
   * tier let stand, the tools it leaves the model); `cut`: the hook never got to decide (Undecided) —
   * what an early answer must not take for no block
   */
  onHook?: (record: HookRecord, notification: Notification | undefined, judged: Judged, cut?: Undecided) => void;
}

export interface Executed {
  judged: Judged[];
  records: HookRecord[];
  traces: HookTrace[];
  /**
   * The first hook that hookbox's own limits, not its agent's rules, kept from deciding: the event's
   * deadline (`max_event_ms`: not run, or ended by that deadline rather than its own timeout), or
   * the output cap (`max_output_bytes`: stopped before it could finish its answer — its agent has no
   * such cap, and would have read it), a run hookbox could not start (`failed_to_start`: the
   * engine down, its image missing — no fault of the hook, which never ran), a timeout after
   * hookbox's own preparation took part of the hook's time (`preparation`), or a timeout at
   * `[sandbox] max_timeout` where its agent would have waited longer (`max_timeout`).
   */
  undecided?: Undecided;
  /** with `changedFrom`: a hook changed the arguments into other ones (saying again what it was shown is no change) */
  changedInTurn?: boolean;
}

export interface Undecided {
  /** the hook as texts name it (hookCalled) */
  hook: string;
  /** whether its block would count where it ran (blockCounts): else its not deciding is no failure-mode block either */
  counts: boolean;
  why: "max_event_ms" | "max_timeout" | "max_output_bytes" | "memory" | "failed_to_start" | "preparation" | "output_shape";
  /** the output cap the hook ran under (its own, where it lowers the sandbox's) */
  capBytes: number;
  /** `max_timeout`: the time it ran for, and the longer time its agent gives it */
  timeoutMs?: number;
  agentTimeoutMs?: number;
  /** what hookbox's preparation took of the hook's time (`preparation`: it then timed out) */
  preparedMs?: number;
}

/** Whose change is answered when several hooks change the arguments: the highest tier's last one. */
const CHANGE_RANK: Record<HookDef["source"], number> = { policy: 3, service: 2, extension: 2, repository: 1 };

export async function executeHooks(hooks: HookDef[], opts: ExecuteOptions): Promise<Executed> {
  const judged: Judged[] = [];
  const records: HookRecord[] = [];
  const traces: HookTrace[] = [];
  const t0 = performance.now();
  let undecided: Undecided | undefined;
  // What streams to the client as hooks finish: the same cap on an event's messages as its answer.
  const budget = new MessageBudget();
  /** the last change an allowing or undecided hook made: the one the fold answers (each earlier one is let go as a later one comes) */
  let lastChange: Judged | undefined;
  /** the last replacement of the tool's output: the one the fold answers (each earlier one is let go as a later one comes) */
  let lastReplaced: Judged | undefined;
  let changedInTurn = false;
  /** tool names the hooks' lists hold so far (MAX_EVENT_TOOL_NAMES) */
  let toolNames = 0;
  for (const step of planSteps(hooks)) {
    // `[sandbox] max_containers_per_event`: a parallel step runs this many at once, whatever its config says.
    // Each hook is told as it finishes (its notification streams, an early answer sees it), even
    // while others of its parallel step still run; the fold keeps the configuration's order.
    const done = await mapLimited(step, opts.sandbox.maxContainersPerEvent, async (hook) => {
      const out = await runOne(hook, opts, t0);
      toolNames += keepToolNames(out[0], out[1], MAX_EVENT_TOOL_NAMES - toolNames);
      opts.onHook?.(out[1], budget.take(notificationOf(out[0])), out[0], out[3]);
      return out;
    });
    for (const [j, record, trace, cut] of done) {
      // Each change of a second pass, as its agent would run it, before any later one lets it go.
      if (opts.changedFrom !== undefined && j.verdict.modifiedArgs !== undefined && !sameJson(asRun(j.verdict, j.hook, opts).modifiedArgs, opts.changedFrom)) changedInTurn = true;
      if (j.verdict.modifiedArgs !== undefined && j.verdict.decision !== "block") {
        // An operator's change (or an administrator's) outranks a repository's that comes after it,
        // even a trusted one: the repository may not undo the wrapper an operator put around a command.
        if (lastChange && CHANGE_RANK[j.hook.source] < CHANGE_RANK[lastChange.hook.source]) {
          delete j.verdict.modifiedArgs;
          j.verdict.rule = `${j.verdict.rule}; its change is dropped: ${lastChange.hook.source} hook ${lastChange.hook.name} changed the arguments first`;
          record.rule = j.verdict.rule;
        } else {
          // A thousand hooks each changing a megabyte of arguments would otherwise all be held.
          if (lastChange) delete lastChange.verdict.modifiedArgs;
          lastChange = j;
        }
      }
      // A thousand hooks each replacing the output with a megabyte would otherwise all be held too.
      if (j.verdict.updatedOutput !== undefined) {
        if (lastReplaced) delete lastReplaced.verdict.updatedOutput;
        lastReplaced = j;
      }
      judged.push(j);
      records.push(record);
      traces.push(trace);
      // the first hook cut whose block would count, else the first cut
      if (cut && (undecided === undefined || (!undecided.counts && cut.counts))) undecided = cut;
    }
    // cosh-hooks.md: "If any hook returns block, the final decision is block (short-circuit)"
    // … and so does a hook that stops the agent altogether (`continue: false`).
    if (done.some(([j]) => (isEffective(j) && j.verdict.decision === "block") || j.verdict.halt !== undefined)) break;
    if (opts.signal?.aborted) break;
  }
  // Merged into the arguments as its agent merges them (cosh-ng and Gemini CLI deeply or over them):
  // once, for the one change answered.
  if (lastChange?.verdict.modifiedArgs !== undefined) lastChange.verdict = asRun(lastChange.verdict, lastChange.hook, opts);
  return { judged, records, traces, ...(undecided !== undefined ? { undecided } : {}), ...(changedInTurn ? { changedInTurn } : {}) };
}

/**
 * A hook's tool list cut to the `room` the event has left for names (MAX_EVENT_TOOL_NAMES; never
 * below 0, as each hook keeps at most the room it is given), its record saying so; the names it keeps.
 */
function keepToolNames(j: Judged, record: HookRecord, room: number): number {
  const selection = j.verdict.toolSelection;
  if (selection?.names === undefined) return 0;
  if (selection.names.length <= room) return selection.names.length;
  j.verdict.toolSelection = { ...selection, names: selection.names.slice(0, room) };
  j.verdict.rule = record.rule = `${j.verdict.rule}; its list cut at ${room} names: the event's hooks that finished before it listed ${MAX_EVENT_TOOL_NAMES - room} (MAX_EVENT_TOOL_NAMES ${MAX_EVENT_TOOL_NAMES}; those cut not allowed)`;
  return room;
}

/** What a hook that the event's deadline left no time for "ran": a timeout, judged by its format's rule. */
const NO_TIME: RunResult = { outcome: "timed_out", exitCode: null, stdout: "", stderr: "", durationMs: 0, startMs: 0 };
/**
 * The workspace was replaced (or deleted) after the event read its hooks: its folder holds another
 * tree than the one those hooks were written for — hookbox's failure to run them, never a run of
 * them over files they do not know.
 */
const STALE_WORKSPACE: RunResult = { outcome: "failed_to_start", exitCode: null, stdout: "", stderr: "", durationMs: 0, startMs: 0, error: STALE_WORKSPACE_ERROR };
const NO_TIME_ERROR = "not run: the event's max_event_ms had passed";

async function runOne(hook: HookDef, opts: ExecuteOptions, t0: number): Promise<[Judged, HookRecord, HookTrace, Undecided | undefined]> {
  const onHost = hook.source === "policy";
  const request = requestFor(hook, onHost, opts);
  const offset = performance.now() - t0;
  const leftMs = opts.deadline === undefined ? Infinity : Math.floor(opts.deadline - performance.now());
  const ownTimeoutMs = request.timeoutMs;
  request.timeoutMs = Math.min(request.timeoutMs, leftMs);
  // Only a repository's hooks were read from the workspace; the operator's run whatever it holds.
  const stale = hook.source === "repository" && opts.workspaceDir !== undefined && opts.workspaceCurrent !== undefined && !opts.workspaceCurrent();
  const run = leftMs <= 0 ? NO_TIME
    : hook.unrunnable !== undefined ? { ...STALE_WORKSPACE, error: `not run: ${hook.unrunnable}` }
    : stale ? STALE_WORKSPACE : await (onHost ? opts.runners.host : opts.runners.container).run(request);
  // Ended by the event's deadline, not by its own timeout, or by the output cap: it never got to decide.
  // Cut by max_timeout short of the time its agent would have given it: it never got its time either.
  const agentTimeoutMs = hook.agentTimeoutMs ?? (hook.timeoutMs > opts.sandbox.maxTimeoutMs ? hook.timeoutMs : undefined);
  // A large answer is read in a turn of its own (turns.ts), as a large event body is parsed: a
  // tenant's thousand hooks each printing a mebibyte take turns with other tenants' heavy work, never
  // hold the thread back to back. Everything up to the verdict below is done without awaiting.
  if (run.stdout.length >= TURN_BODY_BYTES || run.stderr.length >= TURN_BODY_BYTES) await heavyTurns.take(opts.party ?? "");
  // Trust first: a change it drops is never merged into the arguments (a megabyte of keys would cost the merge).
  const verdict = capMessages(visibleText(checkedChange(applyTrust(interpret(run, hook, opts.payloads.event), hook.source, { repositoryMayRewrite: opts.repositoryMayRewrite === true, point: hook.point })), hook.source));
  const why: Undecided["why"] | undefined = run === NO_TIME || (run.outcome === "timed_out" && leftMs < ownTimeoutMs) ? "max_event_ms"
    : run.outcome === "timed_out" && agentTimeoutMs !== undefined ? "max_timeout"
    : run.outcome === "timed_out" && (run.preparedMs ?? 0) > 0 ? "preparation"
    : run.outcome === "output_truncated" ? "max_output_bytes"
    // Killed at the sandbox's memory limit: a limit of hookbox's, which its agent does not set.
    : run.outcome === "oom_killed" ? "memory"
    : run.outcome === "failed_to_start" ? "failed_to_start"
    // An answer past hookbox's bounds for one (64 levels, 65,536 arrays and objects, 16,384 keys in one object): its agent would read it.
    : verdict.limit === "output_shape" ? "output_shape" : undefined;
  const undecided: Undecided | undefined = why && {
    hook: hookCalled(hook), counts: blockCounts(hook.source, hook.point), why, capBytes: request.limits.maxOutputBytes,
    ...(run.preparedMs !== undefined ? { preparedMs: run.preparedMs } : {}),
    ...(why === "max_timeout" ? { timeoutMs: request.timeoutMs, agentTimeoutMs } : {}),
  };
  if (run === NO_TIME) verdict.error = NO_TIME_ERROR;
  const j: Judged = { hook, verdict };
  // What the trace can show of each stream, not all of it: an event's hooks together printed up to
  // 2 × max_output_bytes each, and all of it would wait in memory until the trace is written.
  const keepChars = (opts.traceCaptureBytes ?? DEFAULT_TRACE_LIMITS.captureBytes) + TRACE_MARGIN_CHARS;
  const trace: HookTrace = {
    stdin: request.stdin,
    stdout: head(run.stdout, keepChars), stdoutBytes: Buffer.byteLength(run.stdout),
    stderr: head(run.stderr, keepChars), stderrBytes: Buffer.byteLength(run.stderr),
    env: hook.env, offset_ms: Math.round(offset), warm: run.warm === true,
  };
  return [j, { ...record(hook, onHost, run, j), ...(opts.pass ? { pass: opts.pass } : {}) }, trace, undecided];
}

/**
 * A change is the tool's arguments as a JSON object; Copilot's hooks may give one as a JSON string
 * of it (as its events carry them), read here once — no deeper than MAX_EVENT_DEPTH. Anything else
 * (an array, a number, a string that is no such object) is no arguments a policy hook could look at:
 * an error of the hook, its change dropped and the allow given with it.
 */
function checkedChange(verdict: Verdict): Verdict {
  const change = verdict.modifiedArgs;
  if (change === undefined) return verdict;
  let value: unknown = change;
  if (typeof change === "string") {
    const bytes = Buffer.from(change);
    value = undefined;
    if (!jsonShapeProblem(bytes)) {
      try {
        value = wellFormedJson(change, JSON.parse(change));
      } catch {
        // not JSON: no arguments
      }
    }
  }
  if (typeof value === "object" && value !== null && !Array.isArray(value)) return value === change ? verdict : { ...verdict, modifiedArgs: value };
  const { modifiedArgs: _dropped, ...rest } = verdict;
  return {
    ...rest,
    decision: rest.decision === "allow" ? null : rest.decision,
    error: rest.error ?? "changed arguments that are not a JSON object (nor a JSON string of one): the change is dropped, and an allow given with it",
    rule: `${rest.rule}; a change that is not a JSON object of arguments is dropped`,
  };
}

/** A verdict's argument change as its agent runs it (its format's rule): what the policy hooks look at again. */
function asRun(verdict: Verdict, hook: HookDef, opts: ExecuteOptions): Verdict {
  if (verdict.modifiedArgs === undefined) return verdict;
  return { ...verdict, modifiedArgs: changeAsRun(hook.format, verdict.modifiedArgs, () => opts.payloads.toolArguments()) };
}

/** Room past `capture_bytes` kept for the trace, so a secret straddling the cut is still redacted there. */
const TRACE_MARGIN_CHARS = 1024;

/** (MAX_HOOK_MESSAGE_CHARS: shared.ts, where a repository's marked words are cut to it too) */
export { MAX_HOOK_MESSAGE_CHARS };

/**
 * @default 1 KiB — a hook's error, as its record in the answer and the trace carries it: an answer
 * lists every hook of the event, a thousand of them.
 */
export const MAX_HOOK_ERROR_CHARS = 1024;

/**
 * What a repository hook says to the agent and its user, its controls and invisible characters
 * shown as escapes (visible-text.ts): an agent shows a hook's message in a terminal, where an escape
 * sequence could rewrite the screen or a bidi override reorder what the user reads.
 */
function visibleText(verdict: Verdict, source: HookDef["source"]): Verdict {
  if (source !== "repository") return verdict;
  for (const key of ["reason", "systemMessage", "warning", "additionalContext", "halt"] as const) {
    const text = verdict[key];
    // Only what capMessages can keep, and one character more to show it was cut: an escape only
    // lengthens, one character at a time, so the kept head is the same — and a mebibyte of control
    // characters is not made into four mebibytes of escapes first (half a second of the thread).
    if (text !== undefined) verdict[key] = block(text.length > MAX_HOOK_MESSAGE_CHARS ? text.slice(0, MAX_HOOK_MESSAGE_CHARS + 1) : text);
  }
  return verdict;
}

function capMessages(verdict: Verdict): Verdict {
  for (const key of ["reason", "systemMessage", "warning", "additionalContext", "halt"] as const) {
    const text = verdict[key];
    if (text !== undefined && text.length > MAX_HOOK_MESSAGE_CHARS) verdict[key] = clipWords(text, MAX_HOOK_MESSAGE_CHARS);
  }
  if (verdict.error !== null && verdict.error.length > MAX_HOOK_ERROR_CHARS) verdict.error = clipWords(verdict.error, MAX_HOOK_ERROR_CHARS);
  return verdict;
}

function requestFor(hook: HookDef, onHost: boolean, opts: ExecuteOptions): RunRequest {
  const { sandbox } = opts;
  return {
    command: hook.command,
    ...(hook.shell ? { shell: hook.shell } : {}),
    stdin: opts.payloads.for(hook.dialect, hook.eventName),
    env: hook.env,
    timeoutMs: Math.min(hook.timeoutMs, sandbox.maxTimeoutMs),
    limits: lower(sandbox.limits, hook.limits),
    // A repository cannot choose its image: it runs in the sandbox's.
    image: hook.source === "repository" ? sandbox.image : (hook.image ?? sandbox.image),
    runtime: sandbox.runtime,
    workspaceDir: onHost ? undefined : opts.workspaceDir,
    mounts: [...sandbox.mounts, ...hook.mounts],
    cwd: onHost ? hook.cwd : hook.cwd && posix.normalize(hook.cwd),
    signal: opts.signal,
    eventId: opts.eventId,
    ...(opts.party !== undefined ? { party: opts.party } : {}),
    ...(!onHost && opts.workspaceVersion !== undefined ? { workspaceVersion: opts.workspaceVersion } : {}),
    // Checked again once its files are ready for the container: a replacement while they were packed is caught there.
    ...(!onHost && hook.source === "repository" && opts.workspaceCurrent !== undefined ? { workspaceCurrent: opts.workspaceCurrent } : {}),
    ...(hook.source === "repository" && Object.values(hook.limits).some((v) => v !== undefined) ? { poolable: false } : {}),
  };
}

/** A hook may lower the sandbox's limits, never raise them. */
function lower(base: Limits, wanted: Partial<Limits>): Limits {
  const out = { ...base };
  for (const key of Object.keys(wanted) as (keyof Limits)[]) {
    const v = wanted[key];
    if (v !== undefined) out[key] = Math.min(base[key], v);
  }
  return out;
}

function record(hook: HookDef, onHost: boolean, run: RunResult, j: Judged): HookRecord {
  return {
    name: hook.name,
    source: hook.source,
    sandbox: onHost ? "host" : "container",
    format: hook.format,
    origin: hook.origin,
    decision: j.verdict.decision,
    effective: isEffective(j),
    rule: j.verdict.rule,
    outcome: run.outcome,
    exit_code: run.exitCode,
    timed_out: run.outcome === "timed_out",
    duration_ms: Math.round(run.durationMs),
    start_ms: Math.round(run.startMs),
    remove_ms: run.removeMs !== undefined ? Math.round(run.removeMs) : null,
    error: j.verdict.error,
    ...(j.verdict.reason ? { reason: recordText(j.verdict.reason) } : {}),
    ...(j.verdict.systemMessage ? { systemMessage: recordText(j.verdict.systemMessage) } : {}),
  };
}

/** At most MAX_RECORD_MESSAGE_CHARS of a text, marked as the trace marks what it cuts. */
function recordText(text: string): string {
  if (text.length <= MAX_RECORD_MESSAGE_CHARS) return text;
  const kept = headOfWords(text, MAX_RECORD_MESSAGE_CHARS);
  return `${kept}…[truncated ${Buffer.byteLength(text) - Buffer.byteLength(kept)} bytes]`;
}

/**
 * @default 1 KiB — a hook's reason and message as `hooks[]` repeats them: the whole texts are in
 * the answer's reason, its notifications and the trace; a thousand hooks' records stay small.
 */
export const MAX_RECORD_MESSAGE_CHARS = 1024;
