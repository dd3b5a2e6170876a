/**
 * @module What every format module needs, and the shape of one: TOML and JSON parsing with located
 * errors, schema errors turned into ConfigErrors, tolerant reading of repository files (unknown
 * things are warnings naming file and line), reading a hook's stdout, naming a run's failure.
 */
import { parse as parseToml, TomlError } from "smol-toml";
import { z } from "zod";
import type { Folded } from "../aggregate.js";
import { ConfigError } from "../errors.js";
import { jsonShapeProblem, MAX_EVENT_CONTAINERS, MAX_EVENT_DEPTH, MAX_OBJECT_KEYS, shapeProblem } from "../event-body.js";
import { resolveEventName, unknownEventMessage, type Decision, type Dialect, type EventPoint, type Format } from "../events.js";
import { CompileBudgetError, MatcherLimitError, type HookSet, type Source } from "../hooks.js";
import type { RunResult } from "../run/types.js";
import type { Interpret, Verdict } from "../verdict.js";
import { deeperThanAt, formatPath, lineIndex, parseJsoncLocated, parseJsonLocated, tomlLocator, type Path, type Position } from "./locate.js";
import { oneLine } from "../visible-text.js";
import { MAX_JSONC_COMMENTS } from "../names.js";
import { head, headOfWords } from "../detached.js";

export type Locate = (path: Path) => Position | undefined;

export interface ParsedFile {
  file: string;
  value: unknown;
  locate: Locate;
}

/** `keep`: only these top-level tables are located (tomlLocator). */
export function readToml(file: string, text: string, keep?: readonly string[]): ParsedFile {
  try {
    return { file, value: parseToml(text, { integersAsBigInt: "asNeeded" }), locate: tomlLocator(text, keep) };
  } catch (err) {
    if (err instanceof TomlError) throw new ConfigError(file, err.message.split("\n")[0] ?? "invalid TOML", err.line, err.column);
    throw err;
  }
}

/**
 * Of a repository's JSON hook file, the members whose insides are ever located (hooks, and Gemini's
 * `hooksConfig`): a settings file's other members are located as members, never walked into.
 */
export const LOCATED_MEMBERS: ReadonlySet<string> = new Set(["hooks", "hooksConfig"]);

/** `within`: of a root object, the members whose insides may be located (`LOCATED_MEMBERS`); absent, all. */
export function readJson(file: string, text: string, comments = false, within?: ReadonlySet<string>): ParsedFile {
  // No hook file needs more; deeper ones would make every parser and walker after this recurse,
  // each array and object costs the parse and the locator's walk (MAX_EVENT_CONTAINERS), and an
  // object of a hundred thousand keys the parse and every check of it (MAX_OBJECT_KEYS).
  // (and the comments of one that may hold them: MAX_JSONC_COMMENTS)
  const past = deeperThanAt(text, MAX_EVENT_DEPTH, comments, MAX_EVENT_CONTAINERS, MAX_OBJECT_KEYS, MAX_JSONC_COMMENTS);
  if (past) {
    const at = lineIndex(text)(past.at);
    const problem = past.why === "deep" ? `nested deeper than ${MAX_EVENT_DEPTH} levels` : past.why === "comments" ? `holds more than ${MAX_JSONC_COMMENTS} comments (MAX_JSONC_COMMENTS)` : shapeProblem(past.why);
    throw new ConfigError(file, problem, at.line, at.column);
  }
  try {
    return { file, ...(comments ? parseJsoncLocated(text, within) : parseJsonLocated(text, within)) };
  } catch (err) {
    const e = err as SyntaxError & Partial<Position>;
    throw new ConfigError(file, `invalid JSON: ${e.message}`, e.line, e.column);
  }
}

/** The first problem of a failed schema check: where it is, and what. */
export function schemaProblem(error: z.ZodError, prefix: Path): { path: Path; message: string } {
  // A typo gives an unknown key and a missing one; the unknown key is the one to name.
  const issue = error.issues.find((i) => i.code === "unrecognized_keys") ?? error.issues[0]!;
  let path: Path = [...prefix, ...(issue.path as (string | number)[])];
  if (issue.code === "unrecognized_keys") path = [...path, issue.keys[0]!];
  // A record's key (an env name) that fails: what is wrong with it, not zod's "Invalid key in record".
  const message = issue.code === "invalid_key" && issue.issues[0] ? issue.issues[0].message : issue.message;
  return { path, message };
}

