/**
 * @module `PUT/GET/DELETE /v1/workspaces/{id}` (SERVICE.md §3): a tar or tar.gz of (part of) a
 * repository, stored per tenant; the answer lists its digest and the repository hooks it declares.
 * The upload streams to disk: its bytes are counted as they pass, never buffered whole (hono's
 * bodyLimit buffers a body sent without Content-Length, up to the limit).
 */
import type { IncomingMessage } from "node:http";
import { Hono } from "hono";
import type { MiddlewareHandler } from "hono";
import { NotFoundError, BadRequestError, HookboxError, OverloadedError } from "../../engine/index.js";
import { tooLarge, type AppDeps, type Env } from "../context.js";
import { maxPiecesOf, PieceJoiner } from "../read-body.js";

/**
 * Uploads one tenant may have arriving at once; one more is answered 429. Each may hold a few MiB
 * while its archive is read (a tar header of 4 MiB is read whole). @default 4
 */
export const TENANT_UPLOADS_IN_FLIGHT = 4;
/** @default 30 s — an upload that sends nothing for this long is answered 408 (`body_timeout`) */
export const UPLOAD_IDLE_MS = 30_000;
/**
 * @default 10 min — an upload not in whole, unpacked and its hooks loaded by then is answered 408
 * (`body_timeout`): one that sends a byte every few seconds, or an archive that holds its unpacking,
 * holds its place, its staging folder, what it reserved of the quota and (replacing a workspace)
 * the old copy beside the new for no longer. 64 MiB (max_body_bytes) arrive in it at 110 KB/s.
 */
export const UPLOAD_MAX_MS = 600_000;

export function workspaceRoutes(deps: AppDeps): Hono<Env> {
  const app = new Hono<Env>();
  const max = deps.limits.maxUploadBytes;
  const idleMs = deps.limits.uploadIdleMs ?? UPLOAD_IDLE_MS;
  const maxMs = deps.limits.uploadMaxMs ?? UPLOAD_MAX_MS;
  const uploading = new Map<string, number>();
  const overMessage = `the archive is over ${max} bytes (server.max_body_bytes)`;
  // A declared length over the limit is refused before the body is read.
  const declared: MiddlewareHandler<Env> = async (c, next) => {
    const length = c.req.header("content-length");
    if (length !== undefined && !c.req.header("transfer-encoding") && Number(length) > max) return tooLarge(c, overMessage);
    await next();
  };

  app.put("/:id", declared, async (c) => {
    const tenant = c.get("tenant").name;
    const inFlight = uploading.get(tenant) ?? 0;
    // (refused before a byte of it is read: the adapter drains it after the answer)
    if (inFlight >= TENANT_UPLOADS_IN_FLIGHT) throw new OverloadedError(5, `this tenant already has ${inFlight} uploads arriving (TENANT_UPLOADS_IN_FLIGHT: ${TENANT_UPLOADS_IN_FLIGHT}); retry when they are in`);
    // Over the HTTP adapter, read straight off the Node request, its pieces joined as they come (no
    // web stream is built around it: one would cost the thread tens of microseconds a piece);
    // in-process (`app.request()`), the web body's pieces joined the same way. Each piece that
    // arrives is noted: silence is judged by pieces, not by the blocks they fill.
    const arrived = { at: performance.now() };
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    const raw = incoming ? joinedBlocks(incoming, max, arrived) : c.req.raw.body && joinedWebBlocks(c.req.raw.body, max, arrived);
    if (!raw) throw new BadRequestError("the body must be a tar or tar.gz archive", "body", "archive_invalid");
    uploading.set(tenant, inFlight + 1);
    // One deadline over the whole upload, from here to its swap: the body's arrival and its unpacking
    // (an archive may hold the parser once all its bytes are in) alike.
    const deadline = new AbortController();
    let body: ReturnType<typeof counted> | undefined;
    const named = maxMs === UPLOAD_MAX_MS ? " (UPLOAD_MAX_MS)" : "";
    const timer = setTimeout(() => {
      const what = body?.whole() ? "unpacked and stored" : "in whole";
      deadline.abort(new HookboxError(`the upload was not ${what} within ${maxMs} ms${named}`, "body_timeout"));
    }, maxMs);
    let info;
    try {
      body = counted(raw, max, overMessage, idleMs, deadline.signal, arrived);
      info = await deps.workspaces.put(tenant, c.req.param("id"), body.chunks, deadline.signal);
    } catch (err) {
      // Refused before the whole archive came: read the rest first, so the client, still sending,
      // reads the answer (not one that has stopped sending); then let go of the body.
      if (!(err instanceof HookboxError && err.code === "body_timeout")) await body?.drain();
      body?.cancel();
      throw err;
    } finally {
      clearTimeout(timer);
      const left = (uploading.get(tenant) ?? 1) - 1;
      if (left > 0) uploading.set(tenant, left);
      else uploading.delete(tenant);
    }
    c.get("log").info({ workspace: { id: info.id, files: info.files, hooks: info.hooks.length + (info.hooks_unlisted ?? 0) } }, "workspace stored");
    return c.json(info, 200);
  });

  app.get("/:id", async (c) => {
    const stored = await deps.workspaces.get(c.get("tenant").name, c.req.param("id"));
    if (!stored) throw new NotFoundError(`no workspace "${c.req.param("id")}"`);
    // its JSON as made once while it is held, written as it is: never made again per request
    return c.body(stored.infoJson(), 200, { "Content-Type": "application/json" });
  });

  app.delete("/:id", async (c) => {
    if (!(await deps.workspaces.delete(c.get("tenant").name, c.req.param("id")))) throw new NotFoundError(`no workspace "${c.req.param("id")}"`);
    return c.body(null, 204);
  });

  return app;
}

