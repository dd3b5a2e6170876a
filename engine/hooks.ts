/**
 * @module A hook as the engine runs it, whatever format declared it.
 */
import { RE2JS } from "re2js";
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
  /**
   * The event's name as the hook's file writes it (`BeforeTool`, `beforeShellExecution`,
   * `PreToolUse`): a snake_case payload carries it as `hook_event_name`, whatever name the posting
   * agent gave the event. Absent: the point's own name.
   */
  eventName?: string;
  /** the payload shape the registration expects (copilot-hooks.md: event names select it) */
  dialect: Dialect;
  /**
   * Copilot: which of its agents read the hook's file. Absent: the CLI and VS Code alike (a
   * repository's `.github/hooks/*.json`), a PascalCase event then read under VS Code's rules too;
   * "cli": the CLI's inline settings (`.github/copilot/settings*.json`), which VS Code never reads.
   */
  readBy?: "cli";
  /** the format's matcher (linear-time); absent: every event of its point */
  matcher?: Matcher;
  /**
   * What the matcher is tested against: by default the tool name on tool events, and nothing
   * (the matcher is ignored) elsewhere; a field of the event body (Claude Code's SessionStart
   * `source`, Cursor's shell `command`), or `otherwise` when the body has no such field (Cursor's
   * `beforeReadFile` is a `Read`), or its last path part with `basename` (Claude Code's FileChanged
   * `file_path`); a fixed `value` (Cursor's `stop` is matched against `Stop`); or
   * "none": the format ignores matchers at this point.
   */
  matchOn?: { field: string; otherwise?: string; basename?: true } | { value: string } | "none";
  /** a further condition on the event (Claude Code's `if`); absent: none */
  condition?: Condition;
  command: string;
  /**
   * The shell its agent runs the command in: bash for Gemini CLI, Codex, cosh and Copilot's `bash`
   * key (and a Claude Code handler that names it); absent, `/bin/sh` — Claude Code's, Cursor's,
   * VS Code's, and the server's own hooks'.
   */
  shell?: "bash";
  /** at most `[sandbox] max_timeout` */
  timeoutMs: number;
  /**
   * the time its agent would give it, where max_timeout cut it shorter: timed out at max_timeout,
   * the hook never got its time to decide — hookbox's failure, not the hook's own timeout
   */
  agentTimeoutMs?: number;
  env: Record<string, string>;
  /** cosh `fail_open = false`: a failure of this hook blocks */
  failOpen: boolean;
  /**
   * Why hookbox cannot run this hook where its agent would (a Copilot hook whose `cwd` is outside the
   * repository, a folder no container has): it is kept, and each run is a failed start with this
   * error — hookbox not running it, under its format's rules (a Copilot preToolUse guard denies) and
   * the tenant's failure mode —, never dropped, which would let every call through unseen.
   */
  unrunnable?: string;
  /** Cursor's `loop_limit` of a stop hook: the follow-ups it may send (null: no limit); CURSOR_LOOP_LIMIT when unset */
  loopLimit?: number | null;
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
  /**
   * Claude Code's `disableAllHooks` as the file says it, true or false: one setting merged across the
   * agent's files, the most local deciding (settings.local.json's false switches back on what the
   * project's settings.json switched off).
   */
  disableAllSaid?: boolean;
}

export const emptyHookSet = (): HookSet => ({ hooks: [], warnings: [], disableAll: false });

export function mergeHookSets(sets: HookSet[]): HookSet {
  return {
    hooks: sets.flatMap((s) => s.hooks),
    warnings: sets.flatMap((s) => s.warnings),
    disableAll: sets.some((s) => s.disableAll),
  };
}

/** A compiled matcher: `test` costs time linear in the tool name, whatever the pattern. */
export interface Matcher {
  /** the pattern as written */
  readonly source: string;
  test(tool: string): boolean;
}

/** A condition on the whole event body, linear-time in it. */
export interface Condition {
  /** as written */
  readonly source: string;
  test(body: Record<string, unknown>): boolean;
}

