/**
 * @module The Gemini CLI format: a repository's `.gemini/settings.json` — `hooks.<Event>[]` of
 * matcher groups `{matcher, sequential, hooks: [{type, command, name, timeout}]}` with Gemini's event
 * names (`BeforeTool`, `AfterTool`, `BeforeAgent`, `AfterAgent`, `BeforeModel`, `AfterModel`,
 * `SessionStart` …), `timeout` in milliseconds, and snake_case payloads (Gemini CLI hooks reference).
 * Here: loading, its matcher, its exit-code and output rules, where its decisions count, and its
 * answers (`decision`, `reason`, `systemMessage`, `hookSpecificOutput.additionalContext`,
 * BeforeToolSelection's `hookSpecificOutput.toolConfig`, `continue: false` + `stopReason`).
 */
import { basename } from "node:path";
import { z } from "zod";
import type { Folded } from "../aggregate.js";
import { ALL, ALLOW_BLOCK, NONE, pointHasTool, type Decision, type EventPoint } from "../events.js";
import { compileRegex, MAX_MATCHER_CHARS, type HookDef, type HookSet, type Matcher } from "../hooks.js";
import type { RunResult } from "../run/types.js";
import { MAX_FUNCTION_NAME_CHARS, MAX_TOOL_NAMES, type ToolSelection, type Verdict } from "../verdict.js";
import { MAX_HOOK_NAME_CHARS } from "./cosh-toml.js";
import { formatPath, type Path } from "./locate.js";
import { type Answer, askDenyReason, badEntry, clipWords, configError, hookTimeout, countHook, defined, describeFailure, eventOf, type FormatModule, haltVerdict, knownKeys, type LoadContext, PAST_LIMIT, readMatcher, originOf, type ParsedFile, readDecision, pastBounds, readOutput, schemaError, schemaProblem, shown, skipOtherType, str, warn, withContext, withHalt, CommandSchema, HookEnvSchema } from "./shared.js";

/** @default 60 s — Gemini CLI's default hook timeout */
export const GEMINI_DEFAULT_TIMEOUT_MS = 60_000;

const HandlerSchema = z.strictObject({
  type: z.string(),
  command: CommandSchema.optional(),
  name: z.string().max(MAX_HOOK_NAME_CHARS, `a hook name is at most ${MAX_HOOK_NAME_CHARS} characters`).optional(),
  description: z.string().optional(),
  /** milliseconds */
  timeout: z.number().positive().optional(),
  /** Gemini CLI's CommandHookConfig `env`: variables set for this hook's process (read on its own: geminiEnv) */
  env: z.unknown().optional(),
});
const HANDLER_KEYS = Object.keys(HandlerSchema.shape);
const GroupSchema = z.strictObject({ matcher: z.string().optional(), sequential: z.boolean().optional(), hooks: z.array(z.unknown()) });
const GROUP_KEYS = Object.keys(GroupSchema.shape);
/** Settings of the hooks system itself, beside the events (older files keep them under `hooks`, newer under `hooksConfig`). */
const SwitchSchema = z.looseObject({ enabled: z.boolean().optional(), disabled: z.unknown().optional() });
const CONFIG_KEYS = new Set(["enabled", "disabled", "notifications"]);

/**
 * Gemini CLI's matcher: on tool events a regular expression found anywhere in the tool name; on
 * lifecycle events an exact string, compared with the event's own field.
 */
const MATCH_FIELD: Partial<Record<string, HookDef["matchOn"]>> = {
  SessionStart: { field: "source" },
  SessionEnd: { field: "reason" },
  PreCompact: { field: "trigger" },
  Notification: { field: "notification_type" },
};

/**
 * A handler's `env` as hookbox can give it (HookEnvSchema: names a shell takes, values of bounded
 * size, no NUL). One it cannot is warned about and left out — the hook still runs, as Gemini CLI
 * runs it: a repository's guard is never dropped over its env. The server's own config refuses it.
 */
