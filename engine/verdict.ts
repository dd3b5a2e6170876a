/**
 * @module What one hook's run means under the rules of the format that declared it.
 */
import type { Decision } from "./events.js";
import type { HookDef } from "./hooks.js";
import type { RunResult } from "./run/types.js";

export interface Verdict {
  /** the decision the hook's run comes to under its format's rules; null passes through */
  decision: Decision | null;
  reason?: string;
  systemMessage?: string;
  additionalContext?: string;
  /** copilot-hooks.md: "A hook can also supply modifiedArgs" */
  modifiedArgs?: unknown;
  /**
   * What the model sees in place of the tool's output: Claude Code's PostToolUse
   * `hookSpecificOutput.updatedToolOutput` (`updatedMCPToolOutput`, its older name for MCP tools).
   */
  updatedOutput?: unknown;
  /**
   * The hook asked the agent to stop altogether (Claude's and VS Code's `"continue": false`), with
   * this reason (`stopReason`). It outranks the event's own decision: on `Stop` the agent stops even
   * if another hook's block would keep it going; elsewhere the verdict also blocks.
   */
  halt?: string;
  /** shown to the user without a decision (copilot-hooks.md: exit 2 "is a warning") */
  warning?: string;
  /** the hook failed: not a JSON object, unknown decision, non-zero exit, timeout … */
  error: string | null;
  /** which rule of which document decided, e.g. "copilot: non-zero exit on preToolUse denies" */
  rule: string;
  /** set when the hook's trust tier keeps its decision from counting (a repository's allow) */
  distrusted?: string;
  /** the hook answered past one of hookbox's own bounds (its agent has none): hookbox did not decide */
  limit?: "output_shape";
  /** which tools the model may call next (Gemini CLI's BeforeToolSelection `toolConfig`) */
  toolSelection?: ToolSelection;
  /** Claude Code's `permissionDecision: "defer"`: no decision, but no other hook's allow skips the agent's own permission flow */
  deferred?: true;
}

/**
 * Which tools the model may call (Gemini CLI hooks reference, BeforeToolSelection): `mode` NONE
 * (no tool at all), ANY (it must call one) or AUTO; `names`, the `allowedFunctionNames` it may call —
 * undefined when none are named (no list of the hook's own: any tool).
 */
export interface ToolSelection {
  mode: "AUTO" | "ANY" | "NONE";
  names?: string[];
}

/**
 * @default 1024 — tool names one hook's list, and one event's answer, holds; past it the list is cut
 * (the tools cut are not allowed: a shorter list only allows less)
 */
export const MAX_TOOL_NAMES = 1024;

/**
 * @default 64 — characters of one tool name in such a list, as the Gemini API bounds a function's
 * name (letters, digits, `_`, `.`, `:`, `-`): a name past it, or of other characters, is no tool's,
 * and dropped
 */
export const MAX_FUNCTION_NAME_CHARS = 64;

/**
 * @default 16384 (16 × MAX_TOOL_NAMES) — tool names one event holds from all its hooks' lists until
 * it is folded: a thousand repository hooks each listing 1024 names of 64 characters would hold
 * about 90 MB per event. Past it, a hook's list is cut to what is left (the tools cut are not
 * allowed: a shorter list only allows less; one cut to no name allows no tool).
 */
export const MAX_EVENT_TOOL_NAMES = 16 * MAX_TOOL_NAMES;

/** A hook's run as its format reads it; `event`: the event's body as it came (what a format reads beside the output: Cursor's `loop_count`). */
export type Interpret = (run: RunResult, hook: HookDef, event?: Readonly<Record<string, unknown>>) => Verdict;
