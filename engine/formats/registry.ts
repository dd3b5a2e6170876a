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
import type { Answer, FormatModule, RepositorySource } from "./shared.js";

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

/** What a run means, under the rules of the format that declared the hook. */
export function interpret(run: RunResult, hook: HookDef): Verdict {
  return FORMAT_MODULES[hook.format].interpret(run, hook);
}

/** The decisions that count at a point for a hook of `format` (SERVICE.md §4); elsewhere recorded only. */
export function effectiveDecisions(point: EventPoint, format: Format): ReadonlySet<Decision> {
  return FORMAT_MODULES[format].effective(point);
}

/** The folded result as a hook of the dialect would print it (SERVICE.md §3 `output` / `exit_code`). */
export function answerFor(format: Format, point: EventPoint, folded: Folded): Answer {
  return FORMAT_MODULES[format].answer(point, folded);
}
