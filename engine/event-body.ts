/**
 * @module An event body as posted: JSON, an object, and the fields hookbox reads of the right type.
 * Everything else in it passes to hooks untouched. Every rejection names the field.
 */
import { z } from "zod";
import { BadRequestError } from "./errors.js";
import { formatPath, jsonSyntaxError } from "./formats/locate.js";
import type { JsonObject } from "./payload.js";

/** What hookbox reads of an event body; every other field passes to hooks untouched. */
export const EventBodySchema = z.looseObject({
  hook_event_name: z.string().optional(),
  hookEventName: z.string().optional(),
  session_id: z.string().optional(),
  sessionId: z.string().optional(),
  cwd: z.string().optional(),
  timestamp: z.union([z.string(), z.number()]).optional(),
  transcript_path: z.string().optional(),
  tool_name: z.string().optional(),
  toolName: z.string().optional(),
  tool_input: z.record(z.string(), z.unknown()).optional(),
  toolArgs: z.union([z.string(), z.record(z.string(), z.unknown())]).optional(),
  prompt: z.string().optional(),
});

/** @default 64 — deepest nesting of an event body; deeper is refused before anything walks it recursively */
export const MAX_EVENT_DEPTH = 64;

export function parseEventBody(raw: Uint8Array): JsonObject {
  const text = Buffer.from(raw).toString("utf8");
  if (text.trim() === "") throw new BadRequestError("the body is empty: post the event JSON a hook would read on stdin", "body", "bad_json");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const e = jsonSyntaxError(text, err);
    throw new BadRequestError(`the body is not valid JSON: ${e.message} at line ${e.line}, column ${e.column}`, "body", "bad_json");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new BadRequestError("the body must be a JSON object", "body", "bad_json");
  if (nestedDeeperThan(value, MAX_EVENT_DEPTH)) throw new BadRequestError(`the body is nested deeper than ${MAX_EVENT_DEPTH} levels`, "body", "bad_json");
  const checked = EventBodySchema.safeParse(value);
  if (!checked.success) {
    const issue = checked.error.issues[0]!;
    const field = formatPath(issue.path as (string | number)[]);
    throw new BadRequestError(`${field}: ${issue.message}`, field, "bad_field");
  }
  return value as JsonObject;
}

/** Walks the value with a stack of its own: a deep value cannot overflow the call stack here. */
function nestedDeeperThan(value: object, max: number): boolean {
  const stack: [object, number][] = [[value, 1]];
  for (let top = stack.pop(); top; top = stack.pop()) {
    const [node, depth] = top;
    if (depth > max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof child === "object" && child !== null) stack.push([child as object, depth + 1]);
    }
  }
  return false;
}
