/**
 * @module The Codex format: a repository's `.codex/hooks.json`, in Claude Code's shape (event →
 * matcher groups → command handlers, `timeout` in seconds) and with Claude Code's exit-code and
 * output rules (Codex hooks documentation), but one difference that decides outcomes: Codex has no
 * `ask` — it refuses `permissionDecision: "ask"` as unsupported — so a Codex hook's ask is a block
 * (the call stops, as hookbox can offer no prompt in Codex's place); and its matcher is a regular
 * expression found anywhere, with `Edit` and `Write` standing for `apply_patch`.
 */
import type { Folded } from "../aggregate.js";
import type { EventPoint } from "../events.js";
import type { HookDef } from "../hooks.js";
import type { RunResult } from "../run/types.js";
import type { Verdict } from "../verdict.js";
import { compileRegex, type Matcher } from "../hooks.js";
import { claudeAnswer, claudeEffective, interpretClaude, loadMatcherGroups } from "./claude-settings.js";
import type { Answer, FormatModule } from "./shared.js";

/** Codex: "`apply_patch` matchers may also use `Edit` or `Write`". */
const APPLY_PATCH_ALIASES = ["Edit", "Write"];

/**
 * Codex's matcher: a regular expression found anywhere in the tool name ("", "*" or none match
 * all); a matcher that finds `Edit` or `Write` also fires for `apply_patch`, Codex's one file-edit
 * tool. Linear: RE2 underneath.
 */
export function codexMatcher(pattern: string | undefined): Matcher | undefined {
  if (pattern === undefined || pattern === "" || pattern === "*") return undefined;
  const test = compileRegex(pattern, { anchored: false });
  return { source: pattern, test: (name) => test(name) || (name === "apply_patch" && APPLY_PATCH_ALIASES.some(test)) };
}

export function interpretCodex(run: RunResult, hook: HookDef): Verdict {
  const verdict = interpretClaude(run, hook);
  const rule = verdict.rule.replace(/^claude:/, "codex:");
  if (verdict.decision !== "ask") return { ...verdict, rule };
  return { ...verdict, decision: "block", reason: verdict.reason ?? `hook ${hook.name} asked, and Codex has no ask`, rule: `${rule}; codex: no ask — an ask is a block` };
}

/**
 * Codex answers as Claude Code does, with an ask said as a deny. What Codex parses but does not
 * support — it marks the hook failed and lets the call go on — is not said at all: a
 * `PreToolUse` allow without changed arguments (the call goes to Codex's own approval flow, as
 * with no answer) and
 * `continue: false` (the block it came with is said, and a stop point's stop needs no words).
 */
function codexAnswer(point: EventPoint, f: Folded): Answer {
  const decision = f.decision === "ask" ? "block" : point === "PreToolUse" && f.decision === "allow" && f.modifiedArgs === undefined ? null : f.decision;
  const { halt: _unsaid, ...rest } = f;
  return claudeAnswer(point, { ...rest, decision });
}

export const codexFormat: FormatModule = {
  format: "codex",
  interpret: interpretCodex,
  effective: claudeEffective,
  answer: codexAnswer,
  repository: [{ path: ".codex/hooks.json", syntax: "json", load: (parsed, ctx) => loadMatcherGroups(parsed, ctx, "codex", codexMatcher) }],
};
