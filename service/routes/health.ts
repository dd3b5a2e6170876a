/**
 * @module `/healthz` (the process answers), `/readyz` (the engine answers, images and runtime are
 * there, not draining), `/metrics` (Prometheus text), `/openapi.json` (the API, OpenAPI 3.1). No
 * token needed but for `/metrics` (a tenant's, or the operator's metrics token where one is set).
 */
import { Hono } from "hono";
import type { AppDeps, Env } from "../context.js";
import { holdsToken, tenantForToken } from "../auth.js";
import { UnauthorizedError } from "../../engine/index.js";
import { UI_CSP, UI_HTML } from "../ui/page.js";
import { openApiDocument } from "../openapi.js";

export function healthRoutes(deps: AppDeps): Hono<Env> {
  const app = new Hono<Env>();
  app.get("/healthz", (c) => c.json({ ok: true }));
  // The page holds no data: every call it makes carries the token the user gives it.
  app.get("/ui", (c) => c.html(UI_HTML, 200, { "Cache-Control": "no-store", "Content-Security-Policy": UI_CSP }));
  app.get("/readyz", async (c) => {
    if (deps.draining()) return c.json({ ready: false, problems: ["the service is shutting down"] }, 503);
    const r = await deps.readiness();
    // Without a tenant's token: what is wrong, not the engine's own words after it (they may name
    // host paths, such as the engine's socket); the log and a token's holder get them whole.
    const whole = tenantForToken(deps.tenants, c.req.header("authorization")) !== undefined;
    return c.json(whole ? r : { ...r, problems: r.problems.map((p) => p.split(": ")[0]!) }, r.ready ? 200 : 503);
  });
  app.get("/metrics", async (c) => {
    // The figures are every tenant's together: with a metrics token of the operator's, only it reads them.
    const authorization = c.req.header("authorization");
    const allowed = deps.publicMetrics || (deps.metricsTokenSha256 !== undefined ? holdsToken(deps.metricsTokenSha256, authorization) : tenantForToken(deps.tenants, authorization) !== undefined);
    if (!allowed) throw new UnauthorizedError();
    return c.text(await deps.metrics.render(), 200, { "Content-Type": deps.metrics.contentType });
  });
  let document: string | undefined;
  app.get("/openapi.json", (c) => {
    document ??= JSON.stringify(openApiDocument());
    return c.body(document, 200, { "Content-Type": "application/json" });
  });
  return app;
}