/**
 * Longest text a matcher is tested against (a shell command, say). Past it the hook runs as if it
 * matched: a guard is never skipped by padding, and no match costs more than this.
 */
export const MAX_SUBJECT_CHARS = 8_192;

/** Longest matcher pattern accepted, in characters. */
export const MAX_MATCHER_CHARS = 512;
/** Largest compiled matcher (RE2 program instructions): bounds what one match may cost. */
export const MAX_MATCHER_PROGRAM = 300;
/**
 * Matching work one event may cost, in RE2 instructions × characters tested (a few tens of ms at
 * worst). Past it the remaining matchers are not tested and their hooks run as if they matched: a
 * guard is never skipped, and a workspace of many heavy matchers cannot hold the event loop.
 */
export const MAX_MATCH_WORK_PER_EVENT = 5_000_000;

/** The matching budget of the event being selected (set by match.ts around one selection). */
let budget: { left: number } | undefined;

/** Runs `fn` with a fresh per-event matching budget: every regex test inside it spends from it. */
export function withMatchBudget<T>(fn: () => T): T {
  const outer = budget;
  budget = { left: MAX_MATCH_WORK_PER_EVENT };
  try {
    return fn();
  } finally {
    budget = outer;
  }
}

/**
 * @default 40 000 — RE2 instructions all of one workspace's matchers and conditions may compile to
 * together. Compiling costs time in proportion to the program (about a microsecond an instruction),
 * on the thread that serves everyone: a thousand 300-instruction patterns would hold it for a
 * quarter of a second.
 */
export const MAX_REPOSITORY_MATCHER_PROGRAM = 40_000;

/**
 * @default 100 ms — the time all of one workspace's patterns may take to compile, whatever their
 * weight said: the last guard of the thread that serves everyone (weights are estimates).
 */
export const MAX_REPOSITORY_COMPILE_MS = 100;

/** What one workspace may still compile: patterns, RE2 instructions, and milliseconds spent (set by the repository loader). */
export interface CompileBudget {
  left: number;
  limit: number;
  instructions: number;
  ms: number;
  /** what `ms` may reach: MAX_REPOSITORY_COMPILE_MS for an upload */
  maxMs: number;
  /** the patterns charged so far (each once) */
  seen: Set<string>;
  /** those charged from the cache, with what each was charged: timed afresh before the budget refuses the workspace */
  cached?: Map<string, number>;
}
let compiles: CompileBudget | undefined;

/**
 * Runs `fn` (one of a workspace's hook files loading) spending from `budget`, shared by the
 * workspace's files: a file of thirty thousand matchers is refused at the first one past the
 * limit, not compiled whole.
 */
export function withCompileBudget<T>(budget: CompileBudget, fn: () => T): T {
  const outer = compiles;
  compiles = budget;
  try {
    return fn();
  } finally {
    compiles = outer;
  }
}

/** What a Unicode class (`\pL`, `\P{Greek}`) or a negated class weighs: RE2 builds each copy from hundreds of ranges. */
const WIDE_CLASS_WEIGHT = 20;

/**
 * What each range past ASCII in a class (`[\x{42}-\x{1E942}]`, `[À-ɏ]`) weighs in a pattern that
 * folds case (`(?i)` anywhere in it): the engine folds such a range a code point at a time, each
 * range of a class on its own — one over most of Unicode costs about 7 ms here, as much as a
 * hundred atoms' worth of the weight's budget.
 */
const WIDE_RANGE_WEIGHT = 100;

/** Whether a range's end at `at` (its first character) stands past ASCII: a character, or `\x{…}`. */
function rangeEndPastAscii(pattern: string, at: number, before: boolean): boolean {
  if (before && pattern[at] === "}") {
    const open = pattern.lastIndexOf("\\x{", at);
    return open !== -1 && Number.parseInt(pattern.slice(open + 3, at), 16) > 0x7f;
  }
  if (!before && pattern[at] === "\\" && pattern[at + 1] === "x" && pattern[at + 2] === "{") {
    const close = pattern.indexOf("}", at + 3);
    return close !== -1 && Number.parseInt(pattern.slice(at + 3, close), 16) > 0x7f;
  }
  return pattern.charCodeAt(at) > 0x7f;
}

