/**
 * @module `POST /v1/events` and `POST /v1/events/{event}` (SERVICE.md §3): one hook event in, one
 * decision out — as JSON, or as NDJSON lines (one notification per hook as it finishes, in the line
 * format of cosh-hooks.md, then the result) with `Accept: application/x-ndjson`.
 */
import type { ServerResponse } from "node:http";
import { Hono, type Context } from "hono";
import type { z } from "zod";
import { stream } from "hono/streaming";
import { agentDeadlineS, BadRequestError, checkWorkspaceId, blockAnswer, blockKeepsGoing, EventExpiredError, HookboxError, ShuttingDownError, failureModeFor, newEventId, NotDecidedInTimeError, NotFoundError, heavyTurns, notePayloadWeight, parseAtOnce, parseEventBodyOffThread, resolveEventName, toolArgsMemoryBytes, weighEventBody, type Decision, type EventResult, type Tenant, type Format } from "../../engine/index.js";
import { keptFields, type AnsweredOtherwise } from "../records/trace-content.js";
import { auditEntry, type AuditEntry } from "../records/audit-log.js";
import type { Logger } from "pino";
import { BriefDecisionSchema, EventQuerySchema, queryOf, type EventQuery } from "../schemas.js";
import type { AppDeps, Env } from "../context.js";
import { bodyHeadOf, eventNamedIn, readBody } from "../read-body.js";
import { ndjsonLine } from "../ndjson.js";

export function eventRoutes(deps: AppDeps): Hono<Env> {
  const app = new Hono<Env>();
  app.post("/", (c) => handleEvent(c, deps, undefined));
  app.post("/:event", (c) => handleEvent(c, deps, c.req.param("event")));
  return app;
}

/**
 * One event. `native`: answer with the agent's own hook JSON only (`output`), for agents that call
 * hookbox as an HTTP hook.
 */
export async function handleEvent(c: Context<Env>, deps: AppDeps, eventName: string | undefined, native?: Format) {
  const t0 = performance.now();
  const tenant = c.get("tenant");
  const query = queryOf(c, EventQuerySchema);
  const raw = await readBody(c, deps.limits.maxEventBytes, { budget: deps.bodies, tenant: tenant.name, readMs: deps.limits.eventBodyReadMs }).catch((err: unknown) => {
    // A body refused — too large, 429, late, in too many pieces — still names its event in its head:
    // its refusal is answered for that event (a native hook's URL that names none — Claude Code's
    // PermissionRequest reads its deny only; a Stop is not blocked, which would keep the agent going).
    const head = bodyHeadOf(err);
    const named = eventName ?? (head ? eventNamedIn(Buffer.from(head).toString("utf8")) : undefined);
    if (named !== undefined) {
      c.set("event", named);
      c.header("Hookbox-On-Failure", failureModeFor(tenant, named));
    }
    throw err;
  });
  // What the event will hold while it waits and runs is charged before it is parsed, and given back
  // when it is done (its run's end; here, if it never gets one).
  const charges: (() => void)[] = [];
  const memory: EventMemory = {
    charge: (bytes: number) => void charges.push(deps.eventMemory!.take(tenant.name, bytes)),
    giveBack: () => charges.forEach((give) => give()),
    runOwnsIt: false,
    held: false,
    holdUntil(written) {
      this.held = true;
      void written.finally(() => this.giveBack());
    },
  };
  try {
    // A large body — or one of many small ones that completed together (parseAtOnce) — is weighed
    // and parsed in a turn of its own (its tenant's, round-robin): bodies that arrive together never
    // hold the loop back to back. While it waits, its bytes count
    // against its tenant's share — a tenant's queue of bodies is bounded (429 past it), as its
    // bodies arriving were — until its weight (which counts them) is charged in their place.
    const waiting = parseAtOnce(raw.length) ? undefined : deps.eventMemory!.take(tenant.name, raw.length);
    let weight: number;
    try {
      if (waiting) {
        await heavyTurns.take(tenant.name);
        // Gone while it waited: nothing of it is parsed, nothing run.
        if (clientLeft(c)) throw new HookboxError("the client went away before its body was parsed", "body_incomplete");
      }
      // One pass over the bytes refuses a body nested too deep (400) and weighs the rest.
      weight = weighEventBody(raw);
      // what its parsed value will weigh while a trace waits to be built from it (payloadValueBytes)
      notePayloadWeight(raw, weight);
    } finally {
      waiting?.();
    }
    memory.charge(weight);
    return await handleRead(c, deps, eventName, native, { t0, tenant, query, raw, memory });
  } finally {
    if (!memory.runOwnsIt) memory.giveBack();
  }
}