/** The first problem of a failed schema check, at its line. */
export function schemaError(parsed: ParsedFile, error: z.ZodError, prefix: Path = []): ConfigError {
  const { path, message } = schemaProblem(error, prefix);
  return configError(parsed, path, message);
}

export function configError(parsed: ParsedFile, path: Path, detail: string): ConfigError {
  const at = parsed.locate(path);
  return new ConfigError(parsed.file, `${formatPath(path)}: ${detail}`, at?.line, at?.column);
}

export function originOf(parsed: ParsedFile, path: Path): string {
  const at = parsed.locate(path);
  return at ? `${parsed.file}:${at.line}` : parsed.file;
}

export type Output =
  | { kind: "empty" }
  | { kind: "object"; value: Record<string, unknown> }
  /**
   * `notJson`: the text is not JSON at all (a format may read it as plain text); `limit`: JSON past
   * hookbox's bounds (answerShapeProblem), which its agent would read — hookbox not deciding (pastBounds)
   */
  | { kind: "invalid"; error: string; notJson?: true; limit?: true };

/**
 * A hook's stdout: nothing, `{}`, a JSON object — or an error of that hook (SERVICE.md §4).
 * `stringOnce`: a JSON string that holds the answer is read once more (Gemini CLI's hook runner does).
 */
export function readOutput(stdout: string, stringOnce = false): Output {
  const text = stdout.trim();
  if (text === "") return { kind: "empty" };
  // Deeper than any answer needs, and deep enough to overflow the stack of whatever walks it next.
  // Only text that opens with `[` or `{` can be JSON holding arrays and objects: other text (a
  // reason with brackets in it) is for JSON.parse to refuse at once, and a format to read as text.
  const shape = answerShapeProblem(text);
  if (shape) return { kind: "invalid", error: `output ${shape}`, limit: true };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: "invalid", error: `output is not JSON: ${clipWords(text, 120)}`, notJson: true };
  }
  if (stringOnce && typeof value === "string") {
    // A JSON string holding the answer (Gemini CLI parses it once more): its text may hold raw lone
    // surrogates now, made well-formed here; what does not parse there makes the whole text plain text.
    const inner = readOutput(toWellFormed(value));
    if ((inner.kind === "invalid" && inner.notJson) || value.trim() === "") return { kind: "invalid", error: `output is not JSON: ${clipWords(text, 120)}`, notJson: true };
    return inner;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { kind: "invalid", error: "output is not a JSON object" };
  if (Object.keys(value).length === 0) return { kind: "empty" };
  return { kind: "object", value: wellFormedJson(text, value) as Record<string, unknown> };
}

/**
 * Why a hook's answer is past what hookbox reads (64 levels, MAX_EVENT_CONTAINERS arrays and
 * objects, MAX_OBJECT_KEYS keys in one object), for text that opens as JSON holding them (`[` or `{`), or undefined. One byte pass. A
 * limit of hookbox's, not the hook's fault: its agent would read it (execute.ts: the tenant's failure mode).
 */
export function answerShapeProblem(text: string): string | undefined {
  const first = text.trimStart().charCodeAt(0);
  return first === 0x5b || first === 0x7b ? jsonShapeProblem(Buffer.from(text)) : undefined;
}

/**
 * The verdict on an answer past hookbox's bounds: no decision of the hook's, and a limit of
 * hookbox's (its agent has none of these bounds), so the tenant's failure mode applies (execute.ts).
 */
export function pastBounds(out: { error: string }, format: string): Verdict {
  return { decision: null, error: out.error, rule: `${format}: an answer past hookbox's bounds (64 levels, ${MAX_EVENT_CONTAINERS} arrays and objects, ${MAX_OBJECT_KEYS} keys in one object) is hookbox not deciding`, limit: "output_shape" };
}

/** A `\uD800`–`\uDFFF` escape: the only way a lone surrogate gets into a value parsed from UTF-8 text. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/**
 * `value`, parsed from `text`, with every lone surrogate (an escape `\ud800` with no partner) made
 * U+FFFD, keys too. JSON.stringify writes one back as the same escape, which a strict parser — the
 * serde_json of an agent written in Rust, Codex's — refuses, failing the whole answer: a hook could
 * thus turn hookbox's block into a hook that failed. Only a text that holds such an escape is walked
 * (no deeper than the depth already checked).
 */
export function wellFormedJson(text: string, value: unknown): unknown {
  return SURROGATE_ESCAPE.test(text) ? wellFormed(value) : value;
}