/**
 * A weight of a pattern's RE2 program, read in one pass before compiling: every atom counts one
 * (`^` and `$` too), a Unicode or negated class twenty, a repeat `x{n,m}` counts x max(n, m) times,
 * through nested groups (`((a{10}){10}){10}` is a thousand), alternatives add up, a capturing
 * group adds two and `*`, `+`, `?` one each (RE2's instructions for them); `(?i)` adds nothing (a
 * folded letter is one instruction still). RE2 builds a pattern like `\pL{999}` repeated, `(?i)\PL` a
 * hundred times, or a hundred nested empty groups repeated, for hundreds
 * of milliseconds before its size could be checked. Braces of `\p{…}`, `\P{…}`, `\x{…}` belong to
 * the escape; `\Q…\E` is literal; `{,n}` is literal, as RE2 reads it.
 */
export function repeatWeight(pattern: string): number {
  const CAP = 1e9;
  // case folded anywhere in it (`(?i)`, `(?is:`): its ranges past ASCII are folded code point by code point
  const folds = /\(\?[A-Za-z]*i/.test(pattern);
  // capture: the group records where it matched, two instructions of RE2's program
  const frames: { sum: number; last: number; capture: boolean }[] = [{ sum: 0, last: 0, capture: false }];
  let top = frames[0]!;
  const atom = (w = 1) => {
    top.sum = Math.min(CAP, top.sum + w);
    top.last = w;
  };
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\") {
      const e = pattern[i + 1];
      if (e === "Q") {
        // literal up to \E
        const end = pattern.indexOf("\\E", i + 2);
        const stop = end === -1 ? pattern.length : end;
        for (let k = i + 2; k < stop; k++) atom();
        i = end === -1 ? pattern.length : end + 1;
      } else if ((e === "p" || e === "P") && pattern[i + 2] === "{") {
        const close = pattern.indexOf("}", i + 3);
        i = close === -1 ? pattern.length : close;
        atom(WIDE_CLASS_WEIGHT);
      } else if (e === "p" || e === "P") {
        i += 2; // \pL
        atom(WIDE_CLASS_WEIGHT);
      } else if (e === "x" && pattern[i + 2] === "{") {
        const close = pattern.indexOf("}", i + 3);
        i = close === -1 ? pattern.length : close;
        atom();
      } else {
        i++;
        atom();
      }
    } else if (c === "[") {
      // a class: to its closing bracket (a leading ] is literal; escapes inside skip a character)
      let j = i + 1;
      let wide = false;
      // ranges past ASCII, each folded on its own under (?i)
      let ranges = 0;
      const first = j + (pattern[j] === "^" ? 1 : 0);
      if (pattern[j] === "^") {
        wide = true;
        j++;
      }
      if (pattern[j] === "]") j++;
      for (; j < pattern.length && pattern[j] !== "]"; j++) {
        // Past ASCII (a character, or `\x{…}`): a member weighs as a \p class, and a range — which
        // may span much of Unicode — a hundred atoms where the pattern folds case (the pattern is
        // at most MAX_MATCHER_CHARS long, so looking back for a range's `\x{` costs little).
        if (pattern.charCodeAt(j) > 0x7f) wide = true;
        if (folds && pattern[j] === "-" && j > first && pattern[j + 1] !== "]" && (rangeEndPastAscii(pattern, j - 1, true) || rangeEndPastAscii(pattern, j + 1, false))) ranges++;
        if (pattern[j] === "\\") {
          if (pattern[j + 1] === "p" || pattern[j + 1] === "P") wide = true;
          if (pattern[j + 1] === "x" && pattern[j + 2] === "{") wide = true;
          j++;
        } else if (pattern[j] === "[" && pattern[j + 1] === ":") {
          // [:alpha:] inside a class
          const close = pattern.indexOf(":]", j + 2);
          if (close !== -1) j = close + 1;
        }
      }
      i = j;
      atom(ranges > 0 ? Math.min(CAP, ranges * WIDE_RANGE_WEIGHT) : wide ? WIDE_CLASS_WEIGHT : 1);
    } else if (c === "(") {
      // `(?:`, `(?i)`, `(?P<name>`: the group's flags and name are not atoms
      let capture = true;
      if (pattern[i + 1] === "?") {
        let j = i + 2;
        while (j < pattern.length && pattern[j] !== ":" && pattern[j] !== ")" && pattern[j] !== ">") j++;
        if (pattern[j] === ")") {
          i = j; // a flag group alone: nothing to count
          continue;
        }
        capture = pattern[j] === ">";
        i = j;
      }
      frames.push((top = { sum: 0, last: 0, capture }));
    } else if (c === ")") {
      if (frames.length === 1) continue;
      const inner = frames.pop()!;
      const weight = inner.sum + (inner.capture ? 2 : 0);
      top = frames[frames.length - 1]!;
      top.sum = Math.min(CAP, top.sum + weight);
      top.last = weight;
    } else if (c === "|") {
      top.last = 0;
    } else if (c === "{" && pattern[i + 1] !== undefined && pattern[i + 1]! >= "0" && pattern[i + 1]! <= "9") {
      let j = i + 1;
      let n = 0;
      let m = 0;
      let comma = false;
      for (; j < pattern.length && j - i < 16; j++) {
        const d = pattern[j]!;
        if (d >= "0" && d <= "9") {
          if (comma) m = m * 10 + Number(d);
          else n = n * 10 + Number(d);
        } else if (d === "," && !comma) comma = true;
        else break;
      }
      if (pattern[j] === "}") {
        const k = Math.max(n, m, 1);
        top.sum = Math.min(CAP, top.sum + top.last * (k - 1));
        top.last = Math.min(CAP, top.last * k);
        i = j;
      } else atom(); // a literal brace
    } else if (c === "*" || c === "+" || c === "?") {
      // a repetition or option: one more instruction for what it applies to
      top.sum = Math.min(CAP, top.sum + 1);
      top.last = Math.min(CAP, top.last + 1);
    } else {
      atom(); // a literal, `.`, `^`, `$`, a brace RE2 reads literally
    }
  }
  while (frames.length > 1) {
    const inner = frames.pop()!;
    frames[frames.length - 1]!.sum += inner.sum + (inner.capture ? 2 : 0);
  }
  // Case folding turns a letter into a class of the same one instruction: `(?i)` adds nothing.
  return frames[0]!.sum;
}

