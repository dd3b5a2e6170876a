/**
 * @module The engine: what a hook event means and how its hooks run. The one file service/ imports.
 */
import { randomUUID } from "node:crypto";
import { afterPolicyLook, blockCounts, changeLost, fold, foldToolSelection, RANK, withoutChange, type Folded, type Judged, type Notification } from "./aggregate.js";
import { agentOf, answerFor, blockWithoutEvent, changeAsRun, effectiveDecisions, takesNoChange, untakableChange } from "./formats/registry.js";
import { blockKeepsGoing, hookCalled, repositoryWords } from "./formats/shared.js";
import { failureModeFor, type Config, type FailureMode, type Tenant } from "./config.js";
import { BadRequestError, EventExpiredError } from "./errors.js";
import { EVENT_NAMES, pointHasTool, pointName, resolveEventName, unknownEventMessage, type Decision, type EventPoint, type Format } from "./events.js";
import { executeHooks, type ExecuteOptions, type HookRecord, type HookTrace, type Runners } from "./execute.js";
import { Admission } from "./admission.js";
import type { Runner } from "./run/types.js";
import { emptyHookSet, type HookSet } from "./hooks.js";
import { selectHooks } from "./match.js";
import { bodyEventName, detectDialect, PayloadCache, toolArgumentsOf, toolName, type JsonObject } from "./payload.js";

export { blockKeepsGoing } from "./formats/shared.js";
export { detached, head } from "./detached.js";
export { failureModeFor, loadConfig, strictestFailureMode, parseConfig, parseListen, type Config, type FailureMode, type Tenant, type SandboxConfig } from "./config.js";
export * from "./errors.js";
export { FORMATS, EVENT_NAMES, resolveEventName, type Decision, type Format } from "./events.js";
export { AGENT_DEADLINE_S, agentDeadlineS, type Agent } from "./agents.js";
export type { HookRecord, HookTrace, Runners } from "./execute.js";
export { DEFAULT_TRACE_LIMITS, type TraceLimits } from "./trace-limits.js";
export type { Notification } from "./aggregate.js";
export { SOURCES, type HookDef, type HookSet } from "./hooks.js";
export { loadRepositoryHooks, loadRepositoryHooksSync } from "./repository.js";
export { AT_ONCE_BODIES, heavyTurns, parseAtOnce, TURN_BODY_BYTES } from "./turns.js";
export { notePayloadWeight } from "./payload.js";
export { HostRunner } from "./run/host-runner.js";
export { ContainerRunner } from "./run/container-runner.js";
export { startReaper } from "./run/reaper.js";
export { processAlive, processStartTicks } from "./run/process-info.js";
export { DATA_DIR_LOCK } from "./names.js";
export { DEFAULT_POOL, type PoolOptions } from "./run/warm-pool.js";
export type { RunRequest, RunResult, Runner } from "./run/types.js";
export { checkWorkspaceId, TENANT_WORKSPACE_WAITERS, WorkspaceStore, type WorkspaceInfo } from "./workspace-store.js";
export { EventBodySchema, parseEventBody, parseEventBodyOffThread, toolArgsMemoryBytes, weighEventBody } from "./event-body.js";

/** Longest tool name matched against matchers; agents' tool names are far shorter (MCP's are ≤ 64). */
export const MAX_TOOL_NAME_CHARS = 256;

