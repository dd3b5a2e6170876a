/**
 * @module The Gemini CLI format: a repository's `.gemini/settings.json` — `hooks.<Event>[]` of
 * matcher groups `{matcher, sequential, hooks: [{type, command, name, timeout}]}` with Gemini's event
 * names (`BeforeTool`, `AfterTool`, `BeforeAgent`, `AfterAgent`, `BeforeModel`, `AfterModel`,
 * `SessionStart` …), `timeout` in milliseconds, and snake_case payloads (Gemini CLI hooks reference).
 * Here: loading, its matcher, its exit-code and output rules, where its decisions count, and its
 * answers (`decision`, `reason`, `systemMessage`, `hookSpecificOutput.additionalContext`,
 * `continue: false` + `stopReason`).
 */
import { basename } from "node:path";
import { z } from "zod";
import type { Folded } from "../aggregate.js";
import { ALL, ALLOW_BLOCK, NONE, pointHasTool, type Decision, type EventPoint } from "../events.js";
import { compileRegex, MAX_MATCHER_CHARS, type HookDef, type HookSet, type Matcher } from "../hooks.js";
import type { RunResult } from "../run/types.js";
import type { Verdict } from "../verdict.js";
import { MAX_HOOK_NAME_CHARS } from "./cosh-toml.js";
import { type Answer, askDenyReason, clip, configError, hookTimeout, countHook, defined, describeFailure, eventOf, type FormatModule, haltVerdict, knownKeys, type LoadContext, readMatcher, originOf, type ParsedFile, readDecision, readOutput, schemaError, shown, skipOtherType, str, warn, withHalt, CommandSchema } from "./shared.js";

/** @default 60 s — Gemini CLI's default hook timeout */
export const GEMINI_DEFAULT_TIMEOUT_MS = 60_000;