/**
 * Compiled patterns, shared, each with what compiling it took: a workspace that repeats one matcher a
 * thousand times compiles it once, and one whose patterns are found here is charged that time all the same.
 */
const compiled = new Map<string, { re: RE2JS; ms: number }>();
const COMPILED_KEPT = 4096;

/**
 * A regex compiled by RE2 (re2js): no backtracking, so a repository's `(a+)+b` costs what `ab` costs.
 * RE2 has no lookaround or backreferences; such patterns are refused with the reason. `anchored`:
 * over the whole text; else found anywhere in it. Every format's matcher is built on this.
 */
/** A repository's matchers and conditions together passed what one workspace may compile: its upload is refused. */
export class CompileBudgetError extends Error {
  override readonly name = "CompileBudgetError";
}

/** A pattern past hookbox's own limits for one matcher (its length, its program): refused, as a limit is, wherever it is written. */
export class MatcherLimitError extends Error {
  override readonly name = "MatcherLimitError";
}

/** Times afresh the patterns `budget` was charged from the cache, charging what each takes now; each record keeps the least it ever took. */
function retimeCached(budget: CompileBudget): void {
  for (const [source, charged] of budget.cached!) {
    const t0 = performance.now();
    RE2JS.compile(source);
    const took = performance.now() - t0;
    budget.ms += took - charged;
    const record = compiled.get(source);
    if (record) record.ms = Math.min(record.ms, took);
  }
  budget.cached!.clear();
}