export interface EventRequest {
  /** the body, parsed: what the agent would pipe to a hook's stdin */
  body: JsonObject;
  /** its bytes, handed verbatim to hooks of the body's dialect */
  raw: Uint8Array;
  /** from the path (`/v1/events/{event}`); else the body names it */
  eventName?: string;
  tenant: Pick<Tenant, "name" | "repositoryHooks"> & Partial<Pick<Tenant, "repositoryMayRewrite" | "onFailure">>;
  /**
   * an uploaded workspace: its folder (seen at /workspace) and its repository hooks; `current`: whether
   * that is still the stored workspace (an upload of its id, or a delete, may come while the event waits)
   */
  workspace?: { dir: string; hooks: HookSet; current?: () => boolean; version?: string };
  /** the policy hooks alone run (the event names a workspace that is not there: its client gets what they block, else the 404) */
  policyOnly?: boolean;
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
  /** what the model sees in place of the tool's output (PostToolUse) */
  updatedOutput?: unknown;
  /** a hook stopped the agent altogether (`continue: false`), with this reason */
  continue?: false;
  stopReason?: string;
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
  /**
   * The answer to give now, before the event is done (its client's deadline is near), when a hook
   * finished so far blocked or asked at least as strongly as the tenant's failure mode would: its
   * decision. A slow hook then cannot undo what a trusted one already decided (a policy ask stays
   * an ask). Undefined otherwise (an allow too: the failure mode passes through to the agent's own
   * prompt, where an early allow would skip it). Argument changes are never passed on unfinished.
   * The event goes on and is recorded when done (one still waiting for a run slot is given up by its
   * caller, and recorded as such).
   */
  early(mode: FailureMode, why: string): Omit<EventResult, "trace" | "tool_name" | "session_id"> | undefined;
  /** Whether its turn to run has come (or it needs none): false while it waits for a run slot. */
  started(): boolean;
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
  const admission = new Admission({
    slots: config.sandbox.maxConcurrency,
    perTenantSlots: config.sandbox.maxTenantConcurrency,
    queue: config.sandbox.maxQueue,
  });
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
    if (tool !== undefined && tool.length > MAX_TOOL_NAME_CHARS)
      throw new BadRequestError(`the tool name is longer than ${MAX_TOOL_NAME_CHARS} characters`, req.body.tool_name !== undefined ? "tool_name" : "toolName", "bad_field");
    const hooks = selectHooks(
      req.policyOnly ? { ...NO_SOURCES, policy: config.policy } : { policy: config.policy, service: config.service, extension: config.extension, repository: req.workspace?.hooks ?? emptyHookSet() },
      point,
      tool,
      { hooksEnabled: config.hooksEnabled, repositoryHooks: req.tenant.repositoryHooks },
      req.body,
    );
    // `[sandbox] max_event_ms`, from the event's arrival: waiting for a slot counts too.
    const deadline = performance.now() + config.sandbox.maxEventMs;
    // A plain timer, cleared when the event is done (AbortSignal.timeout would hold each event's
    // signal for the whole max_event_ms). An event that matches no hook needs no slot and no timer.
    let ticket: ReturnType<Admission["enter"]> | undefined;
    let started = hooks.length === 0;
    let done = () => undefined as void;
    if (hooks.length > 0) {
      const expiry = new AbortController();
      const expiryTimer = setTimeout(() => expiry.abort(new Error("max_event_ms")), config.sandbox.maxEventMs);
      expiryTimer.unref();
      const onCancel = () => expiry.abort(req.signal!.reason);
      if (req.signal?.aborted) onCancel();
      else req.signal?.addEventListener("abort", onCancel, { once: true });
      done = () => {
        clearTimeout(expiryTimer);
        req.signal?.removeEventListener("abort", onCancel);
      };
      try {
        ticket = admission.enter(req.tenant.name, expiry.signal);
      } catch (err) {
        done();
        throw err;
      }
    }
    const eventId = req.eventId ?? newEventId();
    const format = req.format ?? (dialect === "camel" ? "copilot" : "cosh");
    const finished: HookRecord[] = [];
    /** the first finished hook that stopped the agent (`continue: false`): an early answer says so too */
    let halted: { name: string; source: HookRecord["source"]; reason: string } | undefined;
    /** the latest finished hook's replacement of the tool's output (its tier let it): an early answer carries it too */
    let replaced: unknown;
    /**
     * Where a block stops the call: there a change that cannot go out as the policy hooks checked it
     * blocks the call (afterPolicyLook), and an early answer blocks once a hook has made one.
     */
    /** a block stops the call here (one that keeps the agent going does not) */
    const blockStops = effectiveDecisions(point, format).has("block") && !blockKeepsGoing(point);
    const changeLostBlocks = CHANGE_RUNS.has(point) && blockStops;
    /**
     * Where the agent takes no change at all (Cursor's beforeShellExecution): the full answer asks
     * about the call as sent (untakenAnswered); an early one, with the event not done, blocks it.
     */
    const noChangeTaken = takesNoChange(format, point) && blockStops;
    /** the first finished hook (first look) whose change of the arguments its tier let stand */
    let changedBy: HookRecord | undefined;
    /** a finished hook whose block would count never got to decide: the failure mode is its to call */
    let countedCut = false;
    /** the finished hooks' verdicts (first look): the tools they leave the model go with an early answer too */
    const judgedSoFar: Judged[] = [];
    const onHook: NonNullable<ExecuteOptions["onHook"]> = (record, notification, judged, cut) => {
      const { halt, updatedOutput, modifiedArgs } = judged.verdict;
      finished.push(record);
      if (!record.pass) judgedSoFar.push(judged);
      if (cut?.counts) countedCut = true;
      if (halt !== undefined && !record.pass) halted ??= { name: record.name, source: record.source, reason: halt };
      if (updatedOutput !== undefined && !record.pass) replaced = updatedOutput;
      if (modifiedArgs !== undefined && !record.pass && record.decision !== "block" && (CHANGE_RUNS.has(point) || noChangeTaken)) changedBy ??= record;
      req.onHook?.(record, notification);
    };
    return {
      event: point,
      hookCount: hooks.length,
      started: () => started,
      early(mode, why) {
        let best: HookRecord | undefined;
        // Only what holds the call back: an early allow would skip the agent's own prompt, where the
        // failure mode passes through to it. Only the event as sent: not the re-check of a rewrite.
        for (const r of finished) {
          if (!r.effective || r.pass || (r.decision !== "block" && r.decision !== "ask")) continue;
          if (!best || RANK[r.decision] > RANK[best.decision!]) best = r;
        }
        // The tool has run: a finished hook's replacement of its output goes with what is answered (as
        // in the fold); the tools the finished hooks leave the model, too — fewer than all of them would
        // leave, never more (Gemini CLI takes each finished hook's list and drops only a late one's).
        const kept = replaced !== undefined ? { updatedOutput: replaced } : {};
        // (said in the answer only: the event's record has no field of its own for them)
        const toolSelection = format === "gemini" ? foldToolSelection(judgedSoFar) : undefined;
        const told = { ...kept, ...(toolSelection ? { toolSelection } : {}) };
        // A hook that stopped the agent outranks every decision, as in the fold: with no block where
        // one would keep the agent going (blockKeepsGoing), elsewhere as a block.
        if (halted) {
          const decision: Decision | null = blockKeepsGoing(point) ? null : "block";
          // a repository's words marked as its own, as in the fold
          const stop = halted.source === "repository" ? repositoryWords(halted.reason) : halted.reason;
          const reason = `${stop} (${why}; other hooks still running)`;
          const answer = answerFor(format, point, { decision, ...(decision ? { reason } : {}), halt: stop, ...told, notifications: [] });
          return {
            event_id: eventId, event: point, decision, ...(decision ? { reason } : {}), ...kept, continue: false as const, stopReason: stop, notifications: [], hooks: [...finished],
            output: answer.output, exit_code: answer.exit_code, note: `answered before the event was done: ${why}; ${hookCalled(halted)} stopped the agent`,
          };
        }
        // A hook changed the arguments, and the policy hooks have not passed the change: the call can go
        // out neither as changed nor as sent (the failure mode's allow would run it as sent).
        // (where the agent takes no change, a finished hook's ask is about the call as sent, as the full answer's would be: it stands)
        if (changedBy !== undefined && ((changeLostBlocks && best?.decision !== "block") || (noChangeTaken && best === undefined))) {
          const reason = noChangeTaken
            ? `${hookCalled(changedBy)} changed the arguments, which ${agentOf(format)} takes none of here, and the event was not done in time (${why}): the call is blocked, not run as sent`
            : `${hookCalled(changedBy)} changed the arguments, and the changed call could not be checked by the policy hooks in time (${why}): the call is blocked, run neither as changed nor as sent`;
          const answer = answerFor(format, point, { decision: "block", reason, ...told, notifications: [] });
          return {
            event_id: eventId, event: point, decision: "block", reason, ...kept, notifications: [], hooks: [...finished],
            output: answer.output, exit_code: answer.exit_code, note: `answered before the event was done: ${why}; ${hookCalled(changedBy)} changed the arguments`,
          };
        }
        // Only hooks whose block would not count here (blockCounts: a repository's at a settings
        // change) still run, every other one decided — none cut, none blocking: the failure mode is
        // not theirs to call, and the change goes on.
        const counted = hooks.filter((h) => blockCounts(h.source, point)).length;
        if (!best && !countedCut && counted < hooks.length && finished.filter((r) => !r.pass && blockCounts(r.source, point)).length >= counted) {
          const answer = answerFor(format, point, { decision: null, ...told, notifications: [] });
          return {
            event_id: eventId, event: point, decision: null, ...kept, notifications: [], hooks: [...finished],
            output: answer.output, exit_code: answer.exit_code, note: `answered before the event was done: ${why}; only repository hooks, whose block of a settings change does not count, were still running`,
          };
        }
        // Nothing decided, the failure mode allow: the tools the finished hooks leave the model still
        // hold (the failure mode's block leaves it none: answerFor).
        if (!best && mode === "allow" && toolSelection) {
          const answer = answerFor(format, point, { decision: null, ...told, notifications: [] });
          return {
            event_id: eventId, event: point, decision: null, notifications: [], hooks: [...finished],
            output: answer.output, exit_code: answer.exit_code, note: `answered before the event was done: ${why}; the tools the hooks that finished leave the model hold`,
          };
        }
        // The tool has run, and a finished hook replaced its output (an operator's redaction, say):
        // what the failure mode answers goes out with that replacement, never without it — the
        // model would read what the hook took out.
        if (replaced !== undefined && (!best || (mode === "block" && best.decision !== "block"))) {
          const decision: Decision | null = mode === "block" && !blockKeepsGoing(point) ? "block" : null;
          const reason = decision ? `hookbox could not decide in time (${why}; other hooks still running): the tenant's failure mode (block) applies` : undefined;
          const answer = answerFor(format, point, { decision, ...(reason ? { reason } : {}), ...told, notifications: [] });
          return {
            event_id: eventId, event: point, decision, ...(reason ? { reason } : {}), ...kept, notifications: [], hooks: [...finished],
            output: answer.output, exit_code: answer.exit_code, note: `answered before the event was done: ${why}; the tenant's failure mode (${mode}), with a finished hook's replacement of the tool's output`,
          };
        }
        if (!best || (mode === "block" && best.decision !== "block")) return undefined;
        // copilot-hooks.md: an ask "where no prompt is shown, it is treated as a deny"
        const decision: Decision = best.decision === "ask" && !req.interactive ? "block" : best.decision!;
        const said = best.reason !== undefined && best.source === "repository" ? repositoryWords(best.reason) : best.reason;
        const reason = `${said ?? `${hookCalled(best)} decided ${best.decision}`} (${why}; other hooks still running)`;
        const answer = answerFor(format, point, { decision, reason, ...told, notifications: [] });
        return {
          event_id: eventId, event: point, decision, reason, ...kept, notifications: [], hooks: [...finished],
          output: answer.output, exit_code: answer.exit_code, note: `answered before the event was done: ${why}`,
        };
      },
      async run() {
        try {
          const tQueued = performance.now();
          // Still waiting when the event's time is up: no hook ran, so hookbox could not decide — an
          // error (503), which clients answer with the tenant's failure mode, never a pass-through.
          const turn = await ticket?.ready.then(() => "ran" as const, () => (req.signal?.aborted ? "given up" as const : "expired" as const));
          const queuedMs = Math.round(performance.now() - tQueued);
          if (turn !== undefined && turn !== "ran") {
            // No hook ran. Still recorded, deciding nothing: given up while it waited (its client gone,
            // answered by its deadline, the service stopping) — cancelled —, or its time up first: an
            // error (503), which clients answer with the tenant's failure mode, never a pass-through.
            const why = turn === "expired" ? `it waited for a run slot past max_event_ms (${config.sandbox.maxEventMs} ms)`
              : `given up before its turn to run (${req.signal?.reason instanceof Error ? req.signal.reason.message : "cancelled"})`;
            const answer = answerFor(format, point, { decision: null, notifications: [] });
            const session = req.body.session_id ?? req.body.sessionId;
            const record: EventResult = {
              event_id: eventId, event: point, decision: null, reason: `${why}: no hook ran`, notifications: [], hooks: [], output: answer.output, exit_code: answer.exit_code,
              note: `${why}: no hook ran`,
              ...(tool !== undefined ? { tool_name: tool } : {}),
              ...(typeof session === "string" ? { session_id: session } : {}),
              trace: { queued_ms: queuedMs, hooks: [] },
            };
            if (turn === "expired") throw new EventExpiredError(config.sandbox.maxEventMs, record);
            return record;
          }
          started = true;
          const common = { runners, sandbox: config.sandbox, traceCaptureBytes: config.traces.captureBytes, signal: req.signal, eventId, deadline, onHook, party: req.tenant.name };
          const { judged, records, traces, undecided: firstCut } = await executeHooks(hooks, {
            ...common,
            payloads: new PayloadCache(req.raw, req.body, dialect, point),
            workspaceDir: req.workspace?.dir,
            ...(req.workspace?.current ? { workspaceCurrent: req.workspace.current } : {}),
            ...(req.workspace?.version !== undefined ? { workspaceVersion: req.workspace.version } : {}),
            repositoryMayRewrite: req.tenant.repositoryMayRewrite === true,
          });
          let cut = firstCut;
          let folded = fold(judged, { interactive: req.interactive });
          // An event that carries no tool arguments (Cursor's beforeShellExecution has its command at
          // the top, beforeReadFile its path) has none to change: the policy hooks could not look at
          // the change the agent would make of it.
          // Where the agent takes no change at all (changeNotTakenAt: Cursor's beforeShellExecution), an
          // allow given with one was for the changed call only: the call as sent is asked about, as
          // before an MCP tool (below) — the change is gone, never checked by the policy hooks.
          if (folded.modifiedArgs !== undefined && !pointHasTool(point)) {
            const untaken = untakableChange(format, point, folded);
            folded = untaken
              ? withoutModifiedArgs(untakenAnswered(folded, untaken, req.interactive))
              : withoutChange(folded, `a hook changed the arguments, but ${point} carries no tool arguments to change: the change is dropped`);
          } else if (folded.modifiedArgs !== undefined && !CHANGE_RUNS.has(point)) {
            // After the tool ran (PostToolUse …), or once it was denied, a change runs nothing: no agent takes one there.
            folded = withoutChange(folded, `a hook changed the arguments, but at ${point} a change runs nothing (the tool has run, or was denied): the change is dropped`);
          }
          // SERVICE.md §8: changed arguments go back through the policy hooks before they are returned.
          if (folded.modifiedArgs !== undefined) {
            // What policy looks at is what the agent will run: Gemini CLI merges what it is told
            // over the arguments, so a key the change left out still runs.
            folded = { ...folded, modifiedArgs: changeAsRun(format, folded.modifiedArgs, () => toolArgumentsOf(req.body)) };
            const changed = withArguments(req.body, dialect, folded.modifiedArgs);
            // A change made after PreToolUse (at PermissionRequest, say) is what runs, and the guards
            // before a tool sit on PreToolUse: their blocks and asks count too (their allow grants
            // nothing at this event).
            const looks = [{ at: point, body: changed }];
            if (point !== PRE_TOOL_USE) looks.push({ at: PRE_TOOL_USE, body: renamedEvent(changed, dialect, PRE_TOOL_USE) });
            const judgedAgain: Judged[] = [];
            let looked = false;
            let unchecked = req.signal?.aborted === true;
            // a policy hook changed the changed event into another, in either look: no policy hook looked at that
            let changedInTurn = false;
            try {
              for (const look of looks) {
                const policy = selectHooks({ ...NO_SOURCES, policy: config.policy }, look.at, toolName(look.body), { hooksEnabled: false, repositoryHooks: false }, look.body);
                if (policy.length === 0 || req.signal?.aborted) continue;
                // The second pass runs within what the event has left (max_event_ms holds for all of an
                // event's hooks): a policy hook it cuts has not checked the change, which is then
                // dropped — and is a hook hookbox's limits kept from deciding (the tenant's on_failure).
                const second = await executeHooks(policy, { ...common, payloads: new PayloadCache(Buffer.from(JSON.stringify(look.body)), look.body, dialect, look.at), pass: "rewritten", changedFrom: folded.modifiedArgs });
                if (second.changedInTurn) changedInTurn = true;
                looked = true;
                records.push(...second.records);
                traces.push(...second.traces);
                judgedAgain.push(...(look.at === point ? second.judged : second.judged.map(withoutAllow)));
                cut ??= second.undecided;
                // Only a changed event that every policy hook saw through to a normal end, without an error, may go out.
                if (req.signal?.aborted || second.records.some((r) => r.outcome !== "exited" || r.error !== null)) unchecked = true;
              }
            } catch {
              // The changed event could not be looked at (it could not be written for the hooks, say):
              // unchecked, so it never goes out — the first pass's blocks and asks stand — and
              // hookbox could not decide on it: the tenant's failure mode, as for a hook that could not run.
              unchecked = true;
              cut ??= { hook: "(the policy hooks' second look)", counts: true, why: "failed_to_start", capBytes: config.sandbox.limits.maxOutputBytes };
            }
            folded = afterPolicyLook(folded, looked ? fold(judgedAgain, { interactive: req.interactive }) : undefined, unchecked, changedInTurn, changeLostBlocks ? "block" : "drop");
          }
          // A hook the event's deadline or the output cap cut, or one that could not be started, never
          // decided: hookbox could not decide.
          // With the tenant's failure mode block, it says so — a block — unless the hooks that did
          // finish blocked; with allow, an allow the others gave is not answered for it (the agent
          // asks as it would). Not where a block would keep the agent going (blockKeepsGoing).
          if (cut !== undefined && !blockKeepsGoing(point)) {
            const what = cut.why === "max_event_ms"
              ? `had not decided when the event's max_event_ms (${config.sandbox.maxEventMs} ms) ran out`
              : cut.why === "max_timeout"
                ? `timed out at [sandbox] max_timeout (${cut.timeoutMs ?? 0} ms), short of the ${cut.agentTimeoutMs ?? 0} ms its agent gives it`
              : cut.why === "max_output_bytes"
                ? `printed past max_output_bytes (${cut.capBytes} bytes) before it finished its answer`
              : cut.why === "memory"
                ? "was killed at the sandbox's memory limit ([sandbox] memory) before it finished"
              : cut.why === "output_shape"
                ? "answered past hookbox's bounds for an answer (64 levels, 65,536 arrays and objects: MAX_EVENT_CONTAINERS, 16,384 keys in one object: MAX_OBJECT_KEYS)"
                : cut.why === "preparation"
                  ? `timed out after hookbox took ${cut.preparedMs ?? 0} ms of its time to prepare its workspace`
                  : "could not be run (failed_to_start)";
            const how = cut.why === "failed_to_start" ? "could not be started" : `was cut by ${cut.why}`;
            // A hook whose block would not count (blockCounts): nor does its not deciding, which the failure mode would make one.
            if (folded.decision !== "block" && failureModeFor(req.tenant, point) === "block" && cut.counts) {
              const { modifiedArgs: _dropped, ...rest } = folded;
              folded = { ...rest, decision: "block", reason: `${cut.hook} ${what}: the tenant's failure mode (block) applies`, note: `${cut.hook} ${how}; on_failure = block` };
            } else if (!cut.counts && folded.decision !== "block") {
              // Said, never silent — and the other hooks' answer stands as they gave it.
              if (folded.note === undefined) folded = { ...folded, note: `${cut.hook} ${what}: a repository hook's not deciding a settings change is no block, as its block would be none` };
            } else if (folded.decision === "allow" && folded.modifiedArgs !== undefined && changeLostBlocks) {
              // The allow went with a change (an operator's wrapper, say): without the allow the change
              // goes too, and the bare call must not go out in its place — as where the policy hooks could not check it.
              folded = changeLost(folded, `${cut.hook} ${what} (it ${how}): the allow given with the change is not answered for`);
            } else if (folded.decision === "allow") {
              const note = `${cut.hook} ${what}: the allow the other hooks gave is not answered for it`;
              // (a change where no block stops the call goes with its allow)
              folded = folded.modifiedArgs !== undefined ? withoutChange(folded, note) : { ...folded, decision: null, note };
            } else if (folded.decision !== "block" && folded.note === undefined) {
              // Said, never silent: a guard hookbox's limits kept from deciding did not decide.
              folded = { ...folded, note: `${cut.hook} ${what}: it made no decision, and the tenant's failure mode (allow) applies` };
            }
          }
          // A change the agent cannot be given as folded must not leave the call as sent in its place (untakenAnswered).
          folded = untakenAnswered(folded, untakableChange(format, point, folded), req.interactive);
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
            ...(folded.updatedOutput !== undefined ? { updatedOutput: folded.updatedOutput } : {}),
            ...(folded.halt !== undefined ? { continue: false as const, stopReason: folded.halt } : {}),
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
          done();
        }
      },
    };
  }

  return {
    prepare,
    handleEvent: (req) => prepare(req).run(),
    stats: () => ({ running: admission.active, queued: admission.depth, containers, poolReady: deps.poolReady?.() ?? 0 }),
  };
}

