/**
 * @module createApp(deps): the routes, the request logger, and the one place errors become HTTP.
 * No env reads, no listen.
 */
import { type Context, Hono } from "hono";
import { secureHeaders } from "hono/secure-headers";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { getPathNoStrict } from "hono/utils/url";
import {
  BadRequestError, EventExpiredError, failureAnswer, failureModeFor, FORMATS, HookboxError, NotDecidedInTimeError, NotFoundError, OverloadedError, ShuttingDownError, UnauthorizedError, type Format, type Tenant,
} from "../engine/index.js";
import { tenantForToken } from "./auth.js";
import type { AppDeps, Env } from "./context.js";
import { BodyBudget, eventMemoryBudget, eventNamedIn } from "./read-body.js";
import { eventRoutes } from "./routes/events.js";
import { healthRoutes } from "./routes/health.js";
import { hookRoutes } from "./routes/hooks.js";
import { answersBeingSent, listAnswer, traceRoutes } from "./routes/traces.js";
import { workspaceRoutes } from "./routes/workspaces.js";

const STATUS: Record<string, ContentfulStatusCode> = {
  bad_request: 400, bad_header: 400, body_incomplete: 400, body_timeout: 408, event_missing: 400, unknown_event: 400, bad_json: 400, bad_field: 400, bad_workspace_id: 400,
  archive_refused: 400, archive_invalid: 400, archive_too_many_entries: 400, archive_too_large: 413, workspace_hooks_invalid: 400,
  tenant_workspace_bytes: 413, tenant_workspace_count: 413,
  config_invalid: 400, unauthorized: 401, not_found: 404, too_large: 413, overloaded: 429, shutting_down: 503, event_expired: 503, not_decided_in_time: 503,
  storage_failed: 500,
};

/**
 * `/v1/hooks/{format}…` with a dialect hookbox speaks (in any case): the native endpoint's format,
 * and its event when the path names one. Any path under it counts, routed or not: its agent takes
 * whatever is not its own JSON for a silent allow.
 */
function nativeOf(path: string): { format: Format; event: string | undefined } | undefined {
  // `/V1/Hooks/…`, `/v1//hooks/…` and `//v1/hooks/…` (a base URL ending in a slash) too: routed or not, its agent reads the answer.
  const m = /^\/+v1\/+hooks\/+([A-Za-z]+)(?:\/+([A-Za-z]+))?/i.exec(path);
  const format = m?.[1]!.toLowerCase();
  if (!m || !(FORMATS as readonly string[]).includes(format!)) return undefined;
  return { format: format as Format, event: m[2] };
}

/**
 * Whether `url`'s percent-encoding is no UTF-8 (`%ff`, a `%` alone): hono decodes such a path or
 * query one escape at a time, an exception each — about 30 ms of the shared thread for 16 KiB of
 * them —, and no client sends one. One pass of decodeURI tells.
 */
function badlyEncoded(url: string): boolean {
  if (!url.includes("%")) return false;
  try {
    decodeURI(url);
    return false;
  } catch {
    return true;
  }
}

const BADLY_ENCODED = "the URL's percent-encoding is no UTF-8 (a % without two hex digits after it, or bytes that make no UTF-8 character)";
/** Where a badly encoded URL is routed (badlyEncoded): answered there, never decoded. */
const BADLY_ENCODED_PATH = "/.badly-encoded";

/**
 * The path hono routes `request` by: hono's own without `strict` (decoded, a trailing slash
 * dropped) — but a badly encoded URL's is BADLY_ENCODED_PATH, never decoded.
 */
function routedPath(request: Request): string {
  return badlyEncoded(request.url) ? BADLY_ENCODED_PATH : getPathNoStrict(request);
}

