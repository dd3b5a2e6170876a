/**
 * @module Parsing off the main thread: a repository's TOML, and where a large JSON text stops being
 * JSON. smol-toml is linear, but a hostile 1 MiB file (a dotted key of 300 000 parts, say) still
 * costs it a few hundred milliseconds; jsonc-parser's walk to a syntax error costs about 100 ms a
 * mebibyte — and the main thread serves every tenant. Jobs wait on the main thread, in one queue
 * per party (a tenant), and the parties take turns: one tenant's flood delays another tenant's job
 * by one job at most, not by the whole flood. They go to one worker thread, started on first use,
 * one at a time; each job's clock starts when it is posted, so time spent waiting behind others
 * never counts against it. A job that takes longer than its timeout fails alone: its worker is
 * ended and a fresh one takes the rest.
 */
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { ConfigError } from "../errors.js";
import { describeJsonError, formatPath, tomlLocator, type JsonErrorFound, type Position } from "./locate.js";
import { MAX_OBJECT_KEYS } from "../names.js";
import type { ParsedFile } from "./shared.js";

/**
 * Values (tables, arrays, strings, numbers …) a parsed file may send back to the main thread, which
 * rebuilds each one it receives: a 1 MiB file of 350 000 empty tables would hold the main thread
 * 100 ms there. A thousand hooks of sixty settings each fit. @default 100 000
 */
export const MAX_TOML_VALUES = 100_000;
/** @default 5 s — far above what a 1 MiB file costs; a worker that takes longer is ended */
export const TOML_PARSE_TIMEOUT_MS = 5_000;

/** A TOML syntax error from the worker, with where it stands. */
export class TomlSyntaxError extends Error {
  override readonly name = "TomlSyntaxError";
  constructor(message: string, readonly line?: number, readonly column?: number, readonly path?: (string | number)[]) {
    super(message);
  }
}

/**
 * @default 10 — the worker's nice value: a hostile file's parse takes the CPU the main thread leaves,
 * not half of it (on a busy two-core machine a main-thread step of 150 ms took twice that).
 */
const PARSER_NICE = 10;

// The worker requires smol-toml's CommonJS build by path: it runs as eval'd CommonJS, whatever
// loads this module (the built service, or vitest over the sources).
/**
 * Why parsed TOML is past what the main thread takes — more than `maxValues` values
 * (MAX_TOML_VALUES), or a table of more than `maxKeys` keys (MAX_OBJECT_KEYS, with the table's
 * `path`) — or undefined. Self-contained: the worker runs its very source.
 */
export function tomlShapeError(value: unknown, maxValues: number, maxKeys: number): (Error & { path?: (string | number)[] }) | undefined {
  type Entry = [unknown, Entry | null, string | null];
  let count = 0;
  // [value, the entry of the value it is in, its key there]: a table's path, when it is refused
  for (const stack: Entry[] = [[value, null, null]]; stack.length > 0; ) {
    const entry = stack.pop()!;
    const v = entry[0];
    if (++count > maxValues) return new Error(`the file holds more than ${maxValues} values (MAX_TOML_VALUES): refused`);
    if (v === null || typeof v !== "object" || v instanceof Date) continue;
    let keys = 0;
    for (const k in v) {
      if (!Array.isArray(v) && ++keys > maxKeys) {
        const path: (string | number)[] = [];
        for (let e: Entry = entry; e[1] !== null; e = e[1]) path.unshift(Array.isArray(e[1][0]) ? Number(e[2]) : e[2]!);
        return Object.assign(new Error(`holds more than ${maxKeys} keys (MAX_OBJECT_KEYS)`), { path });
      }
      stack.push([(v as Record<string, unknown>)[k], entry, k]);
    }
  }
  return undefined;
}

