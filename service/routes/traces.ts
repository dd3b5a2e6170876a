/**
 * @module Traces, tenant-scoped: `GET /v1/events` (recent decisions, filtered and paged),
 * `GET /v1/events/live` (NDJSON: one line per new decision, as it happens; a follower too slow to
 * keep up loses the oldest past `LIVE_QUEUE_SUMMARIES` and is told how many), `GET /v1/events/{id}`
 * (one event's trace). Another tenant's event is 404, like one that never was.
 */
import type { ServerResponse } from "node:http";
import type { FileHandle } from "node:fs/promises";
import { Hono, type Context } from "hono";
import { stream } from "hono/streaming";
import { heavyTurns, NotFoundError, OverloadedError } from "../../engine/index.js";
import { queryOf, TraceQuerySchema } from "../schemas.js";
import type { TraceQuery, TraceSummary } from "../records/trace-store.js";
import type { AppDeps, Env } from "../context.js";
import { BodyBudget } from "../read-body.js";
import { ndjsonLine } from "../ndjson.js";

/**
 * Decisions one `/v1/events/live` follower may have waiting to be sent; past it the oldest are
 * dropped and counted. @default 1000 — a summary holds at most a few KiB (trace-content.ts).
 */
export const LIVE_QUEUE_SUMMARIES = 1000;
/**
 * Live followers one tenant may have open at once; one more is answered 429. Each holds a queue
 * of up to LIVE_QUEUE_SUMMARIES and is told of every decision of its tenant. @default 16
 */
export const LIVE_FOLLOWERS_PER_TENANT = 16;
/**
 * Answers of traces, trace lists and session lists one tenant may have being sent at once; one more
 * is answered 429. Each is sent as its client reads and holds what it sends until then: a trace its
 * open file (or its text, not yet written), a list the up to 500 summaries or 1000 sessions it lists —
 * which a tenant's new events would otherwise push off the shelf while a client that never reads
 * keeps them, a list's worth a connection. @default 16
 */
export const TRACE_READS_PER_TENANT = 16;

/** Each tenant's answers being sent (`TRACE_READS_PER_TENANT`), one place each. */
export const answersBeingSent = () =>
  new BodyBudget(TRACE_READS_PER_TENANT, (now) => `this tenant already has ${now} traces or lists being sent (TRACE_READS_PER_TENANT); retry when they are read`);
/** An empty line this often on an idle stream keeps proxies from closing it. @default 15 s */
export const LIVE_KEEPALIVE_MS = 15_000;

/** What a response body is written in — about this many bytes a piece (characters, for text), the next when the client has read it. */
const CHUNK_SIZE = 64 * 1024;

/**
 * A piece of an answer is made in a turn of its tenant's (heavyTurns): the server asks for the next
 * piece as soon as the socket takes the last, which for a client that reads at once is at once — and
 * sixteen lists of 4 MB (500 summaries of escaped NULs), made back to back, held the thread for a
 * second, every tenant's events waiting. One piece a turn, tenants taking turns, the loop reading
 * what arrived between two.
 */
const pieceTurn = (tenant: string) => heavyTurns.take(tenant);

/** `text` as UTF-8, a chunk a pull (each in a turn of `tenant`'s), never splitting a surrogate pair. */
function textChunks(tenant: string, text: string, done: () => void = () => undefined): ReadableStream<Uint8Array> {
  const utf8 = new TextEncoder();
  let at = 0;
  let gone = false;
  return new ReadableStream({
    async pull(ctrl) {
      await pieceTurn(tenant);
      // the client went while this piece waited for its turn
      if (gone) return;
      if (at >= text.length) {
        done();
        return ctrl.close();
      }
      let end = Math.min(at + CHUNK_SIZE, text.length);
      const last = text.charCodeAt(end - 1);
      if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
      ctrl.enqueue(utf8.encode(text.slice(at, end)));
      at = end;
    },
    cancel() {
      gone = true;
      done();
    },
  });
}

/**
 * The file, a chunk a pull — read only when the client has taken the last one (no read-ahead, so
 * a client that never reads holds one chunk, not the trace) — closed at its end or when the client
 * goes; `done` then, once.
 */