const HandlerSchema = z.strictObject({
  type: z.string(),
  command: CommandSchema.optional(),
  name: z.string().max(MAX_HOOK_NAME_CHARS, `a hook name is at most ${MAX_HOOK_NAME_CHARS} characters`).optional(),
  description: z.string().optional(),
  /** milliseconds */
  timeout: z.number().positive().optional(),
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

/** The events Gemini CLI fires (hookRegistry): a hook under any other name never runs there. */
const GEMINI_EVENTS: ReadonlySet<string> = new Set([
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
    if (!Array.isArray(groups)) throw configError(parsed, ["hooks", event], "an event takes an array of hook groups");
    const tool = pointHasTool(resolved.point);
    // Gemini CLI (hookPlanner): an event's matched hooks run in parallel unless one of their groups
    // says `"sequential": true`, which makes them all run one after another. Read per file and
    // event: any such group there, and the event's hooks of this file run one by one.
    const oneByOne = groups.some((raw) => raw !== null && typeof raw === "object" && (raw as { sequential?: unknown }).sequential === true);
    groups.forEach((raw, g) => {
      const group = GroupSchema.safeParse(knownKeys(parsed, ["hooks", event, g], raw, GROUP_KEYS, ctx, set.warnings));
      if (!group.success) throw schemaError(parsed, group.error, ["hooks", event, g]);
      const matcher: Matcher | undefined = readMatcher(parsed, ["hooks", event, g, "matcher"], ctx, set.warnings, () => geminiMatcher(group.data.matcher, tool));
      group.data.hooks.forEach((rawHandler, h) => {
        const path = ["hooks", event, g, "hooks", h];
        if (skipOtherType(parsed, path, rawHandler, ctx, set.warnings)) return;
        const handler = HandlerSchema.safeParse(knownKeys(parsed, path, rawHandler, HANDLER_KEYS, ctx, set.warnings));
        if (!handler.success) throw schemaError(parsed, handler.error, path);
        const e = handler.data;
        if (!e.command) throw configError(parsed, path, 'a "command" hook needs "command"');
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
          ...hookTimeout(e.timeout ?? GEMINI_DEFAULT_TIMEOUT_MS, ctx),
          env: {},
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

/** Gemini CLI's rules (hooks reference, "Exit codes" and "Common output fields"). */
export function interpretGemini(run: RunResult, hook: HookDef): Verdict {
  // "Other: Warning. A non-fatal failure occurred; the CLI continues with a warning."
  if (run.outcome === "timed_out") return { decision: null, error: "timed out", rule: "gemini: a timeout is a warning; the CLI continues" };
  if (run.outcome !== "exited") return { decision: null, error: describeFailure(run), rule: "gemini: a failed hook is a warning; the CLI continues" };
  // "2: System Block. The action is blocked; stderr is used as the rejection reason."
  if (run.exitCode === 2) return { decision: "block", reason: run.stderr.trim() || `blocked by hook ${hook.name} (exit 2)`, error: null, rule: "gemini: exit 2 blocks with stderr as the reason" };
  if (run.exitCode !== 0) return { decision: null, warning: clip(run.stderr.trim(), 4096) || undefined, error: describeFailure(run), rule: "gemini: another exit code is a warning; the CLI continues" };
  // A JSON string holding the answer is read once more, as Gemini CLI's hook runner does.
  const out = readOutput(run.stdout, true);
  if (out.kind === "empty") return { decision: null, error: null, rule: "gemini: no output makes no decision" };
  if (out.kind === "invalid") return { decision: null, error: out.error, rule: "gemini: stdout that is not JSON makes no decision" };
  const o = out.value;
  // decision: allow | deny | block | ask | approve
  let decision = readDecision(o.decision, { approve: "allow" });
  if (decision === "invalid") return { decision: null, error: `unknown decision ${shown(o.decision)}`, rule: "gemini: an unknown decision is an error of the hook" };
  let reason = str(o.reason);
  let rule = decision ? `gemini: decision "${String(o.decision)}"` : "gemini: no decision";
  let halt: string | undefined;
  // "continue: If false, immediately terminates the agent loop for this turn." — read where the
  // loop runs; SessionStart, SessionEnd, PreCompress, Notification and BeforeToolSelection ignore it.
  if (o.continue === false && GEMINI_CONTINUE_READ.has(hook.point)) ({ decision, reason, rule, halt } = haltVerdict(o, hook.point, hook.name, reason, "gemini"));
  const specific = (typeof o.hookSpecificOutput === "object" && o.hookSpecificOutput !== null ? o.hookSpecificOutput : {}) as Record<string, unknown>;
  // BeforeTool: `hookSpecificOutput.tool_input` is merged over the tool's arguments (an argument
  // change, under the trust tiers like any other).
  const changed = hook.point === "PreToolUse" && typeof specific.tool_input === "object" && specific.tool_input !== null && !Array.isArray(specific.tool_input) ? specific.tool_input : undefined;
  return {
    decision,
    reason,
    ...(halt !== undefined ? { halt } : {}),
    systemMessage: str(o.systemMessage),
    additionalContext: str(specific.additionalContext),
    ...(changed !== undefined ? { modifiedArgs: changed } : {}),
    error: null,
    rule,
  };
}

/**
 * Gemini CLI hooks, "Impact" per event: which can block. Before a tool an ask counts too — Gemini
 * reads it as no block, so hookbox keeps it (an ask is never loosened) and answers it as a deny.
 */
function geminiEffective(point: EventPoint): ReadonlySet<Decision> {
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
 * Gemini CLI: `decision`, `reason`, `systemMessage`, `hookSpecificOutput` (`additionalContext`; on
 * BeforeTool `tool_input`, the changed arguments, unless the call is denied), `continue` +
 * `stopReason`. Gemini has no ask — it reads one as no block and runs the tool — so an ask is said
 * as a deny, its reason saying a hook asked.
 */
function geminiAnswer(point: EventPoint, f: Folded): Answer {
  const decision = f.decision === "ask" ? "deny" : (f.decision ?? undefined);
  const reason = f.decision === "ask" ? askDenyReason(f.reason, "Gemini CLI") : f.decision ? f.reason : undefined;
  const changed = point === "PreToolUse" && decision !== "deny" && decision !== "block" && typeof f.modifiedArgs === "object" && f.modifiedArgs !== null ? f.modifiedArgs : undefined;
  const specific = defined({ additionalContext: f.additionalContext, tool_input: changed });
  const output = defined({
    decision,
    reason,
    systemMessage: f.systemMessage,
    hookSpecificOutput: Object.keys(specific).length > 0 ? specific : undefined,
  });
  return withHalt({ output, exit_code: 0 }, f);
}

export const geminiFormat: FormatModule = {
  format: "gemini",
  interpret: interpretGemini,
  effective: geminiEffective,
  answer: geminiAnswer,
  // Gemini CLI merges a hook's tool_input over the tool's arguments: what it runs is the merged whole.
  changeAsRun: (change, args) => ({ ...args, ...change }),
  repository: [{ path: ".gemini/settings.json", syntax: "jsonc", load: loadGeminiSettings }],
};
