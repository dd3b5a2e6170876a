/**
 * @module The engine: what a hook event means and how its hooks run. The one file service/ imports.
 */
import { randomUUID } from "node:crypto";
import { fold, type Notification } from "./aggregate.js";
import { answerFor } from "./answer.js";
import type { Config, Tenant } from "./config.js";
import { BadRequestError } from "./errors.js";
import { EVENT_NAMES, resolveEventName, unknownEventMessage, type Decision, type Format } from "./events.js";
import { executeHooks, type HookRecord, type HookTrace, type Runners } from "./execute.js";
import { Gate } from "./run/gate.js";
import type { Runner } from "./run/types.js";
import { emptyHookSet, type HookSet } from "./hooks.js";
import { selectHooks } from "./match.js";
import { bodyEventName, detectDialect, PayloadCache, toolName, type JsonObject } from "./payload.js";

export { loadConfig, parseConfig, type Config, type Tenant, type SandboxConfig } from "./config.js";
export * from "./errors.js";
export { FORMATS, EVENT_NAMES, resolveEventName, type Decision, type Format } from "./events.js";
export type { HookRecord, HookTrace, Runners } from "./execute.js";
export { TraceStore, type StoredTrace, type TraceSummary, type TraceQuery } from "./traces/store.js";
export type { Notification } from "./aggregate.js";
export type { HookDef, HookSet } from "./hooks.js";
export { loadRepositoryHooks } from "./repository.js";
export { HostRunner } from "./run/host-runner.js";
export { ContainerRunner } from "./run/container-runner.js";
export { startReaper } from "./run/reaper.js";
export { DEFAULT_POOL, type PoolOptions } from "./run/warm-pool.js";
export type { RunRequest, RunResult, Runner } from "./run/types.js";
export { WorkspaceStore, type WorkspaceInfo } from "./workspace-store.js";
export { parseEventBody } from "./event-body.js";

export interface EventRequest {
  /** the body, parsed: what the agent would pipe to a hook's stdin */
  body: JsonObject;
  /** its bytes, handed verbatim to hooks of the body's dialect */
  raw: Uint8Array;
  /** from the path (`/v1/events/{event}`); else the body names it */
  eventName?: string;
  tenant: Pick<Tenant, "name" | "repositoryHooks">;
  /** an uploaded workspace: its folder (seen at /workspace) and its repository hooks */
  workspace?: { dir: string; hooks: HookSet };
  /** false: no one can answer an `ask` (copilot-hooks.md autopilot) */
  interactive: boolean;
  /** dialect of `output`; default: the body's */
  format?: Format;
  signal?: AbortSignal;
  eventId?: string;
  /** called as each hook finishes, in order (streaming) */
  onHook?: (record: HookRecord, notification: Notification | undefined) => void;
}

export interface EventResult {
  event_id: string;
  event: string;
  decision: Decision | null;
  reason?: string;
  systemMessage?: string;
  hookSpecificOutput?: { additional_context: string };
  modifiedArgs?: unknown;
  notifications: Notification[];
  hooks: HookRecord[];
  output: Record<string, unknown>;
  exit_code: number;
  /** a service rule that changed the decision (ask → block when not interactive) */
  note?: string;
  /** the tool the event is about, for the audit log */
  tool_name?: string;
  session_id?: string;
  /** for the trace store, not the response: what each hook got and gave, and when */
  trace: { queued_ms: number; hooks: HookTrace[] };
}

export interface PreparedEvent {
  /** canonical (PascalCase) name of the event's point */
  event: string;
  /** how many hooks it will run */
  hookCount: number;
  run(): Promise<EventResult>;
}

export interface EngineStats {
  /** events running hooks now */
  running: number;
  /** events waiting for a slot */
  queued: number;
  /** container hook runs in flight */
  containers: number;
  /** pre-started containers waiting for a hook */
  poolReady: number;
}

