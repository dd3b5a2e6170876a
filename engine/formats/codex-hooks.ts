/**
 * @module The Codex format: a repository's `.codex/hooks.json` and the inline `[hooks]` of its
 * `.codex/config.toml`, in Claude Code's shape (event →
 * matcher groups → command handlers, `timeout` in seconds) and with Claude Code's exit-code and
 * output rules (Codex hooks documentation), but one difference that decides outcomes: Codex has no
 * `ask` — it refuses `permissionDecision: "ask"` as unsupported — so a Codex hook's ask is a block
 * (the call stops, as hookbox can offer no prompt in Codex's place); its matcher is one exact name
 * or a `|` list of them when it holds only letters, digits, `_` and `|`, else a regular expression
 * found anywhere, with `Edit` and `Write` standing for `apply_patch` and `Agent` for `spawn_agent`; it reads a hook's JSON at exit
 * 0 only; exit 2 blocks only with a reason on stderr (without one it is a failed hook), at
 * `PermissionRequest` too, and a JSON block without a reason is refused (a failed hook); at
 * compaction only `continue: false` stops.
 */
import type { Folded } from "../aggregate.js";
import type { EventPoint } from "../events.js";
import type { HookDef } from "../hooks.js";
import type { RunResult } from "../run/types.js";
import type { Verdict } from "../verdict.js";
import { compileRegex, type Matcher } from "../hooks.js";
import { claudeDecision, claudeEffective, interpretClaude, loadMatcherGroups, MAX_CONTEXT_CHARS } from "./claude-settings.js";
import { type Answer, askDenyReason, clipWords, describeFailure, type FormatModule, hookCalled, type Output, type ParsedFile, readOutput, withContext, withHalt } from "./shared.js";

/**
 * Codex's matcher aliases (`codex-rs/core/src/tools/hook_names.rs`): names of Claude Code's that
 * select a tool of Codex's — `Edit` and `Write` its `apply_patch`, `Agent` its `spawn_agent`.
 * The tool's own name is still the one its hooks are sent.
 */
const MATCHER_ALIASES: ReadonlyMap<string, readonly string[]> = new Map([
  ["apply_patch", ["Edit", "Write"]],
  ["spawn_agent", ["Agent"]],
]);

/**
 * Codex's matcher: "", "*" or none match all; letters, digits, `_` and `|` only: one exact name or a
 * list of exact names (`Bash` does not fire for `BashOutput`); anything else a regular expression
 * found anywhere in the tool name. A matcher that takes one of a tool's aliases fires for it too
 * (MATCHER_ALIASES: `Edit` or `Write` for `apply_patch`, `Agent` for `spawn_agent`). Linear: RE2 underneath.
 */
export function codexMatcher(pattern: string | undefined): Matcher | undefined {
  if (pattern === undefined || pattern === "" || pattern === "*") return undefined;
  let test: (name: string) => boolean;
  if (/^[A-Za-z0-9_|]+$/.test(pattern)) {
    const names = new Set(pattern.split("|"));
    test = (name) => names.has(name);
  } else test = compileRegex(pattern, { anchored: false });
  return { source: pattern, test: (name) => test(name) || (MATCHER_ALIASES.get(name)?.some(test) ?? false) };
}

/**
 * Codex's compaction hooks answer with `continue`, `stopReason`, `suppressOutput` and
 * `systemMessage` only (its output schemas deny any other field): exit 2 is no block there, any
 * non-zero exit a failed hook, and only `continue: false` stops — compaction with it.
 */
const COMPACTION_POINTS: ReadonlySet<string> = new Set(["PreCompact", "PostCompact"]);
const COMPACTION_FIELDS: ReadonlySet<string> = new Set(["continue", "stopReason", "suppressOutput", "systemMessage"]);

/**
 * What Codex refuses in a PermissionRequest answer (its output parser: "PermissionRequest hook
 * returned unsupported …"; the schema's reserved fields "fail closed"): the hook run failed, its
 * decision is dropped, and Codex asks its user as it would without the hook. The first one found,
 * in Codex's order, or undefined.
 */
function unsupportedPermissionField(o: Record<string, unknown>): string | undefined {
  const universal = unsupportedUniversalField(o);
  if (universal !== undefined) return universal;
  const specific = o.hookSpecificOutput;
  const d = typeof specific === "object" && specific !== null ? (specific as Record<string, unknown>).decision : undefined;
  if (typeof d !== "object" || d === null) return undefined;
  const decision = d as Record<string, unknown>;
  if (decision.updatedInput !== undefined && decision.updatedInput !== null) return "updatedInput";
  if (decision.updatedPermissions !== undefined && decision.updatedPermissions !== null) return "updatedPermissions";
  if (decision.interrupt === true) return "interrupt:true";
  return undefined;
}

