/**
 * @module An event body as posted: JSON, an object, and the fields hookbox reads of the right type.
 * Everything else in it passes to hooks untouched. Every rejection names the field.
 */
import { isUtf8 } from "node:buffer";
import { z } from "zod";
import { asciiLower } from "./agents.js";
import { BadRequestError } from "./errors.js";
import { formatPath, jsonSyntaxError } from "./formats/locate.js";
import { jsonSyntaxErrorOffThread } from "./formats/parse-off-thread.js";
import { TURN_BODY_BYTES } from "./turns.js";
import { bodyEventName, type JsonObject } from "./payload.js";
import { MAX_OBJECT_KEYS } from "./names.js";

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

/** A JSON object, checked as one without a copy of its members (a zod record copies every key of a 100 000-key tool_input). */
const PlainObject = z.custom<Record<string, unknown>>((v) => typeof v === "object" && v !== null && !Array.isArray(v), { error: "expected an object" });

/**
 * What a body is checked against: the fields EventBodySchema names, each checked as it says, but
 * the objects as objects (EventBodySchema, which the OpenAPI document shows, says record) — and only
 * those fields taken from the body, whatever else it holds.
 */
const CheckedFieldsSchema = z.object({ ...EventBodySchema.shape, tool_input: PlainObject.optional(), toolArgs: z.union([z.string(), PlainObject]).optional() });
const CHECKED_FIELDS = Object.keys(CheckedFieldsSchema.shape);

/** @default 64 — deepest nesting of an event body; deeper is refused by a byte pass, before JSON.parse or anything else walks it */
export const MAX_EVENT_DEPTH = 64;

/**
 * @default 65 536 — arrays and objects in an event body, in the JSON of a Copilot `toolArgs` string,
 * and in a hook's answer. Parsing and walking them is what a mebibyte costs the thread that serves
 * everyone: a mebibyte of `[[[…]]]` holds half a million and takes 50–300 ms to parse, locate and
 * translate; this many take a tenth of that. No event or answer needs as many.
 */
export const MAX_EVENT_CONTAINERS = 65_536;

/** Keys of one object, in the same places (names.ts). */
export { MAX_OBJECT_KEYS };

/** Why JSON of this shape is not read, as a predicate ("is nested deeper …", "holds more …"), or undefined: one byte pass (see scanJson). */
export function jsonShapeProblem(bytes: Uint8Array): string | undefined {
  const scan = scanJson(bytes, MAX_EVENT_DEPTH, MAX_EVENT_CONTAINERS, MAX_OBJECT_KEYS);
  return "refused" in scan ? shapeProblem(scan.refused) : undefined;
}

/** Why JSON is refused by a byte pass: too deep, too many arrays and objects, an object of too many keys. */
export type ShapeRefusal = "deep" | "many" | "wide";

/** What a refusal says, as a predicate ("is nested deeper …"). */
export const shapeProblem = (refused: ShapeRefusal): string =>
  refused === "deep" ? `is nested deeper than ${MAX_EVENT_DEPTH} levels`
  : refused === "many" ? `holds more than ${MAX_EVENT_CONTAINERS} arrays and objects (MAX_EVENT_CONTAINERS)`
  : `holds an object of more than ${MAX_OBJECT_KEYS} keys (MAX_OBJECT_KEYS)`;

const refusedBody = (refused: ShapeRefusal) => new BadRequestError(`the body ${shapeProblem(refused)}`, "body", "bad_json");

/**
 * One pass before anything parses the body: a body nested too deep, or of too many arrays and
 * objects, is refused (400), and what it will hold in memory once parsed is weighed (`eventMemoryBytes`).
 */
export function weighEventBody(raw: Uint8Array): number {
  const scan = scanJson(raw, MAX_EVENT_DEPTH, MAX_EVENT_CONTAINERS, MAX_OBJECT_KEYS);
  if ("refused" in scan) throw refusedBody(scan.refused);
  return memoryOf(raw.length, scan);
}

/**
 * `parseEventBody` for the service: a body JSON.parse refuses, when it is large (TURN_BODY_BYTES or
 * more), is walked to its error in the worker (parse-off-thread.ts), by `party`'s turn — about
 * 100 ms a mebibyte the thread that serves everyone does not spend.
 */
export async function parseEventBodyOffThread(raw: Uint8Array, party: string, opts: { weighed?: boolean } = {}): Promise<JsonObject> {
  try {
    return parseEventBody(raw, { ...opts, locateBelow: TURN_BODY_BYTES });
  } catch (err) {
    if (!(err instanceof UnlocatedJsonError)) throw err;
    throw notJson(await jsonSyntaxErrorOffThread(err.text, err.refused, party));
  }
}