function geminiEnv(parsed: ParsedFile, path: (string | number)[], given: unknown, ctx: LoadContext, warnings: string[]): Record<string, string> {
  if (given === undefined) return {};
  const env = HookEnvSchema.safeParse(given);
  if (env.success) return env.data as Record<string, string>;
  if (!ctx.tolerant) throw schemaError(parsed, env.error, path);
  const { path: at, message } = schemaProblem(env.error, path);
  warn(warnings, () => `${originOf(parsed, at)}: ${formatPath(at)}: ${message}; the hook runs without its env`);
  return {};
}

export function geminiMatcher(given: string | undefined, tool: boolean): Matcher | undefined {
  // Gemini CLI (hookPlanner) trims the matcher first.
  const pattern = given?.trim();
  if (pattern === undefined || pattern === "" || pattern === "*") return undefined;
  if (!tool) return { source: pattern, test: (value) => value === pattern };
  // "If it's not a valid regex, treat it as a literal string for an exact match" — a pattern
  // JavaScript cannot read ("[", "(") is compiled, never run, so its cost is its length only.
  if (pattern.length <= MAX_MATCHER_CHARS && !readsAsRegex(pattern)) return { source: pattern, test: (value) => value === pattern };
  return { source: pattern, test: compileRegex(pattern, { anchored: false }) };
}

function readsAsRegex(pattern: string): boolean {
  try {
    new RegExp(pattern);
    return true;
  } catch {
    return false;
  }
}

/**
 * What Gemini CLI's hook registry discards and goes on without — an event that is not a list, a
 * group without a `hooks` list, a hook without a type or a command: in a repository file skipped
 * with a warning, as Gemini skips it (the workspace's other hooks still run); in the server's own
 * config refused.
 */
function discard(parsed: ParsedFile, path: Path, ctx: LoadContext, warnings: string[], detail: string): void {
  if (!ctx.tolerant) throw configError(parsed, path, detail);
  warn(warnings, () => `${originOf(parsed, path)}: ${formatPath(path)}: ${detail}; skipped, as Gemini CLI skips it`);
}

/** The events Gemini CLI fires (hookRegistry): a hook under any other name never runs there. */
export const GEMINI_EVENTS: ReadonlySet<string> = new Set([
  "BeforeTool", "AfterTool", "BeforeAgent", "AfterAgent", "Notification", "SessionStart", "SessionEnd", "PreCompress", "BeforeModel", "AfterModel", "BeforeToolSelection",
]);