/**
 * What an agent of `format` is told when hookbox cannot decide in time (SERVICE.md §8): the tenant's
 * failure mode as that agent's own hook output — a block with `reason`, or no decision.
 */
export function failureAnswer(format: Format, eventName: string | undefined, mode: "allow" | "block", reason: string): { output: Record<string, unknown>; exit_code: number } {
  const known = eventName !== undefined ? resolveEventName(eventName)?.point : undefined;
  // Where a block would keep the agent going (blockKeepsGoing), hookbox's failure lets it go on as it would.
  if (mode === "block" && !(known !== undefined && blockKeepsGoing(known))) return blockAnswer(format, eventName, reason);
  return answerFor(format, known ?? PRE_TOOL_USE, { decision: null, notifications: [] });
}

/**
 * A block, as an agent of `format` reads one at that event (an event not known — or one the agent
 * has no block at, another agent's name in its body —: one every event of the agent reads).
 */
export function blockAnswer(format: Format, eventName: string | undefined, reason: string): { output: Record<string, unknown>; exit_code: number } {
  const known = eventName !== undefined ? resolveEventName(eventName)?.point : undefined;
  if (known === undefined) return blockWithoutEvent(format, reason);
  const block = answerFor(format, known, { decision: "block", reason, notifications: [] });
  const none = answerFor(format, known, { decision: null, notifications: [] });
  return block.exit_code === none.exit_code && JSON.stringify(block.output) === JSON.stringify(none.output) ? blockWithoutEvent(format, reason) : block;
}