export interface Engine {
  /**
   * Checks the request and takes its place in the queue — throws BadRequestError, OverloadedError
   * before anything runs — and returns what runs it.
   */
  prepare(request: EventRequest): PreparedEvent;
  handleEvent(request: EventRequest): Promise<EventResult>;
  stats(): EngineStats;
}

export function createEngine(deps: { config: Config; runners: Runners; poolReady?: () => number }): Engine {
  const { config } = deps;
  const gate = new Gate(config.sandbox.maxConcurrency, config.sandbox.maxQueue);
  let containers = 0;
  const container: Runner = {
    kind: "container",
    async run(request) {
      containers++;
      try {
        return await deps.runners.container.run(request);
      } finally {
        containers--;
      }
    },
  };
  const runners: Runners = { host: deps.runners.host, container };

  function prepare(req: EventRequest): PreparedEvent {
    const named = req.eventName ?? bodyEventName(req.body);
    if (named === undefined) throw new BadRequestError("the event name is missing: give it in the path (/v1/events/{event}) or as hook_event_name in the body", "hook_event_name", "event_missing");
    const resolved = resolveEventName(named);
    if (!resolved) {
      throw new BadRequestError(`${unknownEventMessage(named)}; known: ${EVENT_NAMES.join(", ")}`, req.eventName !== undefined ? "event" : "hook_event_name", "unknown_event");
    }
    const { point } = resolved;
    const dialect = detectDialect(req.body, resolved.dialect);
    const tool = toolName(req.body);
    const hooks = selectHooks(
      { policy: config.policy, service: config.service, extension: config.extension, repository: req.workspace?.hooks ?? emptyHookSet() },
      point,
      tool,
      { hooksEnabled: config.hooksEnabled, repositoryHooks: req.tenant.repositoryHooks },
    );
    // An event that matches no hook needs no slot.
    const ticket = hooks.length > 0 ? gate.enter(req.signal) : undefined;
    const eventId = req.eventId ?? newEventId();
    return {
      event: point,
      hookCount: hooks.length,
      async run() {
        try {
          const tQueued = performance.now();
          await ticket?.ready;
          const queuedMs = Math.round(performance.now() - tQueued);
          const { judged, records, traces } = await executeHooks(hooks, {
            runners,
            sandbox: config.sandbox,
            payloads: new PayloadCache(req.raw, req.body, dialect, point),
            workspaceDir: req.workspace?.dir,
            signal: req.signal,
            eventId,
            onHook: req.onHook,
          });
          const folded = fold(judged, { interactive: req.interactive });
          const format = req.format ?? (dialect === "camel" ? "copilot" : "cosh");
          const answer = answerFor(format, point, folded);
          const session = req.body.session_id ?? req.body.sessionId;
          return {
            event_id: eventId,
            event: point,
            decision: folded.decision,
            ...(folded.reason !== undefined ? { reason: folded.reason } : {}),
            ...(folded.systemMessage !== undefined ? { systemMessage: folded.systemMessage } : {}),
            ...(folded.additionalContext !== undefined ? { hookSpecificOutput: { additional_context: folded.additionalContext } } : {}),
            ...(folded.modifiedArgs !== undefined ? { modifiedArgs: folded.modifiedArgs } : {}),
            notifications: folded.notifications,
            hooks: records,
            output: answer.output,
            exit_code: answer.exit_code,
            ...(folded.note ? { note: folded.note } : {}),
            ...(tool !== undefined ? { tool_name: tool } : {}),
            ...(typeof session === "string" ? { session_id: session } : {}),
            trace: { queued_ms: queuedMs, hooks: traces },
          };
        } finally {
          ticket?.release();
        }
      },
    };
  }

  return {
    prepare,
    handleEvent: (req) => prepare(req).run(),
    stats: () => ({ running: gate.active, queued: gate.depth, containers, poolReady: deps.poolReady?.() ?? 0 }),
  };
}

export function newEventId(): string {
  return `evt_${randomUUID().replaceAll("-", "")}`;
}
