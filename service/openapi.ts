/**
 * @module `GET /openapi.json`: the HTTP API as an OpenAPI 3.1 document, generated from the zod
 * schemas the routes parse with and answer in (service/schemas.ts). test/service/openapi.test.ts
 * holds it to the app: every route documented, the document valid, every example accepted.
 */
import { OpenApiGeneratorV31, OpenAPIRegistry, type RouteConfig } from "@asteasolutions/zod-to-openapi";
import { readFileSync } from "node:fs";
import { z } from "zod";
import { FORMATS, TENANT_WORKSPACE_WAITERS } from "../engine/index.js";
import { EVENT_BODY_READ_MS } from "./read-body.js";
import { LIVE_FOLLOWERS_PER_TENANT } from "./routes/traces.js";
import { TENANT_UPLOADS_IN_FLIGHT, UPLOAD_IDLE_MS, UPLOAD_MAX_MS } from "./routes/workspaces.js";
import {
  BriefDecisionSchema, DecisionSchema, ErrorSchema, EventBodySchema, EventHeadersSchema, EventQuerySchema, HealthSchema, LiveLineSchema, NativeAnswerSchema,
  NotificationSchema, ReadinessSchema, SessionsSchema, StreamErrorSchema, TraceListSchema, TraceQuerySchema, TraceSchema, WorkspaceInfoSchema,
} from "./schemas.js";

const json = (schema: z.ZodType) => ({ "application/json": { schema } });
const ON_FAILURE = {
  "Hookbox-On-Failure": {
    description: "the tenant's failure mode for this event: what the agent should do when hookbox cannot decide",
    schema: { type: "string" as const, enum: ["allow", "block"] },
  },
};
const RETRY_AFTER = { "Retry-After": { description: "seconds", schema: { type: "integer" as const } } };

const ERRORS: Record<number, string> = {
  400: "bad input: malformed JSON (with line and column), an unknown event name, a field of the wrong type, a bad query parameter",
  401: "no token, or one that belongs to no tenant",
  404: "not found (another tenant's is as absent as one that never was)",
  408: `the event's body did not arrive within ${EVENT_BODY_READ_MS / 1000} s of its headers, or an upload sent nothing for ${UPLOAD_IDLE_MS / 1000} s, or was not in whole, unpacked and its hooks loaded within ${UPLOAD_MAX_MS / 60_000} min of its start`,
  413: "the body is too large (refused before it is read), or a tenant's workspace quota",
  429: `this tenant's queue is full, too many of its event bodies or uploads (${TENANT_UPLOADS_IN_FLIGHT}) are still arriving, its events being handled hold too much memory, ${TENANT_WORKSPACE_WAITERS} of its requests wait for stored workspaces to be read, or it already has ${LIVE_FOLLOWERS_PER_TENANT} live followers, or as many traces, trace lists and session lists being sent (TRACE_READS_PER_TENANT)`,
  503: "shutting down, or not decided in time (an event past max_event_ms in the queue, or past Hookbox-Answer-By-Ms)",
  500: "internal: an error hookbox did not foresee (logged); storage_failed: an upload's files could not be written to hookbox's data folder (its code said: EPERM, ENOSPC …; logged)",
};
/** The statuses given, and 500 with every one past the token: any answer may be an error hookbox did not foresee. */
function errors(...statuses: number[]): RouteConfig["responses"] {
  return Object.fromEntries([...statuses, ...(statuses.some((s) => s !== 401) ? [500] : [])].map((s) => [s, {
    description: ERRORS[s]!,
    content: json(ErrorSchema),
    headers: { ...(s === 401 ? {} : ON_FAILURE), ...(s === 429 || s === 503 ? RETRY_AFTER : {}) },
  }]));
}
/** Every `/v1` route: a token, and the failure-mode header on each answer. */
const V1_ERRORS = [400, 401, 503];