/** A body JSON.parse refused, too large to be located here (`locateBelow`). */
class UnlocatedJsonError extends Error {
  constructor(readonly text: string, readonly refused: unknown) {
    super("the body is not valid JSON");
  }
}

const notJson = (e: SyntaxError & { line: number; column: number }) =>
  new BadRequestError(`the body is not valid JSON: ${e.message} at line ${e.line}, column ${e.column}`, "body", "bad_json");

/**
 * `weighed`: `weighEventBody` already passed over these bytes (their depth is checked).
 * `locateBelow`: a body of that many characters or more that is not JSON is not located here (an
 * UnlocatedJsonError, for parseEventBodyOffThread).
 */
/**
 * The first key said twice in one object of `text`, as JSON reads it (escapes decoded: `"a"` and
 * `"\u0061"` are one key), or undefined; text that is no JSON may give any answer. One pass; a set
 * of keys per object open at once (at most MAX_EVENT_CONTAINERS deep and wide: weighed before).
 */
export function duplicateKey(text: string): string | undefined {
  const open: (Set<string> | null)[] = [];
  let start = -1; // the string being read: where its quote opens
  let escaped = false;
  let last: { from: number; to: number; escaped: boolean } | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (start >= 0) {
      if (c === 0x5c) {
        escaped = true;
        i++;
      } else if (c === 0x22) {
        last = { from: start, to: i + 1, escaped };
        start = -1;
      }
      continue;
    }
    if (c === 0x22) {
      start = i;
      escaped = false;
    } else if (c === 0x7b) open.push(new Set());
    else if (c === 0x5b) open.push(null);
    else if (c === 0x7d || c === 0x5d) open.pop();
    else if (c === 0x3a && last) {
      const keys = open[open.length - 1];
      if (!keys) continue;
      const raw = text.slice(last.from, last.to);
      let key: string;
      try {
        key = last.escaped ? (JSON.parse(raw) as string) : raw.slice(1, -1);
      } catch {
        continue;
      }
      if (keys.has(key)) return key;
      keys.add(key);
    }
  }
  return undefined;
}

/** A `\uD800`–`\uDFFF` escape: the only way a lone surrogate gets into a value parsed from UTF-8 text. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/** The code unit a `\uXXXX` escape at `at` (its backslash) says, or -1. */
function escapedUnit(text: string, at: number): number {
  if (text.charCodeAt(at) !== 0x5c || text.charCodeAt(at + 1) !== 0x75) return -1;
  let unit = 0;
  for (let i = at + 2; i < at + 6; i++) {
    const c = text.charCodeAt(i);
    const lower = c | 0x20;
    const d = c >= 0x30 && c <= 0x39 ? c - 0x30 : lower >= 0x61 && lower <= 0x66 ? lower - 0x57 : -1;
    if (d < 0) return -1;
    unit = unit * 16 + d;
  }
  return unit;
}

/**
 * Whether JSON `text` says a lone surrogate (an escape `\ud800` with no partner) in a string or a
 * key: one pass over its backslashes, and only when it holds such an escape at all. (UTF-8 decoded
 * text holds no raw lone surrogate: the decoder makes one U+FFFD.)
 */
function loneSurrogate(text: string): boolean {
  if (!SURROGATE_ESCAPE.test(text)) return false;
  for (let i = text.indexOf("\\"); i >= 0; i = text.indexOf("\\", i)) {
    const unit = escapedUnit(text, i);
    i += unit < 0 ? 2 : 6;
    if (unit >= 0xdc00 && unit <= 0xdfff) return true;
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const low = escapedUnit(text, i);
      if (!(low >= 0xdc00 && low <= 0xdfff)) return true;
      i += 6;
    }
  }
  return false;
}

/** The fields that say an event's tool call, in each dialect: a body uses one. */
const DIALECT_FIELDS = {
  snake: ["tool_name", "tool_input", "tool_response"],
  camel: ["toolName", "toolArgs", "toolResult"],
} as const;

/**
 * Where bytes stop being UTF-8: the offset at which the platform's decoder, fed everything before
 * it, refuses the next byte (at most a few bytes past where the bad sequence began). Found by 4 KiB
 * chunks, then byte by byte within the one refused: linear, only for a body already known bad.
 */
function utf8StopsAt(bytes: Uint8Array): number {
  const CHUNK = 4096;
  const chunks = new TextDecoder("utf-8", { fatal: true });
  let start = 0;
  try {
    for (; start < bytes.length; start += CHUNK) chunks.decode(bytes.subarray(start, start + CHUNK), { stream: true });
    // none refused: a sequence is left open at the end
    return bytes.length;
  } catch {
    // refused within the chunk at `start`
  }
  const single = new TextDecoder("utf-8", { fatal: true });
  single.decode(bytes.subarray(0, start), { stream: true }); // decoded whole above already
  const end = Math.min(start + CHUNK, bytes.length);
  for (let i = start; i < end; i++) {
    try {
      single.decode(bytes.subarray(i, i + 1), { stream: true });
    } catch {
      return i;
    }
  }
  return end;
}

