/**
 * @module The Codex format: a repository's `.codex/hooks.json`, in Claude Code's shape (event →
 * matcher groups → command handlers, `timeout` in seconds) and with Claude Code's exit-code and
 * output rules (Codex hooks documentation), but one difference that decides outcomes: Codex has no
 * `ask` — it refuses `permissionDecision: "ask"` as unsupported — so a Codex hook's ask is a block
 * (the call stops, as hookbox can offer no prompt in Codex's place).
 */
import type { Folded } from "../aggregate.js";
import type { EventPoint } from "../events.js";
import type { HookDef } from "../hooks.js";
import type { RunResult } from "../run/types.js";
import type { Verdict } from "../verdict.js";
import { claudeAnswer, claudeEffective, interpretClaude, loadMatcherGroups } from "./claude-settings.js";
import type { Answer, FormatModule } from "./shared.js";

export function interpretCodex(run: RunResult, hook: HookDef): Verdict {
  const verdict = interpretClaude(run, hook);
  const rule = verdict.rule.replace(/^claude:/, "codex:");
  if (verdict.decision !== "ask") return { ...verdict, rule };
  return { ...verdict, decision: "block", reason: verdict.reason ?? `hook ${hook.name} asked, and Codex has no ask`, rule: `${rule}; codex: no ask — an ask is a block` };
}

/** Codex answers as Claude Code does, with an ask said as a deny. */
function codexAnswer(point: EventPoint, f: Folded): Answer {
  return claudeAnswer(point, f.decision === "ask" ? { ...f, decision: "block" } : f);
}

export const codexFormat: FormatModule = {
  format: "codex",
  interpret: interpretCodex,
  effective: claudeEffective,
  answer: codexAnswer,
  repository: [{ path: ".codex/hooks.json", syntax: "json", load: (parsed, ctx) => loadMatcherGroups(parsed, ctx, "codex") }],
};