/**
 * Codex hooks documentation: "PreToolUse and PermissionRequest support systemMessage, but not
 * continue, stopReason, or suppressOutput. Returning unsupported fields marks that hook run as
 * failed and Codex continues the tool call." The first one found, in Codex's order, or undefined.
 */
function unsupportedUniversalField(o: Record<string, unknown>): string | undefined {
  if (o.continue === false) return "continue:false";
  if (o.stopReason !== undefined && o.stopReason !== null) return "stopReason";
  if (o.suppressOutput === true) return "suppressOutput";
  return undefined;
}

/** Where Codex adds a hook's plain stdout as context (Codex hooks documentation). */
const STDOUT_IS_CONTEXT: ReadonlySet<string> = new Set(["SessionStart", "SubagentStart", "UserPromptSubmit"]);

/** Codex's own test of stdout (`looks_like_json`): `{` or `[` first and `}` or `]` last, blanks around aside. */
function looksLikeJson(text: string): boolean {
  const t = rustTrim(text);
  return (t.startsWith("{") || t.startsWith("[")) && (t.endsWith("}") || t.endsWith("]"));
}

/** The first field of a compaction hook's JSON answer Codex does not take; undefined when it takes them all (or it is no JSON object). */
function untakenCompactionField(out: Output): string | undefined {
  return out.kind === "object" ? Object.keys(out.value).find((k) => !COMPACTION_FIELDS.has(k)) : undefined;
}

export function interpretCodex(run: RunResult, hook: HookDef): Verdict {
  const compaction = COMPACTION_POINTS.has(hook.point);
  if (compaction && run.outcome === "exited" && run.exitCode !== 0) return { decision: null, error: describeFailure(run), rule: `codex: any non-zero exit at ${hook.point} is a failed hook (no block)` };
  if (run.outcome === "exited" && run.exitCode === 2) {
    // Codex: exit 2 is a block with stderr as its reason — at PermissionRequest too — and without one a failed hook.
    const said = rustTrim(run.stderr);
    if (!said) return { decision: null, error: "exit 2 with nothing on stderr", rule: "codex: exit 2 blocks only with a reason on stderr; without one the hook failed" };
    return { decision: "block", reason: said, error: null, rule: "codex: exit 2 blocks, stderr the reason" };
  }
  // Codex reads a hook's JSON at exit 0 only: another exit is a failed hook, whatever it printed.
  if (run.outcome === "exited" && run.exitCode !== 0) return { decision: null, error: describeFailure(run), rule: "codex: a non-zero exit other than 2 is a failed hook (its JSON is not read)" };
  // Read once, here, at exit 0 (the only exit left): Claude's reading and Codex's checks below share it.
  const out = run.outcome === "exited" ? readOutput(run.stdout) : undefined;
  // Codex hooks documentation: plain stdout of SessionStart, SubagentStart and UserPromptSubmit is
  // "added as extra developer/model context"; stdout that looks like JSON (`{`…`}` or `[`…`]`) and
  // is no answer fails the hook.
  if (out?.kind === "invalid" && !out.limit && STDOUT_IS_CONTEXT.has(hook.point)) {
    return looksLikeJson(run.stdout)
      ? { decision: null, error: out.error, rule: `codex: stdout of ${hook.point} that looks like JSON and is no answer fails the hook` }
      : { decision: null, additionalContext: clipWords(run.stdout.trim(), MAX_CONTEXT_CHARS), error: null, rule: `codex: plain stdout of ${hook.point} is added as context` };
  }
  // Codex takes no replaced tool output (its PostToolUse answer has no such field in use).
  const { updatedOutput: untaken, ...verdict } = interpretClaude(run, hook, out);
  if (compaction && out && verdict.limit === undefined) {
    const field = untakenCompactionField(out);
    if (field !== undefined) return { decision: null, error: `field "${field}" in a ${hook.point} answer`, rule: `codex: a ${hook.point} answer takes continue, stopReason, suppressOutput and systemMessage only — with "${field}" the hook failed` };
  }
  if (hook.point === "PermissionRequest" && out && verdict.limit === undefined) {
    const field = out.kind === "object" ? unsupportedPermissionField(out.value) : undefined;
    if (field !== undefined) return { decision: null, error: `PermissionRequest hook returned unsupported ${field}`, rule: `codex: a PermissionRequest answer with ${field} fails the hook — its decision is dropped and Codex asks its user` };
  }
  if (hook.point === "PreToolUse" && out && verdict.limit === undefined) {
    const field = out.kind === "object" ? unsupportedUniversalField(out.value) : undefined;
    if (field !== undefined) return { decision: null, error: `PreToolUse hook returned unsupported ${field}`, rule: `codex: a PreToolUse answer with ${field} fails the hook — its decision is dropped and the call goes on` };
  }
  // Codex hooks documentation, SubagentStart: "continue: false does not stop a subagent from starting" — nor anything else.
  if (hook.point === "SubagentStart" && verdict.halt !== undefined) {
    const { halt: _ignored, ...rest } = verdict;
    return { ...rest, decision: null, reason: undefined, rule: `${rest.rule.replace(/^claude:/, "codex:")}; codex: continue = false at SubagentStart stops nothing` };
  }
  const rule = verdict.rule.replace(/^claude:/, "codex:") + (untaken !== undefined ? "; codex: a replaced tool output is not taken" : "");
  // Codex refuses a deny or block whose reason is missing or blank, and the call goes on — but for
  // PermissionRequest's deny, whose message it fills in ("PermissionRequest hook denied approval").
  if (verdict.decision === "block" && verdict.halt === undefined && hook.point !== "PermissionRequest" && !rustTrim(verdict.reason ?? ""))
    return { decision: null, error: "a block without a reason", rule: `${rule}; codex: a block without a reason is refused — the hook failed` };
  if (verdict.decision !== "ask") return { ...verdict, rule };
  return { ...verdict, decision: "block", reason: verdict.reason ?? `${hookCalled(hook)} asked, and Codex has no ask`, rule: `${rule}; codex: no ask — an ask is a block` };
}

