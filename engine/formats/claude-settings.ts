/**
 * @module The Claude Code format: a repository's `.claude/settings.json` — event → matcher groups →
 * `{"type":"command","command","timeout","if"}` handlers, and `disableAllHooks` (Claude Code hooks
 * reference). Here: loading (shared with Codex's `.codex/hooks.json`, the same shape), its matcher
 * rules, its exit-code and per-event output rules, where decisions count, and its answers.
 */
import { basename } from "node:path";
import { z } from "zod";
import type { Folded } from "../aggregate.js";
import { ALL, ALLOW_BLOCK, BLOCK, NONE, pointName, type Decision, type EventPoint, type Format } from "../events.js";
import { CompileBudgetError, compileRegex, type HookDef, type HookSet, type Matcher } from "../hooks.js";
import type { RunResult } from "../run/types.js";
import type { Verdict } from "../verdict.js";
import { agentDeadlineS } from "../agents.js";
import { claudeCondition } from "./claude-if.js";
import { formatPath } from "./locate.js";
import { answerShapeProblem, type Answer, badEntry, clipWords, configError, type Output, hookTimeout, countHook, countSkipped, defined, describeFailure, eventOf, type FormatModule, haltVerdict, hookCalled, knownKeys, limit, type LoadContext, PAST_LIMIT, readMatcher, originOf, type ParsedFile, readDecision, pastBounds, readOutput, schemaError, shown, skipEntry, skipOtherType, str, warn, withContext, withHalt, CommandSchema, unknownThing, workspaceLimit } from "./shared.js";


/** Claude Code's exec-form path placeholders: substituted as plain text into `command` and each of `args` (here: the variables, which hold the same). */
const PLACEHOLDER = /\$\{(CLAUDE_PROJECT_DIR|CLAUDE_PLUGIN_ROOT|CLAUDE_PLUGIN_DATA)\}/g;

