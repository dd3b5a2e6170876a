/**
 * @module Traces, tenant-scoped: `GET /v1/events` (recent decisions, filtered and paged),
 * `GET /v1/events/live` (NDJSON: one line per new decision, as it happens; a follower too slow to
 * keep up loses the oldest past `LIVE_QUEUE_SUMMARIES` and is told how many), `GET /v1/events/{id}`
 * (one event's trace). Another tenant's event is 404, like one that never was.
 */
import type { ServerResponse } from "node:http";
import { Hono } from "hono";
import { stream } from "hono/streaming";
import { NotFoundError } from "../../engine/index.js";
import { queryOf, TraceQuerySchema } from "../schemas.js";
import type { TraceQuery, TraceSummary } from "../records/trace-store.js";
import type { AppDeps, Env } from "../context.js";

/**
 * Decisions one `/v1/events/live` follower may have waiting to be sent; past it the oldest are
 * dropped and counted. @default 1000 — a summary holds at most a few KiB (trace-content.ts).
 */
export const LIVE_QUEUE_SUMMARIES = 1000;
/** An empty line this often on an idle stream keeps proxies from closing it. @default 15 s */
const LIVE_KEEPALIVE_MS = 15_000;

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
      // A follower that reads slowly, or never, holds at most LIVE_QUEUE_SUMMARIES decisions: past
      // that the oldest are dropped, and one `{"type":"dropped","count":N}` line says how many
      // before the next decision it is sent.
      const queue: TraceSummary[] = [];
      let dropped = 0;
      let wake: (() => void) | undefined;
      const off = deps.traces.subscribe(c.get("tenant").name, (summary) => {
        if (queue.length >= LIVE_QUEUE_SUMMARIES) {
          queue.shift();
          dropped++;
        }
        queue.push(summary);
        wake?.();
      });
      // The client's connection (the Node response, not the request's AbortSignal, which Node 20
      // keeps alive with whatever listens to it) and the service's shutdown, both unwatched when the
      // stream ends (`ended`).
      const ended = new AbortController();
      const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;
      let gone = false;
      const onClose = () => {
        gone = true;
        wake?.();
      };
      outgoing?.once("close", onClose);
      ended.signal.addEventListener("abort", () => outgoing?.off("close", onClose), { once: true });
      const stop = { get aborted() { return gone || deps.shutdown.aborted; } };
      deps.shutdown.addEventListener("abort", () => wake?.(), { once: true, signal: ended.signal });
      s.onAbort(() => wake?.());
      try {
        await s.write(`${JSON.stringify({ type: "hello" })}\n`);
        while (!stop.aborted && !s.aborted) {
          if (queue.length === 0) {
            // A line now and then keeps proxies from closing an idle stream.
            await new Promise<void>((r) => {
              wake = r;
              setTimeout(r, LIVE_KEEPALIVE_MS).unref();
            });
            wake = undefined;
            if (queue.length === 0 && !stop.aborted) await s.write("\n");
            continue;
          }
          if (dropped > 0) {
            const count = dropped;
            dropped = 0;
            await s.write(`${JSON.stringify({ type: "dropped", count })}\n`);
          }
          await s.write(`${JSON.stringify({ type: "decision", event: queue.shift() })}\n`);
        }
      } finally {
        off();
        ended.abort();
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
