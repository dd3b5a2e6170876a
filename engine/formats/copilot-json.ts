/**
 * @module The Copilot format (copilot-hooks.md), shared by the Copilot CLI, VS Code and the GitHub
 * Copilot app, in both forms: the CLI's `{"version":1,"hooks":{<event>:[{"type":"command","bash",
 * "timeoutSec"}]}}` and VS Code's (no `version`, `command` + `timeout` in seconds, PascalCase events,
 * `hookSpecificOutput` answers). Read from administrators' policy files, a repository's
 * `.github/hooks/*.json`, and the inline `hooks` of `.github/copilot/settings.json` and
 * `settings.local.json` — the CLI's alone: VS Code's hook file locations do not list them. Here:
 * loading, exit-code and output rules, where decisions count, answers.
 */
import { basename, dirname, posix, resolve } from "node:path";
import { z } from "zod";
import type { Folded } from "../aggregate.js";
import { ALL, ALLOW_BLOCK, EVENT_NAMES, NONE, resolveEventName, type Decision, type Dialect, type EventPoint } from "../events.js";
import { compileRegex, type HookDef, type HookSet } from "../hooks.js";
import type { RunResult } from "../run/types.js";
import type { Verdict } from "../verdict.js";
import {
  badEntry, CommandSchema, configError, hookTimeout, readMatcher, countHook, defined, describeFailure, eventOf, haltVerdict, hookCalled, HookEnvSchema, isStopPoint, knownKeys, NoNulSchema, originOf, PAST_LIMIT, readDecision, pastBounds, readOutput, schemaError, shown, skipOtherType, str, withContext, withHalt,
  type Answer, type FormatModule, type LoadContext, type ParsedFile, warn,
} from "./shared.js";
import { formatPath } from "./locate.js";

/** @default 30 s — the Copilot CLI hooks reference's default `timeoutSec` (VS Code's `timeout` default is the same) */
export const COPILOT_DEFAULT_TIMEOUT_MS = 30_000;

const CopilotHookSchema = z
  .strictObject({
    type: z.string().optional(),
    bash: CommandSchema.optional(),
    command: CommandSchema.optional(),
    powershell: z.string().optional(),
    /** VS Code's per-platform overrides; containers run Linux */
    linux: CommandSchema.optional(),
    osx: z.string().optional(),
    windows: z.string().optional(),
    cwd: NoNulSchema.optional(),
    env: HookEnvSchema.optional(),
    /** seconds (CLI) */
    timeoutSec: z.number().positive().optional(),
    /** seconds (VS Code) */
    timeout: z.number().positive().optional(),
    comment: z.string().optional(),
    /** the CLI's: a regular expression the whole tool name (notification type) must match */
    matcher: z.string().optional(),
  });
const HOOK_KEYS = Object.keys(CopilotHookSchema.shape);

const CopilotFileSchema = z.strictObject({
  /** the CLI form says 1; VS Code's form has none */
  version: z.literal(1, { error: "version must be 1" }).optional(),
  hooks: z.record(z.string(), z.unknown()),
  disableAllHooks: z.boolean().optional(),
});
const FILE_KEYS = Object.keys(CopilotFileSchema.shape);

/** A policy file or a repository's `.github/hooks/*.json`. In a repository a `.json` without `hooks` is some other file: skipped. */
export function loadCopilotFile(parsed: ParsedFile, ctx: LoadContext): HookSet {
  const set: HookSet = { hooks: [], warnings: [], disableAll: false };
  const v = parsed.value as Record<string, unknown> | null;
  if (ctx.tolerant && (typeof v !== "object" || v === null || Array.isArray(v) || typeof v.hooks !== "object" || v.hooks === null)) {
    warn(set.warnings, () => `${parsed.file}: no "hooks" object: not a hook file; skipped`);
    return set;
  }
  const file = CopilotFileSchema.safeParse(knownKeys(parsed, [], v, FILE_KEYS, ctx, set.warnings));
  if (!file.success) throw schemaError(parsed, file.error);
  set.disableAll = file.data.disableAllHooks === true;
  loadHookMap(parsed, file.data.hooks, ctx, set, {});
  return set;
}

