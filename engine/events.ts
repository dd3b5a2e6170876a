/**
 * @module Event points and their names in every dialect: the one place that knows that
 * `preToolUse` and `PreToolUse`, `agentStop` and `Stop`, `userPromptSubmitted` and
 * `UserPromptSubmit` name the same point (SERVICE.md §3). Which decisions count where is each
 * format's own rule (formats/registry.ts).
 */

export type Decision = "allow" | "block" | "ask";

/** How a payload spells its fields: cosh/Claude snake_case or Copilot camelCase. */
export type Dialect = "snake" | "camel";

/**
 * The agents' hook formats: whose rules a hook follows, and the dialects hookbox speaks back in (the
 * `output` of a response). Each has one module under formats/, listed in formats/registry.ts.
 */
export const FORMATS = ["cosh", "copilot", "claude", "cursor", "codex", "gemini"] as const;
export type Format = (typeof FORMATS)[number];

interface PointSpec {
  /** PascalCase name (cosh-hooks.md, Claude Code); the canonical name in responses */
  pascal: string;
  /** camelCase name (copilot-hooks.md), where Copilot has the point */
  camel?: string;
  /** does the event carry a tool name a matcher applies to */
  tool: boolean;
  /** other agents' names for the point (Gemini CLI's, Cursor's), with snake_case payloads */
  aliases?: string[];
}

const POINTS: readonly PointSpec[] = [
  { pascal: "PreToolUse", camel: "preToolUse", tool: true, aliases: ["BeforeTool"] },
  { pascal: "PostToolUse", camel: "postToolUse", tool: true, aliases: ["AfterTool"] },
  { pascal: "PostToolUseFailure", camel: "postToolUseFailure", tool: true },
  { pascal: "UserPromptSubmit", camel: "userPromptSubmitted", tool: false, aliases: ["BeforeAgent", "beforeSubmitPrompt"] },
  { pascal: "SessionStart", camel: "sessionStart", tool: false },
  { pascal: "SessionEnd", camel: "sessionEnd", tool: false },
  { pascal: "Stop", camel: "agentStop", tool: false, aliases: ["AfterAgent", "stop"] },
  { pascal: "SubagentStart", camel: "subagentStart", tool: false },
  { pascal: "SubagentStop", camel: "subagentStop", tool: false },
  { pascal: "PreCompact", camel: "preCompact", tool: false, aliases: ["PreCompress"] },
  { pascal: "PermissionRequest", camel: "permissionRequest", tool: true },
  { pascal: "Notification", camel: "notification", tool: false },
  { pascal: "ErrorOccurred", camel: "errorOccurred", tool: false },
  { pascal: "UserPromptTransformed", camel: "userPromptTransformed", tool: false },
  // cosh-hooks.md only
  { pascal: "BeforeModel", tool: false },
  { pascal: "AfterModel", tool: false },
  // Gemini CLI
  { pascal: "BeforeToolSelection", tool: false },
  // Claude Code only (hooks reference); PostCompact is Codex's too
  { pascal: "PermissionDenied", tool: true },
  { pascal: "PostCompact", tool: false },
  { pascal: "StopFailure", tool: false },
  { pascal: "TaskCreated", tool: false },
  { pascal: "TaskCompleted", tool: false },
  { pascal: "TeammateIdle", tool: false },
  { pascal: "ConfigChange", tool: false },
  { pascal: "Elicitation", tool: false },
  { pascal: "ElicitationResult", tool: false },
  { pascal: "WorktreeCreate", tool: false },
  { pascal: "WorktreeRemove", tool: false },
  { pascal: "CwdChanged", tool: false },
  { pascal: "DirectoryAdded", tool: false },
  { pascal: "FileChanged", tool: false },
  { pascal: "InstructionsLoaded", tool: false },
  { pascal: "PostToolBatch", tool: false },
  { pascal: "UserPromptExpansion", tool: false },
  { pascal: "Setup", tool: false },
  { pascal: "MessageDisplay", tool: false },
  { pascal: "PreModelSwitch", tool: false },
  { pascal: "PostModelSwitch", tool: false },
  // Cursor only (.cursor/hooks.json); its payloads are snake_case
  { pascal: "BeforeShellExecution", tool: false, aliases: ["beforeShellExecution"] },
  { pascal: "AfterShellExecution", tool: false, aliases: ["afterShellExecution"] },
  { pascal: "BeforeMCPExecution", tool: true, aliases: ["beforeMCPExecution"] },
  { pascal: "AfterMCPExecution", tool: true, aliases: ["afterMCPExecution"] },
  { pascal: "BeforeReadFile", tool: false, aliases: ["beforeReadFile"] },
  { pascal: "AfterFileEdit", tool: false, aliases: ["afterFileEdit"] },
  { pascal: "AfterAgentResponse", tool: false, aliases: ["afterAgentResponse"] },
  { pascal: "AfterAgentThought", tool: false, aliases: ["afterAgentThought"] },
  { pascal: "BeforeTabFileRead", tool: false, aliases: ["beforeTabFileRead"] },
  { pascal: "AfterTabFileEdit", tool: false, aliases: ["afterTabFileEdit"] },
];