const PRE_TOOL_USE = "PreToolUse" as EventPoint;

/**
 * Where a change of the tool's arguments may decide what runs: before the tool (its permission
 * request, Cursor's gate before an MCP tool — whose answer says a change it does not take was not
 * applied). After it ran, or once it was denied, a change runs nothing.
 */
const CHANGE_RUNS: ReadonlySet<string> = new Set(["PreToolUse", "PermissionRequest", "BeforeMCPExecution"]);
/**
 * `folded` where its change cannot reach the agent as folded (untakableChange): where an ask carries
 * it (Claude Code), the changed call is asked about; where the agent takes none there but can ask
 * (Cursor before an MCP tool or a shell command), the call as sent is, its user told the change was
 * not applied; else (Codex, with no allow; an ask no one can answer) blocked, as a change that is
 * lost otherwise is (SECURITY.md).
 */
function untakenAnswered(folded: Folded, untaken: ReturnType<typeof untakableChange>, interactive: boolean): Folded {
  if (untaken === undefined) return folded;
  // (an ask where no one can answer is a block, as fold makes it)
  if (!untaken.ask) return changeLost(folded, untaken.why);
  if (!interactive) return changeLost(folded, `${untaken.why}, and no one can answer an ask (interactive=false)`);
  const asked = untaken.asked === "as sent" ? "the call as sent is asked about" : "the changed call is asked about";
  const how = untaken.asked === "as sent" ? "asked about, as sent" : "asked about, changed";
  // (asked about the call as sent, the reason is hookbox's own: one a hook gave was for the changed call)
  const reason = untaken.asked === "as sent" ? undefined : folded.reason;
  return { ...folded, decision: "ask", reason: reason ?? `a hook changed the arguments, and ${untaken.why}: ${asked}`, note: `${folded.note !== undefined ? `${folded.note}; ` : ""}a hook changed the arguments ${folded.decision === "allow" ? "and allowed the changed call" : "without deciding"}; ${untaken.why}: ${how}` };
}