/**
 * `.github/copilot/settings.json` and `settings.local.json`: settings hold much else; only `hooks` and
 * `disableAllHooks` are read. Only the CLI reads them (VS Code's agent hooks page, "Hook file
 * locations": `.github/hooks/*.json`, Claude's settings, `~/.copilot/hooks`): a PascalCase event
 * there is the CLI's alias, under the CLI's rules.
 */
function loadSettings(parsed: ParsedFile, ctx: LoadContext): HookSet {
  const set: HookSet = { hooks: [], warnings: [], disableAll: false };
  const v = parsed.value as Record<string, unknown> | null;
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw configError(parsed, [], "expected a JSON object");
  const s = z.looseObject({ hooks: z.record(z.string(), z.unknown()).optional(), disableAllHooks: z.boolean().optional() }).safeParse(v);
  if (!s.success) throw schemaError(parsed, s.error);
  set.disableAll = s.data.disableAllHooks === true;
  loadHookMap(parsed, s.data.hooks ?? {}, ctx, set, { readBy: "cli" });
  return set;
}

/**
 * The events Copilot fires: its camelCase names (copilot-hooks.md, "The main events", and the rest
 * its reference lists) and each one's PascalCase alias ("A compatible PascalCase alias,
 * PreToolUse") — never another agent's name for a point (Gemini's `BeforeTool`, Cursor's `stop`),
 * under which Copilot runs nothing. Read so in a repository's files.
 */
export const COPILOT_EVENTS: ReadonlySet<string> = new Set(
  EVENT_NAMES.flatMap((name) => {
    const resolved = resolveEventName(name)!;
    return resolved.dialect === "camel" ? [name, resolved.point] : [];
  }),
);
const COPILOT_FIRES = { agent: "Copilot", names: COPILOT_EVENTS };