/** @default 5 s — how long the rest of a refused upload is read and discarded before the answer goes out anyway */
export const DRAIN_MS = 5_000;

/**
 * @default 64 KiB — pieces of an upload smaller than this are joined into blocks of it before
 * anything else handles them: the archive's parser, its digests and the disk see blocks, never a
 * client's one-byte pieces (a tar extended header of 4 MiB held as a million one-byte buffers would
 * take a gigabyte).
 */
export const UPLOAD_BLOCK_BYTES = 64 * 1024;
/**
 * @default 512 — the least an upload's pieces (the reads its body arrives in) average: it may come in
 * `max_body_bytes` / 512 of them (at least 4096), past them 400. Each piece costs the shared thread
 * a few microseconds whatever its size: one-byte pieces would hold it for seconds a mebibyte.
 */
export const UPLOAD_PIECE_BYTES = 512;

const tooManyPieces = (maxPieces: number) =>
  new BadRequestError(`the upload came in more than ${maxPieces} pieces, under ${UPLOAD_PIECE_BYTES} bytes each on average (UPLOAD_PIECE_BYTES): send it in larger writes`, "body", "archive_invalid");

/** When the last piece of an upload arrived (`performance.now()`). */
interface Arrived {
  at: number;
}

/**
 * A Node request's body as a stream of blocks of UPLOAD_BLOCK_BYTES (the last one shorter): each
 * piece copied into the block as it comes, counted — past `maxBytes` / UPLOAD_PIECE_BYTES of them the
 * stream fails and nothing more is read —, the request paused while blocks wait to be read.
 */
function joinedBlocks(incoming: IncomingMessage, maxBytes: number, arrived: Arrived): ReadableStream<Uint8Array> {
  const stop = () => {
    incoming.off("data", onData);
    incoming.off("end", onEnd);
    incoming.off("error", onError);
    incoming.off("close", onClose);
    incoming.pause();
  };
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const joiner = new PieceJoiner(UPLOAD_BLOCK_BYTES, maxPiecesOf(maxBytes, UPLOAD_PIECE_BYTES), (block) => controller.enqueue(block));
  const onData = (piece: Buffer) => {
    arrived.at = performance.now();
    if (!joiner.add(piece)) {
      stop();
      controller.error(tooManyPieces(joiner.maxPieces));
      return;
    }
    if ((controller.desiredSize ?? 0) <= 0) incoming.pause();
  };
  const onEnd = () => {
    stop();
    joiner.flush();
    controller.close();
  };
  // The client's doing: a 400 (nobody is left to read it), never a 500.
  const onError = (err: Error) => {
    stop();
    controller.error(new HookboxError(`the body could not be read: ${err.message}`, "body_incomplete", { cause: err }));
  };
  const onClose = () => onError(new Error("the client went away before the upload was read"));
  return new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
        if (incoming.readableEnded) return c.close();
        // gone before it was read: its close will not come again
        if (incoming.destroyed) return onClose();
        incoming.on("data", onData);
        incoming.once("end", onEnd);
        incoming.once("error", onError);
        incoming.once("close", onClose);
      },
      pull() {
        incoming.resume();
      },
      cancel() {
        stop();
      },
    },
    { highWaterMark: 4 },
  );
}