/** The Node response under the request (absent under `app.request()`). */
const outgoingOf = (c: Context<Env>): ServerResponse | undefined => (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;

/** Whether the client's connection has closed without its answer. */
function clientLeft(c: Context<Env>): boolean {
  const outgoing = outgoingOf(c);
  return outgoing !== undefined && (outgoing.destroyed || outgoing.socket?.destroyed === true) && !outgoing.writableFinished;
}

async function handleRead(
  c: Context<Env>, deps: AppDeps, eventName: string | undefined, native: Format | undefined,
  read: { t0: number; tenant: Tenant; query: EventQuery; raw: Uint8Array; memory: EventMemory },
) {
  const { t0, tenant, query, raw, memory } = read;
  const format = native ?? query.format;
  // A body refused once read (a field of the wrong type, a lone surrogate) still names its event:
  // its refusal is answered for that event, as every refusal from here is (at a stop, never the
  // block that would keep the agent going).
  const body = await parseEventBodyOffThread(raw, tenant.name, { weighed: true }).catch((err: unknown) => {
    const named = eventName ?? (err instanceof BadRequestError ? err.event : undefined);
    if (named !== undefined) {
      c.set("event", named);
      c.header("Hookbox-On-Failure", failureModeFor(tenant, named));
    }
    throw err;
  });
  const named = eventName ?? bodyEventName(body);
  if (named !== undefined) c.set("event", named);
  memory.charge(toolArgsMemoryBytes(body));
  // The tenant's failure mode for this event: told in every answer from here (a missing workspace's
  // 404 included), applied where nothing was decided.
  const mode = failureModeFor(tenant, named);
  c.header("Hookbox-On-Failure", mode);
  // SERVICE.md §8: answer before the client's agent gives up — a native endpoint knows its agent's
  // default deadline (and an HTTP hook with a shorter timeout of its own says so in the header), a
  // forwarder says its own (Hookbox-Answer-By-Ms).
  const answerByMs = native ? Math.min(agentAnswerByMs(native, named ?? ""), answerByHeader(c) ?? Infinity) : answerByHeader(c);
  const workspaceId = query.workspace ?? c.req.header("hookbox-workspace");
  const event: EventRead = { t0, tenant, query, raw, memory, eventName, native, format: format as Format | undefined, body, named, mode, answerByMs, workspaceId, loadedLate: false };
  if (workspaceId === undefined) return decide(c, deps, event, undefined);
  checkWorkspaceId(workspaceId, query.workspace !== undefined ? "workspace" : "Hookbox-Workspace");
  // Read from disk after a restart (its tree and hook files judged again), a workspace may take a
  // while: the deadline holds over that too. Past it, the client gets the failure mode now, and the
  // event goes on once its workspace is in — recorded as answered by its deadline (the rest of it as
  // any late event's: given up if its turn has not come, else run and recorded).
  // A stored workspace refused when judged again (after a restart) is as unusable as one that is not
  // there: its refusal (400) in place of the 404, after the policy hooks alone looked (below).
  // One read from disk, not at hand: every event waiting for it resumes when it is in — each in a
  // turn of its own (its tenant's, round-robin), never hundreds back to back on the one thread.
  const fromDisk = !deps.workspaces.holds(tenant.name, workspaceId);
  const inTurn = async <T>(value: T): Promise<T> => {
    if (fromDisk) await heavyTurns.take(tenant.name);
    return value;
  };
  const loading: Promise<StoredWorkspace | HookboxError | undefined> = deps.workspaces.get(tenant.name, workspaceId).then(inTurn, (err: unknown) => {
    if (err instanceof BadRequestError) return inTurn(err);
    throw err;
  });
  const unusable = (found: StoredWorkspace | HookboxError | undefined): HookboxError | undefined =>
    found instanceof HookboxError ? found : found === undefined ? new NotFoundError(`no workspace "${workspaceId}"`) : undefined;
  let timer: NodeJS.Timeout | undefined;
  const late = answerByMs === undefined ? undefined : new Promise<"late">((r) => (timer = setTimeout(() => r("late"), leftOf(t0, answerByMs))));
  const workspace = await (late ? Promise.race([loading, late]) : loading).finally(() => clearTimeout(timer));
  if (workspace === "late") {
    memory.runOwnsIt = true;
    c.get("log").warn({ event: { name: named }, workspace: workspaceId, answerByMs, mode }, "workspace not loaded before the agent's deadline: answered with the tenant's failure mode");
    // (held by the service's shutdown as any event is)
    // A canary runs no hook: answered so, it is done (run now, it would be taken for an event).
    const canaryCall = c.req.header("hookbox-canary") !== undefined;
    // (one that turns out not to be there is run by the policy hooks alone, as in time, and recorded)
    deps.inflight.add(loading
      .then((found) => {
        if (canaryCall) return undefined;
        const missing = unusable(found);
        return missing ? decide(c, deps, { ...event, loadedLate: true, workspaceMissing: missing }, undefined) : decide(c, deps, { ...event, loadedLate: true }, found as StoredWorkspace);
      })
      .catch((err: unknown) => {
        if (!(err instanceof NotDecidedInTimeError)) c.get("log").warn({ err, workspace: workspaceId }, "event answered by its deadline while its workspace loaded, then not run");
      })
      // (an event that ran holds its share until its audit line is written: `settle`)
      .finally(() => { if (!memory.held) memory.giveBack(); }));
    throw new NotDecidedInTimeError(answerByMs!);
  }
  // Another tenant's workspace is as absent as one that never was. Its repository's hooks cannot
  // run, but the policy hooks still look at the event first (they alone: a wrong id costs no
  // container): what holds of what they decide is answered (`missingUnlessHolds`); anything else is
  // the 404 (or the refusal), the client applying the tenant's failure mode. A repository that makes
  // its own upload fail never decides that the policy hooks do not run.
  // (A canary runs no hook: the 404 says the line names no workspace.)
  const missing = unusable(workspace);
  if (missing) {
    if (c.req.header("hookbox-canary") !== undefined) throw missing;
    return decide(c, deps, { ...event, workspaceMissing: missing }, undefined);
  }
  return decide(c, deps, event, workspace as StoredWorkspace);
}

/** An event read and parsed, its failure mode and deadline known: what `decide` runs. */
interface EventRead {
  t0: number;
  tenant: Tenant;
  query: EventQuery;
  raw: Uint8Array;
  memory: EventMemory;
  eventName: string | undefined;
  native: Format | undefined;
  format: Format | undefined;
  body: Record<string, unknown>;
  named: string | undefined;
  mode: "allow" | "block";
  answerByMs: number | undefined;
  workspaceId: string | undefined;
  /** its deadline passed while its workspace loaded: the client has its answer (the failure mode); it is run to be recorded */
  loadedLate: boolean;
  /** why the workspace it names cannot be used (not there: 404; refused: 400): run without it, answered only where that holds (`missingUnlessHolds`), else this */
  workspaceMissing?: HookboxError;
}

type StoredWorkspace = NonNullable<Awaited<ReturnType<AppDeps["workspaces"]["get"]>>>;

/**
 * What an event holds of its tenant's memory share: given back when it is done — `holdUntil` its
 * audit line is written, so that a disk that stalls fills the tenant's share (then 429s), never the heap.
 */
type EventMemory = { charge(bytes: number): void; giveBack(): void; runOwnsIt: boolean; held: boolean; holdUntil(written: Promise<unknown>): void };

/** What is left of `ms` counted from the request's arrival: its body, its parse and its workspace's load took their part. */
const leftOf = (t0: number, ms: number) => Math.max(0, ms - (performance.now() - t0));

/** Runs an event's hooks and answers it: in time, or by its deadline with what is decided so far. */
async function decide(c: Context<Env>, deps: AppDeps, event: EventRead, workspace: StoredWorkspace | undefined) {
  const { t0, tenant, query, raw, memory, eventName, native, format, body, named, mode, answerByMs, workspaceId, loadedLate, workspaceMissing } = event;
  const interactiveParam = query.interactive;
  if (!loadedLate && c.req.header("hookbox-canary") !== undefined)
    return canary(c, deps, { eventName: eventName ?? bodyEventName(body), body, format, native, workspaceId, memory, leftMs: answerByMs === undefined ? Infinity : leftOf(t0, answerByMs) });
  const leftMs = (ms: number) => leftOf(t0, ms);

  // The client going away cancels the event, unless it already got its answer (a native early answer).
  // Both listeners go when the event is done (`settle`): the service's shutdown signal lives as long
  // as the service, and the request's own AbortSignal is not listened to at all (the HTTP adapter's
  // fetch objects keep it, and in Node 20 a listener on it keeps the whole request alive).
  // (One whose workspace loaded past its deadline was answered already.)
  let answered = loadedLate;
  const cancel = new AbortController();
  const onShutdown = () => cancel.abort(deps.shutdown.reason);
  deps.shutdown.addEventListener("abort", onShutdown, { once: true });
  const stopWatchingClient = clientGone(c, () => { if (!answered) cancel.abort(new Error("the client went away")); });
  // The event's audit line: until it is written the event's memory stays charged to its tenant.
  let audited: AuditWait | undefined;
  const settle = () => {
    deps.shutdown.removeEventListener("abort", onShutdown);
    stopWatchingClient();
    if (audited) memory.holdUntil(audited.written);
    else memory.giveBack();
  };
  memory.runOwnsIt = true;
  if (deps.shutdown.aborted) cancel.abort(deps.shutdown.reason);
  const signal = cancel.signal;
  let sink: ((line: string) => void) | undefined;
  let prepared: ReturnType<AppDeps["engine"]["prepare"]>;
  try {
    prepared = deps.engine.prepare({
      body, raw, eventName, signal,
      tenant,
      workspace: workspace && { dir: workspace.dir, hooks: workspace.hooks, current: workspace.current, version: workspace.version },
      ...(workspaceMissing !== undefined ? { policyOnly: true } : {}),
      interactive: interactiveParam !== "false",
      format,
      onHook: (record, notification) => {
        deps.metrics.hooks.inc({ source: record.source, sandbox: record.sandbox, decision: record.decision ?? "none", outcome: record.outcome });
        deps.metrics.hookSeconds.observe({ sandbox: record.sandbox }, record.duration_ms / 1000);
        if (notification) sink?.(ndjsonLine(notification));
      },
    });
  } catch (err) {
    settle();
    throw err;
  }
  // Answered before its turn to run came: no hook has run, and none would run for anyone — it gives
  // its queue place up (recorded as given up, deciding nothing), rather than hold it and take a run
  // slot later, which under load would make its tenant's next events late too. One that runs goes
  // on and is recorded.
  const giveUpTurn = () => {
    if (!prepared.started()) cancel.abort(new Error("answered before its turn to run"));
  };
  // brief=true: what the agent acts on only — the hooks' records, however much they hold, stay in the trace.
  const shaped = <R extends BriefFields>(r: R) => (query.brief === "true" ? briefOf(r) : r);
  // What the client was answered when that is not what the event's record decides: its deadline came
  // first (what the finished hooks decided, or the failure mode), or the event expired waiting.
  let answeredOtherwise: AnsweredOtherwise | undefined;
  // What the failure mode answers: a block, but never where a block would keep the agent going (a stop).
  const namedPoint = named !== undefined ? resolveEventName(named)?.point : undefined;
  const failed = mode === "block" && !(namedPoint !== undefined && blockKeepsGoing(namedPoint)) ? "block" : null;
  const answeredLate = (early: { decision: Decision | null } | undefined) => {
    answeredOtherwise = early
      ? { decision: early.decision, why: `answered within ${answerByMs} ms, the agent's deadline near, with what the hooks finished by then decided` }
      : { decision: failed, why: `answered within ${answerByMs} ms, the agent's deadline near${loadedLate ? ", its workspace still loading" : ""}, with the tenant's failure mode (${mode})` };
  };
  // A native endpoint answers in its agent's JSON whatever the client accepts (and one answered
  // while its workspace loaded has no client left to stream to).
  const streaming = !native && !loadedLate && (c.req.header("accept") ?? "").includes("application/x-ndjson");
  // How an event nothing decided is answered, as its record says it: a native endpoint gives the
  // failure mode in the agent's own JSON, a stream ends with an error line, the rest is a 503.
  const failedAs = (why: string) =>
    native ? `${why}: answered with the tenant's failure mode (${mode}) in the agent's own JSON`
    : streaming ? `${why}: the stream ended with an error line, the client applying the tenant's failure mode (${mode})`
    : `${why}: answered 503, the client applying the tenant's failure mode (${mode})`;
  // Stopped by the service's shutdown with nothing decided that holds: answered as above — decided
  // once, as the record is made, and said there.
  let stopping = false;
  // Run without its workspace (it is not there), with nothing decided that holds: answered with the
  // 404 that says so, the client applying the tenant's failure mode — decided once, as the record is made.
  let missingAnswered: HookboxError | undefined;
  // (where the failure mode would allow, a change of the arguments or of the tool's output a policy
  // hook made holds too: a wrapper never turns back into the bare call; where it would block, the
  // block stands — the operators' hooks, which did not run, might have blocked)
  const missingUnlessHolds = (result: { decision: string | null; continue?: false; modifiedArgs?: unknown; updatedOutput?: unknown }): HookboxError | undefined =>
    workspaceMissing !== undefined && !holds(result, mode) && !(mode === "allow" && (result.modifiedArgs !== undefined || result.updatedOutput !== undefined)) ? workspaceMissing : undefined;
  // An early answer of an event run without its workspace, only where it holds: else the failure mode, as for one nothing decided.
  const heldEarly = <R extends { decision: string | null; continue?: false }>(early: R | undefined): R | undefined => (early && missingUnlessHolds(early) ? undefined : early);
  const finish = async (result: EventResult) => {
    const durationMs = performance.now() - t0;
    if (answeredOtherwise === undefined && deps.shutdown.aborted && !holds(result, mode)) {
      stopping = true;
      answeredOtherwise = { decision: failed, why: failedAs("the service was stopping") };
    }
    if (answeredOtherwise === undefined && (missingAnswered = missingUnlessHolds(result))) {
      const answeredAs = native ? "answered with the tenant's failure mode in the agent's own JSON" : streaming ? "the stream ended with an error line, the client applying the tenant's failure mode" : "answered 404, the client applying the tenant's failure mode";
      const status = missingAnswered instanceof NotFoundError ? "404" : "400";
      answeredOtherwise = { decision: failed, why: `${workspaceMissing!.message}: its repository's hooks did not run, and the policy hooks decided nothing that holds; ${answeredAs.replace("answered 404", `answered ${status}`)} (${mode})` };
    }
    const kept = keptFields(result);
    deps.sessions.heard(tenant.name, kept.session_id, result.event, format);
    // A decision is answered even when its audit line cannot be written (a full disk, say): logged, counted.
    // Nor does a disk that stalls hold it past AUDIT_WAIT_MS (unless AUDIT_BACKLOG_BYTES of lines
    // wait already), nor ever past the client's answer-by.
    const entry = await auditEntry({ result, tenant: tenant.name, workspace: workspaceId, durationMs, cancelled: signal.aborted, answered: answeredOtherwise ?? null, kept, body, includeInputs: deps.auditToolInput });
    audited = awaitAudit(deps, c.get("log"), tenant.name, entry, answerByMs === undefined ? Infinity : leftMs(answerByMs));
    await audited.answer;
    // The trace is readable at once; it reaches the disk right after the answer.
    await deps.traces.add(tenant, result, { workspace: workspaceId, durationMs, cancelled: signal.aborted, answered: answeredOtherwise ?? null, kept }).catch((err: unknown) => c.get("log").error({ err }, "trace not stored"));
    deps.metrics.events.inc({ event: result.event, decision: result.decision ?? "none" });
    deps.metrics.eventSeconds.observe(durationMs / 1000);
    c.get("log").info({ event: { id: result.event_id, name: result.event, decision: result.decision, hooks: result.hooks.length } }, "event");
    const { tool_name: _tool, session_id: _session, trace: _trace, ...response } = result;
    return response;
  };
  // An event that expired waiting for a run slot is answered as one nothing decided, and kept too.
  const finishOrRecord = (run: Promise<EventResult>) => run.then(finish, async (err: unknown) => {
    if (err instanceof EventExpiredError && err.record !== undefined) {
      answeredOtherwise = { decision: failed, why: failedAs("it waited for a run slot past max_event_ms") };
      // Kept as well as it can be: its answer is the 503 whatever the record's fate.
      await finish(err.record as EventResult).catch((recordErr: unknown) => c.get("log").error({ err: recordErr }, "expired event not recorded"));
    }
    throw err;
  });

  if (streaming) {
    c.header("Content-Type", "application/x-ndjson");
    return stream(c, async (s) => {
      const pending: Promise<unknown>[] = [];
      sink = (l) => pending.push(s.write(l));
      const outcome = prepared.run();
      const run = finishOrRecord(outcome).finally(settle);
      deps.inflight.add(run);
      // The status line is gone by now: what could not be decided ends the stream as an error line
      // with the tenant's failure mode, for the client to apply — never as a result that decides nothing.
      const decided = run.then(
        (response) => (stopping ? errorLine(new ShuttingDownError(), mode) : missingAnswered ? errorLine(missingAnswered, mode) : { type: "result" as const, ...shaped(response) }),
        (err: unknown) => errorLine(err, mode),
      );
      // Hookbox-Answer-By-Ms holds for a stream too: by then, what the finished hooks decided, or the
      // failure mode as an error line (the late decision is still recorded; one still waiting for a
      // run slot is given up, and recorded as such).
      let timer: NodeJS.Timeout | undefined;
      const late = answerByMs === undefined ? undefined : new Promise<"late">((r) => (timer = setTimeout(() => r("late"), leftMs(answerByMs))));
      // Decided in time is decided by the hooks' end, not by when its record is written (a slow disk).
      const settled = outcome.then(() => "decided" as const, () => "decided" as const);
      const first = (await (late ? Promise.race([settled, late]) : settled).finally(() => clearTimeout(timer))) === "late" ? "late" : await decided;
      let last: Exclude<typeof first, "late">;
      if (first === "late") {
        answered = true;
        giveUpTurn();
        const early = heldEarly(prepared.early(mode, `answered within ${answerByMs} ms, before the agent's hook deadline`));
        answeredLate(early);
        last = early ? { type: "result" as const, ...shaped(early) } : errorLine(new NotDecidedInTimeError(answerByMs!), mode);
      } else last = first;
      // The stream ends with this line: what the hooks still running say goes to their record only.
      sink = undefined;
      if ("error" in last) c.get("log").warn({ error: last.error }, "stream ended without a decision: the client applies the failure mode");
      await Promise.all(pending);
      await s.write(ndjsonLine(last));
    });
  }
  const outcome = prepared.run();
  const run = finishOrRecord(outcome).finally(settle);
  deps.inflight.add(run);
  // Answered with the failure mode while its workspace loaded: run to be recorded (given up if its
  // turn has not come), the record saying what its client got.
  if (loadedLate) {
    answeredLate(undefined);
    giveUpTurn();
    await run;
    throw new NotDecidedInTimeError(answerByMs!);
  }
  // The late decision is still recorded (one still waiting for a run slot is given up, and recorded as such).
  if (answerByMs !== undefined) {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"late">((r) => (timer = setTimeout(() => r("late"), leftMs(answerByMs))));
    // Decided in time is decided by the hooks' end, not by when its record is written (a slow disk).
    const settled = outcome.then(() => "decided" as const, () => "decided" as const);
    const first = (await Promise.race([settled, late]).finally(() => clearTimeout(timer))) === "late" ? "late" : await run;
    if (first === "late") {
      answered = true;
      giveUpTurn();
      const early = heldEarly(prepared.early(mode, `answered within ${answerByMs} ms, before the agent's hook deadline`));
      answeredLate(early);
      c.get("log").warn({ event: { name: prepared.event, decision: early?.decision }, answerByMs, mode }, early ? "event not done before the agent's deadline: answered with what its finished hooks decided" : "event not decided before the agent's deadline: answered with the tenant's failure mode");
      // Nothing finished decided as strongly as the failure mode: the client applies it (native: app.ts).
      if (!early) throw new NotDecidedInTimeError(answerByMs);
      return c.json(native ? early.output : shaped(early));
    }
    if (stopping) throw new ShuttingDownError();
    if (missingAnswered) throw missingAnswered;
    return c.json(native ? first.output : shaped(first));
  }
  const response = await run;
  // Stopped by the service's shutdown after the grace period: hooks were killed, nothing was decided.
  // The record is kept (cancelled); the client gets 503, which it answers with the tenant's failure mode.
  if (stopping) throw new ShuttingDownError();
  if (missingAnswered) throw missingAnswered;
  return c.json(shaped(response));
}

type BriefFields = Pick<EventResult, keyof z.output<typeof BriefDecisionSchema>>;
const BRIEF_KEYS = Object.keys(BriefDecisionSchema.shape) as (keyof BriefFields)[];

/** The fields of BriefDecisionSchema, in its order: what an agent acts on. */
function briefOf(r: BriefFields): BriefFields {
  return Object.fromEntries(BRIEF_KEYS.filter((k) => r[k] !== undefined).map((k) => [k, r[k]])) as BriefFields;
}

/** The stream's last line when nothing was decided: the error, as the JSON answer would give it, and the failure mode. */
function errorLine(err: unknown, mode: "allow" | "block"): { type: "error"; error: { code: string; message: string }; on_failure: "allow" | "block" } {
  const known = err instanceof HookboxError;
  return { type: "error", error: { code: known ? err.code : "internal", message: known ? err.message : "internal error" }, on_failure: mode };
}

/**
 * Whether a result stopped by the service's shutdown still stands: a block, a stop of the agent, or an ask where the
 * failure mode would allow — what its finished hooks decided outranks what the client would apply.
 */
function holds(result: { decision: string | null; continue?: false }, mode: "allow" | "block"): boolean {
  // A hook that stopped the agent (`continue: false`) stands too: the failure mode would let it go on.
  return result.decision === "block" || (result.decision === "ask" && mode === "allow") || result.continue === false;
}

/**
 * Calls `onGone` if the client's connection closes before its answer is complete, until the returned
 * function is called. It watches the Node response (the HTTP adapter's binding) rather than the
 * request's AbortSignal: in Node 20 a listener on that signal keeps the whole request alive after it
 * is done. Without the binding (`app.request()` in tests) there is no connection to watch.
 */
function clientGone(c: Context<Env>, onGone: () => void): () => void {
  const outgoing = outgoingOf(c);
  if (!outgoing) return () => undefined;
  const onClose = () => {
    if (!outgoing.writableFinished) onGone();
  };
  outgoing.once("close", onClose);
  // Gone already (while its workspace was read, say): its close has been and will not come again.
  if (clientLeft(c)) onGone();
  return () => outgoing.off("close", onClose);
}

/** What a canary's block says, so `hookbox doctor` can tell it reached hookbox. */
export const CANARY_REASON = "hookbox canary: a block from hookbox reaches this agent";

/**
 * A `hookbox doctor` canary (header `Hookbox-Canary`): no hook runs; the answer is a block in the
 * asked dialect, so the doctor sees whether a block would reach the agent through this line. It is
 * recorded as a canary in the audit log and the session list, never as a decision.
 */
async function canary(c: Context<Env>, deps: AppDeps, req: { eventName: string | undefined; body: Record<string, unknown>; format: Format | undefined; native: Format | undefined; workspaceId: string | undefined; memory: EventMemory; leftMs: number }) {
  const tenant = c.get("tenant");
  if (req.eventName === undefined) throw new BadRequestError("the event name is missing: give it in the path (/v1/events/{event}) or as hook_event_name in the body", "hook_event_name", "event_missing");
  const resolved = resolveEventName(req.eventName);
  if (!resolved) throw new BadRequestError(`unknown event ${JSON.stringify(req.eventName.slice(0, 64))}`, "event", "unknown_event");
  const camel = "toolName" in req.body || "toolArgs" in req.body || "sessionId" in req.body;
  const format: Format = req.format ?? (camel ? "copilot" : "cosh");
  // A block, whatever the event — at a stop too: what the doctor proves is that one gets through.
  const answer = blockAnswer(format, req.eventName, CANARY_REASON);
  const session = req.body.session_id ?? req.body.sessionId;
  const eventId = newEventId();
  const kept = keptFields({ session_id: typeof session === "string" ? session : undefined, reason: CANARY_REASON });
  deps.sessions.heard(tenant.name, kept.session_id, resolved.point, format, true);
  // Answered as any event is when its audit line cannot be written, or is slow to: the guard is live
  // all the same; and as any event, it holds its memory share until its line is written.
  const entry = {
    ...(await auditEntry({
      result: { event_id: eventId, event: resolved.point, decision: "block", reason: CANARY_REASON, notifications: [], hooks: [], output: answer.output, exit_code: answer.exit_code, ...(typeof session === "string" ? { session_id: session } : {}), trace: { queued_ms: 0, hooks: [] } },
      tenant: tenant.name, workspace: req.workspaceId, durationMs: 0, cancelled: false, kept, body: req.body, includeInputs: false,
    })),
    canary: true as const,
  };
  const audited = awaitAudit(deps, c.get("log"), tenant.name, entry, req.leftMs);
  req.memory.runOwnsIt = true;
  req.memory.holdUntil(audited.written);
  await audited.answer;
  c.get("log").info({ event: { id: eventId, name: resolved.point, canary: true } }, "canary");
  if (req.native) return c.json(answer.output);
  return c.json({ event_id: eventId, event: resolved.point, decision: "block", reason: CANARY_REASON, canary: true, notifications: [], hooks: [], ...answer });
}

/**
 * When a native endpoint answers at the latest: the agent's own deadline for one hook, less a
 * margin (an HTTP hook that answers later is a silent pass in that agent).
 */
const agentAnswerByMs = (format: Format, event: string) => {
  const deadlineMs = agentDeadlineS(format, event) * 1000;
  return Math.min(deadlineMs - 500, Math.round(deadlineMs * 0.9));
};

/** @default 100 ms .. 1 h — what `Hookbox-Answer-By-Ms` may ask */
const ANSWER_BY_MS = { min: 100, max: 3_600_000 };

/**
 * @default 1 s — how long an answer waits for its event's audit line to reach the disk. A disk that
 * stalls (a full or failing volume, a network mount) never holds a decision past it, nor past the
 * client's `Hookbox-Answer-By-Ms`: the line is written when the disk takes it.
 */
export const AUDIT_WAIT_MS = 1_000;

/**
 * @default 64 MiB (in characters) — audit lines taken and not yet written, all tenants together, past
 * which an answer waits for its line (as long as its client's answer-by allows): a disk that stalls
 * then holds events, and their tenants' memory shares (429 past them), not an ever longer queue of lines.
 */
export const AUDIT_BACKLOG_BYTES = 64 * 1024 * 1024;

/** An audit line on its way: `answer` settles when the answer may go, `written` when the line is written (or failed). */
interface AuditWait {
  answer: Promise<void>;
  written: Promise<void>;
}

/** Writes an event's audit line; the answer waits for it AUDIT_WAIT_MS at most (past AUDIT_BACKLOG_BYTES: until it is written), never past `leftMs`. */
function awaitAudit(deps: AppDeps, log: Logger, tenant: string, entry: AuditEntry, leftMs: number): AuditWait {
  const eventId = entry.event_id;
  const backlogged = (deps.audit.backlogBytes?.() ?? 0) > AUDIT_BACKLOG_BYTES;
  const written = deps.audit.write(tenant, entry).catch((err: unknown) => {
    deps.metrics.auditErrors.inc();
    log.error({ err, event: { id: eventId } }, "audit line not written");
  });
  // The service's shutdown waits for it.
  deps.inflight.add(written);
  const waitMs = Math.max(0, Math.min(backlogged ? Infinity : AUDIT_WAIT_MS, leftMs));
  if (waitMs === Infinity) return { answer: written, written };
  let waited: NodeJS.Timeout | undefined;
  const answer = Promise.race([written.then(() => true), new Promise<false>((r) => (waited = setTimeout(() => r(false), waitMs)))])
    .finally(() => clearTimeout(waited))
    .then((inTime) => {
      if (inTime) return;
      deps.metrics.auditLate.inc();
      log.warn({ event: { id: eventId }, waitedMs: waitMs }, "audit line not yet written: answered without waiting for it (AUDIT_WAIT_MS, or the client's answer-by)");
    });
  return { answer, written };
}

/** A forwarder's `Hookbox-Answer-By-Ms`: answer by then, with what is decided so far. */
function answerByHeader(c: Context<Env>): number | undefined {
  const raw = c.req.header("hookbox-answer-by-ms");
  if (raw === undefined) return undefined;
  const ms = /^[0-9]{1,7}$/.test(raw) ? Number(raw) : NaN;
  if (!(ms >= ANSWER_BY_MS.min && ms <= ANSWER_BY_MS.max))
    throw new BadRequestError(`Hookbox-Answer-By-Ms must be whole milliseconds from ${ANSWER_BY_MS.min} to ${ANSWER_BY_MS.max}`, "Hookbox-Answer-By-Ms", "bad_header");
  return ms;
}

function bodyEventName(body: Record<string, unknown>): string | undefined {
  const name = body.hook_event_name ?? body.hookEventName;
  return typeof name === "string" ? name : undefined;
}

