/**
 * @module Traces, tenant-scoped: `GET /v1/events` (recent decisions, filtered and paged),
 * `GET /v1/events/live` (NDJSON: one line per new decision, as it happens), `GET /v1/events/{id}`
 * (one event's trace). Another tenant's event is 404, like one that never was.
 */
import { Hono } from "hono";
import { stream } from "hono/streaming";
import { BadRequestError, NotFoundError } from "../../engine/index.js";
import type { TraceQuery, TraceSummary } from "../records/trace-store.js";
import type { AppDeps, Env } from "../context.js";

const DECISIONS = ["allow", "block", "ask", "none"] as const;

export function traceRoutes(deps: AppDeps): Hono<Env> {
  const app = new Hono<Env>();

  app.get("/", (c) => {
    const q: TraceQuery = {};
    const session = c.req.query("session_id");
    if (session) q.session_id = session;
    const decision = c.req.query("decision");
    if (decision !== undefined) {
      if (!(DECISIONS as readonly string[]).includes(decision)) throw new BadRequestError(`decision must be one of ${DECISIONS.join(", ")}`, "decision");
      q.decision = decision as TraceQuery["decision"];
    }
    const since = c.req.query("since");
    if (since !== undefined) {
      const ms = /^\d+$/.test(since) ? Number(since) : Date.parse(since);
      if (Number.isNaN(ms)) throw new BadRequestError("since must be an ISO time or epoch milliseconds", "since");
      q.since = ms;
    }
    const limit = c.req.query("limit");
    if (limit !== undefined) {
      if (!/^\d+$/.test(limit)) throw new BadRequestError("limit must be a whole number", "limit");
      q.limit = Number(limit);
    }
    const cursor = c.req.query("cursor");
    if (cursor) q.cursor = cursor;
    return c.json(deps.traces.list(c.get("tenant").name, q));
  });

  app.get("/live", (c) => {
    c.header("Content-Type", "application/x-ndjson");
    c.header("Cache-Control", "no-store");
    return stream(c, async (s) => {
      const queue: TraceSummary[] = [];
      let wake: (() => void) | undefined;
      const off = deps.traces.subscribe(c.get("tenant").name, (summary) => {
        queue.push(summary);
        wake?.();
      });
      const stop = AbortSignal.any([c.req.raw.signal, deps.shutdown]);
      stop.addEventListener("abort", () => wake?.(), { once: true });
      s.onAbort(() => wake?.());
      try {
        await s.write(`${JSON.stringify({ type: "hello" })}\n`);
        while (!stop.aborted && !s.aborted) {
          if (queue.length === 0) {
            // A line now and then keeps proxies from closing an idle stream.
            await new Promise<void>((r) => {
              wake = r;
              setTimeout(r, 15_000).unref();
            });
            wake = undefined;
            if (queue.length === 0 && !stop.aborted) await s.write("\n");
            continue;
          }
          await s.write(`${JSON.stringify({ type: "decision", event: queue.shift() })}\n`);
        }
      } finally {
        off();
      }
    });
  });

  app.get("/:id", async (c) => {
    const trace = await deps.traces.get(c.get("tenant").name, c.req.param("id"));
    if (!trace) throw new NotFoundError(`no event "${c.req.param("id")}"`);
    return c.json(trace);
  });

  return app;
}
