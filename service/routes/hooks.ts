/**
 * @module Native HTTP hook endpoints, for agents that call HTTP hooks themselves (Claude Code and
 * Copilot `type: "http"`): `POST /v1/hooks/{claude|copilot|cosh|cursor|codex|gemini}[/{event}]`. The body is the hook
 * input; the 200 response body is exactly the agent's hook JSON (the `output` of /v1/events) — also
 * when hookbox cannot decide (a bad body, overload, shutdown, its own error): then it is the tenant's
 * failure mode in that JSON (app.ts), since an agent takes any other status for a silent allow.
 */
import { Hono } from "hono";
import { BadRequestError, FORMATS, type Format } from "../../engine/index.js";
import type { AppDeps, Env } from "../context.js";
import { handleEvent } from "./events.js";

export function hookRoutes(deps: AppDeps): Hono<Env> {
  const app = new Hono<Env>();
  const formatOf = (given: string): Format => {
    const name = given.toLowerCase();
    if (!(FORMATS as readonly string[]).includes(name)) throw new BadRequestError(`no hook dialect "${given}" (one of ${FORMATS.join(", ")})`, "format");
    return name as Format;
  };
  // Over the body limit is an error like any other here (read-body.ts): app.ts answers it with the tenant's failure mode.
  app.post("/:format", (c) => handleEvent(c, deps, undefined, formatOf(c.req.param("format"))));
  app.post("/:format/:event", (c) => handleEvent(c, deps, c.req.param("event"), formatOf(c.req.param("format"))));
  return app;
}
