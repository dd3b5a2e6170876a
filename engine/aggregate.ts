/**
 * @module Folding hook verdicts into one decision (SERVICE.md §4, cosh-hooks.md "Execution Model").
 * Pure.
 */
import { effectiveDecisions, type Decision } from "./events.js";
import type { HookDef } from "./hooks.js";
import type { Verdict } from "./verdict.js";

export interface Judged {
  hook: HookDef;
  verdict: Verdict;
}

/** cosh-hooks.md: block wins (short-circuit); otherwise ask beats allow beats pass-through. */
const RANK: Record<Decision, number> = { block: 3, ask: 2, allow: 1 };

/** Whether a hook's decision counts where it was made. */
export function isEffective(j: Judged): boolean {
  return j.verdict.decision !== null && effectiveDecisions(j.hook.point, j.hook.format).has(j.verdict.decision);
}

export interface Notification {
  type: "stream_event";
  event: { subtype: "hook_notification"; hook_name: string; message: string; decision?: Decision };
}

/** cosh-hooks.md "Notifications": one per hook with a systemMessage, else a reason. */
export function notificationOf(j: Judged): Notification | undefined {
  const message = j.verdict.systemMessage ?? j.verdict.reason ?? j.verdict.warning;
  if (!message) return undefined;
  return {
    type: "stream_event",
    event: { subtype: "hook_notification", hook_name: j.hook.name, message, ...(j.verdict.decision ? { decision: j.verdict.decision } : {}) },
  };
}

export interface Folded {
  decision: Decision | null;
  reason?: string;
  systemMessage?: string;
  additionalContext?: string;
  modifiedArgs?: unknown;
  notifications: Notification[];
  /** why the decision is what it is, when a service rule (not a hook) changed it */
  note?: string;
}

export function fold(judged: Judged[], opts: { interactive: boolean }): Folded {
  let winner: Judged | undefined;
  for (const j of judged) {
    if (!isEffective(j)) continue;
    if (!winner || RANK[j.verdict.decision!] > RANK[winner.verdict.decision!]) winner = j;
  }
  const contexts = judged.map((j) => j.verdict.additionalContext).filter((c): c is string => !!c);
  // Arguments rewritten by a hook that allowed (or made no decision); a block discards them.
  const modified = judged.filter((j) => j.verdict.modifiedArgs !== undefined && j.verdict.decision !== "block").at(-1);
  const folded: Folded = {
    decision: winner?.verdict.decision ?? null,
    reason: winner?.verdict.reason,
    systemMessage: winner?.verdict.systemMessage,
    additionalContext: contexts.length ? contexts.join("\n") : undefined,
    notifications: judged.map(notificationOf).filter((n): n is Notification => n !== undefined),
  };
  if (modified && folded.decision !== "block") folded.modifiedArgs = modified.verdict.modifiedArgs;
  // copilot-hooks.md: "ask needs an interactive approval flow … where no prompt is shown, it is treated as a deny"
  if (folded.decision === "ask" && !opts.interactive) {
    folded.decision = "block";
    folded.reason ??= `hook ${winner!.hook.name} asked for confirmation and no one can answer`;
    folded.note = "ask is a block when no one can answer (interactive=false)";
  }
  return folded;
}