/** @default 64 KiB, 1 s — what of a body is read, at most, to learn its event while the service stops */
export const SNIFF_BYTES = 64 * 1024;
export const SNIFF_MS = 1_000;
/**
 * @default 4 KiB, 250 ms, 64 at once — the same for a native hook whose token names no tenant (an
 * agent writes the event's name in the first few hundred bytes): anyone may send these, so they read
 * less, and past 64 at once they read nothing (the block then names no event).
 */
export const UNKNOWN_TOKEN_SNIFF = { bytes: 4 * 1024, ms: 250, atOnce: 64 };

/** The event a body's head names (`hook_event_name`), read no further than `maxBytes` and `maxMs`; undefined when it does not say. */
async function sniffedEvent(req: Request, maxBytes = SNIFF_BYTES, maxMs = SNIFF_MS): Promise<string | undefined> {
  const reader = req.body?.getReader();
  if (!reader) return undefined;
  const timer = setTimeout(() => void reader.cancel().catch(() => undefined), maxMs);
  const decoder = new TextDecoder();
  let text = "";
  let bytes = 0;
  try {
    while (bytes < maxBytes) {
      const { value, done } = await reader.read();
      if (done) break;
      // Bytes, not characters: no more than maxBytes of the body is read and decoded.
      const part = value.subarray(0, maxBytes - bytes);
      bytes += part.length;
      text += decoder.decode(part, { stream: true });
    }
    // Searched once, over the head read: a body a byte a write costs no search a byte.
    return eventNamedIn(text);
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
    void reader.cancel().catch(() => undefined);
  }
}

/** Whether a request's headers say a body of some length follows: a Content-Length that is not 0 (00 is). */
function declaresBody(headers: Headers): boolean {
  const length = headers.get("content-length");
  return length !== null && !/^\s*0+\s*$/.test(length);
}

/** The event a path names (`/v1/events/{event}`, `/v1/hooks/{format}/{event}`), for the failure-mode header. */
function eventFromPath(method: string, path: string): string | undefined {
  // Only a POST sends an event: `GET /v1/events/live` names a stream of traces, not an event "live".
  if (method !== "POST") return undefined;
  return nativeOf(path)?.event ?? /^\/v1\/events\/([A-Za-z]+)\/?$/.exec(path)?.[1];
}