/**
 * The events whose answer Codex reads a `hookSpecificOutput` of. Codex refuses an answer with a
 * field it does not know (its output types deny unknown fields), so anywhere else one would cost
 * the whole answer, block and all.
 */
const CODEX_SPECIFIC_POINTS: ReadonlySet<string> = new Set(["PreToolUse", "PostToolUse", "SessionStart", "SubagentStart", "UserPromptSubmit"]);

/**
 * Codex answers as Claude Code does, with an ask said as a deny, and nothing Codex refuses — an
 * answer it refuses counts as a failed hook and the call goes on:
 * - a `PreToolUse` allow is said only with changed arguments, and changed arguments only with an
 *   allow (Codex: "updatedInput without permissionDecision:allow" is refused). Changed arguments
 *   with a block are not said; with no allow the engine has blocked the call already
 *   (changeTakenWith: it must not go out as sent in the change's place);
 * - a `PermissionRequest` answer never carries changed arguments (Codex refuses `updatedInput`
 *   there): an allow given with a change is not said either — Codex asks its user instead;
 * - `continue: false` + `stopReason` are said where Codex reads them (SessionStart, UserPromptSubmit,
 *   PostToolUse, Stop, compaction …); never at PreToolUse or PermissionRequest, which refuse them
 *   as unsupported — there the block the stop came with is said.
 */
function codexAnswer(point: EventPoint, f: Folded): Answer {
  const { halt, modifiedArgs, ...rest } = f;
  let decision = f.decision === "ask" ? "block" : f.decision;
  let changed = modifiedArgs;
  let untaken: string | undefined;
  if (changed !== undefined && (point === "PermissionRequest" || decision !== "allow")) {
    if (decision === "allow") decision = null; // that allow was given for the change
    if (decision === null) untaken = `hookbox: a hook changed the arguments, and Codex takes a change ${point === "PermissionRequest" ? "only before the tool runs (PreToolUse)" : "only together with an allow"}: the change was not applied`;
    changed = undefined;
  }
  if (point === "PreToolUse" && decision === "allow" && changed === undefined) decision = null;
  if (COMPACTION_POINTS.has(point)) {
    // No decision field there: a block of compaction is said as the stop Codex takes from these hooks.
    // After it (PostCompact) there is nothing to block — a block there is only ever the tenant's
    // failure mode, which stops no agent (the forwarders' exit 2 is a failed hook there too).
    const stop = halt ?? (decision === "block" && point === "PreCompact" ? rustTrim(rest.reason ?? "") || "compaction blocked by a hook" : undefined);
    const message = withContext(rest.systemMessage, rest.additionalContext);
    return { output: { ...(stop !== undefined ? { continue: false, stopReason: stop } : {}), ...(message !== undefined ? { systemMessage: message } : {}) }, exit_code: 0 };
  }
  // No decision field at a session's or subagent's start either (Codex refuses the whole answer over
  // one, and goes on): a block there is said as the stop it is.
  let stop = halt;
  if (START_POINTS.has(point) && decision === "block") {
    stop ??= rustTrim(rest.reason ?? "") || "blocked by a hook";
    decision = null;
  }
  const told = withContext(rest.systemMessage, untaken);
  // Codex refuses a deny or block whose reason is missing or blank (and lets the call go on).
  const blank = !rustTrim(rest.reason ?? "");
  const reason = f.decision === "ask" ? askDenyReason(blank ? undefined : rest.reason, "Codex") : decision === "block" && blank ? "blocked by a hook" : rest.reason;
  const answer = claudeDecision(point, { ...rest, decision, ...(reason !== undefined ? { reason } : {}), ...(changed !== undefined ? { modifiedArgs: changed } : {}), ...(told !== undefined ? { systemMessage: told } : {}) }, CODEX_SPECIFIC_POINTS);
  return NO_STOP_POINTS.has(point) ? answer : withHalt(answer, { ...f, ...(stop !== undefined ? { halt: stop } : {}) });
}