/** String.prototype.toWellFormed and isWellFormed (Node 20; ES2024, past this project's lib). */
const toWellFormed = (s: string): string => (s as unknown as { toWellFormed(): string }).toWellFormed();
const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/** A field as JSON.parse makes one: defineProperty, so that a "__proto__" key stays a field. */
const setField = (o: object, k: string, value: unknown) => Object.defineProperty(o, k, { value, enumerable: true, writable: true, configurable: true });

/**
 * In place — `value` is what JSON.parse just built, shared with nothing: only a string that holds a
 * lone surrogate is replaced, and only an object with such a key is built again (in its order, a
 * later key taking the place of an earlier one it now equals). A mebibyte of small objects is
 * walked, never copied.
 */
function wellFormed(value: unknown): unknown {
  if (typeof value === "string") return isWellFormed(value) ? value : toWellFormed(value);
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = wellFormed(value[i]);
    return value;
  }
  const o = value as Record<string, unknown>;
  const keys = Object.keys(o);
  for (const k of keys) {
    const v = o[k];
    const w = wellFormed(v);
    if (w !== v) setField(o, k, w);
  }
  if (keys.every(isWellFormed)) return o;
  const out = {};
  for (const k of keys) setField(out, toWellFormed(k), o[k]);
  return out;
}

/** @default 64 — variables in one hook's `env` */
export const MAX_HOOK_ENV_VARS = 64;
/** @default 4096 — characters of one `env` value */
export const MAX_HOOK_ENV_VALUE_CHARS = 4096;
/** @default 128 — characters of one `env` name */
export const MAX_HOOK_ENV_NAME_CHARS = 128;

/**
 * A hook's `env`, bounded: every run gets it, every trace lists it (a repository's redacted), and
 * a file may declare a thousand hooks. Names are shell names; no NUL anywhere (no process could get it).
 */
export const HookEnvSchema = z
  .custom<Record<string, unknown>>((v) => typeof v === "object" && v !== null && !Array.isArray(v), { message: "env must be a table of names to strings" })
  .refine((v) => Object.keys(v).length <= MAX_HOOK_ENV_VARS, { message: `at most ${MAX_HOOK_ENV_VARS} variables (MAX_HOOK_ENV_VARS)`, abort: true })
  .pipe(z.record(
    z.string().max(MAX_HOOK_ENV_NAME_CHARS, `a variable name is at most ${MAX_HOOK_ENV_NAME_CHARS} characters (MAX_HOOK_ENV_NAME_CHARS)`).regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "a variable name is letters, digits and _, not starting with a digit"),
    z.string().max(MAX_HOOK_ENV_VALUE_CHARS, `a value is at most ${MAX_HOOK_ENV_VALUE_CHARS} characters (MAX_HOOK_ENV_VALUE_CHARS)`).refine((s) => !s.includes("\0"), "a value cannot hold a NUL byte"),
  ));

/**
 * A refinement that is hookbox's own bound on one hook, not its agent's rule (a command past what
 * `sh -c` takes, a NUL byte no process could be given): the agent would run the hook, hookbox cannot.
 * In a repository's file the hook past it is skipped alone, warned (badEntry); in the server's own
 * config it is refused as any fault is.
 */
export const limit = (message: string) => ({ message, params: { limit: true } });
const isLimitIssue = (issue: z.core.$ZodIssue): boolean => issue.code === "custom" && (issue.params as { limit?: unknown } | undefined)?.limit === true;

/**
 * @default 96 KiB — a hook's command: it is run as one argument of `sh -c`, which Linux takes up to
 * 128 KiB; longer, a cold run could not start and a warm one's shell could not run it (two endings
 * for one file), so it is not run: refused in the server's config, the hook skipped in a repository's file.
 */
export const MAX_COMMAND_BYTES = 96 * 1024;
/** A hook's command: not empty, no NUL byte (no process could be given it, and the hand-over counts bytes), at most MAX_COMMAND_BYTES. */
export const CommandSchema = z.string().refine((s) => s !== "", limit("command must not be empty")).refine((s) => !s.includes("\0"), limit("a command cannot hold a NUL byte"))
  .refine((s) => s.length <= MAX_COMMAND_BYTES && Buffer.byteLength(s) <= MAX_COMMAND_BYTES, limit(`a command longer than ${MAX_COMMAND_BYTES} bytes cannot be run (MAX_COMMAND_BYTES: sh -c takes up to 128 KiB)`));
/** A path a hook names: no NUL byte. */
export const NoNulSchema = z.string().refine((s) => !s.includes("\0"), limit("a path cannot hold a NUL byte"));