const EXAMPLES = {
  cosh: { session_id: "abc-123", hook_event_name: "PreToolUse", tool_name: "shell", tool_input: { command: "rm -rf /tmp/old" } },
  copilot: { toolName: "bash", toolArgs: '{"command":"ls"}' },
  claude: { session_id: "abc-123", hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "git status" } },
};
const eventParam = z.string().meta({ description: "the event name, in either dialect (PreToolUse, preToolUse, agentStop, …)", examples: ["preToolUse"] });
const formatParam = z.enum(FORMATS).meta({ description: "the agent's dialect", examples: ["claude"] });
const decisionContent = {
  "application/json": { schema: z.union([DecisionSchema, BriefDecisionSchema]) },
  "application/x-ndjson": { schema: z.union([NotificationSchema, z.object({ type: z.literal("result") }).and(DecisionSchema), StreamErrorSchema]) },
};
const DECIDED = "the decision; with Accept: application/x-ndjson, one line per notification as its hook finishes, then the result — or, when nothing could be decided, an error line with the failure mode";

function eventRoute(path: string, params: z.ZodObject | undefined, example: Record<string, unknown>, summary: string): RouteConfig {
  return {
    method: "post", path, summary, tags: ["events"],
    request: {
      ...(params ? { params } : {}), query: EventQuerySchema, headers: EventHeadersSchema,
      body: { required: true, content: { "application/json": { schema: EventBodySchema, examples: { example: { value: example } } } } },
    },
    responses: { 200: { description: DECIDED, headers: ON_FAILURE, content: decisionContent }, ...errors(...V1_ERRORS, 404, 408, 413, 429) },
  };
}

function hookRoute(path: string, params: z.ZodObject, example: Record<string, unknown>, summary: string): RouteConfig {
  return {
    method: "post", path, summary, tags: ["hooks"],
    request: { params, query: EventQuerySchema.pick({ workspace: true, interactive: true }), headers: EventHeadersSchema, body: { required: true, content: { "application/json": { schema: EventBodySchema, examples: { example: { value: example } } } } } },
    // Past the token every answer is 200: an agent's HTTP hook reads any other status as a
    // non-blocking error (a silent allow), so what hookbox cannot decide is the failure mode in its JSON.
    responses: {
      200: { description: "exactly the agent's hook JSON; the tenant's failure mode when hookbox cannot decide (a bad body, overload, shutting down, an error) and shortly before the agent's own deadline; a block (no Hookbox-On-Failure) when the token names no tenant — a wrong hook line lets nothing through", headers: ON_FAILURE, content: json(NativeAnswerSchema) },
      // Before any agent's dialect is known: a {format} that is no agent's (bad_request), and then no token.
      400: { description: "bad_request: the {format} is no agent's (no dialect to answer in)", content: json(ErrorSchema) },
      401: { description: ERRORS[401]!, content: json(ErrorSchema) },
    },
  };
}

