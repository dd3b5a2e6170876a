/**
 * @module The HTTP API's shapes as zod schemas: what the routes parse (queries, headers) and what
 * they answer. `/openapi.json` is generated from these (service/openapi.ts), so the document and the
 * service cannot drift apart; the type checks at the bottom hold the answers to them.
 */
import type { Context } from "hono";
import { z } from "zod";
import { BadRequestError, EventBodySchema as EngineEventBody, FORMATS, SOURCES, type EventResult, type RunResult, type WorkspaceInfo } from "../engine/index.js";
import type { SessionSeen } from "./records/sessions.js";
import { LIST_PAGE_DEFAULT, LIST_PAGE_MAX, type StoredTrace, type TraceSummary } from "./records/trace-store.js";

const DECISIONS = ["allow", "block", "ask"] as const;
const OUTCOMES = ["exited", "timed_out", "output_truncated", "oom_killed", "failed_to_start", "cancelled"] as const;

// --- requests ------------------------------------------------------------------------------------

export const EventBodySchema = EngineEventBody.meta({
  id: "EventBody",
  description: "Exactly what the agent would pipe to a hook's stdin, in either dialect (cosh / Claude Code snake_case, Copilot camelCase); at most 1 MiB. Fields other than these pass to hooks untouched.",
});

export const EventQuerySchema = z.object({
  workspace: z.string().optional().meta({ description: "an uploaded workspace whose repository hooks run too (or header Hookbox-Workspace)" }),
  format: z.enum(FORMATS, { error: `format must be one of ${FORMATS.join(", ")}` }).optional().meta({ description: "the dialect of `output`; default: the body's" }),
  interactive: z.enum(["true", "false"], { error: 'interactive must be "true" or "false"' }).optional()
    .meta({ description: "false: no one can answer an ask, which then becomes a block (Copilot's autopilot rule)" }),
  brief: z.enum(["true", "false"], { error: 'brief must be "true" or "false"' }).optional()
    .meta({ description: "true: the answer holds what an agent acts on only (BriefDecision: no hook records, no notifications — they stay in the trace), so what hooks wrote beside their decisions can never make it too large to read (hookbox forward asks so)" }),
});

export type EventQuery = z.output<typeof EventQuerySchema>;

export const EventHeadersSchema = z.object({
  "Hookbox-Workspace": z.string().optional().meta({ description: "the same as the query parameter workspace" }),
  "Hookbox-Canary": z.string().optional().meta({ description: "any value: run no hook, answer a block, record a canary (hookbox doctor)", examples: ["block"] }),
  "Hookbox-Answer-By-Ms": z.string().regex(/^[0-9]+$/).optional().meta({ description: "answer within this many milliseconds (100 to 3600000), with what the hooks finished so far decided or the tenant's failure mode if that is stronger; the event goes on and is recorded, or, still waiting for a run slot, is given up and recorded as such (both forwarders send what is left of their request timeout less 5 % of it, at least 300 ms and at most 2 s)", examples: ["26700"] }),
});

const DECISION_FILTERS = [...DECISIONS, "none"] as const;
export const TraceQuerySchema = z.object({
  session_id: z.string().optional(),
  decision: z.enum(DECISION_FILTERS, { error: `decision must be one of ${DECISION_FILTERS.join(", ")}` }).optional(),
  since: z.string().refine((s) => !Number.isNaN(/^\d+$/.test(s) ? Number(s) : Date.parse(s)), "since must be an ISO time or epoch milliseconds").optional()
    .meta({ description: "ISO time or epoch milliseconds" }),
  limit: z.string().regex(/^\d+$/, "limit must be a whole number").optional().meta({ description: `1–${LIST_PAGE_MAX}, default ${LIST_PAGE_DEFAULT}` }),
  cursor: z.string().optional().meta({ description: "next_cursor of the previous page" }),
});

/** The query, parsed with `schema`; the first problem becomes a 400 naming its parameter. */
export function queryOf<S extends z.ZodType>(c: Context, schema: S): z.output<S> {
  const parsed = schema.safeParse(c.req.query());
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new BadRequestError(issue.message, issue.path.join("."));
}

// --- answers -------------------------------------------------------------------------------------

export const ErrorSchema = z.object({
  error: z.object({
    code: z.string().meta({ examples: ["bad_json", "unauthorized", "not_found", "too_large", "overloaded", "shutting_down"] }),
    message: z.string(),
    field: z.string().optional().meta({ description: "the part of the request at fault" }),
  }),
}).meta({ id: "Error" });

/** A stream's last line when nothing could be decided: the error, and the failure mode for the client to apply. */
export const StreamErrorSchema = z.object({
  type: z.literal("error"),
  error: ErrorSchema.shape.error,
  on_failure: z.enum(["allow", "block"]),
}).meta({ id: "StreamError" });

export const NotificationSchema = z.object({
  type: z.literal("stream_event"),
  event: z.object({ subtype: z.literal("hook_notification"), hook_name: z.string(), message: z.string(), decision: z.enum(DECISIONS).optional() }),
}).meta({ id: "Notification" });

export const HookRecordSchema = z.object({
  name: z.string(),
  source: z.enum(SOURCES),
  sandbox: z.enum(["host", "container"]),
  format: z.enum(FORMATS),
  origin: z.string(),
  decision: z.enum(DECISIONS).nullable(),
  effective: z.boolean(),
  rule: z.string(),
  outcome: z.enum(OUTCOMES),
  exit_code: z.number().int().nullable(),
  timed_out: z.boolean(),
  duration_ms: z.number(),
  start_ms: z.number(),
  remove_ms: z.number().nullable(),
  error: z.string().nullable(),
  reason: z.string().optional(),
  systemMessage: z.string().optional(),
  pass: z.literal("rewritten").optional(),
}).meta({ id: "HookRecord" });