function fileChunks(file: FileHandle, done: () => void): ReadableStream<Uint8Array> {
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    done();
    await file.close().catch(() => undefined);
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(ctrl) {
        try {
          const buf = Buffer.allocUnsafe(CHUNK_SIZE);
          const { bytesRead } = await file.read(buf, 0, CHUNK_SIZE, null);
          if (bytesRead === 0) {
            await close();
            ctrl.close();
          } else ctrl.enqueue(buf.subarray(0, bytesRead));
        } catch (err) {
          await close();
          ctrl.error(err);
        }
      },
      cancel: close,
    },
    { highWaterMark: 0 },
  );
}

/**
 * `head`, the items' JSON joined by commas, `tail`: the items written to JSON as they are pulled,
 * each piece in a turn of `tenant`'s (pieceTurn); `sent` once the last piece is handed over or the
 * client goes.
 */
export function jsonChunks(tenant: string, head: string, items: readonly unknown[], tail: string, sent: () => void = () => undefined): ReadableStream<Uint8Array> {
  const utf8 = new TextEncoder();
  let next = 0;
  let piece = head;
  let done = false;
  return new ReadableStream({
    async pull(ctrl) {
      if (done) return ctrl.close();
      await pieceTurn(tenant);
      // the client went while this piece waited for its turn: nothing more to make
      if (done) return;
      while (piece.length < CHUNK_SIZE && next < items.length) piece += `${next > 0 ? "," : ""}${JSON.stringify(items[next++])}`;
      if (next >= items.length) {
        piece += tail;
        done = true;
        sent();
      }
      ctrl.enqueue(utf8.encode(piece));
      piece = "";
    },
    cancel() {
      if (done) return;
      done = true;
      sent();
    },
  });
}

/**
 * A list, sent as the client reads, in one of its tenant's TRACE_READS_PER_TENANT places until it is
 * sent or the client goes. HEAD: the headers alone, holding no place (hono drops the body unread).
 */
export function listAnswer(c: Context<Env>, deps: AppDeps, head: string, items: () => readonly unknown[], tail: string, held?: () => void): Response {
  if (c.req.method === "HEAD") {
    held?.();
    return c.body(null, 200, { "Content-Type": "application/json" });
  }
  // the place taken by the caller (before a listing's walk), else one taken now
  const give = held ?? deps.answers!.take(c.get("tenant").name, 1);
  try {
    return c.body(jsonChunks(c.get("tenant").name, head, items(), tail, give), 200, { "Content-Type": "application/json" });
  } catch (err) {
    give();
    throw err;
  }
}