export function parseEventBody(raw: Uint8Array, opts: { weighed?: boolean; locateBelow?: number } = {}): JsonObject {
  // Bytes that are not UTF-8: decoded, each would become U+FFFD for hookbox, but a hook of the
  // body's own dialect reads the bytes as sent, and a strict JSON reader (serde_json's) refuses the
  // whole body — a hook that failed, which lets the call go on.
  if (!isUtf8(raw)) {
    const at = utf8StopsAt(raw);
    let line = 1;
    for (let i = raw.indexOf(0x0a); i !== -1 && i < at; i = raw.indexOf(0x0a, i + 1)) line++;
    throw new BadRequestError(`the body is not UTF-8 (at byte offset ${at}, line ${line}): a hook's strict JSON reader refuses the whole body`, "body", "bad_json");
  }
  const text = Buffer.from(raw).toString("utf8");
  if (text.trim() === "") throw new BadRequestError("the body is empty: post the event JSON a hook would read on stdin", "body", "bad_json");
  // Before JSON.parse, which would build (and the syntax error path walk) a million-deep value first.
  if (!opts.weighed) weighEventBody(raw);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    if (opts.locateBelow !== undefined && text.length >= opts.locateBelow) throw new UnlocatedJsonError(text, err);
    throw notJson(jsonSyntaxError(text, err));
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new BadRequestError("the body must be a JSON object", "body", "bad_json");
  // A key said twice: JSON.parse keeps the last, a hook's parser in another language may keep the
  // first (or refuse the body, and fail open) — and a hook of the body's own dialect reads its bytes.
  // Read two ways, the body's event is in doubt too: where the URL does not name it, its failure
  // answer is the strictest.
  const twice = duplicateKey(text);
  if (twice !== undefined) throw new BadRequestError(`the key ${JSON.stringify(twice.slice(0, 64))} is given twice in one object: a hook's JSON reader may take the other one`, "body", "bad_json");
  try {
    return checkedBody(text, value as Record<string, unknown>);
  } catch (err) {
    // Refused, but read: the event it names plainly is known (its failure answer is that event's —
    // at a stop, never the block that would keep the agent going).
    if (err instanceof BadRequestError) err.event ??= plainEventName(value as Record<string, unknown>);
    throw err;
  }
}

/** The event a refused body names (bodyEventName), or undefined where its two names could say two events. */
function plainEventName(value: Record<string, unknown>): string | undefined {
  const { hook_event_name: snake, hookEventName: camel } = value;
  if (snake !== undefined && camel !== undefined && (typeof snake !== "string" || typeof camel !== "string" || asciiLower(snake) !== asciiLower(camel))) return undefined;
  return bodyEventName(value as JsonObject);
}

/** The checks of a parsed body's text and object, past JSON.parse (parseEventBody). */
function checkedBody(text: string, value: Record<string, unknown>): JsonObject {
  // A lone surrogate (`\ud800` with no partner): hooks read the body's bytes, and a strict JSON
  // reader (serde_json's) refuses the whole body — a hook that failed, which lets the call go on.
  if (loneSurrogate(text)) throw new BadRequestError("the body holds a lone surrogate escape (\\ud800 with no partner): a hook's strict JSON reader refuses it", "body", "bad_json");
  // One tool call, in one dialect: a body that names its tool, its arguments or its result in both —
  // `tool_name` beside `toolArgs` too — would let a hook of one read another call than the one the
  // matcher tested, or than the agent of the other runs. (VS Code names the event `hookEventName`
  // beside `tool_name`: the event's name may be either, and both only when they name one event.)
  const snakeSaid = DIALECT_FIELDS.snake.filter((k) => Object.hasOwn(value, k));
  const camelSaid = DIALECT_FIELDS.camel.filter((k) => Object.hasOwn(value, k));
  if (snakeSaid.length > 0 && camelSaid.length > 0)
    throw new BadRequestError(`${camelSaid[0]}: the body gives ${snakeSaid[0]} too; an event names its tool and arguments in one dialect`, camelSaid[0], "bad_field");
  const fields: Record<string, unknown> = {};
  for (const k of CHECKED_FIELDS) if (Object.hasOwn(value, k)) fields[k] = (value as Record<string, unknown>)[k];
  const checked = CheckedFieldsSchema.safeParse(fields);
  if (!checked.success) {
    const issue = checked.error.issues[0]!;
    const field = formatPath(issue.path as (string | number)[]);
    throw new BadRequestError(`${field}: ${issue.message}`, field, "bad_field");
  }
  // Compared once both are known to be strings (an object's would throw in String()).
  const { hook_event_name: snakeEvent, hookEventName: camelEvent } = checked.data;
  if (snakeEvent !== undefined && camelEvent !== undefined && asciiLower(snakeEvent) !== asciiLower(camelEvent))
    throw new BadRequestError("hookEventName: the body gives hook_event_name too, naming another event; an event is named once", "hookEventName", "bad_field");
  // Copilot's toolArgs is JSON inside a string, parsed again for conditions and other dialects: the same bound.
  const { toolArgs } = checked.data;
  const argsProblem = typeof toolArgs === "string" ? jsonShapeProblem(Buffer.from(toolArgs)) : undefined;
  if (argsProblem) throw new BadRequestError(`toolArgs: the JSON in it ${argsProblem}`, "toolArgs", "bad_field");
  if (typeof toolArgs === "string" && loneSurrogate(toolArgs)) throw new BadRequestError("toolArgs: the JSON in it holds a lone surrogate escape (\\ud800 with no partner): a hook's strict JSON reader refuses it", "toolArgs", "bad_field");
  const argsTwice = typeof toolArgs === "string" ? duplicateKey(toolArgs) : undefined;
  if (argsTwice !== undefined) throw new BadRequestError(`toolArgs: the key ${JSON.stringify(argsTwice.slice(0, 64))} is given twice in one object of the JSON in it`, "toolArgs", "bad_field");
  return value as JsonObject;
}