export const DecisionSchema = z.object({
  event_id: z.string(),
  event: z.string().meta({ description: "the canonical (PascalCase) name of the event's point" }),
  decision: z.enum(DECISIONS).nullable().meta({ description: "null: pass-through, no hook decided" }),
  reason: z.string().optional(),
  systemMessage: z.string().optional(),
  hookSpecificOutput: z.object({ additional_context: z.string() }).optional(),
  modifiedArgs: z.unknown().optional(),
  updatedOutput: z.unknown().optional().meta({ description: "what the model sees in place of the tool's output (PostToolUse): a hook replaced it" }),
  continue: z.literal(false).optional().meta({ description: "a hook stopped the agent altogether (`continue: false`); it outranks the decision" }),
  stopReason: z.string().optional(),
  notifications: z.array(NotificationSchema),
  hooks: z.array(HookRecordSchema),
  output: z.record(z.string(), z.unknown()).meta({ description: "the answer in the agent's own hook dialect" }),
  exit_code: z.number().int().meta({ description: "the exit code the agent's hook would have" }),
  note: z.string().optional(),
  canary: z.literal(true).optional().meta({ description: "a Hookbox-Canary request: no hook ran" }),
}).meta({ id: "Decision" });

/** What `brief=true` answers: what an agent acts on, never the hooks' records (they are in the trace). */
export const BriefDecisionSchema = DecisionSchema.pick({ event_id: true, event: true, decision: true, reason: true, continue: true, stopReason: true, output: true, exit_code: true, note: true })
  .meta({ id: "BriefDecision" });

export const NativeAnswerSchema = z.record(z.string(), z.unknown()).meta({ id: "NativeAnswer", description: "exactly the agent's hook JSON" });

export const WorkspaceInfoSchema = z.object({
  id: z.string(),
  digest: z.string(),
  files: z.number().int(),
  bytes: z.number().int(),
  hooks: z.array(z.object({ name: z.string(), event: z.string(), format: z.string(), origin: z.string() })),
  hooks_unlisted: z.number().int().optional().meta({ description: "hooks loaded but not listed: the list stops at 256 Ki characters of JSON (MAX_SUMMARY_HOOKS_JSON_CHARS)" }),
  warnings: z.array(z.string()),
}).meta({ id: "Workspace" });

const summaryFields = {
  event_id: z.string(),
  time: z.string(),
  event: z.string(),
  session_id: z.string().nullable(),
  tool_name: z.string().nullable(),
  workspace: z.string().nullable(),
  decision: z.enum(DECISIONS).nullable(),
  reason: z.string().nullable(),
  duration_ms: z.number(),
  queued_ms: z.number(),
  cancelled: z.boolean(),
  answered: z.object({ decision: z.enum(DECISIONS).nullable(), why: z.string() }).nullable().optional()
    .meta({ description: "what the client was answered when that is not `decision`: its deadline came first (Hookbox-Answer-By-Ms, a native endpoint's agent), or the event expired waiting for a run slot; null (absent in older traces) when it got `decision`" }),
  blocked_by: z.string().nullable(),
};
export const TraceSummarySchema = z.object({ ...summaryFields, hooks: z.number().int() }).meta({ id: "TraceSummary" });
export const TraceListSchema = z.object({ events: z.array(TraceSummarySchema), next_cursor: z.string().nullable() }).meta({ id: "TraceList" });
export const TraceSchema = z.object({
  ...summaryFields,
  tenant: z.string(),
  hooks: z.array(HookRecordSchema.extend({
    warm: z.boolean(), offset_ms: z.number(), stdin: z.string(), stdout: z.string(), stderr: z.string(), env: z.record(z.string(), z.string()),
    truncated: z.object({ stdin: z.boolean(), stdout: z.boolean(), stderr: z.boolean() }),
  })),
}).meta({ id: "Trace" });
export const LiveLineSchema = z.union([
  z.object({ type: z.literal("hello") }),
  z.object({ type: z.literal("decision"), event: TraceSummarySchema }),
  z.object({ type: z.literal("dropped"), count: z.number().int().meta({ description: "decisions left out: the follower read too slowly" }) }),
]).meta({ id: "LiveLine", description: "one NDJSON line; an empty line now and then keeps proxies from closing an idle stream" });

export const SessionsSchema = z.object({
  sessions: z.array(z.object({
    session_id: z.string(), last_seen: z.string(), last_event: z.string(), format: z.string().nullable(), last_canary: z.string().nullable(), events: z.number().int(),
  })),
}).meta({ id: "Sessions" });

export const HealthSchema = z.object({ ok: z.literal(true) });
export const ReadinessSchema = z.object({ ready: z.boolean(), problems: z.array(z.string()) }).meta({ id: "Readiness" });

// Compile-time: every answer the routes build fits its documented schema.
type Fits<Actual extends Documented, Documented> = Actual;
export type _AnswersFitTheirSchemas = [
  Fits<Omit<EventResult, "tool_name" | "session_id" | "trace">, z.input<typeof DecisionSchema>>,
  Fits<WorkspaceInfo, z.input<typeof WorkspaceInfoSchema>>,
  Fits<{ events: TraceSummary[]; next_cursor: string | null }, z.input<typeof TraceListSchema>>,
  Fits<StoredTrace, z.input<typeof TraceSchema>>,
  Fits<{ sessions: SessionSeen[] }, z.input<typeof SessionsSchema>>,
  Fits<RunResult["outcome"], (typeof OUTCOMES)[number]>,
];
