/**
 * @module `PUT/GET/DELETE /v1/workspaces/{id}` (SERVICE.md §3): a tar or tar.gz of (part of) a
 * repository, stored per tenant; the answer lists its digest and the repository hooks it declares.
 * The upload streams to disk: its bytes are counted as they pass, never buffered whole (hono's
 * bodyLimit buffers a body sent without Content-Length, up to the limit).
 */
import { Hono } from "hono";
import type { MiddlewareHandler } from "hono";
import { NotFoundError, BadRequestError, HookboxError, OverloadedError } from "../../engine/index.js";
import { tooLarge, type AppDeps, type Env } from "../context.js";

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
    const raw = c.req.raw.body;
    if (!raw) throw new BadRequestError("the body must be a tar or tar.gz archive", "body", "archive_invalid");
    const tenant = c.get("tenant").name;
    const inFlight = uploading.get(tenant) ?? 0;
    if (inFlight >= TENANT_UPLOADS_IN_FLIGHT) throw new OverloadedError(5, `this tenant already has ${inFlight} uploads arriving (TENANT_UPLOADS_IN_FLIGHT: ${TENANT_UPLOADS_IN_FLIGHT}); retry when they are in`);
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
      body = counted(raw, max, overMessage, idleMs, deadline.signal);
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
    c.get("log").info({ workspace: { id: info.id, files: info.files, hooks: info.hooks.length } }, "workspace stored");
    return c.json(info, 200);
  });

  app.get("/:id", async (c) => {
    const stored = await deps.workspaces.get(c.get("tenant").name, c.req.param("id"));
    if (!stored) throw new NotFoundError(`no workspace "${c.req.param("id")}"`);
    return c.json(stored.info);
  });

  app.delete("/:id", async (c) => {
    if (!(await deps.workspaces.delete(c.get("tenant").name, c.req.param("id")))) throw new NotFoundError(`no workspace "${c.req.param("id")}"`);
    return c.body(null, 204);
  });

  return app;
}

/** @default 5 s — how long the rest of a refused upload is read and discarded before the answer goes out anyway */
const DRAIN_MS = 5_000;

/**
 * The body as it comes, counted, stopped with a 413 (too_large) once it passes `maxBytes`, a 408
 * once nothing came for `idleMs`, or the deadline's reason once it aborts. Stopping early does not
 * cancel the stream: `drain` reads and discards what is left, up to `maxBytes` in all; `cancel` lets
 * go of it. `whole`: whether all of it came.
 */
function counted(body: ReadableStream<Uint8Array>, maxBytes: number, message: string, idleMs: number, deadline: AbortSignal): { chunks: AsyncIterable<Uint8Array>; whole(): boolean; drain(): Promise<void>; cancel(): void } {
  const reader = body.getReader();
  let seen = 0;
  let whole = false;
  /** The next chunk, or a 408 when none comes within `idleMs`, or the upload's time is up: a stalled or trickling upload holds nothing for long. */
  const next = async () => {
    deadline.throwIfAborted();
    let timer: NodeJS.Timeout | undefined;
    let late: (() => void) | undefined;
    const stopped = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new HookboxError(`the upload sent nothing for ${idleMs} ms${idleMs === UPLOAD_IDLE_MS ? " (UPLOAD_IDLE_MS)" : ""}`, "body_timeout")), idleMs);
      late = () => reject(deadline.reason as Error);
      deadline.addEventListener("abort", late, { once: true });
    });
    try {
      return await Promise.race([reader.read(), stopped]);
    } finally {
      clearTimeout(timer);
      if (late) deadline.removeEventListener("abort", late);
    }
  };
  return {
    chunks: (async function* () {
      for (let r = await next(); !r.done; r = await next()) {
        seen += r.value.byteLength;
        if (seen > maxBytes) throw new BadRequestError(message, "body", "too_large");
        yield r.value;
      }
      whole = true;
    })(),
    whole: () => whole,
    cancel() {
      reader.cancel().catch(() => undefined);
    },
    async drain() {
      const deadline = Date.now() + DRAIN_MS;
      const timeout = new Promise<"timeout">((resolve) => setTimeout(resolve, DRAIN_MS, "timeout").unref());
      while (seen <= maxBytes && Date.now() < deadline) {
        const r = await Promise.race([reader.read(), timeout]).catch(() => "timeout" as const);
        if (r === "timeout" || r.done) return;
        seen += r.value.byteLength;
      }
    },
  };
}