/** The points where a block means "keep going" (Claude's, Copilot's and Cursor's Stop and SubagentStop). */
export const isStopPoint = (point: EventPoint): boolean => point === "Stop" || point === "SubagentStop";

/**
 * A hook as the texts hookbox writes name it: a repository's as such (a cosh or Gemini hook's
 * `name`, a Copilot file's name, is the repository's to choose: none passes for an administrator's
 * guard) — its control and invisible characters shown as escapes, as the rest of what a repository
 * says to the agent is: an agent prints these texts in a terminal, where `\x1b[2K\r` would erase
 * the "repository" before it.
 */
export const hookCalled = (hook: { name: string; source: Source }): string => (hook.source === "repository" ? `repository hook ${oneLine(hook.name)}` : `hook ${hook.name}`);

/** A hook's name in a notification card: a repository's as such, escaped as `hookCalled` escapes it. */
export const cardName = (hook: { name: string; source: Source }): string => (hook.source === "repository" ? `repository ${oneLine(hook.name)}` : hook.name);

/**
 * Where a block keeps the agent going rather than stops an action: a stop, and Claude Code's
 * TeammateIdle (the teammate works on) and TaskCompleted (the task stays open). Where hookbox cannot
 * decide, it does not block there: a block would drive the agent on, told only the error.
 */
export const blockKeepsGoing = (point: EventPoint): boolean => isStopPoint(point) || point === "TeammateIdle" || point === "TaskCompleted";

/**
 * A hook's `"continue": false` (Claude Code hooks reference; VS Code's hooks): the agent stops
 * altogether, `stopReason` says why, and it "takes precedence over any event-specific decision
 * fields". Where a block would keep the agent going (a stop point, Claude Code's TeammateIdle and
 * TaskCompleted: there exit 2 keeps the teammate working, whatever JSON goes with it)
 * the verdict makes no decision (the agent or teammate stops, answered at exit 0); elsewhere it
 * blocks as well, with the stop's reason.
 */
export function haltVerdict(o: Record<string, unknown>, point: EventPoint, hook: { name: string; source: Source }, reason: string | undefined, agent: string): Pick<Verdict, "decision" | "reason" | "halt" | "rule"> {
  const halt = str(o.stopReason) ?? `${hookCalled(hook)} stopped the agent (continue: false)`;
  return blockKeepsGoing(point)
    ? { decision: null, reason: undefined, halt, rule: `${agent}: continue = false stops the agent (outranks a block that would keep it going)` }
    : { decision: "block", reason: reason ?? halt, halt, rule: `${agent}: continue = false stops the agent (and blocks this ${point})` };
}

/** An answer that also says a hook stopped the agent (`continue: false` + `stopReason`), where one did. */
export function withHalt(answer: Answer, f: Folded): Answer {
  if (f.halt !== undefined) answer.output = { continue: false, stopReason: f.halt, ...answer.output };
  return answer;
}

/**
 * A decision word: allow, block (deny is reported as block), ask; absent or null means none.
 * `invalid` for anything else.
 */
export function readDecision(value: unknown, extra: Record<string, Decision> = {}): Decision | null | "invalid" {
  if (value === undefined || value === null || value === "") return null;
  if (typeof value !== "string") return "invalid";
  const word = value.toLowerCase();
  // Own keys only: "constructor" or "__proto__" is no decision.
  const decision: Decision | "invalid" = word === "allow" || word === "block" || word === "ask" ? word : word === "deny" ? "block" : Object.hasOwn(extra, word) ? extra[word]! : "invalid";
  // A word that loosens counts only as the documents spell it ("Allow" is no allow to the agents);
  // one that tightens ("Deny", "BLOCK") holds however it is written.
  return decision === "allow" && value !== word ? "invalid" : decision;
}

export const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/** At most `max` characters of `text`, never half a surrogate pair, marked `…` when cut. */
export function clip(text: string, max: number): string {
  return text.length > max ? `${head(text, max)}…` : text;
}

/**
 * `clip` for what a hook printed, cut before the trace redacts it: never the head of a word it cuts
 * (a key cut short is one the redactor no longer knows: headOfWords).
 */
export function clipWords(text: string, max: number): string {
  return text.length > max ? `${headOfWords(text, max)}…` : text;
}

/** A hook's timeout as run: at most `[sandbox] max_timeout`, and the time its agent gives it where that is longer. */
export function hookTimeout(ms: number, ctx: Pick<LoadContext, "maxTimeoutMs">): { timeoutMs: number; agentTimeoutMs?: number } {
  return ms > ctx.maxTimeoutMs ? { timeoutMs: ctx.maxTimeoutMs, agentTimeoutMs: ms } : { timeoutMs: ms };
}

