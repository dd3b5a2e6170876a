/**
 * @module `PUT/GET/DELETE /v1/workspaces/{id}` (SERVICE.md §3): a tar or tar.gz of (part of) a
 * repository, stored per tenant; the answer lists its digest and the repository hooks it declares.
 */
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { NotFoundError, BadRequestError } from "../../engine/index.js";
import { tooLarge, type AppDeps, type Env } from "../context.js";

export function workspaceRoutes(deps: AppDeps): Hono<Env> {
  const app = new Hono<Env>();
  const limit = bodyLimit({
    maxSize: deps.limits.maxUploadBytes,
    onError: (c) => tooLarge(c, `the archive is over ${deps.limits.maxUploadBytes} bytes (server.max_body_bytes)`),
  });

  app.put("/:id", limit, async (c) => {
    const body = c.req.raw.body;
    if (!body) throw new BadRequestError("the body must be a tar or tar.gz archive", "body", "archive_invalid");
    const info = await deps.workspaces.put(c.get("tenant").name, c.req.param("id"), body as unknown as AsyncIterable<Uint8Array>);
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