function loadHookMap(parsed: ParsedFile, hooks: Record<string, unknown>, ctx: LoadContext, set: HookSet, readers: Pick<HookDef, "readBy">): void {
  for (const [event, entries] of Object.entries(hooks)) {
    // An administrator's policy file may guard any agent's event (Cursor's `beforeShellExecution`, say).
    const resolved = eventOf(parsed, ["hooks", event], event, ctx, set.warnings, ctx.source === "repository" ? COPILOT_FIRES : undefined);
    if (!resolved) continue;
    if (!Array.isArray(entries)) {
      if (!ctx.tolerant) throw configError(parsed, ["hooks", event], "an event takes a list of hooks");
      warn(set.warnings, () => `${originOf(parsed, ["hooks", event])}: hooks.${event}: an event takes a list of hooks; skipped`);
      continue;
    }
    entries.forEach((raw, i) => {
      const path = ["hooks", event, i];
      if (skipOtherType(parsed, path, raw, ctx, set.warnings)) return;
      const entry = CopilotHookSchema.safeParse(knownKeys(parsed, path, raw, HOOK_KEYS, ctx, set.warnings));
      // In a repository, an entry its schema refuses is skipped alone, as one with no command is.
      if (!entry.success) return badEntry(parsed, entry.error, path, ctx, set.warnings, true);
      const e = entry.data;
      // Containers run Linux: the CLI's `bash`, then VS Code's `linux` override, then its `command`.
      const command = e.bash ?? e.linux ?? e.command;
      if (command === undefined) {
        if (e.powershell !== undefined || e.windows !== undefined || e.osx !== undefined) {
          if (!ctx.tolerant) throw configError(parsed, path, "no command for Linux");
          warn(set.warnings, () => `${originOf(parsed, path)}: hooks.${event}[${i}]: no command for Linux (only powershell/windows/osx); skipped`);
          return;
        }
        // In a repository, an entry with no command at all (another agent's shape, a group of
        // Claude's, say) is not one of Copilot's: warned about and skipped, the rest of the file read.
        if (!ctx.tolerant) throw configError(parsed, path, 'a command hook needs "bash" or "command"');
        warn(set.warnings, () => `${originOf(parsed, path)}: hooks.${event}[${i}]: a command hook needs "bash" or "command"; skipped`);
        return;
      }
      const seconds = e.timeoutSec ?? e.timeout;
      const matcher = copilotMatcher(parsed, path, e.matcher, { ...resolved, ...readers }, ctx, set.warnings);
      if (matcher === PAST_LIMIT) return;
      // Policy hooks run on the host beside their file; other hooks under /workspace, never outside it.
      let cwd = ctx.source === "policy" ? resolve(dirname(parsed.file), e.cwd ?? ".") : e.cwd === undefined ? undefined : posix.normalize(e.cwd);
      // The CLI takes one "relative to repository root or absolute": a folder of the developer's
      // machine no container has. The hook is kept, and fails to start at each event (unrunnable).
      let unrunnable: string | undefined;
      if (ctx.source !== "policy" && cwd !== undefined && (posix.isAbsolute(cwd) || cwd === ".." || cwd.startsWith("../"))) {
        if (!ctx.tolerant) throw configError(parsed, [...path, "cwd"], "cwd must be a path inside the repository");
        unrunnable = `its cwd ${shown(e.cwd)} is outside the repository: hookbox runs hooks in the repository's folder only`;
        const at = [...path, "cwd"];
        warn(set.warnings, () => `${originOf(parsed, at)}: ${formatPath(at)}: cwd is outside the repository: hookbox cannot run the hook there — it fails to start at each event (a preToolUse guard then denies, as Copilot's fail-closed rule reads a hook that cannot run)`);
        cwd = undefined;
      }
      countHook(parsed, path, ctx);
      set.hooks.push({
        name: `${basename(parsed.file)}:${event}[${i}]`,
        source: ctx.source,
        format: "copilot",
        point: resolved.point,
        eventName: event,
        // copilot-hooks.md: "preToolUse receives toolName and toolArgs … PreToolUse receives snake_case fields"
        dialect: resolved.dialect,
        ...readers,
        ...matcher,
        command,
        // The CLI's \`bash\` key is a bash command; VS Code's \`linux\` and \`command\` run in sh.
        ...(e.bash !== undefined ? { shell: "bash" as const } : {}),
        ...hookTimeout(seconds !== undefined ? seconds * 1000 : COPILOT_DEFAULT_TIMEOUT_MS, ctx),
        env: e.env ?? {},
        failOpen: true,
        limits: {},
        cwd,
        ...(unrunnable !== undefined ? { unrunnable } : {}),
        mounts: [],
        origin: originOf(parsed, path),
      });
    });
  }
}

/**
 * Where the Copilot CLI reads a hook's `matcher` (its hooks reference), and against what: the tool
 * name at the tool events and permissionRequest, the notification's type at notification.
 */
const MATCHED_AT: Partial<Record<string, HookDef["matchOn"] | "tool">> = {
  PreToolUse: "tool",
  PostToolUse: "tool",
  PostToolUseFailure: "tool",
  PermissionRequest: "tool",
  Notification: { field: "notification_type" },
};

/**
 * A hook's `matcher`, as the Copilot CLI reads it: a regular expression the whole name must match
 * (`bash` does not fire for `github-bash`), at the events above, under their CLI names. VS Code
 * ignores matchers, and so does the CLI elsewhere: there the hook runs for every call, warned.
 */
