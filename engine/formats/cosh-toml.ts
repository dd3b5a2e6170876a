/**
 * @module The cosh format: hooks in TOML (cosh-hooks.md "Configuration"): `[hooks] enabled`, and
 * `[[hooks.<Event>]]` with `name`, `command`, `timeout` — plus hookbox's `matcher`, `env`,
 * `fail_open`, `image` and limits (SERVICE.md §4). The same shape serves `[[policy.<Event>]]` and a
 * repository's `.copilot-shell/config.toml`; cosh-extension.json hooks share its rules. Here: its
 * matchers, its exit-code and output rules, where its decisions count, and its answers.
 */
import { z } from "zod";
import type { Folded } from "../aggregate.js";
import { ALL, ALLOW_BLOCK, NONE, type Decision, type EventPoint } from "../events.js";
import { compileRegex, type HookDef, type HookSet, type Matcher } from "../hooks.js";
import { DEFAULT_TIMEOUT_MS, MIN_LIMITS } from "../names.js";
import type { RunResult } from "../run/types.js";
import type { Verdict } from "../verdict.js";
import { type Answer, badEntry, configError, hookTimeout, countHook, defined, describeFailure, eventOf, type FormatModule, HookEnvSchema, hookCalled, knownKeys, type LoadContext, PAST_LIMIT, readMatcher, originOf, parseBytes, type ParsedFile, readDecision, pastBounds, readOutput, schemaError, shown, str, warn, withReason, CommandSchema } from "./shared.js";
import { formatPath, type Path } from "./locate.js";

const BytesSchema = z.union([z.string(), z.number()]).refine((v) => parseBytes(v) !== undefined, 'expected a size such as "256m" or a number of bytes, more than zero');

/**
 * A hook's name is shown in every answer, trace and audit line of its events, and each of those
 * redacts it: a repository's thousand hooks may not each bring a kilobyte to every event. @default 256
 */
export const MAX_HOOK_NAME_CHARS = 256;

export const CoshHookSchema = z.strictObject({
  /** cosh-hooks.md: "Hook definitions without a name field are skipped" */
  name: z.string().max(MAX_HOOK_NAME_CHARS, `a hook name is at most ${MAX_HOOK_NAME_CHARS} characters`).optional(),
  command: CommandSchema,
  /** ms; cosh-hooks.md: "Hook timeout (default 5000ms)" */
  timeout: z.number().int().positive().optional(),
  matcher: z.string().optional(),
  env: HookEnvSchema.optional(),
  fail_open: z.boolean().optional(),
  image: z.string().min(1).optional(),
  memory: BytesSchema.refine((v) => (parseBytes(v) ?? Infinity) >= MIN_LIMITS.memoryBytes, "memory is at least 6m (Docker's minimum)").optional(),
  cpus: z.number().min(MIN_LIMITS.cpus, `cpus is at least ${MIN_LIMITS.cpus}`).finite().optional(),
  pids: z.number().int().positive().optional(),
  max_output_bytes: z.number().int().positive().optional(),
});
export type CoshHook = z.infer<typeof CoshHookSchema>;
const HOOK_KEYS = Object.keys(CoshHookSchema.shape);

/** Keys of `[hooks]` (or `[policy]`) that are settings, not event names. */
const SETTINGS = z.strictObject({
  enabled: z.boolean().optional(),
  parallel: z.boolean().optional(),
  sequential: z.boolean().optional(),
  dirs: z.array(z.string()).optional(),
});

export interface CoshTable extends HookSet {
  parallel: boolean;
  dirs: string[];
}