/** @default 120 — characters of a value a hook gave that an error shows */
export const SHOWN_VALUE_CHARS = 120;

/** A value a hook gave, as an error shows it: JSON, clipped (the hook may have printed a megabyte of it). */
export function shown(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(clipWords(value, SHOWN_VALUE_CHARS));
  return clipWords(JSON.stringify(value) ?? String(value), SHOWN_VALUE_CHARS);
}

/** One line on why a run failed, for the hook's `error`. */
export function describeFailure(run: RunResult): string {
  switch (run.outcome) {
    case "exited": {
      // (its first line found, never a mebibyte of stderr split into lines for it)
      const text = run.stderr.trimStart();
      const nl = text.indexOf("\n");
      const first = (nl === -1 ? text : text.slice(0, nl)).trimEnd();
      return `exit ${run.exitCode}${first ? `: ${clipWords(first, 200)}` : ""}`;
    }
    case "timed_out": return "timed out";
    case "output_truncated": return `${run.stream} over the output cap: killed`;
    case "oom_killed": return "killed: out of memory";
    case "failed_to_start": return `failed to start: ${run.error}`;
    case "cancelled": return "cancelled: the request went away";
    default: {
      const _exhaustive: never = run;
      return String(_exhaustive);
    }
  }
}

const UNITS: Record<string, number> = { "": 1, b: 1, k: 1024, kb: 1024, m: 1024 ** 2, mb: 1024 ** 2, g: 1024 ** 3, gb: 1024 ** 3 };

/** "256m", "1g", "512k" or a number of bytes; undefined when it is neither, or less than one byte. */
export function parseBytes(value: string | number): number | undefined {
  if (typeof value === "number") return Number.isInteger(value) && value > 0 ? value : undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(value);
  const unit = m && UNITS[m[2]!.toLowerCase()];
  const bytes = m && unit ? Math.round(Number(m[1]) * unit) : 0;
  // "0", "0k" and "0.4" are no size: Docker would read a zero as no limit at all
  return bytes >= 1 && Number.isSafeInteger(bytes) ? bytes : undefined;
}

/** What every format's loader is told about where its hooks come from and the server's caps. */
export interface LoadContext {
  source: Source;
  maxTimeoutMs: number;
  /** working directory of host (policy) hooks */
  cwd?: string;
  /**
   * A repository's file (SERVICE.md §8): an unknown key, event or hook type is a warning naming file
   * and line, and the rest still loads. Unset: the server's own config, where each is an error.
   */
  tolerant?: boolean;
  /** hooks the repository may still declare (`server.max_repository_hooks`): counted as each is read, so an upload with a file of 80 000 is refused at its 1001st */
  hooksLeft?: { left: number; limit: number };
  /** what is left of the entries the workspace's files may hold that hookbox skips (countSkipped) */
  skippedLeft?: { left: number; limit: number };
}

/**
 * A bound on all of a workspace's hook files together (`server.max_repository_hooks`, the entries it
 * skips, its matchers' compile budget, its hook files' number and bytes): no one file is at fault, so
 * the upload is refused (400 `workspace_hooks_invalid`), named at the file and line that passed it —
 * where any other fault of a repository's file skips that file alone (repository.ts).
 */
export class WorkspaceLimitError extends ConfigError {}

/** A WorkspaceLimitError at `path`'s line. */
export function workspaceLimit(parsed: ParsedFile, path: Path, detail: string): WorkspaceLimitError {
  const at = parsed.locate(path);
  return new WorkspaceLimitError(parsed.file, `${formatPath(path)}: ${detail}`, at?.line, at?.column);
}

/** Counts one more hook of a file against the repository's limit; past it, the upload is refused at that hook. */
export function countHook(parsed: ParsedFile, path: Path, ctx: LoadContext): void {
  if (ctx.hooksLeft && ctx.hooksLeft.left-- <= 0) throw workspaceLimit(parsed, path, `the repository declares more than ${ctx.hooksLeft.limit} hooks (server.max_repository_hooks)`);
}

/**
 * @default 4 — hook entries a workspace's files may hold that hookbox skips (another type than
 * "command", `async`, one past a limit of hookbox's or against its agent's rules), as a multiple of
 * `server.max_repository_hooks`: each is still read and warned about, and a mebibyte holds 65,000 of them.
 */
export const SKIPPED_HOOKS_FACTOR = 4;