export function openApiDocument(): ReturnType<OpenApiGeneratorV31["generateDocument"]> {
  const r = new OpenAPIRegistry();
  r.registerComponent("securitySchemes", "bearer", { type: "http", scheme: "bearer", description: "a tenant's token" });
  const workspaceId = z.object({ id: z.string().meta({ description: "1–128 letters, digits, '.', '_' or '-', not starting with a symbol", examples: ["my-repo"] }) });
  const pub = { security: [] };

  r.registerPath(eventRoute("/v1/events", undefined, EXAMPLES.cosh, "one hook event; its name from hook_event_name in the body"));
  r.registerPath(eventRoute("/v1/events/{event}", z.object({ event: eventParam }), EXAMPLES.copilot, "one hook event; its name from the path"));
  r.registerPath({
    method: "get", path: "/v1/events", summary: "recent decisions, newest first, filtered and paged", tags: ["traces"], request: { query: TraceQuerySchema },
    responses: { 200: { description: "a page of decisions", headers: ON_FAILURE, content: json(TraceListSchema) }, ...errors(...V1_ERRORS, 429) },
  });
  r.registerPath({
    method: "get", path: "/v1/events/live", summary: "new decisions as they happen", tags: ["traces"],
    responses: { 200: { description: "NDJSON, one line per decision", headers: ON_FAILURE, content: { "application/x-ndjson": { schema: LiveLineSchema } } }, ...errors(401, 429, 503) },
  });
  r.registerPath({
    method: "get", path: "/v1/events/{event}", summary: "one event's trace: what each hook got, printed and decided", tags: ["traces"],
    request: { params: z.object({ event: z.string().meta({ description: "the event_id of a decision (evt_…)" }) }) },
    responses: { 200: { description: "the trace", headers: ON_FAILURE, content: json(TraceSchema) }, ...errors(401, 404, 429, 503) },
  });
  r.registerPath({
    method: "put", path: "/v1/workspaces/{id}", summary: "upload (part of) a repository: its hook files and what they read", tags: ["workspaces"],
    request: {
      params: workspaceId,
      body: { required: true, content: { "application/gzip": { schema: { type: "string", format: "binary" } }, "application/x-tar": { schema: { type: "string", format: "binary" } } } },
    },
    responses: { 200: { description: "its digest, file count and the repository hooks it declares", headers: ON_FAILURE, content: json(WorkspaceInfoSchema) }, ...errors(...V1_ERRORS, 408, 413, 429) },
  });
  r.registerPath({
    method: "get", path: "/v1/workspaces/{id}", summary: "a workspace's description", tags: ["workspaces"], request: { params: workspaceId },
    responses: { 200: { description: "the workspace", headers: ON_FAILURE, content: json(WorkspaceInfoSchema) }, ...errors(400, 401, 404, 429, 503) },
  });
  r.registerPath({
    method: "delete", path: "/v1/workspaces/{id}", summary: "remove a workspace", tags: ["workspaces"], request: { params: workspaceId },
    responses: { 204: { description: "removed", headers: ON_FAILURE }, ...errors(400, 401, 404, 503) },
  });
  r.registerPath(hookRoute("/v1/hooks/{format}", z.object({ format: formatParam }), EXAMPLES.claude, "an agent's HTTP hook; the event name from the body"));
  r.registerPath(hookRoute("/v1/hooks/{format}/{event}", z.object({ format: formatParam.meta({ examples: ["copilot"] }), event: eventParam }), EXAMPLES.copilot, "an agent's HTTP hook; the event name from the path"));
  r.registerPath({
    method: "get", path: "/v1/sessions", summary: "when hookbox last heard from each of the tenant's sessions", tags: ["traces"],
    responses: { 200: { description: "most recently heard first", headers: ON_FAILURE, content: json(SessionsSchema) }, ...errors(401, 429, 503) },
  });
  r.registerPath({ method: "get", path: "/healthz", summary: "the process answers", tags: ["operations"], ...pub, responses: { 200: { description: "alive", content: json(HealthSchema) } } });
  r.registerPath({
    method: "get", path: "/readyz", summary: "the container engine answers, the images and runtime are there, not draining", tags: ["operations"], ...pub,
    responses: { 200: { description: "ready", content: json(ReadinessSchema) }, 503: { description: "not ready, and why", content: json(ReadinessSchema) } },
  });
  r.registerPath({
    method: "get", path: "/metrics", summary: "Prometheus text exposition", tags: ["operations"], security: [{ bearer: [] }, {}],
    description: "a tenant's token, or only the operator's metrics token where the configuration sets one (metrics_token_sha256, metrics_token_env); none with public_metrics = true",
    responses: { 200: { description: "hookbox_*, process_* and nodejs_* metrics", content: { "text/plain": { schema: { type: "string" } } } }, ...errors(401) },
  });
  r.registerPath({ method: "get", path: "/ui", summary: "the decisions page (it asks for a token)", tags: ["operations"], ...pub, responses: { 200: { description: "HTML", content: { "text/html": { schema: { type: "string" } } } } } });
  r.registerPath({ method: "get", path: "/openapi.json", summary: "this document", tags: ["operations"], ...pub, responses: { 200: { description: "OpenAPI 3.1", content: { "application/json": { schema: { type: "object" } } } } } });

  return new OpenApiGeneratorV31(r.definitions).generateDocument({
    openapi: "3.1.0",
    info: { title: "hookbox", version: packageVersion(), description: "Runs AI-agent hooks in locked-down, short-lived containers and answers one decision over HTTP." },
    security: [{ bearer: [] }],
  });
}

/** The version in package.json: beside service/ in the source tree, beside dist/ when built. */
function packageVersion(): string {
  for (const path of ["../package.json", "../../package.json"]) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(path, import.meta.url), "utf8")) as { name?: string; version?: string };
      if (pkg.name === "hookbox" && pkg.version) return pkg.version;
    } catch {
      // not here: the other layout
    }
  }
  return "0.0.0";
}
