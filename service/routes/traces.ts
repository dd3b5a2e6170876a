/**
 * @module Traces, tenant-scoped: `GET /v1/events` (recent decisions, filtered and paged),
 * `GET /v1/events/live` (NDJSON: one line per new decision, as it happens), `GET /v1/events/{id}`
 * (one event's trace). Another tenant's event is 404, like one that never was.
 */
import { Hono } from "hono";
import { stream } from "hono/streaming";
import { NotFoundError } from "../../engine/index.js";
import { queryOf, TraceQuerySchema } from "../schemas.js";
import type { TraceQuery, TraceSummary } from "../records/trace-store.js";
import type { AppDeps, Env } from "../context.js";

export function traceRoutes(deps: AppDeps): Hono<Env> {
  const app = new Hono<Env>();

  app.get("/", (c) => {
    const { session_id, decision, since, limit, cursor } = queryOf(c, TraceQuerySchema);
    const q: TraceQuery = {};
    if (session_id) q.session_id = session_id;
    if (decision !== undefined) q.decision = decision;
    if (since !== undefined) q.since = /^\d+$/.test(since) ? Number(since) : Date.parse(since);
    if (limit !== undefined) q.limit = Number(limit);
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