function copilotMatcher(parsed: ParsedFile, path: (string | number)[], pattern: string | undefined, at: { point: EventPoint; dialect: Dialect } & Pick<HookDef, "readBy">, ctx: LoadContext, warnings: string[]): Pick<HookDef, "matcher" | "matchOn"> | typeof PAST_LIMIT {
  if (pattern === undefined || pattern === "" || pattern === "*") return {};
  const on = MATCHED_AT[at.point];
  if (on === undefined || at.dialect !== "camel") {
    // Say why it is ignored: at an event the CLI matches on (PreToolUse, say), only the PascalCase
    // spelling is at fault — in .github/hooks that is VS Code's form, whose matchers VS Code ignores.
    const why = on === undefined
      ? "read by the Copilot CLI at preToolUse, postToolUse, postToolUseFailure, permissionRequest and notification only"
      : vscodeReads(at)
        ? "a PascalCase event is VS Code's form, and VS Code ignores matchers"
        : "read under the event's camelCase name only";
    warn(warnings, () => `${originOf(parsed, [...path, "matcher"])}: ${path.join(".").replace(/\.(\d+)/g, "[$1]")}.matcher: ${why}; ignored here (the hook runs for every call)`);
    return {};
  }
  const test = readMatcher(parsed, [...path, "matcher"], ctx, warnings, () => compileRegex(pattern, { anchored: true }));
  if (test === PAST_LIMIT) return test;
  return test ? { matcher: { source: pattern, test }, ...(on === "tool" ? {} : { matchOn: on }) } : {};
}


const EXIT_2_DENIES = new Set(["PreToolUse", "PermissionRequest"]);

/**
 * Whether VS Code reads the hook, under its own rules: an event in VS Code's PascalCase form, in a
 * file VS Code reads (`.github/hooks/*.json`; never the CLI's inline settings). Every other
 * Copilot hook is the CLI's, under copilot-hooks.md alone.
 */
export const vscodeReads = (hook: Pick<HookDef, "dialect" | "readBy">): boolean => hook.dialect === "snake" && hook.readBy !== "cli";

/**
 * VS Code's hooks reference: `UserPromptSubmit` and `PreCompact` use "the common output format only"
 * (`continue`, `stopReason`, `systemMessage`) — no decision, no context; copilot-hooks.md reads
 * none there either (userPromptSubmitted "Command-hook output is ignored", preCompact "notification only").
 */
const COMMON_OUTPUT_ONLY = new Set(["UserPromptSubmit", "PreCompact"]);

