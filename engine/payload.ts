/**
 * @module The event as each hook expects it. The body goes to a hook verbatim when its dialect is
 * the one the hook's registration expects; otherwise it is translated (copilot-hooks.md: "event
 * names select the payload shape": `preToolUse` gets `toolName` and `toolArgs` as a JSON string,
 * `PreToolUse` gets snake_case fields).
 */
import { pointName, type Dialect, type EventPoint } from "./events.js";

export type JsonObject = Record<string, unknown>;

/**
 * snake when the body uses cosh/Claude field names, camel for Copilot's; when its fields say
 * neither, the dialect of the event's name.
 */
/**
 * The body's dialect: by its tool fields first (parseEventBody refuses a body that gives them in
 * both), then by its session and event-name fields, else by the event's name.
 */
export function detectDialect(body: JsonObject, byName: Dialect): Dialect {
  if ("tool_name" in body || "tool_input" in body) return "snake";
  if ("toolName" in body || "toolArgs" in body) return "camel";
  if ("hook_event_name" in body || "session_id" in body) return "snake";
  if ("sessionId" in body || "hookEventName" in body) return "camel";
  return byName;
}

/** The event name a body carries, if any. */
export function bodyEventName(body: JsonObject): string | undefined {
  const name = body.hook_event_name ?? body.hookEventName;
  return typeof name === "string" ? name : undefined;
}

export function toolName(body: JsonObject): string | undefined {
  const name = body.tool_name ?? body.toolName;
  return typeof name === "string" ? name : undefined;
}

/** A name with no `_` (or no capital) is the same in both dialects: passed as it is, no new string made. */
const toCamel = (key: string) => (key.includes("_") ? key.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase()) : key);
const toSnake = (key: string) => (/[A-Z]/.test(key) ? key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) : key);

/** Field pairs whose names do not follow the case rule. */
const SNAKE_TO_CAMEL: Record<string, string> = { tool_input: "toolArgs", tool_response: "toolResult" };
const CAMEL_TO_SNAKE: Record<string, string> = Object.fromEntries(Object.entries(SNAKE_TO_CAMEL).map(([s, c]) => [c, s]));

/** A renamed field's new name: own keys of the table only ("constructor" is no field pair). */
const renamed = (table: Record<string, string>, key: string, fallback: (k: string) => string) => (Object.hasOwn(table, key) ? table[key]! : fallback(key));
/**
 * Sets a field by name, "__proto__" included, as JSON.parse would: a field, never the prototype
 * (defined for that one name only: assigned, the fields of a body of 80 000 keys cost a fifth less).
 */
const setField = (out: JsonObject, key: string, value: unknown) => {
  if (key === "__proto__") Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
};


/** The furthest from 1970 a JavaScript Date reaches, in milliseconds (ECMA-262 "Time Values"). */
const MAX_DATE_MS = 8.64e15;

/**
 * The fields a hook decides on (the tool, its arguments, its result), in each dialect. A body that
 * carries one of them twice — in both dialects (`tool_input` and `toolArgs`), or as another spelling
 * (`tool_args`) — gives the translated view the body's own field, whatever the order of its keys:
 * the one the agent runs, and hookbox reads (`toolArgumentsOf`), never a decoy beside it.
 */
const GUARDED: Record<Dialect, ReadonlySet<string>> = { camel: new Set(["toolArgs", "toolName", "toolResult"]), snake: new Set(["tool_input", "tool_name", "tool_response"]) };

/** Whether a key, renamed to `name` with this rank (0: the field pair itself, 1: a pair of the table, 2: renamed, 3: kept), may set it. */
function mayGuarded(to: Dialect, setBy: Map<string, number>, name: string, rank: number): boolean {
  if (!GUARDED[to].has(name)) return true;
  const earlier = setBy.get(name);
  if (earlier !== undefined && earlier < rank) return false;
  setBy.set(name, rank);
  return true;
}

/** `eventName`: the name a snake_case payload carries (the hook's own); else the point's. */
export function translate(body: JsonObject, point: EventPoint, to: Dialect, eventName?: string): JsonObject {
  const out: JsonObject = {};
  const setBy = new Map<string, number>();
  if (to === "camel") {
    for (const [key, value] of Object.entries(body)) {
      if (key === "hook_event_name") continue; // Copilot payloads do not carry the event name
      if (key === "tool_input") {
        if (mayGuarded(to, setBy, "toolArgs", 0)) out.toolArgs = typeof value === "string" ? value : JSON.stringify(value ?? {});
      } else if (key === "timestamp" && typeof value === "string" && !Number.isNaN(Date.parse(value))) out.timestamp = Date.parse(value);
      else {
        const name = renamed(SNAKE_TO_CAMEL, key, toCamel);
        if (mayGuarded(to, setBy, name, Object.hasOwn(SNAKE_TO_CAMEL, key) ? 1 : name !== key ? 2 : 3)) setField(out, name, value);
      }
    }
    return out;
  }
  out.hook_event_name = eventName ?? pointName(point, "snake");
  for (const [key, value] of Object.entries(body)) {
    if (key === "hookEventName") continue;
    if (key === "toolArgs") {
      if (mayGuarded(to, setBy, "tool_input", 0)) out.tool_input = parseMaybe(value);
    }
    // Milliseconds a Date can hold (±8.64e15): any other number is passed on as it came, never a RangeError that ends the event.
    else if (key === "timestamp" && typeof value === "number" && Math.abs(value) <= MAX_DATE_MS) out.timestamp = new Date(value).toISOString();
    else {
      const name = renamed(CAMEL_TO_SNAKE, key, toSnake);
      // The event's name is the hook's own, set above: no field of the body becomes it (`hookEvent_name`).
      if (name === "hook_event_name") continue;
      if (mayGuarded(to, setBy, name, Object.hasOwn(CAMEL_TO_SNAKE, key) ? 1 : name !== key ? 2 : 3)) setField(out, name, value);
    }
  }
  return out;
}

