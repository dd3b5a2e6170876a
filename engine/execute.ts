/**
 * @module Runs the hooks an event selected (SERVICE.md §4): one step after another, a step being
 * one hook or a parallel batch; the first effective block stops the rest. Each hook goes to its
 * runner — policy hooks to the host, every other one to a new container.
 */
import { posix } from "node:path";
import { isEffective, notificationOf, type Judged, type Notification } from "./aggregate.js";
import type { Decision, Format } from "./events.js";
import type { HookDef } from "./hooks.js";
import { planSteps } from "./match.js";
import type { Limits } from "./names.js";
import { interpretClaude } from "./formats/claude-settings.js";
import { interpretCopilot } from "./formats/copilot-json.js";
import { interpretCosh } from "./formats/cosh-toml.js";
import type { PayloadCache } from "./payload.js";
import type { RunRequest, RunResult, Runner, Outcome } from "./run/types.js";
import type { SandboxConfig } from "./config.js";
import type { Interpret } from "./verdict.js";

const INTERPRET: Record<Format, Interpret> = { cosh: interpretCosh, copilot: interpretCopilot, claude: interpretClaude };

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
}

/** What a trace keeps of one hook's run, beyond its record: what went in and came out, and when. */
export interface HookTrace {
  stdin: Uint8Array;
  stdout: string;
  stderr: string;
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
  signal?: AbortSignal;
  eventId?: string;
  onHook?: (record: HookRecord, notification: Notification | undefined) => void;
}

export async function executeHooks(hooks: HookDef[], opts: ExecuteOptions): Promise<{ judged: Judged[]; records: HookRecord[]; traces: HookTrace[] }> {
  const judged: Judged[] = [];
  const records: HookRecord[] = [];
  const traces: HookTrace[] = [];
  const t0 = performance.now();
  for (const step of planSteps(hooks)) {
    const done = await Promise.all(step.map((hook) => runOne(hook, opts, t0)));
    for (const [j, record, trace] of done) {
      judged.push(j);
      records.push(record);
      traces.push(trace);
      opts.onHook?.(record, notificationOf(j));
    }
    // cosh-hooks.md: "If any hook returns block, the final decision is block (short-circuit)"
    if (done.some(([j]) => isEffective(j) && j.verdict.decision === "block")) break;
    if (opts.signal?.aborted) break;
  }
  return { judged, records, traces };
}

async function runOne(hook: HookDef, opts: ExecuteOptions, t0: number): Promise<[Judged, HookRecord, HookTrace]> {
  const onHost = hook.source === "policy";
  const request = requestFor(hook, onHost, opts);
  const offset = performance.now() - t0;
  const run = await (onHost ? opts.runners.host : opts.runners.container).run(request);
  const verdict = INTERPRET[hook.format](run, hook);
  const j: Judged = { hook, verdict };
  const trace: HookTrace = { stdin: request.stdin, stdout: run.stdout, stderr: run.stderr, env: hook.env, offset_ms: Math.round(offset), warm: run.warm === true };
  return [j, record(hook, onHost, run, j), trace];
}

function requestFor(hook: HookDef, onHost: boolean, opts: ExecuteOptions): RunRequest {
  const { sandbox } = opts;
  return {
    command: hook.command,
    stdin: opts.payloads.for(hook.dialect),
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
    ...(j.verdict.reason ? { reason: j.verdict.reason } : {}),
    ...(j.verdict.systemMessage ? { systemMessage: j.verdict.systemMessage } : {}),
  };
}