/** Copilot's rules (copilot-hooks.md "Fail open or fail closed", "Denying a tool call"). */
export function interpretCopilot(run: RunResult, hook: HookDef): Verdict {
  const pre = hook.point === "PreToolUse";
  // copilot-hooks.md: "The exception is preToolUse, which is fail-closed: a crash or other non-zero exit denies"
  const failure = (error: string, rule: string): Verdict =>
    pre
      ? { decision: "block", reason: `${hookCalled(hook)} failed: ${error}`, error, rule: `${rule}; copilot: a crash or non-zero exit on preToolUse denies (fail-closed)` }
      : { decision: null, error, rule: `${rule}; copilot: logged and the run continues` };
  // copilot-hooks.md: "A timeout kills the hook, logs it and continues - fail-open for every event"
  if (run.outcome === "timed_out") return { decision: null, error: "timed out", rule: "copilot: a timeout is fail-open for every event, policy hooks included" };
  if (run.outcome !== "exited") return failure(describeFailure(run), "copilot: the hook crashed");
  if (run.exitCode === 2) {
    const stderr = run.stderr.trim();
    // copilot-hooks.md: "For preToolUse and permissionRequest it is a deny, even if the hook's output claims allow"
    if (EXIT_2_DENIES.has(hook.point))
      return { decision: "block", reason: stderr || `denied by ${hookCalled(hook)} (exit 2)`, error: null, rule: "copilot: exit 2 denies preToolUse and permissionRequest" };
    // VS Code's hooks reference, "Exit codes": 2 is a "Blocking error: stop processing and show error
    // to model" — its prompt hook's stops the prompt (as its `continue: false` does), its stop
    // hooks' keep the agent going with stderr as the reason.
    if (vscodeReads(hook) && hook.point === "UserPromptSubmit") {
      const stop = stderr || `${hookCalled(hook)} blocked the prompt (exit 2)`;
      return { decision: "block", reason: stop, halt: stop, error: null, rule: "copilot (VS Code): exit 2 at UserPromptSubmit is a blocking error: the prompt is stopped" };
    }
    if (vscodeReads(hook) && isStopPoint(hook.point))
      return { decision: "block", reason: stderr || `blocked by ${hookCalled(hook)} (exit 2)`, error: null, rule: `copilot (VS Code): exit 2 at ${hook.point} is a blocking error: the agent goes on, stderr the reason` };
    // copilot-hooks.md: "Exit code 2 is a warning for most events, with standard error shown to you"
    return { decision: null, warning: stderr || `${hookCalled(hook)} exited 2`, error: null, rule: "copilot: exit 2 is a warning" };
  }
  if (run.exitCode !== 0) return failure(describeFailure(run), "copilot: non-zero exit");
  // copilot-hooks.md: "Exit code 0 is success, and standard output is parsed as the hook's JSON"
  const out = readOutput(run.stdout);
  if (out.kind === "empty") return { decision: null, error: null, rule: "copilot: returning {} makes no decision; it does not approve" };
  // Only crashes and non-zero exits fail closed: exit 0 with text (a guard in warn mode printing a table) is logged, no effect.
  if (out.kind === "invalid" && out.limit) return pastBounds(out, "copilot");
  if (out.kind === "invalid") return { decision: null, error: out.error, rule: "copilot: exit 0 with output that is not a JSON object is logged; only crashes and non-zero exits fail closed" };
  const o = out.value;
  // VS Code's form answers in hookSpecificOutput; the CLI's at the top level.
  const specific = (typeof o.hookSpecificOutput === "object" && o.hookSpecificOutput !== null ? o.hookSpecificOutput : {}) as Record<string, unknown>;
  // Where both forms answer, the stricter holds: a top-level "" or "allow" never hides a deny in
  // hookSpecificOutput (nor the other way round).
  // agentStop / subagentStop read `decision: "block"` only (copilot-hooks.md, "The main events").
  // permissionRequest: the CLI's own `behavior` (allow | deny) too.
  // Before a tool the document's field is permissionDecision: a top-level `decision` counts there only
  // as a block (never an approval the document does not name).
  // VS Code's Stop says its block in hookSpecificOutput (VS Code's hooks reference, "Stop output");
  // its SubagentStop, and the CLI's agentStop, at the top level.
  const vscode = vscodeReads(hook);
  const stopSpecific = vscode && hook.point === "Stop";
  const commonOnly = COMMON_OUTPUT_ONLY.has(hook.point);
  const topBlock = readDecision(o.decision) === "block" ? o.decision : undefined;
  const fields = isStopPoint(hook.point)
    ? [o.decision, ...(stopSpecific ? [specific.decision] : [])]
    : commonOnly ? []
    : [o.permissionDecision, specific.permissionDecision, topBlock, ...(hook.point === "PermissionRequest" ? [o.behavior] : [])];
  const said = fields.map((value) => ({ value, decision: readDecision(value) }));
  const strongest = said.find((d) => d.decision === "block") ?? said.find((d) => d.decision === "ask") ?? said.find((d) => d.decision === "allow") ?? said.find((d) => d.decision === "invalid");
  const raw = strongest?.value;
  let decision = strongest?.decision ?? null;
  // An exit 0 answer Copilot cannot read is logged, no effect: only crashes and non-zero exits fail closed.
  if (decision === "invalid") return { decision: null, error: `unknown decision ${shown(raw)}`, rule: "copilot: an unknown permissionDecision at exit 0 is logged, no effect; only crashes and non-zero exits fail closed" };
  const field = isStopPoint(hook.point) ? "decision" : "permissionDecision";
  let rule = decision ? `copilot: ${field} "${String(raw)}" from stdout` : `copilot: no ${field}`;
  let reason = commonOnly ? undefined : str(o.permissionDecisionReason) ?? str(specific.permissionDecisionReason) ?? str(o.reason) ?? (stopSpecific ? str(specific.reason) : undefined) ?? (hook.point === "PermissionRequest" ? str(o.message) : undefined);
  let halt: string | undefined;
  // The CLI's (camelCase events, and every event of its inline settings): copilot-hooks.md names no
  // `continue`, and at userPromptSubmitted "Command-hook output is ignored" — messages too.
  const cli = !vscode;
  const ignored = cli && hook.point === "UserPromptSubmit";
  // VS Code: `"continue": false` stops the agent, with `stopReason`, whatever the decision says.
  if (o.continue === false && !cli) ({ decision, reason, rule, halt } = haltVerdict(o, hook.point, hook, reason, "copilot"));
  // copilot-hooks.md: only preToolUse may "modify arguments" (postToolUse "cannot undo the action").
  const modifiedArgs = hook.point === "PreToolUse" ? (o.modifiedArgs ?? specific.updatedInput) : undefined;
  const verdict: Verdict = {
    decision,
    reason,
    ...(halt !== undefined ? { halt } : {}),
    systemMessage: ignored ? undefined : str(o.systemMessage),
    // copilot-hooks.md: userPromptSubmitted "Command-hook output is ignored"; VS Code's prompt and compaction take the common output only.
    additionalContext: ignored || commonOnly ? undefined : (str(o.additionalContext) ?? str(specific.additionalContext)),
    ...(modifiedArgs !== undefined ? { modifiedArgs } : {}),
    error: null,
    rule,
  };
  // copilot-hooks.md: "permissionDecisionReason is required with a deny" — the deny stands (fail-closed), flagged
  if (decision === "block" && !reason) {
    verdict.error = "permissionDecisionReason is required with deny";
    verdict.reason = `denied by ${hookCalled(hook)}`;
  }
  return verdict;
}

