/**
 * @module The folded result as a hook of each dialect would print it: the exact stdout object and
 * exit code (SERVICE.md §3 `output` / `exit_code`), so a forwarding hook can hand it to its agent
 * unchanged. Pure.
 */
import type { Folded } from "./aggregate.js";
import { pointName, type EventPoint, type Format } from "./events.js";

export interface Answer {
  output: Record<string, unknown>;
  exit_code: number;
}

const defined = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

export function answerFor(format: Format, point: EventPoint, f: Folded): Answer {
  switch (format) {
    case "cosh": return { output: cosh(f), exit_code: 0 };
    case "copilot": return { output: copilot(point, f), exit_code: 0 };
    case "claude": return { output: claude(point, f), exit_code: 0 };
    default: {
      const _exhaustive: never = format;
      throw new Error(`unknown format ${String(_exhaustive)}`);
    }
  }
}

/** cosh-hooks.md "Output": decision, reason, systemMessage, hookSpecificOutput.additional_context. */
function cosh(f: Folded): Record<string, unknown> {
  return defined({
    decision: f.decision ?? undefined,
    reason: f.decision ? f.reason : undefined,
    systemMessage: f.systemMessage,
    hookSpecificOutput:
      f.additionalContext || f.modifiedArgs !== undefined
        ? defined({ additional_context: f.additionalContext || undefined, tool_input: f.modifiedArgs })
        : undefined,
  });
}

/** copilot-hooks.md: permissionDecision (+ reason, required with deny), modifiedArgs; decision "block" for agentStop. */
function copilot(point: EventPoint, f: Folded): Record<string, unknown> {
  const context = f.additionalContext;
  if (point === "PreToolUse" || point === "PermissionRequest") {
    const permissionDecision = f.decision === "block" ? "deny" : (f.decision ?? undefined);
    return defined({
      permissionDecision,
      permissionDecisionReason: permissionDecision === "deny" ? (f.reason ?? "denied by hookbox") : f.decision ? f.reason : undefined,
      modifiedArgs: f.modifiedArgs,
      additionalContext: context,
    });
  }
  if ((point === "Stop" || point === "SubagentStop") && f.decision === "block") {
    return defined({ decision: "block", reason: f.reason, additionalContext: context });
  }
  return defined({ additionalContext: context });
}

/** Claude Code: hookSpecificOutput.permissionDecision for PreToolUse; decision "block" + reason elsewhere. */
function claude(point: EventPoint, f: Folded): Record<string, unknown> {
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
    return defined({ hookSpecificOutput: Object.keys(specific).length > 1 ? specific : undefined, systemMessage: f.systemMessage });
  }
  if (point === "PermissionRequest") {
    const behavior = f.decision === "block" ? "deny" : f.decision === "allow" ? "allow" : undefined;
    return defined({
      hookSpecificOutput: behavior ? { hookEventName, decision: defined({ behavior, message: f.reason }) } : undefined,
      systemMessage: f.systemMessage,
    });
  }
  return defined({
    decision: f.decision === "block" ? "block" : undefined,
    reason: f.decision === "block" ? f.reason : undefined,
    hookSpecificOutput: f.additionalContext ? { hookEventName, additionalContext: f.additionalContext } : undefined,
    systemMessage: f.systemMessage,
  });
}