/** A word for sh exactly as written, but for the placeholders, which the shell fills in from their variables. */
function shellWord(word: string): string {
  const parts: string[] = [];
  let at = 0;
  for (const m of word.matchAll(PLACEHOLDER)) {
    if (m.index > at) parts.push(`'${word.slice(at, m.index).replaceAll("'", `'\\''`)}'`);
    parts.push(`"\${${m[1]!}}"`);
    at = m.index + m[0].length;
  }
  if (at < word.length || parts.length === 0) parts.push(`'${word.slice(at).replaceAll("'", `'\\''`)}'`);
  return parts.join("");
}

/**
 * The exec form as one command for sh: the program found on PATH (`exec`: never a shell builtin or
 * function), its arguments as they are. A program named like an option (`-a`) is no program Claude
 * Code could start — and `exec` would read it as its own option: the hook fails as a missing program does.
 */
export function execFormCommand(command: string, args: readonly string[]): string {
  if (command.startsWith("-") || command === "") return `echo ${shellWord(`${command}: not found`)} >&2; exit 127`;
  return ["exec", shellWord(command), ...args.map(shellWord)].join(" ");
}

/** Claude Code: `onFailure` has no effect at these events (nor on async hooks, which are skipped here). */
const ON_FAILURE_IGNORED: ReadonlySet<string> = new Set(["Stop", "SubagentStop", "TaskCompleted", "TeammateIdle"]);

/** The events Claude Code fires, by the names its settings use: any other name there never runs (another agent's name included). */
export const CLAUDE_EVENTS: ReadonlySet<string> = new Set([
  "PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch", "PermissionRequest", "PermissionDenied", "UserPromptSubmit",
  "UserPromptExpansion", "SessionStart", "SessionEnd", "Setup", "Stop", "StopFailure", "SubagentStart", "SubagentStop", "PreCompact",
  "PostCompact", "Notification", "MessageDisplay", "PreModelSwitch", "PostModelSwitch", "TaskCreated", "TaskCompleted", "TeammateIdle",
  "ConfigChange", "Elicitation", "ElicitationResult", "WorktreeCreate", "WorktreeRemove", "CwdChanged", "DirectoryAdded", "FileChanged", "InstructionsLoaded",
]);

const HandlerSchema = z.strictObject({
  type: z.string(),
  command: CommandSchema.optional(),
  /** Claude Code's exec form: `command` is the program (looked up on PATH), these its arguments, no shell */
  args: z.array(z.string().refine((a) => !a.includes("\0"), limit("an argument cannot hold a NUL byte"))).optional(),
  /** Claude Code: "block" — a hook that cannot start, times out, exits other than 0 or 2, or answers invalid JSON blocks */
  onFailure: z.enum(["continue", "block"]).optional(),
  /** seconds */
  timeout: z.number().positive().optional(),
  /** Claude Code: a permission rule (`Bash(git *)`) the tool call must match for the hook to run */
  if: z.string().optional(),
  /** runs in the background: its answer decides nothing (Claude Code), or it is skipped (Codex) */
  async: z.boolean().optional(),
  /** Claude Code: runs in the background as `async` does, waking the model on exit 2 — its answer decides nothing either */
  asyncRewake: z.boolean().optional(),
  /** Claude Code's, read by hookbox for nothing: the spinner's text, once per session; `shell`: bash runs the command in bash, PowerShell is skipped */
  statusMessage: z.string().optional(),
  once: z.boolean().optional(),
  shell: z.string().optional(),
});
/** A handler's keys (Claude Code hooks reference, "Hook handler fields"): any other is a warning at its line. */
const HANDLER_KEYS = Object.keys(HandlerSchema.shape);
/**
 * A Codex handler's keys (openai/codex `hook_config.rs`, `HookHandlerConfig::Command`): its timeout
 * whole seconds (0 is read as 1), no exec form, no `if`, no `onFailure`, no `asyncRewake`. Any other
 * key — Claude Code's among them — Codex ignores: a warning here, the hook still read.
 */
const CodexHandlerSchema = z.strictObject({
  type: z.string(),
  command: CommandSchema.optional(),
  // (an Option in Codex's structs: a null is read as none)
  timeout: z.number().int().nonnegative().nullish().transform((t) => t ?? undefined),
  async: z.boolean().optional(),
  statusMessage: z.string().nullish().transform((m) => m ?? undefined),
  visibilityHint: z.unknown().optional(),
});
const CODEX_HANDLER_KEYS = Object.keys(CodexHandlerSchema.shape);
// Handlers are checked one by one (zod would check a whole 1 MiB list before naming its first fault).
const GroupSchema = z.strictObject({ matcher: z.string().optional(), if: z.string().optional(), hooks: z.array(z.unknown()) });
const GROUP_KEYS = Object.keys(GroupSchema.shape);
/** Codex's matcher group (`MatcherGroup`): a matcher that may be null, hooks that default to none. */
const CodexGroupSchema = z.strictObject({ matcher: z.string().nullish().transform((m) => m ?? undefined), if: z.undefined().optional(), hooks: z.array(z.unknown()).default([]) });
/** (`if` is none of Codex's: warned as any other key; the schema names it only to be read alike) */
const CODEX_GROUP_KEYS = ["matcher", "hooks"];
// settings.json holds much else (permissions, env, model …): only the hook keys are read.
const SettingsSchema = z.looseObject({
  hooks: z.record(z.string(), z.array(z.unknown())).optional(),
  disableAllHooks: z.boolean().optional(),
});
/** Codex's hooks.json: `hooks` alone is read (`HooksFile`); its other keys, `disableAllHooks` too, are none of its. */
const CodexSettingsSchema = z.looseObject({ hooks: SettingsSchema.shape.hooks });

/**
 * Claude Code hooks reference, "Matchers": the field of the event a matcher is compared with, per
 * event. Tool events compare the tool name (the default); "none": the event takes no matcher, and
 * one written there is ignored ("always fires on every occurrence").
 */
const MATCH_FIELD: Partial<Record<string, HookDef["matchOn"]>> = {
  SessionStart: { field: "source" }, // startup | resume | clear | compact | fork
  SessionEnd: { field: "reason" },
  PreCompact: { field: "trigger" }, // manual | auto
  PostCompact: { field: "trigger" },
  Notification: { field: "notification_type" },
  SubagentStart: { field: "agent_type" },
  SubagentStop: { field: "agent_type" },
  ConfigChange: { field: "source" }, // user_settings | project_settings | local_settings | policy_settings | skills
  InstructionsLoaded: { field: "load_reason" }, // session_start | nested_traversal | path_glob_match | include | compact
  DirectoryAdded: { field: "source" }, // slash_command (/add-dir) | register_repo_root (the SDK's control request)
  StopFailure: { field: "error" }, // rate_limit | overloaded | authentication_failed | billing_error | …
  Elicitation: { field: "mcp_server_name" },
  ElicitationResult: { field: "mcp_server_name" },
  FileChanged: { field: "file_path", basename: true }, // the changed file's name
  UserPromptExpansion: { field: "command_name" }, // the slash command or MCP prompt expanded
  Setup: { field: "trigger" }, // init | maintenance
  PreModelSwitch: { field: "to_model" }, // the model switched to
  PostModelSwitch: { field: "to_model" },
  PostToolBatch: "none",
  MessageDisplay: "none",
  UserPromptSubmit: "none",
  Stop: "none",
  TeammateIdle: "none",
  TaskCreated: "none",
  TaskCompleted: "none",
  WorktreeCreate: "none",
  WorktreeRemove: "none",
  CwdChanged: "none",
};

/** Claude Code: on these events a list of exact names takes letters, digits, `_` and `|` only. */
const NARROW_EXACT_POINTS: ReadonlySet<string> = new Set(["FileChanged", "StopFailure"]);

/**
 * Claude Code's matcher: "", "*" or none match all; letters, digits, `_`, `-`, spaces, `,` and `|`
 * only (at FileChanged and StopFailure: letters, digits, `_` and `|`): one exact name or a list of
 * exact names separated by `|` or `,` "with optional surrounding whitespace" (`Write` does not fire
 * for `NotebookWrite`; `Edit, Write` fires for both; `Edit Write` is one name, which no tool has);
 * anything else a regex found anywhere in the name (`mcp__.*__create` fires for `mcp__github__create_issue`).
 */
export function claudeMatcher(pattern: string | undefined, point?: EventPoint): Matcher | undefined {
  if (pattern === undefined || pattern === "" || pattern === "*") return undefined;
  const exact = point !== undefined && NARROW_EXACT_POINTS.has(point) ? /^[A-Za-z0-9_|]+$/ : /^[A-Za-z0-9_|, -]+$/;
  if (exact.test(pattern)) {
    // Names are separated by `|` or `,`, blanks around each one not part of it.
    const names = new Set(pattern.split(/[|,]/).map((n) => n.trim()).filter((n) => n !== ""));
    return { source: pattern, test: (name) => names.has(name) };
  }
  return { source: pattern, test: compileRegex(pattern, { anchored: false }) };
}

/**
 * Loads Claude-shaped hook settings; `format` says whose rules the hooks follow (Claude Code's, or
 * Codex's), `matcherOf` how that agent reads a matcher.
 */
export function loadMatcherGroups(
  parsed: ParsedFile, ctx: LoadContext, format: Format, matcherOf: (pattern: string | undefined, point: EventPoint) => Matcher | undefined = claudeMatcher,
  fires?: { agent: string; names: ReadonlySet<string> },
): HookSet {
  const warnings: string[] = [];
  // Unknown events are warned about and dropped before the schema walks the file: one of 45 000
  // unknown events (1 MiB) then costs a pass over its keys, not a schema check of each.
  const value = parsed.value as Record<string, unknown> | null;
  const resolvedOf = new Map<string, NonNullable<ReturnType<typeof eventOf>>>();
  let input: unknown = value;
  if (value && typeof value === "object" && typeof value.hooks === "object" && value.hooks !== null && !Array.isArray(value.hooks)) {
    const known: Record<string, unknown> = {};
    for (const [event, groups] of Object.entries(value.hooks)) {
      const resolved = eventOf(parsed, ["hooks", event], event, ctx, warnings, fires);
      if (resolved) resolvedOf.set(event, resolved);
      if (resolved) known[event] = groups;
    }
    input = { ...value, hooks: known };
  }
  const settings = (format === "claude" ? SettingsSchema : CodexSettingsSchema).safeParse(input);
  if (!settings.success) throw schemaError(parsed, settings.error);
  // disableAllHooks is Claude Code's switch: Codex reads no such key in its hooks.json (its switch is
  // [features] in config.toml), and runs the hooks all the same, whatever its value.
  const said = format === "claude" ? (settings.data as z.infer<typeof SettingsSchema>).disableAllHooks : undefined;
  if (format !== "claude" && value !== null && typeof value === "object" && Object.hasOwn(value, "disableAllHooks"))
    unknownThing(parsed, ["disableAllHooks"], `Claude Code's switch, which ${fires?.agent ?? format} does not read (its hooks run)`, ctx, warnings);
  const set: HookSet = { hooks: [], warnings, disableAll: said === true, ...(said !== undefined ? { disableAllSaid: said } : {}) };
  for (const [event, groups] of Object.entries(settings.data.hooks ?? {})) {
    const resolved = resolvedOf.get(event) ?? eventOf(parsed, ["hooks", event], event, ctx, set.warnings, fires);
    if (!resolved) continue;
    groups.forEach((raw, g) => {
      const group = format === "claude"
        ? GroupSchema.safeParse(knownKeys(parsed, ["hooks", event, g], raw, GROUP_KEYS, ctx, set.warnings))
        : CodexGroupSchema.safeParse(knownKeys(parsed, ["hooks", event, g], raw, CODEX_GROUP_KEYS, ctx, set.warnings));
      if (!group.success) throw schemaError(parsed, group.error, ["hooks", event, g]);
      // Where the event takes no matcher, one written there is ignored, never compiled. One past
      // hookbox's limits skips the group's hooks (their entries are still read: a fault of the
      // agent's own rules among them skips the file, as Claude Code and Codex skip it).
      const matcher = MATCH_FIELD[resolved.point] === "none"
        ? undefined
        : readMatcher(parsed, ["hooks", event, g, "matcher"], ctx, set.warnings, () => matcherOf(group.data.matcher, resolved.point));
      group.data.hooks.forEach((raw, h) => {
        const path = ["hooks", event, g, "hooks", h];
        // Another type is skipped before any schema reads its keys (its keys are not ours to judge).
        if (skipOtherType(parsed, path, raw, ctx, set.warnings)) return;
        // Each agent reads the keys it knows and passes over the rest: a warning each here. A value of
        // a key it reads that it refuses costs the file (Claude Code and Codex skip it whole).
        const claude = format === "claude";
        const checked = claude
          ? HandlerSchema.safeParse(knownKeys(parsed, path, raw, HANDLER_KEYS, ctx, set.warnings))
          : CodexHandlerSchema.safeParse(knownKeys(parsed, path, raw, CODEX_HANDLER_KEYS, ctx, set.warnings));
        if (!checked.success) return badEntry(parsed, checked.error, path, ctx, set.warnings, false);
        // a "type" that is a string, and not "command", was skipped above
        const handler: z.infer<typeof HandlerSchema> = checked.data;
        if (!handler.command) throw configError(parsed, path, 'a "command" hook needs "command"');
        // Exec form: the program and its arguments, run without a shell's reading of them.
        const exec = claude && handler.args !== undefined;
        const command = exec ? execFormCommand(handler.command, handler.args!) : handler.command;
        if (exec && Buffer.byteLength(command) > MAX_EXEC_COMMAND_BYTES)
          return skipEntry(parsed, path, ctx, set.warnings, `the program and its arguments, quoted for sh, are longer than ${MAX_EXEC_COMMAND_BYTES} bytes (MAX_EXEC_COMMAND_BYTES)`, [...path, "args"]);
        // Claude Code: an async hook's "decision, permissionDecision, and continue have no effect",
        // and an asyncRewake one runs in the background too (its exit 2 wakes the model later);
        // Codex skips it. Either way it can decide nothing, and its side effects would stay in the sandbox.
        const background = handler.async === true ? "async" : handler.asyncRewake === true ? "asyncRewake" : undefined;
        if (background) {
          countSkipped(parsed, path, ctx);
          warn(set.warnings, () => `${originOf(parsed, path)}: ${formatPath(path)}: "${background}": true hooks decide nothing in ${format === "codex" ? "Codex" : "Claude Code"}; skipped`);
          return;
        }
        // A PowerShell handler (Claude Code's `shell`, for Windows): no shell here reads it.
        if (claude && handler.shell !== undefined && /^(powershell|pwsh)$/i.test(handler.shell))
          return skipEntry(parsed, path, ctx, set.warnings, `a "${handler.shell}" hook is a PowerShell command, which hookbox does not run (its hooks run in sh and bash)`, [...path, "shell"]);
        // (its matcher past hookbox's limits: read, warned once for the group, never run)
        if (matcher === PAST_LIMIT) return;
        const rule = handler.if;
        // Claude Code reads `if` on handlers only: one on the group filters nothing there.
        if (group.data.if !== undefined && h === 0)
          warn(set.warnings, () => `${originOf(parsed, ["hooks", event, g])}: ${formatPath(["hooks", event, g, "if"])}: "if" is read on a hook, not on its group; ignored (the group's hooks run for every matching tool)`);
        let condition: HookDef["condition"];
        try {
          condition = rule !== undefined ? claudeCondition(rule) : undefined;
        } catch (err) {
          // Past the workspace's compile budget: the upload is refused, as for matchers.
          if (err instanceof CompileBudgetError) throw workspaceLimit(parsed, [...path, "if"], `cannot read the condition: ${err.message}`);
          // A condition that cannot be read filters nothing: the hook runs (every doubt runs the hook).
          warn(set.warnings, () => `${originOf(parsed, [...path, "if"])}: ${formatPath([...path, "if"])}: cannot read the condition (${(err as Error).message}); the hook runs for every matching tool`);
        }
        countHook(parsed, path, ctx);
        set.hooks.push({
          name: `${basename(parsed.file)}:${event}[${g}].hooks[${h}]`,
          source: ctx.source,
          format,
          point: resolved.point,
          eventName: event,
          dialect: "snake",
          matcher,
          ...(matcher && MATCH_FIELD[resolved.point] ? { matchOn: MATCH_FIELD[resolved.point] } : {}),
          ...(condition ? { condition } : {}),
          command,
          // Codex runs its hooks in the user's shell (\`$SHELL -lc\`), bash here; Claude Code in
          // /bin/sh, or in bash where the handler's \`shell\` says so.
          ...(format === "codex" || handler.shell?.toLowerCase() === "bash" ? { shell: "bash" as const } : {}),
          ...hookTimeout(handlerTimeoutMs(handler.timeout, format, resolved.point), ctx),
          env: {},
          // Claude Code's onFailure "block": its failure blocks (interpretClaude), where Claude Code reads it.
          failOpen: !(claude && handler.onFailure === "block"),
          limits: {},
          mounts: [],
          origin: originOf(parsed, path),
        });
      });
    });
  }
  return set;
}

/** @default 96 KiB — an exec-form program and its arguments, quoted for sh as one command: within what one argument to sh -c may be (128 KiB) */
export const MAX_EXEC_COMMAND_BYTES = 96 * 1024;


/** Claude Code: plain stdout of these events (exit 0) is added as context. */
const STDOUT_IS_CONTEXT = new Set(["SessionStart", "UserPromptSubmit", "UserPromptExpansion", "PostModelSwitch"]);

/** The fields of Claude Code's JSON output: a line of several that sets one makes the whole stdout a failed parse. */
const OUTPUT_FIELDS = ["continue", "stopReason", "suppressOutput", "systemMessage", "decision", "reason", "hookSpecificOutput", "terminalSequence"];

/**
 * A hook's stdout as Claude Code reads it (hooks reference, "Exit code 0"): only text that starts
 * with `{` and ends with `}` (blanks around it aside) is read as JSON — and when that fails, it is
 * a failed parse, never text; anything else is plain text, a JSON array or a quoted string
 * included, and so is a `{`…`}` of two or more lines that each parse on their own, none setting a
 * field of the answer (a log in JSON lines). Codex reads stdout as before (`readOutput`).
 */
function claudeOutput(stdout: string, format: Format): Output | { kind: "text" } {
  if (format !== "claude") return readOutput(stdout);
  const text = stdout.trim();
  if (text === "") return { kind: "empty" };
  if (!text.startsWith("{") || !text.endsWith("}")) return { kind: "text" };
  const out = readOutput(text);
  if (out.kind !== "invalid" || out.limit || !text.includes("\n")) return out;
  // One pass over the lines, none kept: a mebibyte may hold half a million of them.
  let setsField = false;
  let count = 0;
  for (let at = 0; at <= text.length; ) {
    const nl = text.indexOf("\n", at);
    const end = nl === -1 ? text.length : nl;
    const line = text.slice(at, end).trim();
    at = end + 1;
    if (line === "") continue;
    count++;
    // A line that opens no array or object parses to a scalar at most: nothing for the bounds to weigh.
    const opens = line.startsWith("{") || line.startsWith("[");
    // each such line within hookbox's bounds before JSON.parse builds it (the whole was within none)
    if (opens && answerShapeProblem(line)) return out;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return out;
    }
    if (typeof value === "object" && value !== null && !Array.isArray(value) && OUTPUT_FIELDS.some((f) => Object.hasOwn(value, f))) setsField = true;
  }
  if (count < 2) return out;
  return setsField ? { kind: "invalid", error: "output is several JSON lines, one of them an answer: Claude Code reads none of it" } : { kind: "text" };
}

/**
 * Claude Code discards `continue` (and `systemMessage`) from hooks of these events (hooks
 * reference, each event's "decision control"): a `continue: false` there stops nothing.
 */
const CONTINUE_DISCARDED: ReadonlySet<string> = new Set([
  "PreCompact", "PostCompact", "ConfigChange", "Notification", "MessageDisplay", "Elicitation", "ElicitationResult", "TaskCreated",
  "SessionEnd", "StopFailure", "Setup", "InstructionsLoaded", "WorktreeCreate", "WorktreeRemove",
]);
/** @default 10 000 — characters of a hook's plain stdout taken as context; the rest is cut (clipWords), marked with an ellipsis */
export const MAX_CONTEXT_CHARS = 10_000;

/**
 * Claude Code: a block at these events is answered as exit 2 (the task is not created or completed,
 * the teammate works on, the reason fed back) — the answer every version reads there.
 */
export const EXIT_2_ONLY: ReadonlySet<string> = new Set(["TaskCreated", "TaskCompleted", "TeammateIdle"]);
/** …and at these a hook's JSON `decision` is not read (TaskCreated reads `decision: "block"` as well). */
const JSON_DECISION_IGNORED: ReadonlySet<string> = new Set(["TaskCompleted", "TeammateIdle"]);

/**
 * Claude Code: an MCP server's request for input (Elicitation) and the user's answer to it
 * (ElicitationResult); exit 2 or `hookSpecificOutput.action` "decline" refuses it.
 */
const ELICITATION_POINTS: ReadonlySet<string> = new Set(["Elicitation", "ElicitationResult"]);

/**
 * Claude Code's rules (hooks reference, "Exit code output"): JSON on stdout is read at every exit
 * code. Exit 2 blocks whatever the JSON says (its blocking decision's reason the message, else
 * stderr; its other fields still read) — but at PermissionRequest, where exit 2 is not honored and
 * only the JSON decides; at any other non-zero exit a JSON answer alone decides, and without one it
 * is a non-blocking error; exit 0 reads JSON per event. A hook with `onFailure: "block"` that
 * fails (`claudeFailure`) blocks, but where Claude Code ignores the key.
 */
export function interpretClaude(run: RunResult, hook: HookDef, read?: Output): Verdict {
  const verdict = interpretRun(run, hook, read);
  if (hook.failOpen || ON_FAILURE_IGNORED.has(hook.point) || verdict.decision === "block") return verdict;
  const failed = claudeFailure(run, verdict, hook.point);
  if (failed === undefined) return verdict;
  // hooks reference, "Block the action when a hook fails": whatever exit 2 does at the event.
  const { modifiedArgs: _dropped, ...rest } = verdict;
  return { ...rest, decision: "block", reason: `${hookCalled(hook)} failed (${failed}), and its onFailure is "block"`, rule: `${verdict.rule}; claude: onFailure "block" — a failed hook blocks` };
}

/**
 * A failure as Claude Code's onFailure counts one: it could not start or was killed, it timed out,
 * or it ended without an answer Claude Code takes — JSON that could not be read or said what Claude
 * Code does not take, or, at an exit other than 0 and 2, no JSON answer at all. Plain text at exit 0
 * is no failure, nor is exit 2 (but at PermissionRequest, where only its JSON counts).
 */
function claudeFailure(run: RunResult, verdict: Verdict, point: EventPoint): string | undefined {
  if (run.outcome === "cancelled") return undefined;
  if (run.outcome !== "exited") return describeFailure(run);
  // (at PermissionRequest exit 2 is no block: its JSON decides, and one that cannot be read failed)
  if (run.exitCode === 2 && point !== "PermissionRequest") return undefined;
  return verdict.error ?? undefined;
}

/** `read`: stdout as its format has read it already (Codex's checks look at it too), else read here. */
function interpretRun(run: RunResult, hook: HookDef, read?: Output): Verdict {
  // PreModelSwitch: "a timeout blocks the switch".
  if (run.outcome === "timed_out" && hook.point === "PreModelSwitch")
    return { decision: "block", reason: `${hookCalled(hook)} timed out: the model switch is cancelled`, error: "timed out", rule: "claude: a timeout at PreModelSwitch blocks the switch" };
  if (run.outcome === "timed_out") return { decision: null, error: "timed out", rule: "claude: a timeout does not block" };
  if (run.outcome !== "exited") return { decision: null, error: describeFailure(run), rule: "claude: a failed hook does not block" };
  const out = read ?? claudeOutput(run.stdout, hook.format);
  if (run.exitCode === 2) return exit2Verdict(run, hook, out);
  if (run.exitCode !== 0) {
    // "Any other exit code doesn't block on its own": an answer that passes the schema alone decides
    // (the hook is no error then); plain text, nothing, or JSON that is no answer is a non-blocking error.
    const json = out.kind === "object" || (out.kind === "empty" && run.stdout.trim() !== "") ? jsonVerdict(out, hook) : undefined;
    if (json && json.error === null) return { ...json, rule: `${json.rule} (its JSON read at exit ${run.exitCode}, as Claude Code reads it at every exit)` };
    if (out.kind === "invalid" && out.limit) return pastBounds(out, hook.format);
    return { decision: null, error: json?.error ?? (out.kind === "invalid" ? out.error : describeFailure(run)), rule: `claude: exit ${run.exitCode} without a JSON answer does not block (a non-blocking error)` };
  }
  if (out.kind === "empty") return { decision: null, error: null, rule: "claude: no JSON output makes no decision" };
  if (out.kind === "text") {
    if (STDOUT_IS_CONTEXT.has(hook.point))
      return { decision: null, additionalContext: clipWords(run.stdout.trim(), MAX_CONTEXT_CHARS), error: null, rule: `claude: plain stdout of ${hook.point} is added as context` };
    return { decision: null, error: null, rule: "claude: plain text on stdout makes no decision (it goes to the debug log)" };
  }
  if (out.kind === "invalid" && out.limit) return pastBounds(out, hook.format);
  if (out.kind === "invalid") {
    return { decision: null, error: out.error, rule: hook.format === "claude" ? "claude: stdout in braces that is no JSON answer is an error of the hook (not added as context)" : "claude: output that is not a JSON object is an error of the hook" };
  }
  return jsonVerdict(out, hook);
}

/**
 * Exit 2 (hooks reference, "Exit code 2"): a block at every event that can be blocked, whether or
 * not the hook prints JSON — "even a JSON permissionDecision of allow can't override it" — whose
 * message is the reason of the JSON's own blocking decision when it makes one, else stderr; the
 * JSON's other fields are still read (`continue: false`, `systemMessage`, context), but for
 * `hookSpecificOutput` at Elicitation and ElicitationResult; JSON that is no answer leaves stderr
 * the reason. At PermissionRequest exit 2 "isn't honored": the JSON's decision object alone decides.
 */
function exit2Verdict(run: RunResult, hook: HookDef, out: Output | { kind: "text" }): Verdict {
  const stderr = run.stderr.trim();
  if (hook.point === "PermissionRequest") {
    // an answer past hookbox's bounds, which Claude Code would read: hookbox did not decide
    if (out.kind === "invalid" && out.limit) return pastBounds(out, hook.format);
    const json = out.kind === "object" ? jsonVerdict(out, hook) : undefined;
    if (json && json.error === null) return { ...json, rule: `${json.rule} (exit 2 is not honored at PermissionRequest: its JSON decides)` };
    // JSON that could not be read is the hook's error there, as at any exit (onFailure "block" blocks)
    const error = json?.error ?? (out.kind === "invalid" ? out.error : null);
    return { decision: null, error, rule: "claude: exit 2 is not honored at PermissionRequest (the permission flow proceeds unchanged; a deny is its decision object's)" };
  }
  const base = { decision: "block" as const, reason: stderr || `blocked by ${hookCalled(hook)} (exit 2)`, error: null };
  if (out.kind !== "object") return { ...base, rule: out.kind === "invalid" ? "claude: exit 2 blocks (its stdout is no JSON answer: stderr the reason)" : "claude: exit 2 blocks (stderr the reason)" };
  // On Elicitation and ElicitationResult "an exit-2 hook's hookSpecificOutput is ignored".
  const value = ELICITATION_POINTS.has(hook.point) ? Object.fromEntries(Object.entries(out.value).filter(([k]) => k !== "hookSpecificOutput")) : out.value;
  const json = jsonVerdict({ kind: "object", value }, hook);
  // An answer that fails the schema still blocks, with stderr the reason.
  if (json.error !== null) return { ...base, rule: `claude: exit 2 blocks (its JSON is no answer: ${json.error}; stderr the reason)` };
  // Blocked: an allow's changed arguments go nowhere.
  const { modifiedArgs: _dropped, decision, reason, rule, ...rest } = json;
  return { ...rest, ...base, reason: decision === "block" && reason?.trim() ? reason : base.reason, rule: `claude: exit 2 blocks, its JSON read too (${rule})` };
}

/** A JSON answer as Claude Code reads it at `hook`'s event: its decision fields (decision control), `continue`, messages and changes. */
function jsonVerdict(out: Output, hook: HookDef): Verdict {
  if (out.kind !== "object") return { decision: null, error: null, rule: "claude: no JSON output makes no decision" };
  const o = out.value;
  const specific = (typeof o.hookSpecificOutput === "object" && o.hookSpecificOutput !== null ? o.hookSpecificOutput : {}) as Record<string, unknown>;
  let raw: unknown;
  let field: string;
  let reason: string | undefined;
  let modifiedArgs: unknown;
  let updatedOutput: unknown;
  let interrupt = false;
  let words: Record<string, Decision> = { approve: "allow" };
  if (hook.point === "PreModelSwitch") {
    // hookSpecificOutput.permissionDecision allow | deny | ask, or decision "block": the switch is cancelled
    raw = specific.permissionDecision ?? o.decision;
    field = specific.permissionDecision !== undefined ? "hookSpecificOutput.permissionDecision" : "decision";
    reason = str(specific.permissionDecisionReason) ?? str(o.reason);
  } else if (hook.point === "PreToolUse") {
    // hookSpecificOutput.permissionDecision allow | deny | ask | defer; the older top-level decision approve | block
    raw = specific.permissionDecision ?? o.decision;
    field = specific.permissionDecision !== undefined ? "hookSpecificOutput.permissionDecision" : "decision";
    reason = str(specific.permissionDecisionReason) ?? str(o.reason);
    modifiedArgs = specific.updatedInput;
  } else if (hook.point === "PermissionRequest") {
    // hookSpecificOutput.decision.behavior allow | deny, with message and updatedInput
    const d = (typeof specific.decision === "object" && specific.decision !== null ? specific.decision : {}) as Record<string, unknown>;
    raw = d.behavior ?? o.decision;
    field = d.behavior !== undefined ? "hookSpecificOutput.decision.behavior" : "decision";
    reason = str(d.message) ?? str(o.reason);
    modifiedArgs = d.updatedInput;
    // "interrupt: for deny only, if true, stops Claude"
    interrupt = d.interrupt === true && d.behavior === "deny";
  } else if (ELICITATION_POINTS.has(hook.point)) {
    // hookSpecificOutput.action accept | decline | cancel (with content): decline and cancel refuse
    // the MCP server's request; an accept fills in the user's answer, which hookbox does not give.
    raw = specific.action === "accept" ? undefined : specific.action;
    field = "hookSpecificOutput.action";
    words = { decline: "block", cancel: "block" };
    reason = str(o.reason);
  } else {
    // Elsewhere only the top-level decision: "block" counts (PostToolUse ignores permissionDecision);
    // where exit 2 alone acts, not even that.
    raw = JSON_DECISION_IGNORED.has(hook.point) ? undefined : o.decision;
    field = "decision";
    reason = str(o.reason);
    // hooks reference, PostToolUse: updatedToolOutput replaces the tool's output, for every tool
    // (updatedMCPToolOutput before it, for MCP tools only); with or without a block.
    if (hook.point === "PostToolUse") updatedOutput = specific.updatedToolOutput ?? specific.updatedMCPToolOutput ?? undefined;
  }
  // `defer` hands the call back to the agent's own permission flow: no decision of its own — but it
  // outranks another hook's allow ("deny > defer > ask > allow"), which would skip that flow (fold).
  const deferred = raw === "defer" && hook.point === "PreToolUse" && hook.format === "claude";
  if (raw === "defer") raw = undefined;
  const decision = readDecision(raw, words);
  if (decision === "invalid") return { decision: null, error: `unknown decision ${shown(raw)}`, rule: "claude: an unknown decision is an error of the hook" };
  const rule = decision ? `claude: ${field} "${String(raw)}"` : `claude: no decision${specific.permissionDecision === "defer" ? " (defer)" : ""}`;
  // Claude Code: `"continue": false` stops the agent, with `stopReason`, whatever the decision says.
  const halt = o.continue === false && !(hook.format === "claude" && CONTINUE_DISCARDED.has(hook.point))
    ? haltVerdict(o, hook.point, hook, reason, "claude")
    : interrupt
      ? { halt: reason ?? `${hookCalled(hook)} denied and stopped Claude (interrupt)`, rule: `${rule}; claude: decision.interrupt stops Claude` }
      : undefined;
  return {
    decision,
    reason,
    systemMessage: str(o.systemMessage),
    additionalContext: str(specific.additionalContext),
    ...(modifiedArgs !== undefined ? { modifiedArgs } : {}),
    ...(updatedOutput !== undefined ? { updatedOutput } : {}),
    ...(deferred ? { deferred: true as const } : {}),
    error: null,
    rule,
    ...halt,
  };
}

/** Claude Code hooks reference, per event's decision control. */
export function claudeEffective(point: EventPoint): ReadonlySet<Decision> {
  switch (point) {
    case "PreToolUse": return ALL; // permissionDecision allow | deny | ask
    case "PermissionRequest": return ALLOW_BLOCK; // decision.behavior allow | deny
    case "PostToolUse": // decision "block" feeds the reason back
    case "PostToolUseFailure": // likewise
    case "PreCompact": // decision "block" (or exit 2) blocks compaction
    case "ConfigChange": // decision "block" keeps the change from applying
    case "UserPromptSubmit": // decision "block" stops the prompt
    case "Stop": // decision "block" keeps the agent going
    case "TaskCreated": // exit 2 keeps the task from being created
    case "TaskCompleted": // exit 2 keeps the task from being marked complete
    case "TeammateIdle": // exit 2 keeps the teammate working
    case "PostToolBatch": // exit 2, decision "block" or continue: false stops the agentic loop
    case "UserPromptExpansion": // exit 2 or decision "block" keeps the command from expanding
    case "SubagentStop": return ALLOW_BLOCK;
    case "PreModelSwitch": return ALL; // permissionDecision allow | deny | ask, or decision "block": the switch is cancelled
    case "Elicitation": // exit 2 or action "decline" denies the MCP server's request
    case "ElicitationResult": return BLOCK; // makes the user's answer a decline
    default: return NONE;
  }
}

/**
 * Claude Code: hookSpecificOutput.permissionDecision for PreToolUse; decision.behavior for
 * PermissionRequest; decision "block" + reason elsewhere; `continue: false` + `stopReason` when a
 * hook stopped the agent.
 */
export function claudeAnswer(point: EventPoint, f: Folded): Answer {
  const answer = withHalt(claudeDecision(point, f, CLAUDE_SPECIFIC_POINTS), f);
  // A hook deferred, and no hook blocked or asked: Claude Code is told `defer` — its own permission
  // flow decides, and under `-p` the call waits, as the hook asked (never an answer of none, which
  // an allow rule or a permissive mode would run at once).
  if (point === "PreToolUse" && f.decision === null && f.deferred && f.modifiedArgs === undefined) {
    const specific = (answer.output.hookSpecificOutput ?? { hookEventName: "PreToolUse" }) as Record<string, unknown>;
    answer.output = { ...answer.output, hookSpecificOutput: { ...specific, permissionDecision: "defer" } };
  }
  return answer;
}

/**
 * The events whose answer Claude Code reads a `hookSpecificOutput.additionalContext` of (its output
 * schema has a variant for each; at Stop and SubagentStop it is "non-error feedback that continues
 * the conversation"); on any other — PreCompact, ConfigChange, … — one fails the answer's
 * validation, and the block it came with is lost. There the context goes in `systemMessage`.
 */
const CLAUDE_SPECIFIC_POINTS: ReadonlySet<string> = new Set([
  "PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "SessionStart", "SubagentStart", "Notification",
  "PostToolBatch", "UserPromptExpansion", "PostModelSwitch", "Stop", "SubagentStop",
]);

export function claudeDecision(point: EventPoint, f: Folded, specificPoints: ReadonlySet<string>): Answer {
  const hookEventName = pointName(point, "snake");
  if (point === "PreToolUse") {
    const permissionDecision = f.decision === "block" ? "deny" : (f.decision ?? undefined);
    const specific = defined({
      hookEventName,
      permissionDecision,
      permissionDecisionReason: f.decision ? f.reason : undefined,
      updatedInput: f.modifiedArgs,
      additionalContext: f.additionalContext,
    });
    return { output: defined({ hookSpecificOutput: Object.keys(specific).length > 1 ? specific : undefined, systemMessage: f.systemMessage }), exit_code: 0 };
  }
  if (point === "PreModelSwitch") {
    // its permissionDecision, as PreToolUse's (no changed arguments, no context of its own)
    const permissionDecision = f.decision === "block" ? "deny" : (f.decision ?? undefined);
    const specific = permissionDecision && defined({ hookEventName, permissionDecision, permissionDecisionReason: f.reason });
    return { output: defined({ hookSpecificOutput: specific || undefined, systemMessage: withContext(f.systemMessage, f.additionalContext) }), exit_code: 0 };
  }
  if (point === "PermissionRequest") {
    const behavior = f.decision === "block" ? "deny" : f.decision === "allow" ? "allow" : undefined;
    const decision = behavior && defined({ behavior, message: behavior === "deny" ? f.reason : undefined, updatedInput: behavior === "allow" ? f.modifiedArgs : undefined });
    // A change goes out only inside an allow's decision: without one (an ask, no decision) it
    // reaches nothing, and the user is told so rather than left to think it was made.
    const untaken = f.modifiedArgs !== undefined && behavior === undefined ? "hookbox: a hook changed the arguments, and Claude Code takes a change here only with an allow: the change was not applied" : undefined;
    // its hookSpecificOutput carries the decision only: context goes with the message
    return { output: defined({ hookSpecificOutput: decision ? { hookEventName, decision } : undefined, systemMessage: withContext(withContext(f.systemMessage, f.additionalContext), untaken) }), exit_code: 0 };
  }
  // Exit 2 declines, and so does the JSON answer an HTTP hook gives.
  if (ELICITATION_POINTS.has(point) && f.decision === "block")
    return { output: defined({ hookSpecificOutput: { hookEventName, action: "decline" }, systemMessage: withContext(f.systemMessage, f.additionalContext) }), exit_code: 2 };
  // Where exit 2 alone blocks, a block is exit 2 (the forwarder puts the reason on stderr). An HTTP
  // hook has no exit code: at TaskCreated, whose JSON `decision` Claude Code reads too, the block is
  // said in the JSON as well (the native endpoint answers the JSON alone).
  if (EXIT_2_ONLY.has(point) && f.decision === "block") {
    const said = JSON_DECISION_IGNORED.has(point) ? {} : { decision: "block", reason: f.reason };
    return { output: defined({ ...said, systemMessage: withContext(f.systemMessage, f.additionalContext) }), exit_code: 2 };
  }
  const specific = specificPoints.has(point);
  // PostToolUse: the replaced output under both names (updatedMCPToolOutput is what Claude Code read
  // before updatedToolOutput, for MCP tools; it still reads it).
  const replaced = point === "PostToolUse" && f.updatedOutput !== undefined ? { updatedToolOutput: f.updatedOutput, updatedMCPToolOutput: f.updatedOutput } : undefined;
  const output = defined({
    decision: f.decision === "block" ? "block" : undefined,
    reason: f.decision === "block" ? f.reason : undefined,
    hookSpecificOutput: specific && (f.additionalContext || replaced) ? defined({ hookEventName, additionalContext: f.additionalContext, ...replaced }) : undefined,
    systemMessage: specific ? f.systemMessage : withContext(f.systemMessage, f.additionalContext),
  });
  return { output, exit_code: 0 };
}

const CLAUDE_FIRES = { agent: "Claude Code", names: CLAUDE_EVENTS };

/** Claude Code: SessionEnd hooks share a 1.5 s budget, raised to a longer per-hook timeout "up to 60 seconds". */
const SESSION_END_MAX_MS = 60_000;

/** A handler's timeout: its own `timeout` (seconds), else its agent's default at the event; Claude Code's SessionEnd at most 60 s. */
function handlerTimeoutMs(timeoutS: number | undefined, format: Format, point: EventPoint): number {
  // (Codex reads a timeout of 0 as 1 s: `timeout_sec.max(1)`)
  const ms = timeoutS !== undefined ? (format === "codex" ? Math.max(1, timeoutS) : timeoutS) * 1000 : agentDeadlineS(format === "codex" ? "codex" : "claude", point) * 1000;
  return format === "claude" && point === "SessionEnd" ? Math.min(ms, SESSION_END_MAX_MS) : ms;
}

export const claudeFormat: FormatModule = {
  format: "claude",
  agent: "Claude Code",
  replacesOutput: true,
  changeTakenWith: "allow or ask",
  interpret: (run, hook) => interpretClaude(run, hook),
  effective: claudeEffective,
  answer: claudeAnswer,
  // Claude Code refuses a hookSpecificOutput written for another event (a non-blocking error: the
  // call goes on). The top-level `decision: "block"` is the block every blocking event reads
  // (PreToolUse as its older form of deny), and exit 2 the one for the rest.
  blockAnyEvent: (reason) => ({ output: { decision: "block", reason }, exit_code: 2 }),
  // Claude Code runs the hooks of both project files (settings.local.json is the developer's own, usually not committed).
  repository: [
    { path: ".claude/settings.json", syntax: "json", load: (parsed, ctx) => loadMatcherGroups(parsed, ctx, "claude", claudeMatcher, CLAUDE_FIRES) },
    { path: ".claude/settings.local.json", syntax: "json", load: (parsed, ctx) => loadMatcherGroups(parsed, ctx, "claude", claudeMatcher, CLAUDE_FIRES) },
  ],
};