/**
 * `text` without the white space Rust's `str::trim` takes off each end — Unicode's White_Space: the
 * NEL (U+0085) too, the byte-order mark (U+FEFF) not, unlike JavaScript's trim. Codex judges a
 * reason blank, and an exit 2's stderr empty, by it. One pass from each end.
 */
export function rustTrim(text: string): string {
  const white = (c: number) =>
    (c >= 0x09 && c <= 0x0d) || c === 0x20 || c === 0x85 || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000;
  let start = 0;
  let end = text.length;
  while (start < end && white(text.charCodeAt(start))) start++;
  while (end > start && white(text.charCodeAt(end - 1))) end--;
  return text.slice(start, end);
}

/** Codex's answers at these events hold no `decision` or `reason` (their output schemas take none, and refuse what they do not know). */
const START_POINTS: ReadonlySet<string> = new Set(["SessionStart", "SubagentStart"]);

/** Codex refuses `continue: false` and `stopReason` here as unsupported (the whole answer with them). */
const NO_STOP_POINTS: ReadonlySet<string> = new Set(["PreToolUse", "PermissionRequest"]);

export const codexFormat: FormatModule = {
  format: "codex",
  agent: "Codex",
  changeTakenWith: "allow",
  interpret: interpretCodex,
  effective: claudeEffective,
  answer: codexAnswer,
  // Codex reads both, side by side: "If a single layer contains both hooks.json and inline [hooks], Codex loads both."
  repository: [
    { path: ".codex/hooks.json", syntax: "json", load: (parsed, ctx) => loadMatcherGroups(parsed, ctx, "codex", codexMatcher, CODEX_FIRES) },
    {
      path: ".codex/config.toml",
      syntax: "toml",
      load: (parsed, ctx) => {
        const set = loadMatcherGroups(hooksTableOf(parsed), ctx, "codex", codexMatcher, CODEX_FIRES);
        return hooksSwitchedOff(parsed) ? { ...set, disableAll: true } : set;
      },
    },
  ],
};

/** The events Codex fires (Codex hooks documentation): a hook under another name (Gemini's `BeforeTool`, Copilot's `preToolUse`) never runs there. */
export const CODEX_EVENTS: ReadonlySet<string> = new Set(["SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "PreCompact", "PostCompact", "SubagentStart", "SubagentStop", "Stop"]);
const CODEX_FIRES = { agent: "Codex", names: CODEX_EVENTS };

/**
 * `.codex/config.toml` holds all of a project's Codex settings; only its inline `[hooks]` tables
 * (`[[hooks.PreToolUse]]` groups of `[[hooks.PreToolUse.hooks]]` handlers, hooks.json's shape) are
 * hooks. The rest is neither read nor warned about.
 */
/** Codex's `[features] hooks = false` (or its older name `codex_hooks`): Codex runs none of its hooks, hooks.json's neither. */
function hooksSwitchedOff(parsed: ParsedFile): boolean {
  const v = parsed.value;
  const features = typeof v === "object" && v !== null && !Array.isArray(v) ? (v as { features?: unknown }).features : undefined;
  if (typeof features !== "object" || features === null) return false;
  const f = features as { hooks?: unknown; codex_hooks?: unknown };
  return f.hooks === false || f.codex_hooks === false;
}

function hooksTableOf(parsed: ParsedFile): ParsedFile {
  const v = parsed.value;
  const hooks = typeof v === "object" && v !== null && !Array.isArray(v) ? (v as { hooks?: unknown }).hooks : undefined;
  return { ...parsed, value: hooks === undefined ? {} : { hooks } };
}
