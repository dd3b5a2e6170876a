/**
 * @module TOML from repositories, parsed off the main thread. smol-toml is linear, but a hostile
 * 1 MiB file (a dotted key of 300 000 parts, say) still costs it a few hundred milliseconds, and
 * the main thread serves every tenant. One worker thread, started on first use, parses one text at
 * a time; a parse that takes longer than `TOML_PARSE_TIMEOUT_MS` ends the worker and fails.
 */
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { ConfigError } from "../errors.js";
import { tomlLocator } from "./locate.js";
import type { ParsedFile } from "./shared.js";

/** @default 5 s — far above what a 1 MiB file costs; a worker that takes longer is ended */
export const TOML_PARSE_TIMEOUT_MS = 5_000;

/** A TOML syntax error from the worker, with where it stands. */
export class TomlSyntaxError extends Error {
  override readonly name = "TomlSyntaxError";
  constructor(message: string, readonly line?: number, readonly column?: number) {
    super(message);
  }
}

// The worker requires smol-toml's CommonJS build by path: it runs as eval'd CommonJS, whatever
// loads this module (the built service, or vitest over the sources).
const SMOL_TOML = createRequire(import.meta.url).resolve("smol-toml");
const SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { parse } = require(workerData.smolToml);
parentPort.on("message", ({ id, text }) => {
  try {
    parentPort.postMessage({ id, value: parse(text) });
  } catch (e) {
    parentPort.postMessage({ id, error: { message: String(e && e.message), line: e && e.line, column: e && e.column } });
  }
});`;

interface Pending {
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

let worker: Worker | undefined;
const pending = new Map<number, Pending>();
let nextId = 0;

function failAll(err: Error): void {
  for (const p of pending.values()) {
    clearTimeout(p.timer);
    p.reject(err);
  }
  pending.clear();
}

function started(): Worker {
  if (worker) return worker;
  const w = new Worker(SOURCE, { eval: true, workerData: { smolToml: SMOL_TOML } });
  w.on("message", (m: { id: number; value?: unknown; error?: { message: string; line?: number; column?: number } }) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (pending.size === 0) w.unref();
    clearTimeout(p.timer);
    if (m.error) p.reject(new TomlSyntaxError(m.error.message, m.error.line, m.error.column));
    else p.resolve(m.value);
  });
  const gone = (err: Error) => {
    if (worker === w) worker = undefined;
    failAll(err);
  };
  w.on("error", gone);
  w.on("exit", (code) => gone(new Error(`the TOML worker stopped (exit ${code})`)));
  // After the listeners (a 'message' listener refs it again): an idle worker never keeps the process up.
  w.unref();
  worker = w;
  return w;
}

/** Parses TOML in the worker; rejects with a TomlSyntaxError (line, column) when it is not TOML. */
export function parseTomlOffThread(text: string): Promise<unknown> {
  const w = started();
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      pending.delete(id);
      if (pending.size === 0) w.unref();
      reject(new Error(`parsing took longer than ${TOML_PARSE_TIMEOUT_MS} ms`));
      // Whatever it is doing, it is not doing it for anyone else.
      void w.terminate();
    }, TOML_PARSE_TIMEOUT_MS);
    timer.unref();
    // Kept up while a parse is pending, so that the answer is awaited.
    w.ref();
    pending.set(id, { resolve, reject, timer });
    w.postMessage({ id, text });
  });
}

/** `readToml` of formats/shared.ts, parsed in the worker: a ConfigError at the line when it is not TOML. */
export async function readTomlOffThread(file: string, text: string): Promise<ParsedFile> {
  try {
    return { file, value: await parseTomlOffThread(text), locate: tomlLocator(text) };
  } catch (err) {
    if (err instanceof TomlSyntaxError) throw new ConfigError(file, err.message.split("\n")[0] ?? "invalid TOML", err.line, err.column);
    throw new ConfigError(file, `cannot parse: ${(err as Error).message}`);
  }
}
