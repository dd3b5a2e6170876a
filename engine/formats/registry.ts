/**
 * @module The one table of agent formats: each module owns its files, matchers, exit-code and output
 * rules, where its decisions count and how its answers are written. Adding an agent is adding its
 * module and a line here. The order is the order a repository's files are read (and its hooks run).
 */
import type { Folded } from "../aggregate.js";
import type { Decision, EventPoint, Format } from "../events.js";
import type { HookDef } from "../hooks.js";
import type { RunResult } from "../run/types.js";
import type { Verdict } from "../verdict.js";
import { claudeFormat } from "./claude-settings.js";
import { codexFormat } from "./codex-hooks.js";
import { copilotFormat } from "./copilot-json.js";
import { coshFormat } from "./cosh-toml.js";
import { cursorFormat } from "./cursor-hooks.js";
import { geminiFormat } from "./gemini-settings.js";
import { type Answer, type FormatModule, type RepositorySource, withContext } from "./shared.js";

/** Every format of events.ts FORMATS, one module each (the type makes a missing one a compile error). */
export const FORMAT_MODULES: Readonly<Record<Format, FormatModule>> = {
  copilot: copilotFormat,
  cosh: coshFormat,
  claude: claudeFormat,
  cursor: cursorFormat,
  codex: codexFormat,
  gemini: geminiFormat,
};
const MODULES = Object.values(FORMAT_MODULES);

/** Every hook file hookbox reads from a repository, in order (SERVICE.md §2). */
export const REPOSITORY_SOURCES: readonly (RepositorySource & { format: Format })[] = MODULES.flatMap((m) => m.repository.map((r) => ({ ...r, format: m.format })));

/** Cursor's own gates before a tool runs: events no other agent has. */
const CURSOR_GATES = new Set(["BeforeShellExecution", "BeforeMCPExecution", "BeforeReadFile", "BeforeTabFileRead"]);
const PRE_TOOL_USE = "PreToolUse" as EventPoint;

/**
 * What a run means, under the rules of the format that declared the hook. A hook of another format
 * at one of Cursor's gates is read as its own agent reads it before a tool (a Copilot guard's crash
 * or exit 2 denies there as at preToolUse), as `effectiveDecisions` counts it.
 */
export function interpret(run: RunResult, hook: HookDef, event?: Readonly<Record<string, unknown>>): Verdict {
  const module = FORMAT_MODULES[hook.format];
  if (hook.format !== "cursor" && CURSOR_GATES.has(hook.point)) return module.interpret(run, { ...hook, point: PRE_TOOL_USE }, event);
  return module.interpret(run, hook, event);
}
/** What a hook of another format decides at Cursor's gates: what it decides before a tool, as far as Cursor takes it there. */
const AT_CURSOR_GATES = new Map<string, ReadonlySet<Decision>>();

/**
 * The decisions that count at a point for a hook of `format` (SERVICE.md §4); elsewhere recorded
 * only. A hook of another format registered at one of Cursor's gates (an administrator's policy
 * hook on `beforeShellExecution`, say) decides there as it would before a tool.
 */
export function effectiveDecisions(point: EventPoint, format: Format): ReadonlySet<Decision> {
  if (format === "cursor" || !CURSOR_GATES.has(point)) return FORMAT_MODULES[format].effective(point);
  const key = `${format} ${point}`;
  let decisions = AT_CURSOR_GATES.get(key);
  if (!decisions) {
    const there = FORMAT_MODULES.cursor.effective(point);
    // An ask counts too: where Cursor cannot ask, its answer says it as the deny it must be.
    AT_CURSOR_GATES.set(key, (decisions = new Set([...FORMAT_MODULES[format].effective(PRE_TOOL_USE)].filter((d) => there.has(d) || d === "ask"))));
  }
  return decisions;
}

/** A hook's argument change as its agent runs it (Gemini CLI merges it over the arguments): what policy looks at again. */
export function changeAsRun(format: Format, change: unknown, args: () => Record<string, unknown>): unknown {
  const asRun = FORMAT_MODULES[format].changeAsRun;
  return asRun && typeof change === "object" && change !== null && !Array.isArray(change) ? asRun(change as Record<string, unknown>, args()) : change;
}

/** The agent whose dialect `format` is, by name ("Cursor"). */
export function agentOf(format: Format): string {
  return FORMAT_MODULES[format].agent;
}

/** Whether the agent of `format` takes no change of the arguments at all at `point` (changeNotTakenAt). */
export function takesNoChange(format: Format, point: EventPoint): boolean {
  return FORMAT_MODULES[format].changeNotTakenAt?.has(point) === true;
}

/**
 * Whether `folded`'s change of the arguments cannot reach the agent at `point` as folded — the agent
 * takes a change only with an allow, or an allow or an ask (changeTakenWith), and neither goes with
 * it; or takes none there (changeNotTakenAt) —, why, whether an ask would carry it, and whether
 * that ask is about the call as sent.
 */
export function untakableChange(format: Format, point: EventPoint, folded: Folded): { why: string; ask: boolean; asked?: "as sent" } | undefined {
  const module = FORMAT_MODULES[format];
  // Where the agent takes no change at all, an allow or no decision would let the call as sent go
  // out in the change's place: its user is asked about it instead, told the change was not applied.
  if (module.changeNotTakenAt?.has(point) && folded.modifiedArgs !== undefined && (folded.decision === null || folded.decision === "allow")) {
    return { why: `${module.agent} takes no change of the arguments at this event`, ask: true, asked: "as sent" };
  }
  const takes = module.changeTakenWith;
  if (takes === undefined || point !== PRE_TOOL_USE || folded.modifiedArgs === undefined || folded.decision === "allow" || folded.decision === "block") return undefined;
  if (takes === "allow or ask" && folded.decision === "ask") return undefined;
  return { why: `${module.agent} takes a change only together with ${takes === "allow" ? "an allow" : "an allow or an ask"}, and no hook ${takes === "allow" ? "allowed" : "allowed or asked about"} the call`, ask: takes === "allow or ask" };
}

/** A block in the dialect for an event that is not known (a native hook's body that could not be read). */
export function blockWithoutEvent(format: Format, reason: string): Answer {
  return FORMAT_MODULES[format].blockAnyEvent?.(reason) ?? answerFor(format, PRE_TOOL_USE, { decision: "block", reason, notifications: [] });
}

/**
 * The folded result as a hook of the dialect would print it (SERVICE.md §3 `output` / `exit_code`).
 * A replaced tool output goes only to an agent that takes one; any other's user is told the model
 * sees the output as the tool gave it — never a redaction that silently did not happen.
 */
export function answerFor(format: Format, point: EventPoint, folded: Folded): Answer {
  const module = FORMAT_MODULES[format];
  if (folded.updatedOutput === undefined || module.replacesOutput) return module.answer(point, folded);
  const { updatedOutput: _untaken, ...rest } = folded;
  const told = `hookbox: a hook replaced the tool's output, and ${module.agent} takes no replacement from a hook: the model sees the output as the tool gave it`;
  return module.answer(point, { ...rest, systemMessage: withContext(rest.systemMessage, told) });
}
