/**
 * @module A hook as the engine runs it, whatever format declared it.
 */
import type { Dialect, EventPoint, Format } from "./events.js";
import type { Limits } from "./names.js";

/** SERVICE.md §2, in the order they run. */
export const SOURCES = ["policy", "service", "extension", "repository"] as const;
export type Source = (typeof SOURCES)[number];

export interface HookDef {
  name: string;
  source: Source;
  /** whose exit-code and output rules apply (SERVICE.md §4) */
  format: Format;
  point: EventPoint;
  /** the payload shape the registration expects (copilot-hooks.md: event names select it) */
  dialect: Dialect;
  /** anchored regex on the tool name; absent: every tool */
  matcher?: RegExp;
  command: string;
  timeoutMs: number;
  env: Record<string, string>;
  /** cosh `fail_open = false`: a failure of this hook blocks */
  failOpen: boolean;
  image?: string;
  /** may lower the sandbox's limits, never raise them */
  limits: Partial<Limits>;
  /** working directory: on the host for policy hooks, relative to /workspace in containers */
  cwd?: string;
  /** host folders this hook needs, read-only at their own path (an extension's folder) */
  mounts: string[];
  /** where it was declared, for messages: "file:line" */
  origin: string;
  /** consecutive hooks with the same batch key run concurrently */
  batch?: string;
}

/** What loading one or more hook files gives. */
export interface HookSet {
  hooks: HookDef[];
  warnings: string[];
  /** cosh `[hooks] enabled = false` / Copilot and Claude `disableAllHooks` */
  disableAll: boolean;
}

export const emptyHookSet = (): HookSet => ({ hooks: [], warnings: [], disableAll: false });

export function mergeHookSets(sets: HookSet[]): HookSet {
  return {
    hooks: sets.flatMap((s) => s.hooks),
    warnings: sets.flatMap((s) => s.warnings),
    disableAll: sets.some((s) => s.disableAll),
  };
}

/** Matchers: "" and "*" match every tool; anything else is a regex over the whole tool name. */
export function compileMatcher(matcher: string | undefined): RegExp | undefined {
  if (matcher === undefined || matcher === "" || matcher === "*") return undefined;
  return new RegExp(`^(?:${matcher})$`);
}