/**
 * One more hook entry skipped: past SKIPPED_HOOKS_FACTOR × max_repository_hooks of them in the
 * workspace's files, the file it stands in is skipped whole at it (what that file counted is given
 * back: the workspace's other files load) — the reading stops there, never a refusal of the workspace.
 */
export function countSkipped(parsed: ParsedFile, path: Path, ctx: LoadContext): void {
  if (ctx.skippedLeft && ctx.skippedLeft.left-- <= 0)
    throw configError(parsed, path, `more hook entries hookbox skips than a repository's files may hold (${ctx.skippedLeft.limit}: other types than "command", async ones, ones it cannot run; ${SKIPPED_HOOKS_FACTOR} × server.max_repository_hooks)`);
}

/**
 * A hook entry (or a group of them) a repository's file declares and hookbox does not run, for
 * `detail`: skipped alone with a warning at its line, counted (countSkipped), the file's other hooks
 * kept. In the server's own config, refused.
 */
export function skipEntry(parsed: ParsedFile, path: Path, ctx: LoadContext, warnings: string[], detail: string, at: Path = path): void {
  if (!ctx.tolerant) throw configError(parsed, at, detail);
  countSkipped(parsed, path, ctx);
  warn(warnings, () => `${originOf(parsed, at)}: ${formatPath(at)}: ${detail}; skipped (the file's other hooks load)`);
}

/**
 * A hook entry its schema refuses. In the server's own config: refused at its line. In a
 * repository's file: past one of hookbox's own bounds only (`limit`), the entry alone is skipped —
 * its agent would run it; against its agent's rules, the entry alone is skipped where the agent skips
 * one (`perEntry`), else the ConfigError thrown skips the whole file (repository.ts), as Claude Code,
 * Codex and Cursor skip a hook file with errors.
 */
export function badEntry(parsed: ParsedFile, error: z.ZodError, path: Path, ctx: LoadContext, warnings: string[], perEntry: boolean): void {
  const { path: at, message } = schemaProblem(error, path);
  if (!ctx.tolerant || (!perEntry && !error.issues.every(isLimitIssue))) throw configError(parsed, at, message);
  skipEntry(parsed, path, ctx, warnings, message, at);
}

/** What one agent's hooks are: its files, its rules, its answers. One module per format; formats/registry.ts lists them. */
export interface FormatModule {
  format: Format;
  /** the agent, as its user knows it ("Claude Code", "Gemini CLI") */
  agent: string;
  /** what one run means: exit codes and output (the format's document) */
  interpret: Interpret;
  /** the decisions that count at a point for hooks of this format; elsewhere they are recorded only */
  effective(point: EventPoint): ReadonlySet<Decision>;
  /** the folded result as a hook of this agent would print it */
  answer(point: EventPoint, folded: Folded): Answer;
  /** what it reads from an uploaded repository, in order */
  repository: readonly RepositorySource[];
  /** how the agent applies a hook's argument change to the tool's arguments; absent: the change replaces them */
  changeAsRun?(change: Record<string, unknown>, args: Record<string, unknown>): Record<string, unknown>;
  /**
   * the decisions a change of the arguments before a tool runs reaches the agent with: Codex's only
   * with an allow (it refuses `updatedInput` without one, and runs the call as sent), Claude Code's
   * with an allow or an ask (without one it is not applied); absent: with or without a decision
   */
  changeTakenWith?: "allow" | "allow or ask";
  /**
   * gates before a tool where the agent runs the call but takes no change of its arguments, and can
   * ask its user (Cursor's beforeMCPExecution): a change there is asked about, the call as sent —
   * never let through unasked in the wrapper's place
   */
  changeNotTakenAt?: ReadonlySet<EventPoint>;
  /** the agent takes a replaced tool output in its answer (`updatedOutput`); absent: the answer says the original output stands */
  replacesOutput?: true;
  /** a block every event of the agent reads, for an answer whose event is not known; absent: the PreToolUse answer */
  blockAnyEvent?(reason: string): Answer;
}

/** A hook file of a repository: one file, or each `*<suffix>` file of a folder in name order. */
export interface RepositorySource {
  path: string;
  suffix?: string;
  /** jsonc: comments and trailing commas allowed (Gemini CLI strips them from its settings) */
  syntax: "json" | "jsonc" | "toml";
  load(parsed: ParsedFile, ctx: LoadContext): HookSet;
}

/** SERVICE.md §3 `output` and `exit_code`: what a hook of the dialect would print and exit with. */
export interface Answer {
  output: Record<string, unknown>;
  exit_code: number;
}