/** A web body (in-process, `app.request()`) as the same blocks, its pieces counted the same way. */
function joinedWebBlocks(body: ReadableStream<Uint8Array>, maxBytes: number, arrived: Arrived): ReadableStream<Uint8Array> {
  let joiner!: PieceJoiner;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      start(controller) {
        joiner = new PieceJoiner(UPLOAD_BLOCK_BYTES, maxPiecesOf(maxBytes, UPLOAD_PIECE_BYTES), (block) => controller.enqueue(block));
      },
      transform(piece, controller) {
        arrived.at = performance.now();
        if (!joiner.add(Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength))) controller.error(tooManyPieces(joiner.maxPieces));
      },
      flush() {
        joiner.flush();
      },
    }),
  );
}

/**
 * The body's blocks as they come, counted, stopped with a 413 (too_large) once it passes
 * `maxBytes`, a 408 once nothing came for `idleMs` while it was waited for, or the
 * deadline's reason once it aborts. Stopping early does not cancel the stream: `drain` reads and
 * discards what is left, up to `maxBytes` in all; `cancel` lets go of it. `whole`: whether all of it came.
 */
function counted(body: ReadableStream<Uint8Array>, maxBytes: number, message: string, idleMs: number, deadline: AbortSignal, arrived: Arrived): { chunks: AsyncIterable<Uint8Array>; whole(): boolean; drain(): Promise<void>; cancel(): void } {
  const reader = body.getReader();
  let seen = 0;
  let whole = false;
  // One idle timer and one deadline listener for the whole upload (a timer and a listener made for
  // each piece would cost the thread more than the piece): the timer counts only while a block is
  // waited for — the archive's own work between reads is no client's silence — and from the last
  // piece that arrived: a client sending slowly, its block not yet full, is not silent.
  let fail: (err: Error) => void = () => undefined;
  const stopped = new Promise<never>((_, reject) => (fail = reject));
  stopped.catch(() => undefined);
  let waiting = false;
  let waitedFrom = 0;
  let idle = setTimeout(function silent() {
    if (!waiting) return;
    const quiet = performance.now() - Math.max(waitedFrom, arrived.at);
    if (quiet < idleMs) idle = setTimeout(silent, Math.max(1, idleMs - quiet)).unref();
    else fail(new HookboxError(`the upload sent nothing for ${idleMs} ms${idleMs === UPLOAD_IDLE_MS ? " (UPLOAD_IDLE_MS)" : ""}`, "body_timeout"));
  }, idleMs).unref();
  const aborted = () => fail(deadline.reason as Error);
  deadline.addEventListener("abort", aborted, { once: true });
  const release = () => {
    clearTimeout(idle);
    deadline.removeEventListener("abort", aborted);
  };
  /** The next piece, or a 408 when none comes within `idleMs`, or the upload's time is up: a stalled or trickling upload holds nothing for long. */
  const next = async () => {
    deadline.throwIfAborted();
    waiting = true;
    waitedFrom = performance.now();
    idle.refresh();
    try {
      return await Promise.race([reader.read(), stopped]);
    } finally {
      waiting = false;
    }
  };
  return {
    chunks: (async function* () {
      try {
        for (let r = await next(); !r.done; r = await next()) {
          seen += r.value.byteLength;
          if (seen > maxBytes) throw new BadRequestError(message, "body", "too_large");
          yield r.value;
        }
        whole = true;
      } finally {
        release();
      }
    })(),
    whole: () => whole,
    cancel() {
      release();
      reader.cancel().catch(() => undefined);
    },
    async drain() {
      const deadline = Date.now() + DRAIN_MS;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<"timeout">((resolve) => (timer = setTimeout(resolve, DRAIN_MS, "timeout").unref()));
      try {
        while (seen <= maxBytes && Date.now() < deadline) {
          const r = await Promise.race([reader.read(), timeout]).catch(() => "timeout" as const);
          if (r === "timeout" || r.done) return;
          seen += r.value.byteLength;
        }
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