const SMOL_TOML = createRequire(import.meta.url).resolve("smol-toml");
const JSONC_PARSER = createRequire(import.meta.url).resolve("jsonc-parser");
const SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
// This thread yields the CPU to the one that answers every request: on Linux a thread's nice value
// is its own (setpriority on the calling thread), and raising it needs no privilege. Where it cannot
// be raised, the parse runs as it is (only the share of a busy machine's CPU differs).
try {
  require("node:os").setPriority(0, ${PARSER_NICE});
} catch {}
const { parse } = require(workerData.smolToml);
const { visit, printParseErrorCode } = require(workerData.jsoncParser);
// locate.ts's findJsonError, walked here: the first error's name, offset, and whether it stood in an array.
function findJsonError(text) {
  const stop = new Error("first error found");
  const open = [];
  let found = null;
  let whole = false;
  const ended = () => void (whole ||= open.length === 0);
  try {
    visit(text, {
      onObjectBegin: () => void open.push(false),
      onObjectEnd: () => {
        open.pop();
        ended();
      },
      onArrayBegin: () => void open.push(true),
      onArrayEnd: () => {
        open.pop();
        ended();
      },
      onLiteralValue: ended,
      onError: (code, offset) => {
        found = { name: whole ? "EndOfFileExpected" : printParseErrorCode(code), offset, inArray: open[open.length - 1] === true };
        throw stop;
      },
    }, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  } catch (e) {
    if (e !== stop && !(e instanceof RangeError)) throw e;
  }
  return found;
}
parentPort.on("message", ({ kind, text, keep }) => {
  if (kind === "json") {
    try {
      parentPort.postMessage({ value: findJsonError(text) });
    } catch (e) {
      parentPort.postMessage({ error: { message: String(e && e.message) } });
    }
    return;
  }
  try {
    // An integer past 2^53 (an i64 setting Codex's own parser takes) is read, as a BigInt, not refused.
    const all = parse(text, { integersAsBigInt: "asNeeded" });
    // Only the tables asked for go back: the main thread rebuilds every value it is sent.
    const value = keep === undefined ? all : Object.fromEntries(keep.filter((k) => Object.hasOwn(all, k)).map((k) => [k, all[k]]));
    const past = (${tomlShapeError.toString()})(value, workerData.maxValues, workerData.maxKeys);
    if (past) throw past;
    parentPort.postMessage({ value });
  } catch (e) {
    parentPort.postMessage({ error: { message: String(e && e.message), line: e && e.line, column: e && e.column, path: e && e.path } });
  }
});`;

interface Job {
  /** TOML to parse, or a JSON text whose first error to find */
  kind: "toml" | "json";
  text: string;
  /** the top-level keys the caller reads; the rest stays in the worker */
  keep?: readonly string[];
  timeoutMs: number;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
}

interface Answer {
  value?: unknown;
  error?: { message: string; line?: number; column?: number; path?: (string | number)[] };
}

/** One party's jobs not yet posted, oldest first (`head` is the next one: no O(n) shift per job). */
interface Line {
  jobs: (Job | undefined)[];
  head: number;
}
/** Each party with jobs waiting, and whose turn is next: the first of `turns`. */
const lines = new Map<string, Line>();
const turns: string[] = [];
let worker: Worker | undefined;
/** The job the worker is parsing, and its clock. */
let running: { job: Job; worker: Worker; timer: NodeJS.Timeout } | undefined;

/** Ends the running job (its worker stays up unless the caller ends it) and posts the next. */
function finish(settle: (job: Job) => void): void {
  const r = running;
  if (!r) return;
  running = undefined;
  clearTimeout(r.timer);
  settle(r.job);
  next();
}

function started(): Worker {
  if (worker) return worker;
  const w = new Worker(SOURCE, { eval: true, workerData: { smolToml: SMOL_TOML, jsoncParser: JSONC_PARSER, maxValues: MAX_TOML_VALUES, maxKeys: MAX_OBJECT_KEYS } });
  w.on("message", (m: Answer) => {
    if (running?.worker !== w) return;
    finish((job) => (m.error ? job.reject(new TomlSyntaxError(m.error.message, m.error.line, m.error.column, m.error.path)) : job.resolve(m.value)));
  });
  const gone = (err: Error) => {
    if (worker !== w) return; // ended by a timeout: its job has already failed
    worker = undefined;
    if (running?.worker === w) finish((job) => job.reject(err));
  };
  w.on("error", gone);
  w.on("exit", (code) => gone(new Error(`the parse worker stopped (exit ${code})`)));
  // After the listeners (a 'message' listener refs it again): an idle worker never keeps the process up.
  w.unref();
  worker = w;
  return w;
}

/** The oldest waiting job of the party whose turn it is, taken off its line; the party goes to the back. */
function take(): Job | undefined {
  const party = turns.shift();
  if (party === undefined) return undefined;
  const line = lines.get(party)!;
  const job = line.jobs[line.head]!;
  line.jobs[line.head++] = undefined;
  if (line.head === line.jobs.length) lines.delete(party);
  else {
    turns.push(party);
    if (line.head > 1024 && line.head * 2 > line.jobs.length) {
      line.jobs = line.jobs.slice(line.head);
      line.head = 0;
    }
  }
  return job;
}

/** Posts the next job, by turns, when the worker is free. */
function next(): void {
  if (running) return;
  for (let job = take(); job; job = take()) {
    let w: Worker;
    try {
      w = started();
    } catch (err) {
      job.reject(err instanceof Error ? err : new Error(String(err)));
      continue;
    }
    const posted = job;
    // The clock starts now, when this job is posted, not when it was queued.
    const timer = setTimeout(() => {
      if (running?.job !== posted) return;
      // Whatever it is doing, it is not doing it for anyone else: this job fails, a fresh worker takes the rest.
      if (worker === w) worker = undefined;
      void w.terminate();
      finish((j) => j.reject(new Error(`parsing took longer than ${j.timeoutMs} ms`)));
    }, job.timeoutMs);
    timer.unref();
    // Kept up while a parse runs, so that the answer is awaited.
    w.ref();
    running = { job, worker: w, timer };
    w.postMessage({ kind: job.kind, text: job.text, keep: job.keep });
    return;
  }
  worker?.unref();
}

/**
 * Parses TOML in the worker, after the parses `party` queued before it, taking turns with other
 * parties; rejects with a TomlSyntaxError (line, column) when it is not TOML. `timeoutMs` counts
 * from when the worker is given the text.
 */
export function parseTomlOffThread(text: string, timeoutMs = TOML_PARSE_TIMEOUT_MS, party = "", keep?: readonly string[]): Promise<unknown> {
  return queued({ kind: "toml", text, timeoutMs, ...(keep !== undefined ? { keep } : {}) }, party);
}

/**
 * jsonSyntaxError of locate.ts, its walk done in the worker (after `party`'s earlier jobs, by
 * turns): for a text too large to walk on the main thread. `refused` is JSON.parse's error.
 */
export async function jsonSyntaxErrorOffThread(text: string, refused: unknown, party = ""): Promise<SyntaxError & Position> {
  // A walk that fails or runs out of time leaves JSON.parse's own word on where it stopped.
  const found = (await queued({ kind: "json", text, timeoutMs: TOML_PARSE_TIMEOUT_MS }, party).catch(() => null)) as JsonErrorFound | null;
  return describeJsonError(text, refused, found ?? undefined);
}

function queued(job: Omit<Job, "resolve" | "reject">, party: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let line = lines.get(party);
    if (!line) {
      lines.set(party, (line = { jobs: [], head: 0 }));
      turns.push(party);
    }
    line.jobs.push({ ...job, resolve, reject });
    next();
  });
}

/** A table of too many keys: said at its line, as the main thread finds it. */
export function wideTableError(file: string, text: string, path: (string | number)[], message: string): ConfigError {
  // (only the table the path is in is indexed)
  const at = tomlLocator(text, path.length > 0 ? [String(path[0])] : undefined)(path);
  return new ConfigError(file, `${path.length > 0 ? formatPath(path) : "the file"}: ${message}`, at?.line, at?.column);
}

/** `readToml` of formats/shared.ts, parsed in the worker: a ConfigError at the line when it is not TOML. */
export async function readTomlOffThread(file: string, text: string, party = "", keep?: readonly string[]): Promise<ParsedFile> {
  try {
    return { file, value: await parseTomlOffThread(text, TOML_PARSE_TIMEOUT_MS, party, keep), locate: tomlLocator(text, keep) };
  } catch (err) {
    if (err instanceof TomlSyntaxError && err.path) throw wideTableError(file, text, err.path, err.message);
    if (err instanceof TomlSyntaxError) throw new ConfigError(file, err.message.split("\n")[0] ?? "invalid TOML", err.line, err.column);
    throw new ConfigError(file, `cannot parse: ${(err as Error).message}`);
  }
}