export function compileRegex(pattern: string, opts: { anchored: boolean }): (text: string) => boolean {
  if (pattern.length > MAX_MATCHER_CHARS) throw new MatcherLimitError(`longer than ${MAX_MATCHER_CHARS} characters`);
  const source = opts.anchored ? `^(?:${pattern})$` : pattern;
  // A pattern the workspace compiled already is one program, shared: counted and charged once.
  const first = compiles !== undefined && !compiles.seen.has(source);
  if (first && compiles!.left-- <= 0) throw new CompileBudgetError(`more than ${compiles!.limit} distinct matchers and conditions in one repository (server.max_repository_hooks)`);
  if (repeatWeight(pattern) > MAX_MATCHER_PROGRAM) throw new MatcherLimitError(`too complex (weighed before it is built: over ${MAX_MATCHER_PROGRAM} RE2 instructions)`);
  const recorded = compiled.get(source);
  let known = recorded;
  // One whose recorded time would pass the budget is compiled again and timed afresh: a time taken on
  // a busy moment is not held against every later workspace, and a pattern truly that slow still is.
  if (known && compiles && !compiles.seen.has(source) && compiles.ms + known.ms > compiles.maxMs) known = undefined;
  if (known) {
    // Compiled before (by this workspace's earlier upload, or another's): charged what it took then,
    // once per workspace, so that patterns compiled ahead in small uploads cannot pass the budget together.
    if (compiles && !compiles.seen.has(source)) {
      compiles.ms += known.ms;
      compiles.seen.add(source);
      (compiles.cached ??= new Map()).set(source, known.ms);
    }
  } else {
    const t0 = performance.now();
    let re: RE2JS;
    let took = 0;
    try {
      re = RE2JS.compile(source);
    } finally {
      // A pattern RE2 refuses costs its time too.
      took = performance.now() - t0;
      if (compiles) compiles.ms += took;
    }
    // The least it ever took: a record is never raised by a busy moment.
    known = { re, ms: Math.min(recorded?.ms ?? Infinity, took) };
    compiles?.seen.add(source);
    if (re.programSize() > MAX_MATCHER_PROGRAM) throw new MatcherLimitError(`too complex (over ${MAX_MATCHER_PROGRAM} RE2 instructions)`);
    if (!compiled.has(source) && compiled.size >= COMPILED_KEPT) compiled.delete(compiled.keys().next().value!);
    compiled.set(source, known);
  }
  const { re } = known;
  const size = re.programSize();
  if (first && (compiles!.instructions -= size) < 0)
    throw new CompileBudgetError(`the repository's matchers and conditions together pass ${MAX_REPOSITORY_MATCHER_PROGRAM} RE2 instructions (MAX_REPOSITORY_MATCHER_PROGRAM)`);
  // Before refusing on time, the patterns charged from the cache are timed afresh, once: a record
  // made on a busy moment refuses no workspace whose patterns really compile within the budget.
  if (compiles && compiles.ms > compiles.maxMs && compiles.cached?.size) retimeCached(compiles);
  if (compiles && compiles.ms > compiles.maxMs)
    throw new CompileBudgetError(`the repository's matchers and conditions took more than ${Math.round(compiles.maxMs)} ms to compile (MAX_REPOSITORY_COMPILE_MS${compiles.maxMs > MAX_REPOSITORY_COMPILE_MS ? " × STORED_COMPILE_FACTOR, a stored workspace read again" : ""})`);
  return (text) => {
    // At least 64 characters a test: a thousand tests of one character each are no free lunch.
    const work = size * Math.max(64, text.length);
    if (budget) {
      // Out of budget: count it as a match (the hook runs), never as a miss.
      if (budget.left < work) return true;
      budget.left -= work;
    }
    return re.test(text);
  };
}