function parseMaybe(value: unknown): unknown {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

/**
 * Bytes for each dialect, made once per event: the body itself for its own dialect, a translation
 * for the other.
 */
/** Parsed once per event body, however many hooks and conditions read them. */
const argumentsOf = new WeakMap<object, Record<string, unknown>>();

/** The tool's arguments, from a snake_case body (`tool_input`) or a camelCase one (`toolArgs`, a JSON string); `{}` when there are none. */
export function toolArgumentsOf(body: Record<string, unknown>): Record<string, unknown> {
  let args = argumentsOf.get(body);
  if (!args) argumentsOf.set(body, (args = readArguments(body)));
  return args;
}

function readArguments(body: Record<string, unknown>): Record<string, unknown> {
  let args = body.tool_input ?? body.toolArgs;
  if (typeof args === "string") {
    try {
      args = JSON.parse(args);
    } catch {
      return {};
    }
  }
  return typeof args === "object" && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
}

/**
 * The JSON value each payload's bytes hold — the body they were parsed into, or the copy they were
 * written from: a trace reads what a hook read without parsing up to a mebibyte again.
 */
const VALUES = new WeakMap<Uint8Array, { value: JsonObject; weight: number }>();
/** What an event body was weighed at as it arrived (eventMemoryBytes), by its bytes: its payloads' values weigh as much. */
const WEIGHTS = new WeakMap<Uint8Array, number>();

/** The value `bytes` hold, when they are a payload of this process's (PayloadCache); else undefined. */
export const payloadValue = (bytes: Uint8Array): JsonObject | undefined => VALUES.get(bytes)?.value;

/**
 * What keeping `bytes`' value alive costs, when they are a payload of this process's (the weight its
 * body was given as it arrived, notePayloadWeight, else four bytes a byte); else 0. A trace waiting
 * to be built holds its stdin — and so its value — and counts this against the tenant's pending bytes.
 */
export const payloadValueBytes = (bytes: Uint8Array): number => VALUES.get(bytes)?.weight ?? 0;

/** Says what an event body's bytes were weighed at as they arrived (before PayloadCache is made of them). */
export function notePayloadWeight(raw: Uint8Array, weight: number): void {
  WEIGHTS.set(raw, weight);
}

export class PayloadCache {
  private readonly cache = new Map<string, Uint8Array>();
  constructor(
    private readonly raw: Uint8Array,
    private readonly body: JsonObject,
    private readonly dialect: Dialect,
    private readonly point: EventPoint,
  ) {
    VALUES.set(raw, { value: body, weight: this.weight });
  }

  /** what the body's value weighs (notePayloadWeight), else four bytes a byte; each copy in another dialect as much */
  private get weight(): number {
    return WEIGHTS.get(this.raw) ?? 4 * this.raw.byteLength;
  }

  /** The event's body as it came, in its own dialect. */
  get event(): Readonly<JsonObject> {
    return this.body;
  }

  /** The tool's arguments as the event carries them. */
  toolArguments(): Record<string, unknown> {
    return toolArgumentsOf(this.body);
  }

  /**
   * What a hook of `dialect` reads: the body's own bytes when it is of that dialect and names the
   * event as the hook's file does (or names none); else a copy in that dialect carrying the hook's
   * own name for the event — a cosh policy hook at PreToolUse is never handed Gemini's `BeforeTool`,
   * nor a Gemini hook Claude's `PreToolUse`. One copy per dialect and name.
   */
  for(dialect: Dialect, eventName?: string): Uint8Array {
    const name = dialect === "snake" ? (eventName ?? pointName(this.point, "snake")) : undefined;
    if (dialect === this.dialect && (name === undefined || this.body.hook_event_name === name)) return this.raw;
    const key = `${dialect}\u0000${name ?? ""}`;
    let bytes = this.cache.get(key);
    if (!bytes) {
      const shaped = dialect === this.dialect ? renameEvent(this.body, name!) : translate(this.body, this.point, dialect, name);
      bytes = Buffer.from(JSON.stringify(shaped));
      // A copy in another dialect holds a Copilot toolArgs string parsed anew (32 bytes a character, as toolArgsMemoryBytes counts it).
      const parsedArgs = dialect !== this.dialect && typeof this.body.toolArgs === "string" ? 32 * this.body.toolArgs.length : 0;
      VALUES.set(bytes, { value: shaped, weight: this.weight + parsedArgs });
      this.cache.set(key, bytes);
    }
    return bytes;
  }
}

/** The body naming the event `name` (first, when it named none), every other field as it came, in its place. */
function renameEvent(body: JsonObject, name: string): JsonObject {
  const out: JsonObject = Object.hasOwn(body, "hook_event_name") ? {} : { hook_event_name: name };
  for (const [key, value] of Object.entries(body)) setField(out, key, key === "hook_event_name" ? name : value);
  return out;
}