/** copilot-hooks.md "The main events": the "Can it change the outcome" column. */
export function copilotEffective(point: EventPoint): ReadonlySet<Decision> {
  switch (point) {
    case "PreToolUse": return ALL; // copilot-hooks.md: preToolUse "Yes: allow, deny or modify arguments"
    case "PermissionRequest": return ALLOW_BLOCK; // copilot-hooks.md: permissionRequest "can allow or deny"
    case "Stop": // copilot-hooks.md: agentStop "decision: block forces another turn"
    case "SubagentStop": return ALLOW_BLOCK; // copilot-hooks.md: "Stop can block and force continuation"
    // copilot-hooks.md: userPromptSubmitted "Command-hook output is ignored"; the rest add context at most
    default: return NONE;
  }
}

/** What the user is told when a hook's change of arguments cannot reach Copilot (at permissionRequest). */
const UNTAKEN_CHANGE = "hookbox: a hook changed the arguments, and Copilot takes a change only before the tool runs (preToolUse): the change was not applied";

/**
 * copilot-hooks.md: permissionDecision (+ reason, required with deny), modifiedArgs; decision
 * "block" for agentStop; VS Code's `continue: false` + `stopReason` when a hook stopped the agent,
 * and its `hookSpecificOutput` where its hooks reference puts an event's answer.
 */
function copilotAnswer(point: EventPoint, f: Folded): Answer {
  return withHalt(copilotDecision(point, f), f);
}

