/**
 * @module Native HTTP hook endpoints, for agents that call HTTP hooks themselves (Claude Code and
 * Copilot `type: "http"`): `POST /v1/hooks/{claude|copilot|cosh}[/{event}]`. The body is the hook
 * input; the 200 response body is exactly the agent's hook JSON (the `output` of /v1/events).
 */
import { Hono } from "hono";
import { BadRequestError, FORMATS, type Format } from "../../engine/index.js";
import type { AppDeps, Env } from "../context.js";
import { eventBodyLimit, handleEvent } from "./events.js";

export function hookRoutes(deps: AppDeps): Hono<Env> {
  const app = new Hono<Env>();
  const formatOf = (name: string): Format => {
    if (!(FORMATS as readonly string[]).includes(name)) throw new BadRequestError(`no hook dialect "${name}" (one of ${FORMATS.join(", ")})`, "format");
    return name as Format;
  };
  const limit = eventBodyLimit(deps);
  app.post("/:format", limit, (c) => handleEvent(c, deps, undefined, formatOf(c.req.param("format"))));
  app.post("/:format/:event", limit, (c) => handleEvent(c, deps, c.req.param("event"), formatOf(c.req.param("format"))));
  return app;
}