export function traceRoutes(deps: AppDeps): Hono<Env> {
  const app = new Hono<Env>();

  app.get("/", async (c) => {
    const { session_id, decision, since, limit, cursor } = queryOf(c, TraceQuerySchema);
    const q: TraceQuery = {};
    if (session_id) q.session_id = session_id;
    if (decision !== undefined) q.decision = decision;
    if (since !== undefined) q.since = /^\d+$/.test(since) ? Number(since) : Date.parse(since);
    if (limit !== undefined) q.limit = Number(limit);
    if (cursor) q.cursor = cursor;
    // The place is taken before the walk (a filter that matches nothing walks the whole shelf, in
    // slices): a tenant has at most TRACE_READS_PER_TENANT walks and answers under way.
    const give = deps.answers!.take(c.get("tenant").name, 1);
    let listed: Awaited<ReturnType<typeof deps.traces.list>>;
    try {
      listed = await deps.traces.list(c.get("tenant").name, q);
    } catch (err) {
      give();
      throw err;
    }
    const { events, next_cursor } = listed;
    // Up to 500 summaries, each field up to 1 KiB before JSON escaping: written as the client
    // reads, never held whole for a client that does not — and only so many such clients.
    return listAnswer(c, deps, '{"events":[', () => events, `],"next_cursor":${JSON.stringify(next_cursor)}}`, give);
  });

  app.get("/live", (c) => {
    const tenant = c.get("tenant").name;
    if (deps.traces.followers(tenant) >= LIVE_FOLLOWERS_PER_TENANT)
      throw new OverloadedError(5, `this tenant already has ${LIVE_FOLLOWERS_PER_TENANT} live followers open (the most it may); close one, or retry later`);
    c.header("Content-Type", "application/x-ndjson");
    c.header("Cache-Control", "no-store");
    // HEAD: the headers alone. hono answers HEAD with the GET handler and drops the body unread: a
    // stream started here would wait on its first write for ever, subscribed.
    if (c.req.method === "HEAD") return c.body(null);
    return stream(c, async (s) => {
      // A follower that reads slowly, or never, holds at most LIVE_QUEUE_SUMMARIES decisions: past
      // that the oldest are dropped, and one `{"type":"dropped","count":N}` line says how many
      // before the next decision it is sent.
      const queue: TraceSummary[] = [];
      let dropped = 0;
      let wake: (() => void) | undefined;
      const off = deps.traces.subscribe(tenant, (summary) => {
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
      // A write the client never reads (its connection full) waits no longer than the client's
      // going or the service's stop: each write waits on a promise of its own, let go after it.
      const waiting = new Set<() => void>();
      const over = () => {
        for (const release of waiting) release();
        waiting.clear();
      };
      const send = async (line: string) => {
        let release!: () => void;
        const letGo = new Promise<void>((r) => (release = r));
        waiting.add(release);
        try {
          if (stop.aborted || s.aborted) return;
          await Promise.race([s.write(line), letGo]);
        } finally {
          waiting.delete(release);
        }
      };
      const onClose = () => {
        gone = true;
        wake?.();
        over();
      };
      outgoing?.once("close", onClose);
      ended.signal.addEventListener("abort", () => outgoing?.off("close", onClose), { once: true });
      const stop = { get aborted() { return gone || deps.shutdown.aborted; } };
      deps.shutdown.addEventListener("abort", () => { wake?.(); over(); }, { once: true, signal: ended.signal });
      s.onAbort(() => { wake?.(); over(); });
      try {
        await send(ndjsonLine({ type: "hello" }));
        while (!stop.aborted && !s.aborted) {
          if (queue.length === 0) {
            // A line now and then keeps proxies from closing an idle stream.
            // The timer goes with the wait: a follower woken by each decision leaves none behind.
            let timer: NodeJS.Timeout | undefined;
            await new Promise<void>((r) => {
              wake = r;
              timer = setTimeout(r, LIVE_KEEPALIVE_MS).unref();
            });
            clearTimeout(timer);
            wake = undefined;
            if (queue.length === 0 && !stop.aborted) await send("\n");
            continue;
          }
          // Lines are written a piece at a time, each piece in a turn of the tenant's (pieceTurn): a
          // follower that resumes with a full queue never holds the thread for all of it at once.
          await pieceTurn(tenant);
          let piece = "";
          if (dropped > 0) {
            piece = ndjsonLine({ type: "dropped", count: dropped });
            dropped = 0;
          }
          while (queue.length > 0 && piece.length < CHUNK_SIZE) piece += ndjsonLine({ type: "decision", event: queue.shift() });
          await send(piece);
        }
      } finally {
        off();
        ended.abort();
      }
    });
  });

  app.get("/:id", async (c) => {
    const tenant = c.get("tenant").name;
    // Its place is taken before the file is opened (requests that arrive while opens are under way
    // count too), and given back when no file is kept for the client.
    const done = deps.answers!.take(tenant, 1);
    let keptFile = false;
    try {
      const trace = await deps.traces.open(tenant, c.req.param("id"));
      if (trace === undefined) throw new NotFoundError(`no event "${c.req.param("id")}"`);
      // HEAD: hono drops the GET handler's body unread, so no file is left open for it.
      if (c.req.method === "HEAD") {
        if ("file" in trace) await trace.file.close();
        return c.body(null, 200, { "Content-Type": "application/json" });
      }
      // Read as the client reads: a client that never does holds a chunk, not the trace — and its
      // file, until it has read it or goes: counted against its tenant until then.
      // A trace not on disk yet is its text, held for the client until it has read it or goes:
      // counted against its tenant as a file is.
      keptFile = true;
      if ("text" in trace) return c.body(textChunks(tenant, trace.text, done), 200, { "Content-Type": "application/json" });
      return c.body(fileChunks(trace.file, done), 200, { "Content-Type": "application/json" });
    } finally {
      if (!keptFile) done();
    }
  });

  return app;
}