function copilotDecision(point: EventPoint, f: Folded): Answer {
  const context = f.additionalContext;
  if (point === "PreToolUse" || point === "PermissionRequest") {
    const permissionDecision = f.decision === "block" ? "deny" : (f.decision ?? undefined);
    const permissionDecisionReason = permissionDecision === "deny" ? (f.reason ?? "denied by hookbox") : f.decision ? f.reason : undefined;
    if (point === "PermissionRequest") {
      // copilot-hooks.md: permissionRequest "can allow or deny" — no change of arguments. A change is
      // not said, nor the allow given with it (the fold keeps no other allow beside a change): that
      // allow was for the changed call, never for the call as sent. The user is told.
      if (f.modifiedArgs !== undefined) {
        const said = permissionDecision === "deny" ? permissionDecision : undefined;
        const note = permissionDecision === "deny" ? context : withContext(context, UNTAKEN_CHANGE);
        return { output: defined({ behavior: said, message: said ? permissionDecisionReason : undefined, permissionDecision: said, permissionDecisionReason: said ? permissionDecisionReason : undefined, additionalContext: note }), exit_code: 0 };
      }
      // The CLI reads `behavior` here (allow | deny, with a message): it decides before the
      // permission service runs. permissionDecision is said too, for readers of the older form.
      const behavior = permissionDecision === "deny" || permissionDecision === "allow" ? permissionDecision : undefined;
      return { output: defined({ behavior, message: behavior === "deny" ? permissionDecisionReason : undefined, permissionDecision, permissionDecisionReason, additionalContext: context }), exit_code: 0 };
    }
    // Both forms: the CLI reads the top level; VS Code only hookSpecificOutput (its event name
    // PascalCase), and without it runs the tool.
    const specific = defined({ hookEventName: "PreToolUse", permissionDecision, permissionDecisionReason, updatedInput: f.modifiedArgs, additionalContext: context });
    const output = defined({
      permissionDecision,
      permissionDecisionReason,
      modifiedArgs: f.modifiedArgs,
      additionalContext: context,
      hookSpecificOutput: Object.keys(specific).length > 1 ? specific : undefined,
    });
    return { output, exit_code: 0 };
  }
  if (isStopPoint(point) && f.decision === "block") {
    // VS Code reads a Stop's block in hookSpecificOutput (its hooks reference, "Stop output"); the
    // CLI's agentStop, and VS Code's SubagentStop, at the top level.
    const specific = point === "Stop" ? defined({ hookEventName: "Stop", decision: "block", reason: f.reason }) : undefined;
    return { output: defined({ decision: "block", reason: f.reason, additionalContext: context, hookSpecificOutput: specific }), exit_code: 0 };
  }
  // A block where the CLI has none (copilot-hooks.md: userPromptSubmitted output is ignored;
  // postToolUse cannot undo the action), said as VS Code takes one: it stops on `continue: false`
  // with its `stopReason` — the prompt goes no further — and a PostToolUse's `decision: "block"`
  // blocks further processing. The CLI reads none of these keys there.
  if (point === "UserPromptSubmit" && f.decision === "block") {
    const reason = f.reason ?? "blocked by hookbox";
    return { output: defined({ continue: false, stopReason: reason, decision: "block", reason, additionalContext: context }), exit_code: 0 };
  }
  const block = point === "PostToolUse" && f.decision === "block" ? { decision: "block", reason: f.reason ?? "blocked by hookbox" } : {};
  // VS Code reads a PostToolUse's context from hookSpecificOutput; the CLI from the top level.
  if (point === "PostToolUse" && context) return { output: { ...block, additionalContext: context, hookSpecificOutput: { hookEventName: "PostToolUse", additionalContext: context } }, exit_code: 0 };
  if (point === "PostToolUse") return { output: block, exit_code: 0 };
  // And so at SessionStart and SubagentStart (VS Code's hooks reference, their outputs).
  if ((point === "SessionStart" || point === "SubagentStart") && context) return { output: { additionalContext: context, hookSpecificOutput: { hookEventName: point, additionalContext: context } }, exit_code: 0 };
  return { output: defined({ additionalContext: context }), exit_code: 0 };
}

export const copilotFormat: FormatModule = {
  format: "copilot",
  agent: "Copilot",
  interpret: interpretCopilot,
  effective: copilotEffective,
  answer: copilotAnswer,
  // Each blocking event's own block, together: preToolUse's deny (VS Code's in hookSpecificOutput),
  // permissionRequest's `behavior`, agentStop's and VS Code's prompt and post-tool `decision: "block"`.
  // The preToolUse deny alone is no block at permissionRequest: the CLI reads `behavior` there.
  blockAnyEvent: (reason) => {
    const deny = copilotDecision("PreToolUse" as EventPoint, { decision: "block", reason, notifications: [] }).output;
    return { output: { ...deny, behavior: "deny", message: reason, decision: "block", reason }, exit_code: 0 };
  },
  // copilot-hooks.md "Where hooks live": Repository `.github/hooks/*.json`; Inline settings `.github/copilot/settings.json`, `settings.local.json`
  repository: [
    { path: ".github/hooks", suffix: ".json", syntax: "json", load: loadCopilotFile },
    { path: ".github/copilot/settings.json", syntax: "json", load: loadSettings },
    { path: ".github/copilot/settings.local.json", syntax: "json", load: loadSettings },
  ],
};