export const defined = (o: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

/** A message and the context that has no place of its own at this event, one after the other. */
export const withContext = (message: string | undefined, context: string | undefined) => (message && context ? `${message}\n${context}` : (message ?? context));

/** The hooks' messages to the user and a decision's reason, each once, on lines of their own. */
export function withReason(message: string | undefined, reason: string | undefined): string | undefined {
  if (reason === undefined || message?.split("\n").includes(reason)) return message;
  return message === undefined ? reason : `${message}\n${reason}`;
}

/**
 * @default 16 KiB — each of a hook's reason, message, warning, context and stop reason, as the agent gets it
 * (a repository's reason and stop reason with their mark: repositoryWords).
 * Each hook may print max_output_bytes, and an event may run a thousand hooks: joined, uncut, their
 * messages would outgrow what one answer can hold.
 */
export const MAX_HOOK_MESSAGE_CHARS = 16 * 1024;

/**
 * A repository hook's reason or stop reason as the answer says it: marked (fromRepository), and cut
 * again at MAX_HOOK_MESSAGE_CHARS — the mark indents each of its lines, which could make 16 Ki
 * characters of line breaks three times as long.
 */
export function repositoryWords(text: string): string {
  const marked = fromRepository(text);
  return marked.length > MAX_HOOK_MESSAGE_CHARS ? clipWords(marked, MAX_HOOK_MESSAGE_CHARS) : marked;
}

/**
 * A repository hook's text as it joins the others' in one message or context: each of its lines
 * marked — the first labelled, the rest indented —, so that none reads as an administrator's or an
 * operator's (a policy hook's question, hookbox's own line) beside it.
 */
export function fromRepository(text: string): string {
  return `[repository] ${text.replace(/\n/g, "\n  ")}`;
}

/** A hook type hookbox does not run (`http`, `prompt`, `agent`, `mcp_tool` …): listed as skipped, never fetched or run. */
export function skippedType(parsed: ParsedFile, path: Path, type: string): string {
  return `${originOf(parsed, path)}: ${formatPath(path)}: "${clip(type, 40)}" hooks are not run by hookbox; skipped`;
}

/**
 * A hook entry of a type other than "command" (`http`, `prompt` …): skipped whole with a warning in a
 * repository file (its keys are not ours to judge), refused in the server's own config. True when skipped.
 */
export function skipOtherType(parsed: ParsedFile, path: Path, raw: unknown, ctx: LoadContext, warnings: string[]): boolean {
  const type = typeof raw === "object" && raw !== null ? (raw as Record<string, unknown>).type : undefined;
  if (typeof type !== "string" || type === "command") return false;
  if (!ctx.tolerant) throw configError(parsed, [...path, "type"], 'only "command" hooks can run here');
  countSkipped(parsed, path, ctx);
  warn(warnings, () => skippedType(parsed, path, type));
  return true;
}

/**
 * @default 100 — warnings listed per hook file. Past it they are not even written (locating a line
 * and suggesting a name cost something each, and a 1 MiB file can hold 100 000 unknown keys): one
 * line says the rest were left out.
 */
export const MAX_WARNINGS_PER_FILE = 100;

/** What may still be written of one workspace's warnings, all its files together, and how many were not. */
export interface WarningBudget {
  left: number;
  skipped: number;
}
let warningBudget: WarningBudget | undefined;

/**
 * Runs `fn` (one of a workspace's hook files loading) writing its warnings from `budget`, shared by
 * the workspace's files: past it a warning is counted, never written (five hundred files of unknown
 * keys cost no more than the warnings the answer lists).
 */
export function withWarningBudget<T>(budget: WarningBudget, fn: () => T): T {
  const outer = warningBudget;
  warningBudget = budget;
  try {
    return fn();
  } finally {
    warningBudget = outer;
  }
}

/** Adds the warning `make` writes, while the file has fewer than MAX_WARNINGS_PER_FILE and its workspace's budget lasts. */
export function warn(warnings: string[], make: () => string): void {
  if (warnings.length > MAX_WARNINGS_PER_FILE) return;
  if (warnings.length === MAX_WARNINGS_PER_FILE) {
    warnings.push(`… and more warnings, left out (at most ${MAX_WARNINGS_PER_FILE} are listed per file)`);
    return;
  }
  if (warningBudget) {
    if (warningBudget.left <= 0) {
      warningBudget.skipped++;
      return;
    }
    warningBudget.left--;
  }
  warnings.push(make());
}

/** An unknown key, event or hook type: a warning in a repository file, a ConfigError in the server's own config. */
export function unknownThing(parsed: ParsedFile, path: Path, what: string | (() => string), ctx: LoadContext, warnings: string[]): void {
  const text = () => (typeof what === "string" ? what : what());
  if (!ctx.tolerant) throw configError(parsed, path, text());
  warn(warnings, () => `${originOf(parsed, path)}: ${formatPath(path)}: ${text()}; skipped`);
}

/** In a repository's file, an object's known keys; each other key is a warning. The server's config keeps every key (its schema refuses them). */
export function knownKeys(parsed: ParsedFile, path: Path, value: unknown, known: readonly string[], ctx: LoadContext, warnings: string[]): unknown {
  if (!ctx.tolerant || typeof value !== "object" || value === null || Array.isArray(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (known.includes(key)) out[key] = v;
    else unknownThing(parsed, [...path, key], () => `unknown key ${JSON.stringify(clip(key, 64))}`, ctx, warnings);
  }
  return out;
}

/** An event name as a file spells it; in a repository's file an unknown one is a warning (undefined). */
export function eventOf(parsed: ParsedFile, path: Path, name: string, ctx: LoadContext, warnings: string[], fires?: { agent: string; names: ReadonlySet<string> }): { point: EventPoint; dialect: Dialect } | undefined {
  const resolved = resolveEventName(name);
  if (!resolved) unknownThing(parsed, path, () => unknownEventMessage(name), ctx, warnings);
  // Another agent's name for an event, in a file only this agent reads: its agent never runs it.
  else if (fires && !fires.names.has(name)) {
    unknownThing(parsed, path, () => `${JSON.stringify(clip(name, 64))} is not an event ${fires.agent} fires (its hooks never run there)`, ctx, warnings);
    return undefined;
  }
  return resolved;
}

/** An event name as a config file spells it, or a ConfigError at its line with the closest known name. */
export function configEvent(parsed: ParsedFile, path: Path, name: string): { point: EventPoint; dialect: Dialect } {
  const resolved = resolveEventName(name);
  if (resolved) return resolved;
  throw configError(parsed, path, unknownEventMessage(name));
}

/** readMatcher's answer for a pattern past hookbox's own limits for one matcher: its hooks are skipped. */
export const PAST_LIMIT: unique symbol = Symbol("past a limit of hookbox's");

/**
 * A hook's matcher, compiled by `compile`. In a repository's file a pattern RE2 does not take (a
 * lookahead the agent's own JavaScript engine reads, say) is a warning and no matcher — the hook runs
 * for every call rather than a guard being skipped, and the file's other hooks still load; one past
 * hookbox's limits for one matcher (its length, its program) is PAST_LIMIT, warned and counted
 * (skipEntry): its hooks are skipped, never run for every call; past the workspace's compile budget
 * the upload is refused (WorkspaceLimitError). In the server's own config any of these is refused.
 */
export function readMatcher<T>(parsed: ParsedFile, path: Path, ctx: LoadContext, warnings: string[], compile: () => T): T | undefined | typeof PAST_LIMIT {
  try {
    return compile();
  } catch (err) {
    if (!ctx.tolerant) throw configError(parsed, path, matcherProblem(err));
    if (err instanceof CompileBudgetError) throw workspaceLimit(parsed, path, matcherProblem(err));
    if (err instanceof MatcherLimitError) {
      skipEntry(parsed, path.slice(0, -1), ctx, warnings, `${matcherProblem(err)} — the hooks it selects are not run`, path);
      return PAST_LIMIT;
    }
    warn(warnings, () => `${originOf(parsed, path)}: ${formatPath(path)}: ${matcherProblem(err)}; the hook runs for every call`);
    return undefined;
  }
}

/** Why a matcher was refused: its own pattern, past hookbox's limits for one, or the workspace's budget for all of them together. */
export function matcherProblem(err: unknown): string {
  const message = (err as Error).message;
  if (err instanceof CompileBudgetError) return `matcher not compiled: ${message}`;
  if (err instanceof MatcherLimitError) return `matcher past hookbox's limits (MAX_MATCHER_CHARS, MAX_MATCHER_PROGRAM): ${message}`;
  return `matcher is not a valid regular expression (RE2 syntax): ${message}`;
}

/** The reason of an ask said as a deny where the agent cannot ask: the hooks' own, or that one asked. */
export function askDenyReason(reason: string | undefined, agent: string): string {
  return reason?.trim() ? reason : `a hook asked for confirmation, and ${agent} cannot ask here`;
}