function loadGeminiSettings(parsed: ParsedFile, ctx: LoadContext): HookSet {
  const set: HookSet = { hooks: [], warnings: [], disableAll: false };
  const value = parsed.value as Record<string, unknown> | null;
  // settings.json holds much else (model, theme, tools …): only the hook keys are read.
  const hooks = value && typeof value === "object" ? value.hooks : undefined;
  if (hooks === undefined) return set;
  if (typeof hooks !== "object" || hooks === null || Array.isArray(hooks)) throw configError(parsed, ["hooks"], "hooks must be an object of events");
  const switches = [value!.hooksConfig, hooks].map((s) => SwitchSchema.safeParse(s ?? {})).map((s) => (s.success ? s.data : {}));
  set.disableAll = switches.some((s) => s.enabled === false);
  // Names of hooks switched off; a list that is not of names is warned about, not read (and costs one pass).
  const disabled = new Set<string>();
  switches.forEach((s, i) => {
    if (s.disabled === undefined) return;
    const names = Array.isArray(s.disabled) ? s.disabled : [];
    for (const n of names) if (typeof n === "string") disabled.add(n);
    if (!Array.isArray(s.disabled) || names.some((n) => typeof n !== "string"))
      warn(set.warnings, () => `${parsed.file}: ${i === 0 ? "hooksConfig" : "hooks"}.disabled: expected a list of hook names; what is not one is not read`);
  });
  for (const [event, groups] of Object.entries(hooks as Record<string, unknown>)) {
    if (CONFIG_KEYS.has(event)) continue;
    const resolved = eventOf(parsed, ["hooks", event], event, ctx, set.warnings, { agent: "Gemini CLI", names: GEMINI_EVENTS });
    if (!resolved) continue;
    if (!Array.isArray(groups)) {
      discard(parsed, ["hooks", event], ctx, set.warnings, "an event takes an array of hook groups");
      continue;
    }
    const tool = pointHasTool(resolved.point);
    // Gemini CLI (hookPlanner): an event's matched hooks run in parallel unless one of their groups
    // says `"sequential": true`, which makes them all run one after another. Read per file and
    // event: any such group there, and the event's hooks of this file run one by one.
    const oneByOne = groups.some((raw) => raw !== null && typeof raw === "object" && Array.isArray((raw as { hooks?: unknown }).hooks) && (raw as { sequential?: unknown }).sequential === true);
    groups.forEach((raw, g) => {
      if (raw === null || typeof raw !== "object" || !Array.isArray((raw as { hooks?: unknown }).hooks))
        return discard(parsed, ["hooks", event, g], ctx, set.warnings, 'a hook group needs a "hooks" list');
      const group = GroupSchema.safeParse(knownKeys(parsed, ["hooks", event, g], raw, GROUP_KEYS, ctx, set.warnings));
      // Gemini CLI's registry reads a group, and a hook, one at a time: one it cannot read is skipped alone.
      if (!group.success) return badEntry(parsed, group.error, ["hooks", event, g], ctx, set.warnings, true);
      const matcher = readMatcher(parsed, ["hooks", event, g, "matcher"], ctx, set.warnings, () => geminiMatcher(group.data.matcher, tool));
      if (matcher === PAST_LIMIT) return;
      group.data.hooks.forEach((rawHandler, h) => {
        const path = ["hooks", event, g, "hooks", h];
        const type = rawHandler !== null && typeof rawHandler === "object" ? (rawHandler as { type?: unknown }).type : undefined;
        if (typeof type !== "string") return discard(parsed, path, ctx, set.warnings, 'a hook needs "type": "command"');
        if (skipOtherType(parsed, path, rawHandler, ctx, set.warnings)) return;
        const handler = HandlerSchema.safeParse(knownKeys(parsed, path, rawHandler, HANDLER_KEYS, ctx, set.warnings));
        if (!handler.success) return badEntry(parsed, handler.error, path, ctx, set.warnings, true);
        const e = handler.data;
        if (!e.command) return discard(parsed, path, ctx, set.warnings, 'a "command" hook needs "command"');
        // Gemini CLI: a hook whose name — or, without one, whose command — is in `disabled` does not run.
        if (disabled.has(e.name || e.command)) return;
        countHook(parsed, path, ctx);
        set.hooks.push({
          name: e.name ?? `${basename(parsed.file)}:${event}[${g}].hooks[${h}]`,
          source: ctx.source,
          format: "gemini",
          point: resolved.point,
          eventName: event,
          dialect: "snake",
          matcher,
          ...(matcher && MATCH_FIELD[resolved.point] ? { matchOn: MATCH_FIELD[resolved.point] } : {}),
          command: e.command,
          // Gemini CLI runs its hooks in bash (\`bash -c\`).
          shell: "bash",
          ...hookTimeout(e.timeout ?? GEMINI_DEFAULT_TIMEOUT_MS, ctx),
          env: geminiEnv(parsed, [...path, "env"], e.env, ctx, set.warnings),
          failOpen: true,
          limits: {},
          mounts: [],
          origin: originOf(parsed, path),
          ...(oneByOne ? {} : { batch: `${basename(parsed.file)}:${event}` }),
        });
      });
    });
  }
  return set;
}

/**
 * Gemini CLI reads `continue: false` at these events only (hooks reference: SessionStart's
 * "`continue` and `decision` fields are ignored", PreCompress's, SessionEnd's and Notification's
 * "flow-control fields are ignored", BeforeToolSelection takes no `continue`).
 */