/**
 * About what an event takes in memory once parsed and while it is handled, from its bytes alone
 * (one pass, before JSON.parse): the bytes and their text, and for each container and each `,` or
 * `:` outside strings what V8 spends on an object, an array, a property or an element, and for each
 * key (`:`) what a key of its own may cost besides (its string, a hidden class of its own when the
 * object's keys are unlike any other's). It errs high: `[{},{},…]` parses to about 21 bytes a byte,
 * and counts about 33; a mebibyte of `[{"k1":0},{"k2":0},…]`, distinct keys, parses to about 15 MB
 * and counts about 17. A Copilot `toolArgs` string
 * is parsed again later, when a condition or another dialect reads it: it counts as 32 bytes a character.
 */
export function eventMemoryBytes(bytes: Uint8Array): number {
  return memoryOf(bytes.length, scanJson(bytes, Infinity, Infinity, Infinity) as Counted);
}

const memoryOf = (length: number, counted: Counted) => 2 * length + 64 * counted.containers + 24 * counted.separators + 64 * counted.keys;

/** What a parsed body's Copilot `toolArgs` string will take when it is parsed in turn (see eventMemoryBytes). */
export const toolArgsMemoryBytes = (body: JsonObject): number => (typeof body.toolArgs === "string" ? 32 * body.toolArgs.length : 0);

const QUOTE = 0x22;
const COMMA = 0x2c;
const COLON = 0x3a;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

type Counted = { deeper: false; containers: number; separators: number; keys: number };

/**
 * One pass over the bytes: whether `[` and `{` outside strings (a `\` escapes the next byte) ever
 * stand more than `max` deep, or number more than `maxContainers`, or an object holds more than
 * `maxKeys` keys (`:` in it, at its own level) — it stops there — and, when not, how many containers and `,` or `:`
 * separators (and of them `:`, keys) stand outside strings. Exact for any text JSON.parse accepts — UTF-8 never puts these
 * ASCII bytes inside a multi-byte character — so no walk of the parsed value is needed after it.
 */
function scanJson(bytes: Uint8Array, max: number, maxContainers: number, maxKeys: number): { refused: ShapeRefusal } | Counted {
  let depth = 0;
  let containers = 0;
  let separators = 0;
  let keys = 0;
  let inString = false;
  // the keys of each object open (-1: an array), as deep as `max` lets them stand
  const open: number[] = [];
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) {
      inString = true;
    } else if (b === OPEN_BRACKET || b === OPEN_BRACE) {
      if (++containers > maxContainers) return { refused: "many" };
      if (++depth > max) return { refused: "deep" };
      if (maxKeys !== Infinity) open.push(b === OPEN_BRACE ? 0 : -1);
    } else if ((b === CLOSE_BRACKET || b === CLOSE_BRACE) && depth > 0) {
      depth--;
      open.pop();
    } else if (b === COMMA || b === COLON) {
      separators++;
      if (b === COLON) {
        keys++;
        const top = open.length - 1;
        if (top >= 0 && open[top]! >= 0 && ++open[top]! > maxKeys) return { refused: "wide" };
      }
    }
  }
  return { deeper: false, containers, separators, keys };
}

/** Whether `[` and `{` outside strings ever stand more than `max` deep (see scanJson). */
export const nestedDeeperThan = (bytes: Uint8Array, max: number): boolean => "refused" in scanJson(bytes, max, Infinity, Infinity);