export function createApp(given: AppDeps): Hono<Env> {
  const deps: AppDeps = { ...given, bodies: given.bodies ?? new BodyBudget(), eventMemory: given.eventMemory ?? eventMemoryBudget(), answers: given.answers ?? answersBeingSent() };
  // `/v1/hooks/claude/` is `/v1/hooks/claude`, as an agent's URL may be written (routedPath).
  const app = new Hono<Env>({ getPath: routedPath });

  app.use("*", async (c, next) => {
    const t0 = performance.now();
    const log = deps.logger.child({ req: { method: c.req.method, path: c.req.path } });
    c.set("log", log);
    await next();
    log.info({ res: { status: c.res.status, ms: Math.round(performance.now() - t0) } }, "request");
  });

  // nosniff, no framing, no referrer, same-origin resources on every answer. No HSTS: whether
  // hookbox is reached over TLS is the operator's proxy's business.
  app.use("*", secureHeaders({ xFrameOptions: "DENY", strictTransportSecurity: false }));

  // A GET or HEAD that says it carries a body (RFC 9110 §9.3.1: it has no meaning there) is refused
  // and its connection closed: no route reads it, the adapter drains none for these methods, and Node
  // would read it on behind the answer for as long as it trickles in — up to the request timeout an
  // upload has (UPLOAD_MAX_MS + 30 s), a connection of max_connections held for no one, token or not.
  // (One chunked, which a proxy may send for an empty body, is answered, then given GET_BODY_DRAIN_MS: main.ts.)
  app.use("*", async (c, next) => {
    const method = c.req.method;
    if ((method === "GET" || method === "HEAD") && declaresBody(c.req.raw.headers)) {
      deps.metrics.rejected.inc({ status: "400" });
      return c.json({ error: { code: "bad_request", message: `a ${method} request carries no body (it sent a Content-Length that is not 0)` } }, 400, { Connection: "close" });
    }
    await next();
  });

  // A URL hono would decode one bad escape at a time is refused before anything reads it, token or
  // not; a native hook's line that holds one is wrong — a block in its agent's JSON, as a wrong token's.
  app.all(BADLY_ENCODED_PATH, (c) => {
    const url = c.req.raw.url;
    // (a URL that names the sentinel itself is routed as any path that is not there)
    if (!badlyEncoded(url)) return c.notFound();
    deps.metrics.rejected.inc({ status: "400" });
    const at = url.indexOf("/", url.indexOf(":") + 4);
    // Its ASCII escapes decoded (`/v1/hooks/cl%61ude`), one at a time in one pass; the rest left as they are.
    const path = url.slice(at).split(/[?#]/, 1)[0]!.replace(/%([0-7][0-9A-Fa-f])/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    const native = nativeOf(path);
    if (native) return c.json(failureAnswer(native.format, native.event, "block", `hookbox refused the hook's URL: ${BADLY_ENCODED} (check the URL in the agent's hook settings; \`hookbox doctor\` checks each hook)`).output, 200);
    return c.json({ error: { code: "bad_request", message: BADLY_ENCODED } }, 400);
  });

  app.route("/", healthRoutes(deps));

  app.use("/v1/*", async (c, next) => {
    const tenant = tenantForToken(deps.tenants, c.req.header("authorization"));
    if (!tenant) throw new UnauthorizedError();
    // SERVICE.md §8: every answer tells the client what to do when hookbox cannot decide (the
    // event routes refine it for the event's point, once its body names it). Until the event is
    // known — a body too large or not JSON on `POST /v1/events` — it may be any: the strictest.
    const event = eventFromPath(c.req.method, c.req.path);
    c.header("Hookbox-On-Failure", failureModeFor(tenant, event));
    // Decisions, traces and workspaces are a tenant's own: no cache keeps them.
    c.header("Cache-Control", "no-store");
    c.set("tenant", tenant);
    if (deps.draining()) {
      // A native endpoint whose path names no event answers for the event its body names: at a stop,
      // the failure mode's block would keep the agent going — on every restart.
      const native = nativeOf(c.req.path);
      if (native && native.event === undefined) {
        const event = await sniffedEvent(c.req.raw);
        if (event !== undefined) c.set("event", event);
      }
      throw new ShuttingDownError();
    }
    c.set("log", c.get("log").child({ tenant: tenant.name }));
    // Counted from here: a request let in before the drain began (its body still arriving, its
    // workspace still loading) is waited for too, not only the runs under way when it began.
    const handled = next();
    deps.inflight.add(handled);
    await handled;
  });
  app.route("/v1/events", eventRoutes(deps));
  app.route("/v1/events", traceRoutes(deps));
  app.route("/v1/workspaces", workspaceRoutes(deps));
  app.route("/v1/hooks", hookRoutes(deps));
  // When hookbox last heard from each of the tenant's sessions (events and `hookbox doctor` canaries).
  // Up to 1000, each id up to 1 KiB (six bytes a character once escaped): written as the client
  // reads, as the trace list is — never some 6 MB built at once on the shared thread and held whole
  // for a client that does not read.
  app.get("/v1/sessions", (c) => listAnswer(c, deps, '{"sessions":[', () => deps.sessions.list(c.get("tenant").name), "]}"));

  app.notFound((c) => {
    // A native hook's URL with a typo is still its tenant's failure mode in its agent's JSON — one
    // the /v1 middleware never saw too (`/V1/hooks/…`, `//v1/hooks/…`): its token says the tenant.
    if (nativeOf(c.req.path)) {
      const tenant = c.get("tenant") ?? tenantForToken(deps.tenants, c.req.header("authorization"));
      if (tenant) {
        c.set("tenant", tenant);
        throw new NotFoundError(`no route ${c.req.method} ${c.req.path}`);
      }
      return refusedToken(c, nativeOf(c.req.path)!);
    }
    return c.json({ error: { code: "not_found", message: `no route ${c.req.method} ${c.req.path}` } }, 404);
  });

  /**
   * A native hook whose token names no tenant: a hook line that is wrong, which an agent would read
   * from a 401 as a non-blocking error — a silent allow. It blocks, as a wrong `hookbox forward` line
   * does, in the agent's JSON for the event the path (else the body's head) names: where a block
   * keeps the agent going (a stop) it lets it stop. No failure mode is told: no tenant is known.
   */
  let unknownTokenSniffs = 0;
  async function refusedToken(c: Context<Env>, native: { format: Format; event: string | undefined }): Promise<Response> {
    let event = native.event;
    if (event === undefined && unknownTokenSniffs < UNKNOWN_TOKEN_SNIFF.atOnce) {
      unknownTokenSniffs++;
      event = await sniffedEvent(c.req.raw, UNKNOWN_TOKEN_SNIFF.bytes, UNKNOWN_TOKEN_SNIFF.ms).finally(() => unknownTokenSniffs--);
    }
    // Counted, not logged beyond the request's own line: anyone may send these, as many as they like.
    deps.metrics.rejected.inc({ status: "401" });
    const reason = "hookbox refused the token: the hook's Authorization header names no tenant (check the token in the agent's hook settings; `hookbox doctor` checks each hook)";
    return c.json(failureAnswer(native.format, event, "block", reason).output, 200);
  }

  app.onError((err, c) => {
    let status: ContentfulStatusCode = 500;
    let body: { code: string; message: string; field?: string };
    if (err instanceof HookboxError) {
      status = STATUS[err.code] ?? (err instanceof BadRequestError ? 400 : 500);
      body = { code: err.code, message: err.message, ...(err instanceof BadRequestError && err.field ? { field: err.field } : {}) };
      // the service's own trouble (a data folder that refuses writes): the operator's to see
      if (status === 500) (c.get("log") ?? deps.logger).error({ err: { code: err.code, message: err.message } }, "request failed on the service's side");
    } else {
      (c.get("log") ?? deps.logger).error({ err }, "unhandled error");
      body = { code: "internal", message: "internal error" };
    }
    // An agent's HTTP hook treats any non-2xx answer as a non-blocking error — a silent allow. On the
    // native endpoints every failure after the token is known is the tenant's failure mode, in the
    // agent's own JSON (SERVICE.md §8).
    const native = nativeOf(c.req.path);
    const tenant = c.get("tenant") as Tenant | undefined;
    if (native && status === 401) return refusedToken(c, native);
    if (native && tenant && status !== 401) {
      // The event's own point: from the path, else from the body once it was read; when neither
      // says (a body that could not be read), the strictest of the tenant's failure modes.
      const event = native.event ?? c.get("event");
      const mode = failureModeFor(tenant, event);
      (c.get("log") ?? deps.logger).warn({ err: { code: body.code, message: body.message }, status, mode }, "native hook answered with the tenant's failure mode");
      deps.metrics.rejected.inc({ status: String(status) });
      return c.json(failureAnswer(native.format, event, mode, `hookbox could not decide (${body.code}): ${body.message}`).output, 200);
    }
    if (status === 401) c.header("WWW-Authenticate", 'Bearer realm="hookbox"');
    if (err instanceof OverloadedError) c.header("Retry-After", String(err.retryAfterS));
    if (err instanceof ShuttingDownError || err instanceof EventExpiredError || err instanceof NotDecidedInTimeError) c.header("Retry-After", "5");
    if (status >= 400 && status !== 500) deps.metrics.rejected.inc({ status: String(status) });
    return c.json({ error: body }, status);
  });

  return app;
}