const GEMINI_CONTINUE_READ: ReadonlySet<string> = new Set(["PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "BeforeModel", "AfterModel"]);

/**
 * Where Gemini CLI reads `hookSpecificOutput.additionalContext` (hooks reference: AfterTool's is
 * "appended to the tool result", BeforeAgent's "appended to the prompt", SessionStart's injected as
 * the first turn); no other event lists it among its output fields, and there it is not read.
 */
const GEMINI_CONTEXT_READ: ReadonlySet<string> = new Set(["PostToolUse", "UserPromptSubmit", "SessionStart"]);

/** Hooks reference, BeforeToolSelection: "Does not support `decision`, `continue`, or `systemMessage`". */
const messageRead = (point: EventPoint): boolean => point !== "BeforeToolSelection";

/** @default 4096 — characters of a Gemini hook's plain text kept as its reason, message or warning */
export const GEMINI_TEXT_CHARS = 4096;

/**
 * Gemini CLI's rules, as its hook runner (`packages/core/src/hooks/hookRunner.ts`) applies them —
 * where the hooks reference's exit-code table ("Other: Warning") says otherwise, the runner decides
 * what the agent does: it reads stdout, else stderr, whatever the exit code; JSON is the answer;
 * plain text is a message at exit 0, a warning at exit 1 and a deny (the text its reason) at any
 * other exit, 2 included; nothing on either makes no decision, even at exit 2.
 */
export function interpretGemini(run: RunResult, hook: HookDef): Verdict {
  // A timeout, or a hook that could not run, is an error of the hook; the CLI goes on.
  if (run.outcome === "timed_out") return { decision: null, error: "timed out", rule: "gemini: a timeout is a warning; the CLI continues" };
  if (run.outcome !== "exited") return { decision: null, error: describeFailure(run), rule: "gemini: a failed hook is a warning; the CLI continues" };
  const code = run.exitCode;
  const text = run.stdout.trim() !== "" ? run.stdout : run.stderr;
  // A JSON string holding the answer is read once more, as Gemini CLI's hook runner does.
  const out = readOutput(text, true);
  if (out.kind === "empty" && text.trim() === "" && code !== 0)
    return { decision: null, error: describeFailure(run), rule: `gemini: exit ${code} with nothing on stdout or stderr makes no decision` };
  if (out.kind === "empty") return { decision: null, error: null, rule: "gemini: no output makes no decision" };
  if (out.kind === "invalid" && out.limit) return pastBounds(out, "gemini");
  if (out.kind === "invalid" && out.notJson) {
    const said = clipWords(text.trim(), GEMINI_TEXT_CHARS);
    if (code === 0) return { decision: null, systemMessage: messageRead(hook.point) ? said : undefined, error: null, rule: "gemini: text that is not JSON at exit 0 is a message; no decision" };
    if (code === 1) return { decision: null, warning: said, error: describeFailure(run), rule: "gemini: exit 1 is a warning; the CLI continues" };
    return { decision: "block", reason: said, error: null, rule: `gemini: exit ${code} blocks, its text the reason` };
  }
  if (out.kind === "invalid") return { decision: null, error: out.error, rule: "gemini: output that is not a JSON object makes no decision" };
  const o = out.value;
  // decision: allow | deny | block | ask | approve
  let decision = readDecision(o.decision, { approve: "allow" });
  if (decision === "invalid") return { decision: null, error: `unknown decision ${shown(o.decision)}`, rule: "gemini: an unknown decision is an error of the hook" };
  let reason = str(o.reason);
  let rule = (decision ? `gemini: decision "${String(o.decision)}"` : "gemini: no decision") + (code !== 0 ? ` (JSON read at exit ${code}, as Gemini CLI reads it)` : "");
  let halt: string | undefined;
  // "continue: If false, immediately terminates the agent loop for this turn." — read where the
  // loop runs; SessionStart, SessionEnd, PreCompress, Notification and BeforeToolSelection ignore it.
  if (o.continue === false && GEMINI_CONTINUE_READ.has(hook.point)) ({ decision, reason, rule, halt } = haltVerdict(o, hook.point, hook, reason, "gemini"));
  const specific = (typeof o.hookSpecificOutput === "object" && o.hookSpecificOutput !== null ? o.hookSpecificOutput : {}) as Record<string, unknown>;
  // BeforeTool: `hookSpecificOutput.tool_input` is merged over the tool's arguments (an argument
  // change, under the trust tiers like any other).
  const changed = hook.point === "PreToolUse" && typeof specific.tool_input === "object" && specific.tool_input !== null && !Array.isArray(specific.tool_input) ? specific.tool_input : undefined;
  // AfterTool: `hookSpecificOutput.tool_output` "replaces the tool output before it is sent to the
  // model" (a replacement under the trust tiers like any other).
  const replaced = hook.point === "PostToolUse" && typeof specific.tool_output === "string" ? specific.tool_output : undefined;
  // BeforeToolSelection: which tools the model may call (folded over every hook and tier: aggregate.ts).
  const tools = hook.point === "BeforeToolSelection" ? readToolSelection(specific.toolConfig) : undefined;
  if (tools) rule += `; gemini: toolConfig ${tools.said}`;
  // What Gemini CLI takes from these and hookbox does not pass on: said in the hook's record, never silently dropped.
  const untaken = ["llm_request", "llm_response"].filter((k) => specific[k] !== undefined && specific[k] !== null);
  if (untaken.length > 0) rule += `; gemini: hookSpecificOutput.${untaken.join(", ")} is not passed on by hookbox (Gemini CLI would take it)`;
  return {
    decision,
    reason,
    ...(halt !== undefined ? { halt } : {}),
    ...(tools ? { toolSelection: tools.selection } : {}),
    systemMessage: messageRead(hook.point) ? str(o.systemMessage) : undefined,
    additionalContext: GEMINI_CONTEXT_READ.has(hook.point) ? str(specific.additionalContext) : undefined,
    ...(changed !== undefined ? { modifiedArgs: changed } : {}),
    ...(replaced !== undefined ? { updatedOutput: replaced } : {}),
    error: null,
    rule,
  };
}

/** A function's name as the Gemini API takes one (MAX_FUNCTION_NAME_CHARS): a letter or `_` first. */
const TOOL_NAME = new RegExp(`^[A-Za-z_][A-Za-z0-9_.:-]{0,${MAX_FUNCTION_NAME_CHARS - 1}}$`);

/**
 * BeforeToolSelection's `hookSpecificOutput.toolConfig` as Gemini CLI's hook aggregator reads it
 * (`hookAggregator.ts`, mergeToolSelectionOutputs): none unless it is an object; `mode` "NONE" or "ANY"
 * as given, anything else AUTO; `allowedFunctionNames` the names the model may call — an empty array,
 * or a value that is false to JavaScript (null, ""), names none (Gemini adds nothing from it); any
 * other value that is no array (a string, whose letters Gemini would take for names) allows nothing.
 * A name that is no function's name (TOOL_NAME) is dropped; past MAX_TOOL_NAMES the list is cut.
 * Each only allows less — and a list whose every name was dropped allows nothing, never everything.
 */
function readToolSelection(given: unknown): { selection: ToolSelection; said: string } | undefined {
  if (typeof given !== "object" || given === null || Array.isArray(given)) return undefined;
  const { mode: m, allowedFunctionNames: listed } = given as Record<string, unknown>;
  const mode = m === "NONE" || m === "ANY" ? m : "AUTO";
  if (!listed || (Array.isArray(listed) && listed.length === 0)) return { selection: { mode }, said: `mode ${mode}, no tools named` };
  if (!Array.isArray(listed)) return { selection: { mode, names: [] }, said: `mode ${mode}, allowedFunctionNames is no list of names: no tool allowed` };
  const named = listed.slice(0, MAX_TOOL_NAMES);
  const names = [...new Set(named.filter((n): n is string => typeof n === "string" && TOOL_NAME.test(n)))];
  const odd = names.length < new Set(named).size ? `; a name that is no function's (${MAX_FUNCTION_NAME_CHARS} letters, digits, _ . : - at most, a letter or _ first) dropped` : "";
  const cut = listed.length > MAX_TOOL_NAMES ? `; the list cut at ${MAX_TOOL_NAMES} names (those past it not allowed)` : "";
  return { selection: { mode, names }, said: `mode ${mode}, ${names.length} tool${names.length === 1 ? "" : "s"} allowed${odd}${cut}` };
}

/**
 * Gemini CLI hooks, "Impact" per event: which can block. Before a tool an ask counts too — releases
 * of Gemini CLI before its hook asks read one as no block, so hookbox keeps it (an ask is never
 * loosened) and answers it as a deny.
 */
export function geminiEffective(point: EventPoint): ReadonlySet<Decision> {
  switch (point) {
    case "PreToolUse": return ALL; // BeforeTool: block the tool (an ask is said as a deny)
    case "PostToolUse": // AfterTool: block the result
    case "UserPromptSubmit": // BeforeAgent: block the turn
    case "Stop": // AfterAgent: a deny sends the agent on (retry)
    case "BeforeModel": // block the turn
    case "AfterModel": return ALLOW_BLOCK;
    default: return NONE;
  }
}

/**
 * Gemini CLI: `decision`, `reason`, `systemMessage`, `hookSpecificOutput` (`additionalContext` where
 * Gemini reads it — elsewhere the context joins `systemMessage`, as the user's to read; on
 * BeforeTool `tool_input`, the changed arguments, unless the call is denied), `continue` +
 * `stopReason`. An ask is said as a deny, its reason saying a hook asked: a release of Gemini CLI
 * without hook asks reads an ask as no block and runs the tool, and which release asks is not known here.
 */
function geminiAnswer(point: EventPoint, f: Folded): Answer {
  const decision = f.decision === "ask" ? "deny" : (f.decision ?? undefined);
  const reason = f.decision === "ask" ? askDenyReason(f.reason, "Gemini CLI") : f.decision ? f.reason : undefined;
  const changed = point === "PreToolUse" && decision !== "deny" && decision !== "block" && typeof f.modifiedArgs === "object" && f.modifiedArgs !== null ? f.modifiedArgs : undefined;
  const context = GEMINI_CONTEXT_READ.has(point);
  // BeforeToolSelection: the tools the model may call, as Gemini's own aggregator writes them (names
  // sorted). Gemini reads no decision there: hookbox's own block (the tenant's failure mode, a guard
  // cut short) leaves the model no tool.
  const tools: ToolSelection | undefined = point !== "BeforeToolSelection" ? undefined : f.decision === "block" ? { mode: "NONE", names: [] } : f.toolSelection;
  const toolConfig = tools ? { mode: tools.mode, allowedFunctionNames: tools.names ?? [] } : undefined;
  // AfterTool: the tool's output replaced — as text, which is what Gemini takes (another format's replacement as its JSON)
  const replaced = point === "PostToolUse" && f.updatedOutput !== undefined ? (typeof f.updatedOutput === "string" ? f.updatedOutput : JSON.stringify(f.updatedOutput)) : undefined;
  const specific = defined({ additionalContext: context ? f.additionalContext : undefined, tool_input: changed, toolConfig, tool_output: replaced });
  const output = defined({
    decision,
    reason,
    systemMessage: context ? f.systemMessage : withContext(f.systemMessage, f.additionalContext),
    hookSpecificOutput: Object.keys(specific).length > 0 ? specific : undefined,
  });
  return withHalt({ output, exit_code: 0 }, f);
}

export const geminiFormat: FormatModule = {
  format: "gemini",
  agent: "Gemini CLI",
  interpret: interpretGemini,
  effective: geminiEffective,
  answer: geminiAnswer,
  // Gemini CLI merges a hook's tool_input over the tool's arguments: what it runs is the merged whole.
  changeAsRun: (change, args) => ({ ...args, ...change }),
  // AfterTool's hookSpecificOutput.tool_output (geminiAnswer)
  replacesOutput: true,
  repository: [{ path: ".gemini/settings.json", syntax: "jsonc", load: loadGeminiSettings }],
};