/** `folded` without its change (the decision made of it stays). */
function withoutModifiedArgs(folded: Folded): Folded {
  const { modifiedArgs: _gone, ...rest } = folded;
  return rest;
}

const NO_SOURCES = { policy: emptyHookSet(), service: emptyHookSet(), extension: emptyHookSet(), repository: emptyHookSet() };

/** The event under another name, in its dialect (`hook_event_name`, or Copilot's `hookEventName` where it carries one). */
function renamedEvent(body: JsonObject, dialect: "snake" | "camel", point: EventPoint): JsonObject {
  if (dialect === "snake") return { ...body, hook_event_name: pointName(point, "snake") };
  return "hookEventName" in body ? { ...body, hookEventName: pointName(point, "camel") } : body;
}

/** A policy hook's verdict in a look at another event than the agent's: its allow grants nothing there. */
const withoutAllow = (j: Judged): Judged => (j.verdict.decision === "allow" ? { ...j, verdict: { ...j.verdict, decision: null } } : j);

/** The event as the agent would run it with the arguments a hook substituted. */
function withArguments(body: JsonObject, dialect: "snake" | "camel", args: unknown): JsonObject {
  if (dialect === "camel") return { ...body, toolArgs: typeof args === "string" ? args : JSON.stringify(args) };
  // Copilot's hooks give arguments as a JSON string: a snake_case event carries them as an object.
  if (typeof args === "string") {
    try {
      return { ...body, tool_input: JSON.parse(args) as unknown };
    } catch {
      return { ...body, tool_input: args };
    }
  }
  return { ...body, tool_input: args };
}

export function newEventId(): string {
  return `evt_${randomUUID().replaceAll("-", "")}`;
}
