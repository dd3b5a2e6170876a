/**
 * @module Event points and their names in every dialect: the one place that knows that
 * `preToolUse` and `PreToolUse`, `agentStop` and `Stop`, `userPromptSubmitted` and
 * `UserPromptSubmit` name the same point (SERVICE.md §3), and where decisions count (§4).
 */

export type Decision = "allow" | "block" | "ask";

/** How a payload spells its fields: cosh/Claude snake_case or Copilot camelCase. */
export type Dialect = "snake" | "camel";

/** The dialects hookbox speaks back in (the `output` of a response). */
export const FORMATS = ["cosh", "copilot", "claude"] as const;
export type Format = (typeof FORMATS)[number];

interface PointSpec {
  /** PascalCase name (cosh-hooks.md, Claude Code); the canonical name in responses */
  pascal: string;
  /** camelCase name (copilot-hooks.md), where Copilot has the point */
  camel?: string;
  /** does the event carry a tool name a matcher applies to */
  tool: boolean;
  /** other agents' names for the point (Gemini CLI's), with snake_case payloads */
  aliases?: string[];
}

const POINTS: readonly PointSpec[] = [
  { pascal: "PreToolUse", camel: "preToolUse", tool: true, aliases: ["BeforeTool"] },
  { pascal: "PostToolUse", camel: "postToolUse", tool: true, aliases: ["AfterTool"] },
  { pascal: "PostToolUseFailure", camel: "postToolUseFailure", tool: true },
  { pascal: "UserPromptSubmit", camel: "userPromptSubmitted", tool: false, aliases: ["BeforeAgent"] },
  { pascal: "SessionStart", camel: "sessionStart", tool: false },
  { pascal: "SessionEnd", camel: "sessionEnd", tool: false },
  { pascal: "Stop", camel: "agentStop", tool: false, aliases: ["AfterAgent"] },
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

/** For error messages: the known name closest to `name` (case and separators aside), if close. */
function suggestEventName(name: string): string | undefined {
  const squash = (s: string) => s.toLowerCase().replace(/[^a-z]/g, "");
  let best: { name: string; distance: number } | undefined;
  for (const known of EVENT_NAMES) {
    const distance = editDistance(squash(known), squash(name));
    if (distance <= 2 && (!best || distance < best.distance)) best = { name: known, distance };
  }
  return best?.name;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}

export function pointName(point: EventPoint, dialect: Dialect): string {
  const spec = byName.get(point)!.spec;
  return dialect === "camel" ? (spec.camel ?? spec.pascal) : spec.pascal;
}

export function pointHasTool(point: EventPoint): boolean {
  return byName.get(point)!.spec.tool;
}

const NONE: ReadonlySet<Decision> = new Set();
const ALLOW_BLOCK: ReadonlySet<Decision> = new Set(["allow", "block"]);
const ALL: ReadonlySet<Decision> = new Set(["allow", "block", "ask"]);

/**
 * Decisions that count at a point, for a hook declared in `format`. Elsewhere a decision is
 * recorded but changes nothing (SERVICE.md §4).
 */
export function effectiveDecisions(point: EventPoint, format: Format): ReadonlySet<Decision> {
  if (format === "copilot") {
    switch (point) {
      case "PreToolUse": return ALL; // copilot-hooks.md: preToolUse "Yes: allow, deny or modify arguments"
      case "PermissionRequest": return ALLOW_BLOCK; // copilot-hooks.md: permissionRequest "can allow or deny"
      case "Stop": // copilot-hooks.md: agentStop "decision: block forces another turn"
      case "SubagentStop": return ALLOW_BLOCK; // copilot-hooks.md: "Stop can block and force continuation"
      // copilot-hooks.md: userPromptSubmitted "Command-hook output is ignored"; the rest add context at most
      default: return NONE;
    }
  }
  switch (point) {
    case "PreToolUse": return ALL; // cosh-hooks.md: PreToolUse "Yes (block/allow/ask)"
    case "PostToolUse": // cosh-hooks.md: "Yes (block/allow)"
    case "UserPromptSubmit": // cosh-hooks.md: "Yes (block/allow)"
    case "Stop": // cosh-hooks.md: "Yes (block/allow)"
    case "SubagentStop": // Claude Code: SubagentStop blocks like Stop
    case "PermissionRequest": return ALLOW_BLOCK; // Claude Code: PermissionRequest allows or denies
    // cosh-hooks.md: PostToolUseFailure, SessionStart, BeforeModel, AfterModel "No"
    default: return NONE;
  }
}