/** cosh-hooks.md, "Event Points": the events cosh fires. */
export const COSH_EVENTS: ReadonlySet<string> = new Set(["PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "SessionStart", "Stop", "BeforeModel", "AfterModel"]);

/**
 * Loads `[hooks]` or `[policy]` of a parsed TOML file. `settings` lists which setting keys the
 * table may hold (`dirs` only under `[policy]`).
 */
export function loadCoshTable(parsed: ParsedFile, at: Path, table: unknown, ctx: LoadContext, settings: readonly string[]): CoshTable {
  const result: CoshTable = { hooks: [], warnings: [], disableAll: false, parallel: false, dirs: [] };
  if (table === undefined) return result;
  if (typeof table !== "object" || table === null || Array.isArray(table)) throw configError(parsed, at, "expected a table");
  const own: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(table)) {
    if (settings.includes(key)) {
      own[key] = value;
      continue;
    }
    // A repository's config.toml is read as cosh reads it: only cosh's own events fire there.
    const event = eventOf(parsed, [...at, key], key, ctx, result.warnings, ctx.source === "repository" ? { agent: "cosh", names: COSH_EVENTS } : undefined);
    if (!event) continue;
    if (!Array.isArray(value)) {
      // In a repository's file an event that holds no list is skipped, its other events read.
      if (!ctx.tolerant) throw configError(parsed, [...at, key], "expected an array of hooks");
      warn(result.warnings, () => `${originOf(parsed, [...at, key])}: ${formatPath([...at, key])}: expected an array of hooks; skipped`);
      continue;
    }
    // One by one: the first fault named at once (zod would check a whole 1 MiB list first).
    value.forEach((v, i) => {
      const path = [...at, key, i];
      // cosh-hooks.md: "Hook definitions without a name field are skipped" — before anything else of
      // theirs is read, as cosh skips them; SERVICE.md §2: "skipped with a warning", in the server's
      // own config too (a warning at start-up and in `hookbox check`: this guard does not run).
      // The server's own config is strict first: an unknown key (`nmae`, a misspelt name) is refused
      // at its line before a hook without a name is skipped.
      const strict = ctx.tolerant ? undefined : CoshHookSchema.safeParse(v);
      if (strict && !strict.success) throw schemaError(parsed, strict.error, path);
      if (typeof v === "object" && v !== null && !Array.isArray(v) && !(v as { name?: unknown }).name) {
        warn(result.warnings, () => `${originOf(parsed, path)}: hook without a name skipped (cosh-hooks.md: "Hook definitions without a name field are skipped"): it never runs`);
        return;
      }
      // A repository's file: its unknown keys warned about and left out first; a hook its schema
      // refuses (a limit Docker would read as none, a name past MAX_HOOK_NAME_CHARS) skipped alone.
      const checked = strict ?? CoshHookSchema.safeParse(knownKeys(parsed, path, v, HOOK_KEYS, ctx, result.warnings));
      if (!checked.success) return badEntry(parsed, checked.error, path, ctx, result.warnings, true);
      const entry = checked.data;
      const hook = coshHookDef(entry, { ...ctx, point: event.point, eventName: key, dialect: event.dialect, origin: originOf(parsed, path), parsed, path }, result.warnings);
      if (hook === PAST_LIMIT) return;
      countHook(parsed, path, ctx);
      result.hooks.push(hook);
    });
  }
  const s = SETTINGS.safeParse(own);
  if (!s.success) throw schemaError(parsed, s.error, at);
  result.disableAll = s.data.enabled === false;
  result.parallel = s.data.parallel === true && s.data.sequential !== true;
  result.dirs = s.data.dirs ?? [];
  if (result.parallel) for (const hook of result.hooks) hook.batch = `${ctx.source}:${hook.point}`;
  return result;
}

export function coshHookDef(
  entry: CoshHook,
  ctx: LoadContext & Pick<HookDef, "point" | "eventName" | "dialect" | "origin"> & { parsed: ParsedFile; path: Path },
  warnings: string[],
): HookDef | typeof PAST_LIMIT {
  const matcher = readMatcher(ctx.parsed, [...ctx.path, "matcher"], ctx, warnings, () =>
    coshMatcher(entry.matcher, ctx.source === "repository" || ctx.source === "extension" ? "cosh-ng" : "hookbox"));
  if (matcher === PAST_LIMIT) return matcher;
  return {
    name: entry.name ?? "",
    source: ctx.source,
    format: "cosh",
    point: ctx.point,
    ...(ctx.eventName !== undefined ? { eventName: ctx.eventName } : {}),
    dialect: ctx.dialect,
    matcher,
    command: entry.command,
    // cosh-ng runs a repository's or an extension's hook in bash; the server's own hooks run in sh.
    ...(ctx.source === "repository" || ctx.source === "extension" ? { shell: "bash" as const } : {}),
    ...hookTimeout(entry.timeout ?? DEFAULT_TIMEOUT_MS, ctx),
    env: entry.env ?? {},
    failOpen: entry.fail_open ?? true,
    image: entry.image,
    limits: {
      ...(entry.memory !== undefined ? { memoryBytes: parseBytes(entry.memory) } : {}),
      ...(entry.cpus !== undefined ? { cpus: entry.cpus } : {}),
      ...(entry.pids !== undefined ? { pids: entry.pids } : {}),
      ...(entry.max_output_bytes !== undefined ? { maxOutputBytes: entry.max_output_bytes } : {}),
    },
    mounts: [],
    ...(ctx.source === "policy" && ctx.cwd ? { cwd: ctx.cwd } : {}),
    origin: ctx.origin,
  };
}

/**
 * Tool names cosh-ng treats as one tool (a matcher naming one fires for the others), as the issue
 * on real hook files found: `shell` ≡ `run_shell_command`. One group a line.
 */
const TOOL_ALIASES: readonly (readonly string[])[] = [["shell", "run_shell_command"]];
const aliasesOf = new Map<string, readonly string[]>(TOOL_ALIASES.flatMap((group) => group.map((name) => [name, group] as const)));

/**
 * A cosh matcher. "cosh-ng" (what cosh-ng itself reads: a repository's config.toml, extensions): a
 * regex found anywhere in the tool name. "hookbox" (the server's own TOML, SERVICE.md §4): a regex
 * over the whole tool name. Both: tool-name aliases match as the tool itself; "" and "*" match all.
 */
export function coshMatcher(pattern: string | undefined, style: "cosh-ng" | "hookbox"): Matcher | undefined {
  if (pattern === undefined || pattern === "" || pattern === "*") return undefined;
  const test = compileRegex(pattern, { anchored: style === "hookbox" });
  return { source: pattern, test: (tool) => (aliasesOf.get(tool) ?? [tool]).some(test) };
}

/** cosh's rules for what a run means (cosh-hooks.md "Execution Model", SERVICE.md §4). */
export function interpretCosh(run: RunResult, hook: HookDef): Verdict {
  const failure = (error: string, rule: string): Verdict =>
    hook.failOpen
      ? { decision: null, error, rule }
      : { decision: "block", reason: `${hookCalled(hook)} failed: ${error}`, error, rule: `${rule}; cosh: fail_open = false turns the failure into a block` };
  if (run.outcome === "timed_out") return failure("timed out", "cosh: timeout is treated as pass-through");
  if (run.outcome !== "exited") return failure(describeFailure(run), "cosh: a failed hook does not affect the main flow");
  if (run.exitCode === 2) {
    // SERVICE.md §4: exit 2 blocks with stderr as the reason, as cosh-core's own code does
    return { decision: "block", reason: run.stderr.trim() || `blocked by ${hookCalled(hook)} (exit 2)`, error: null, rule: "cosh: exit 2 blocks with stderr as the reason" };
  }
  if (run.exitCode !== 0) return failure(describeFailure(run), "cosh: non-zero exit code is an error that does not affect the main flow");
  const out = readOutput(run.stdout);
  if (out.kind === "empty") return { decision: null, error: null, rule: "cosh: empty output or {} is pass-through" };
  // Past hookbox's bounds: hookbox not deciding — but a hook whose failure blocks (fail_open = false) blocks, as past max_output_bytes.
  if (out.kind === "invalid" && out.limit) return hook.failOpen ? pastBounds(out, "cosh") : { ...failure(out.error, pastBounds(out, "cosh").rule), limit: "output_shape" };
  if (out.kind === "invalid") return failure(out.error, "cosh: output that is not a JSON object is an error of the hook");
  const o = out.value;
  const decision = readDecision(o.decision);
  if (decision === "invalid") return failure(`unknown decision ${shown(o.decision)}`, "cosh: an unknown decision is an error of the hook");
  const specific = o.hookSpecificOutput as Record<string, unknown> | undefined;
  return {
    decision,
    reason: str(o.reason),
    systemMessage: str(o.systemMessage),
    additionalContext: str(specific?.additional_context) ?? str(specific?.additionalContext),
    // cosh-ng: `hookSpecificOutput.tool_input` is merged deeply into the tool's arguments (changeAsRun; subject to trust tiers, SERVICE.md §8)
    ...(specific?.tool_input !== undefined && typeof specific.tool_input === "object" && specific.tool_input !== null ? { modifiedArgs: specific.tool_input } : {}),
    error: null,
    rule: decision ? `cosh: decision "${String(o.decision)}" from stdout` : "cosh: no decision is pass-through",
  };
}

/** cosh-hooks.md "Event Points": the Interceptable column. */
export function coshEffective(point: EventPoint): ReadonlySet<Decision> {
  switch (point) {
    case "PreToolUse": return ALL; // cosh-hooks.md: PreToolUse "Yes (block/allow/ask)"
    case "PostToolUse": // cosh-hooks.md: "Yes (block/allow)"
    case "UserPromptSubmit": // cosh-hooks.md: "Yes (block/allow)"
    case "Stop": // cosh-hooks.md: "Yes (block/allow)"
    case "SubagentStop": // as Stop
    case "PermissionRequest": return ALLOW_BLOCK; // allows or denies, as every agent's permission hook
    // cosh-hooks.md: PostToolUseFailure, SessionStart, BeforeModel, AfterModel "No"
    default: return NONE;
  }
}

/**
 * cosh-hooks.md "Output": decision, reason, systemMessage (every hook's, joined),
 * hookSpecificOutput.additional_context. The user reads systemMessage "with priority over reason":
 * an ask's reason is always in it, beside every hook's message — else one hook's message (an
 * untrusted repository's, say) would be all the user reads of a question a policy hook asked.
 */
function coshAnswer(_point: EventPoint, f: Folded): Answer {
  const output = defined({
    decision: f.decision ?? undefined,
    reason: f.decision ? f.reason : undefined,
    // (a repository's reason marked as its messages are, where it joins them)
    systemMessage: f.decision === "ask" && f.systemMessage !== undefined ? withReason(f.systemMessage, f.reason) : f.systemMessage,
    hookSpecificOutput:
      f.additionalContext || f.modifiedArgs !== undefined
        ? defined({ additional_context: f.additionalContext || undefined, tool_input: f.modifiedArgs })
        : undefined,
  });
  return { output, exit_code: 0 };
}

/** A repository's own cosh config: only its `[hooks]` table matters. */
function loadRepositoryConfig(parsed: ParsedFile, ctx: LoadContext): HookSet {
  const table = (parsed.value as Record<string, unknown>).hooks;
  return loadCoshTable(parsed, ["hooks"], table, ctx, ["enabled", "parallel", "sequential"]);
}

/** `patch` merged into `base` as cosh-ng merges a hook's tool_input: objects key by key, all the way down; anything else replaced. */
function deepMerge(base: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  // No prototype: a key named "__proto__" is a key like any other, set by plain assignment (one
  // defineProperty per key costs twice as much over a hook's hundred thousand keys).
  const out = Object.create(null) as Record<string, unknown>;
  const plain = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
  for (const [k, v] of Object.entries(base)) out[k] = v;
  for (const [k, v] of Object.entries(patch)) {
    const was = Object.hasOwn(out, k) ? out[k] : undefined;
    out[k] = plain(was) && plain(v) ? deepMerge(was, v) : v;
  }
  return out;
}

export const coshFormat: FormatModule = {
  format: "cosh",
  agent: "cosh",
  interpret: interpretCosh,
  effective: coshEffective,
  answer: coshAnswer,
  // cosh-ng merges a hook's tool_input into the tool's arguments, deeply: what it runs is the merged whole.
  changeAsRun: (change, args) => deepMerge(args, change),
  repository: [{ path: ".copilot-shell/config.toml", syntax: "toml", load: loadRepositoryConfig }],
};