export type EventPoint = string & { readonly __point: unique symbol };

const byName = new Map<string, { point: EventPoint; dialect: Dialect; spec: PointSpec }>();
for (const spec of POINTS) {
  byName.set(spec.pascal, { point: spec.pascal as EventPoint, dialect: "snake", spec });
  if (spec.camel) byName.set(spec.camel, { point: spec.pascal as EventPoint, dialect: "camel", spec });
  for (const alias of spec.aliases ?? []) byName.set(alias, { point: spec.pascal as EventPoint, dialect: "snake", spec });
}

export const EVENT_NAMES: readonly string[] = [...byName.keys()];

/** Resolves an event name of any dialect; undefined when it names no known point. */
export function resolveEventName(name: string): { point: EventPoint; dialect: Dialect } | undefined {
  const hit = byName.get(name);
  return hit && { point: hit.point, dialect: hit.dialect };
}

/** `unknown event "X"`, with the closest known name when there is one: for config and request errors. */
export function unknownEventMessage(name: string): string {
  const hint = name.length <= MAX_SUGGEST_CHARS ? suggestEventName(name) : undefined;
  const shown = name.length > MAX_SUGGEST_CHARS ? `${name.slice(0, MAX_SUGGEST_CHARS)}…` : name;
  return `unknown event ${JSON.stringify(shown)}${hint ? ` (did you mean "${hint}"?)` : ""}`;
}

/**
 * Names longer than this get no suggestion and are shown clipped: the edit distance costs the
 * product of the two lengths, and no event name is half this long.
 */
const MAX_SUGGEST_CHARS = 64;

const squash = (s: string) => s.toLowerCase().replace(/[^a-z]/g, "");
/** The known names as compared: squashed once. */
let squashedNames: [name: string, squashed: string][] | undefined;

/** Farthest a name may be from a known one to be suggested. */
const SUGGEST_DISTANCE = 2;

/**
 * For error messages: the known name closest to `name` (case and separators aside), if close. Only
 * names within SUGGEST_DISTANCE in length are compared, each within that band: a repository's file
 * of unknown keys costs a few cells per character, not the product of the lengths.
 */
function suggestEventName(name: string): string | undefined {
  squashedNames ??= EVENT_NAMES.map((n) => [n, squash(n)]);
  const wanted = squash(name);
  let best: { name: string; distance: number } | undefined;
  for (const [known, squashed] of squashedNames) {
    if (Math.abs(squashed.length - wanted.length) > SUGGEST_DISTANCE) continue;
    const distance = boundedDistance(squashed, wanted, SUGGEST_DISTANCE);
    if (distance <= SUGGEST_DISTANCE && (!best || distance < best.distance)) best = { name: known, distance };
  }
  return best?.name;
}

/** The edit distance of `a` and `b` if at most `k`, else k + 1: only the cells within k of the diagonal. */
export function boundedDistance(a: string, b: string, k: number): number {
  const far = k + 1;
  if (Math.abs(a.length - b.length) > k) return far;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => (j <= k ? j : far));
  for (let i = 1; i <= a.length; i++) {
    const row = new Array<number>(b.length + 1).fill(far);
    if (i <= k) row[0] = i;
    let least = row[0]!;
    for (let j = Math.max(1, i - k); j <= Math.min(b.length, i + k); j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1), far);
      least = Math.min(least, row[j]!);
    }
    if (least > k) return far;
    prev = row;
  }
  return Math.min(prev[b.length]!, far);
}

export function pointName(point: EventPoint, dialect: Dialect): string {
  const spec = byName.get(point)!.spec;
  return dialect === "camel" ? (spec.camel ?? spec.pascal) : spec.pascal;
}

export function pointHasTool(point: EventPoint): boolean {
  return byName.get(point)!.spec.tool;
}

/** Sets of decisions, for the formats' "which decisions count where" tables. */
export const NONE: ReadonlySet<Decision> = new Set();
export const BLOCK: ReadonlySet<Decision> = new Set(["block"]);
export const ALLOW_BLOCK: ReadonlySet<Decision> = new Set(["allow", "block"]);
export const ALL: ReadonlySet<Decision> = new Set(["allow", "block", "ask"]);
