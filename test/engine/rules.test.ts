/**
 * Every exit-code and output rule of the source documents, one row each, citing its sentence.
 * Pure: a run's result goes in, the format's verdict comes out.
 */
import { posix } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { interpretCosh } from "../../engine/formats/cosh-toml.js";
import { interpretCopilot } from "../../engine/formats/copilot-json.js";
import { claudeMatcher, interpretClaude, MAX_CONTEXT_CHARS } from "../../engine/formats/claude-settings.js";
import { MAX_WORD_CUT_CHARS } from "../../engine/detached.js";
import { codexMatcher, interpretCodex } from "../../engine/formats/codex-hooks.js";
import { coshMatcher } from "../../engine/formats/cosh-toml.js";
import { interpretCursor } from "../../engine/formats/cursor-hooks.js";
import { claudeCondition } from "../../engine/formats/claude-if.js";
import { GEMINI_TEXT_CHARS, geminiMatcher, interpretGemini } from "../../engine/formats/gemini-settings.js";
import { answerFor, changeAsRun, effectiveDecisions, interpret } from "../../engine/formats/registry.js";
import { fold, foldToolSelection } from "../../engine/aggregate.js";
import { selectHooks } from "../../engine/match.js";
import { readDecision, wellFormedJson } from "../../engine/formats/shared.js";
import { resolveEventName } from "../../engine/events.js";
import type { HookDef } from "../../engine/hooks.js";
import type { RunResult } from "../../engine/run/types.js";
import { MAX_FUNCTION_NAME_CHARS, MAX_TOOL_NAMES, type ToolSelection, type Verdict } from "../../engine/verdict.js";

const hook = (format: HookDef["format"], event: string, extra: Partial<HookDef> = {}): HookDef => ({
  name: "h", source: "service", format, point: resolveEventName(event)!.point, dialect: "snake", command: "x",
  timeoutMs: 5000, env: {}, failOpen: true, limits: {}, mounts: [], origin: "test", ...extra,
});
const base = { stdout: "", stderr: "", durationMs: 1, startMs: 1 };
const exited = (exitCode: number, stdout = "", stderr = ""): RunResult => ({ ...base, outcome: "exited", exitCode, stdout, stderr });
const timedOut: RunResult = { ...base, outcome: "timed_out", exitCode: null };
const oom: RunResult = { ...base, outcome: "oom_killed", exitCode: 137 };
const truncated: RunResult = { ...base, outcome: "output_truncated", exitCode: null, stream: "stdout" };

type Row = [citation: string, run: RunResult, hook: HookDef, expected: { decision: string | null; reason?: string; error?: boolean; warning?: string; rule: RegExp }];

function table(interpret: (run: RunResult, hook: HookDef) => Verdict, rows: Row[]) {
  it.each(rows)("%s", (_citation, run, h, expected) => {
    const v = interpret(run, h);
    expect(v.decision).toBe(expected.decision);
    if (expected.reason !== undefined) expect(v.reason).toBe(expected.reason);
    if (expected.error !== undefined) expect(v.error !== null).toBe(expected.error);
    if (expected.warning !== undefined) expect(v.warning).toBe(expected.warning);
    expect(v.rule).toMatch(expected.rule);
  });
}

describe("cosh rules (cosh-hooks.md, SERVICE.md §4)", () => {
  const pre = hook("cosh", "PreToolUse");
  const closed = hook("cosh", "PreToolUse", { failOpen: false });
  table(interpretCosh, [
    ['cosh-hooks.md "Output": {"decision":"block","reason":…,"systemMessage":…}', exited(0, '{"decision":"block","reason":"Dangerous rm -rf command","systemMessage":"Command blocked by security policy"}'), pre, { decision: "block", reason: "Dangerous rm -rf command", error: false, rule: /cosh: decision "block"/ }],
    ['cosh-hooks.md "Decision Values": block / deny "Intercept, abort the operation"', exited(0, '{"decision":"deny"}'), pre, { decision: "block", rule: /decision "deny"/ }],
    ['cosh-hooks.md "Decision Values": allow "Allow to proceed"', exited(0, '{"decision":"allow"}'), pre, { decision: "allow", rule: /decision "allow"/ }],
    ['cosh-hooks.md "Decision Values": ask "Require user confirmation"', exited(0, '{"decision":"ask"}'), pre, { decision: "ask", rule: /decision "ask"/ }],
    ['cosh-hooks.md "Decision Values": None / empty "Pass-through"', exited(0, ""), pre, { decision: null, error: false, rule: /pass-through/ }],
    ["SERVICE.md §4: Output {} makes no decision — it does not approve", exited(0, "{}"), pre, { decision: null, error: false, rule: /pass-through/ }],
    ['cosh-hooks.md "Decision Values": None is pass-through (decision null)', exited(0, '{"decision":null,"systemMessage":"note"}'), pre, { decision: null, error: false, rule: /no decision/ }],
    ['cosh-hooks.md "Execution Model" 3: "Hook timeout … is treated as pass-through"', timedOut, pre, { decision: null, error: true, rule: /timeout is treated as pass-through/ }],
    ['cosh-hooks.md "Execution Model" 4: "Non-zero exit code … is treated as error, does not affect main flow"', exited(1, "", "boom"), pre, { decision: null, error: true, rule: /non-zero exit code is an error/ }],
    ["SERVICE.md §4: exit code 2 blocks with stderr as the reason", exited(2, '{"decision":"allow"}', "no, not that\n"), pre, { decision: "block", reason: "no, not that", rule: /exit 2 blocks/ }],
    ["SERVICE.md §4: fail_open = false — a failure of that hook blocks (non-zero exit)", exited(1), closed, { decision: "block", error: true, rule: /fail_open = false/ }],
    ["SERVICE.md §4: fail_open = false — a timeout of that hook blocks", timedOut, closed, { decision: "block", error: true, rule: /fail_open = false/ }],
    ["SERVICE.md §4: output that is not a JSON object is an error of that hook", exited(0, "yes please"), pre, { decision: null, error: true, rule: /not a JSON object/ }],
    ["SERVICE.md §4: a JSON array is not a JSON object", exited(0, "[1]"), pre, { decision: null, error: true, rule: /not a JSON object/ }],
    ["SERVICE.md §4: an unknown decision is an error of that hook", exited(0, '{"decision":"maybe"}'), pre, { decision: null, error: true, rule: /unknown decision/ }],
    ["SERVICE.md §4: an unknown decision under fail_open = false blocks", exited(0, '{"decision":"maybe"}'), closed, { decision: "block", error: true, rule: /fail_open = false/ }],
    ["SERVICE.md §5: an out-of-memory kill is a failure (no effect)", oom, pre, { decision: null, error: true, rule: /failed hook/ }],
    ["SERVICE.md §5: output over the cap is a failure (no effect)", truncated, pre, { decision: null, error: true, rule: /failed hook/ }],
  ]);
  it('cosh-hooks.md "Additional Fields": hookSpecificOutput.additional_context is injected', () => {
    const v = interpretCosh(exited(0, '{"hookSpecificOutput":{"additional_context":"ctx"}}'), pre);
    expect(v).toMatchObject({ decision: null, additionalContext: "ctx" });
  });
});

describe("Copilot rules (copilot-hooks.md)", () => {
  const pre = hook("copilot", "preToolUse", { dialect: "camel" });
  const perm = hook("copilot", "permissionRequest", { dialect: "camel" });
  const post = hook("copilot", "postToolUse", { dialect: "camel" });
  const stop = hook("copilot", "agentStop", { dialect: "camel" });
  const policy = hook("copilot", "preToolUse", { dialect: "camel", source: "policy" });
  table(interpretCopilot, [
    ['"Exit code 0 is success, and standard output is parsed as the hook\'s JSON": deny', exited(0, '{"permissionDecision":"deny","permissionDecisionReason":"Pushes need a human."}'), pre, { decision: "block", reason: "Pushes need a human.", error: false, rule: /permissionDecision "deny"/ }],
    ['"The other values are allow and ask": allow', exited(0, '{"permissionDecision":"allow"}'), pre, { decision: "allow", rule: /permissionDecision "allow"/ }],
    ['"The other values are allow and ask": ask', exited(0, '{"permissionDecision":"ask","permissionDecisionReason":"sure?"}'), pre, { decision: "ask", reason: "sure?", rule: /permissionDecision "ask"/ }],
    ['"Returning {} makes no decision; it does not approve the tool"', exited(0, "{}"), pre, { decision: null, error: false, rule: /makes no decision/ }],
    ['"permissionDecisionReason is required with a deny" (deny stands, flagged)', exited(0, '{"permissionDecision":"deny"}'), pre, { decision: "block", error: true, rule: /permissionDecision "deny"/ }],
    ['"Exit code 2 … For preToolUse … it is a deny, even if the hook\'s output claims allow"', exited(2, '{"permissionDecision":"allow"}', "nope"), pre, { decision: "block", reason: "nope", rule: /exit 2 denies/ }],
    ['"Exit code 2 … For … permissionRequest it is a deny"', exited(2, "", "nope"), perm, { decision: "block", rule: /exit 2 denies/ }],
    ['"Exit code 2 is a warning for most events, with standard error shown to you"', exited(2, "", "careful"), post, { decision: null, warning: "careful", rule: /exit 2 is a warning/ }],
    ['"The exception is preToolUse, which is fail-closed: a crash or other non-zero exit denies"', exited(1, "", "crash"), pre, { decision: "block", error: true, rule: /fail-closed/ }],
    ['"…a crash … denies the tool call" (killed for memory)', oom, pre, { decision: "block", error: true, rule: /fail-closed/ }],
    ['"Any other non-zero exit is logged and the run continues for most events"', exited(1), post, { decision: null, error: true, rule: /logged and the run continues/ }],
    ['"A timeout … fail-open for every event, including preToolUse"', timedOut, pre, { decision: null, error: true, rule: /timeout is fail-open/ }],
    ['"A timeout … including … administrator policy hooks"', timedOut, policy, { decision: null, error: true, rule: /timeout is fail-open/ }],
    ['agentStop: "decision: \\"block\\" forces another turn"', exited(0, '{"decision":"block","reason":"tests fail"}'), stop, { decision: "block", reason: "tests fail", rule: /"block"/ }],
    ["SERVICE.md §4: an unknown decision is an error — at exit 0 logged, no effect, as text is (only crashes and non-zero exits fail closed)", exited(0, '{"permissionDecision":"perhaps"}'), pre, { decision: null, error: true, rule: /unknown permissionDecision/ }],
    ['both forms: an ask holds over a word Copilot cannot read', exited(0, '{"permissionDecision":"ask","decision":"approve"}'), pre, { decision: "ask", rule: /permissionDecision "ask"/ }],
    ['agentStop reads decision "block" only: a permissionDecision deny there is none', exited(0, '{"permissionDecision":"deny","permissionDecisionReason":"x"}'), stop, { decision: null, rule: /copilot: no decision/ }],
    ["SERVICE.md §4: output that is not a JSON object is an error (postToolUse: logged)", exited(0, "ok"), post, { decision: null, error: true, rule: /not a JSON object/ }],
  ]);
  it('"A hook can also supply modifiedArgs to substitute different tool arguments"', () => {
    const v = interpretCopilot(exited(0, '{"permissionDecision":"allow","modifiedArgs":{"command":"ls -la"}}'), pre);
    expect(v).toMatchObject({ decision: "allow", modifiedArgs: { command: "ls -la" } });
  });
  it('sessionStart "Can add context (additionalContext)"', () => {
    expect(interpretCopilot(exited(0, '{"additionalContext":"branch main"}'), hook("copilot", "sessionStart"))).toMatchObject({ decision: null, additionalContext: "branch main" });
  });
});

describe("Claude Code rules (SERVICE.md §4)", () => {
  const pre = hook("claude", "PreToolUse");
  const stop = hook("claude", "Stop");
  table(interpretClaude, [
    ["exit 2 blocks with stderr", exited(2, "", "blocked: secrets"), pre, { decision: "block", reason: "blocked: secrets", rule: /exit 2 blocks/ }],
    ["other non-zero exits do not block", exited(1, "", "bug"), pre, { decision: null, error: true, rule: /does not block/ }],
    ["a timeout does not block", timedOut, pre, { decision: null, error: true, rule: /timeout does not block/ }],
    ["hookSpecificOutput.permissionDecision deny", exited(0, '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}'), pre, { decision: "block", reason: "no", rule: /permissionDecision "deny"/ }],
    ["hookSpecificOutput.permissionDecision ask", exited(0, '{"hookSpecificOutput":{"permissionDecision":"ask"}}'), pre, { decision: "ask", rule: /permissionDecision "ask"/ }],
    ['decision "block" with reason (Stop)', exited(0, '{"decision":"block","reason":"keep going"}'), stop, { decision: "block", reason: "keep going", rule: /decision "block"/ }],
    ['continue: false on Stop lets the agent stop: no block (a Stop block would keep it going)', exited(0, '{"continue":false,"stopReason":"halt"}'), stop, { decision: null, rule: /continue = false stops the agent \(outranks/ }],
    ['continue: false outranks a Stop block in the same answer', exited(0, '{"decision":"block","reason":"keep going","continue":false,"stopReason":"halt"}'), stop, { decision: null, rule: /continue = false/ }],
    ['continue: false on PreToolUse stops the agent and blocks the call, stopReason the reason', exited(0, '{"continue":false,"stopReason":"halt"}'), pre, { decision: "block", reason: "halt", rule: /continue = false stops the agent \(and blocks/ }],
    ["empty output makes no decision", exited(0, ""), pre, { decision: null, error: false, rule: /no JSON output/ }],
    // hooks reference, "Exit code 0": only `{`…`}` is read as JSON; anything else is plain text, a JSON array or a quoted string included
    ["plain text makes no decision and is no error", exited(0, "hello"), pre, { decision: null, error: false, rule: /plain text/ }],
    ["a JSON array is plain text", exited(0, '[{"decision":"block"}]'), pre, { decision: null, error: false, rule: /plain text/ }],
    ["a quoted JSON string is plain text", exited(0, '"{\\"decision\\":\\"block\\"}"'), pre, { decision: null, error: false, rule: /plain text/ }],
    ["a `{` without its `}` (a cut answer) is plain text", exited(0, '{"decision":'), pre, { decision: null, error: false, rule: /plain text/ }],
    ["braces that do not parse are an error of the hook", exited(0, "{not json}"), pre, { decision: null, error: true, rule: /in braces that is no JSON answer/ }],
    ["JSON lines that set no field are plain text", exited(0, '{"level":"info"}\n{"level":"debug"}'), pre, { decision: null, error: false, rule: /plain text/ }],
    ["JSON lines one of which sets a field are read as none", exited(0, '{"level":"info"}\n{"decision":"block","reason":"x"}'), stop, { decision: null, error: true, rule: /in braces/ }],
    ["JSON lines among blank ones and scalars, a string of brackets too, that set no field are plain text", exited(0, '{"level":"info"}\n\n  \n0\n"[[[["\n[1,{"a":2}]\n{}'), pre, { decision: null, error: false, rule: /plain text/ }],
    ["a line of them that does not parse makes them a failed parse", exited(0, '{"level":"info"}\n0\n[1,\n{}'), stop, { decision: null, error: true, rule: /in braces/ }],
    ["text after the answer makes it plain text", exited(0, '{"decision":"block","reason":"x"}\ndone'), stop, { decision: null, error: false, rule: /plain text/ }],
  ]);
});

describe("Claude Code's plain stdout as context (UserPromptSubmit, UserPromptExpansion, SessionStart, PostModelSwitch)", () => {
  const prompt = hook("claude", "UserPromptSubmit");
  table(interpretClaude, [
    ["text is added", exited(0, "branch: main"), prompt, { decision: null, error: false, rule: /added as context/ }],
    ["a JSON array is text, added", exited(0, "[1, 2]"), prompt, { decision: null, error: false, rule: /added as context/ }],
    ["braces that do not parse are not added: an error", exited(0, "{branch: main}"), prompt, { decision: null, error: true, rule: /not added as context/ }],
  ]);
  it("the text, as it was printed", () => {
    expect(interpretClaude(exited(0, "  [1, 2]\n"), prompt).additionalContext).toBe("[1, 2]");
    expect(interpretClaude(exited(0, "{branch: main}"), prompt).additionalContext).toBeUndefined();
  });
  it("at most MAX_CONTEXT_CHARS of it: a longer text is cut there, marked — never inside a word (a key cut short is one the trace's redactor no longer knows)", () => {
    expect(interpretClaude(exited(0, "c".repeat(MAX_CONTEXT_CHARS)), prompt).additionalContext).toBe("c".repeat(MAX_CONTEXT_CHARS));
    expect(interpretClaude(exited(0, "c".repeat(MAX_CONTEXT_CHARS + 1)), prompt).additionalContext).toBe(`${"c".repeat(MAX_CONTEXT_CHARS - MAX_WORD_CUT_CHARS)}…`);
    const words = `${"c".repeat(MAX_CONTEXT_CHARS - 1)} dd`;
    expect(interpretClaude(exited(0, words), prompt).additionalContext).toBe(`${"c".repeat(MAX_CONTEXT_CHARS - 1)} …`);
    expect(interpretClaude(exited(0, `${"c".repeat(MAX_CONTEXT_CHARS - 3)} ${"d".repeat(10)}`), prompt).additionalContext).toBe(`${"c".repeat(MAX_CONTEXT_CHARS - 3)} …`);
  });
});

describe("Claude Code discards continue at events that cannot stop the agent (hooks reference, each event's decision control)", () => {
  it.each(["PreCompact", "PostCompact", "ConfigChange", "Notification", "TaskCreated", "SessionEnd", "MessageDisplay"])("continue: false at %s stops nothing", (event) => {
    const v = interpretClaude(exited(0, '{"continue":false,"stopReason":"halt"}'), hook("claude", event));
    expect(v.halt).toBeUndefined();
    expect(v.decision).toBeNull();
  });
  it("a decision there still counts (PreCompact's block)", () => {
    expect(interpretClaude(exited(0, '{"decision":"block","reason":"no","continue":false}'), hook("claude", "PreCompact"))).toMatchObject({ decision: "block", reason: "no" });
  });
  it.each(["PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "PostToolBatch"])("and still stops the agent at %s", (event) => {
    expect(interpretClaude(exited(0, '{"continue":false,"stopReason":"halt"}'), hook("claude", event)).halt).toBe("halt");
  });
});

// ---------------------------------------------------------------- real hook files from the wild (issue 12)

describe("Copilot rules, both forms (copilot-hooks.md; VS Code hooks reference)", () => {
  const pre = hook("copilot", "preToolUse", { dialect: "camel" });
  const vscodePre = hook("copilot", "PreToolUse");
  table(interpretCopilot, [
    ['"Exit code 0 … standard output is parsed": a text table (a guard in warn mode) is logged, no effect — only crashes and non-zero exits fail closed', exited(0, "RULE      STATUS\nno-rm     WARN\n"), pre, { decision: null, error: true, rule: /only crashes and non-zero exits fail closed/ }],
    ["VS Code: hookSpecificOutput.permissionDecision deny", exited(0, '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"Destructive command blocked by policy"}}'), vscodePre, { decision: "block", reason: "Destructive command blocked by policy", error: false, rule: /permissionDecision "deny"/ }],
    ["VS Code: continue false stops, with stopReason", exited(0, '{"continue":false,"stopReason":"build broken"}'), vscodePre, { decision: "block", reason: "build broken", rule: /continue = false/ }],
    ['both forms: a top-level "" hides no deny in hookSpecificOutput', exited(0, '{"permissionDecision":"","hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"no"}}'), vscodePre, { decision: "block", reason: "no", rule: /permissionDecision "deny"/ }],
    ['both forms: a top-level "allow" hides no deny in hookSpecificOutput', exited(0, '{"permissionDecision":"allow","hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"no"}}'), vscodePre, { decision: "block", reason: "no", rule: /permissionDecision "deny"/ }],
    ['both forms: a deny at the top level holds over an allow in hookSpecificOutput', exited(0, '{"permissionDecision":"deny","permissionDecisionReason":"no","hookSpecificOutput":{"permissionDecision":"allow"}}'), pre, { decision: "block", reason: "no", rule: /permissionDecision "deny"/ }],
  ]);
  it("VS Code: hookSpecificOutput.updatedInput is an argument change (modifiedArgs, subject to trust tiers)", () => {
    expect(interpretCopilot(exited(0, '{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"files":["a.ts"]}}}'), vscodePre)).toMatchObject({ decision: "allow", modifiedArgs: { files: ["a.ts"] } });
  });
  it('"For preToolUse, return … permissionDecision": a top-level decision approves nothing there, and blocks', () => {
    expect(interpretCopilot(exited(0, '{"decision":"allow"}'), pre).decision).toBeNull();
    expect(interpretCopilot(exited(0, '{"decision":"approve"}'), hook("copilot", "permissionRequest", { dialect: "camel" })).decision).toBeNull();
    expect(interpretCopilot(exited(0, '{"decision":"block","reason":"no"}'), pre)).toMatchObject({ decision: "block", reason: "no" });
  });
  it("the CLI's form: no continue (copilot-hooks.md names none); userPromptSubmitted output ignored, messages too; arguments changed before a tool only", () => {
    expect(interpretCopilot(exited(0, '{"continue":false,"stopReason":"x"}'), pre)).toMatchObject({ decision: null });
    expect(interpretCopilot(exited(0, '{"continue":false,"stopReason":"x"}'), pre).halt).toBeUndefined();
    const prompt = hook("copilot", "userPromptSubmitted", { dialect: "camel" });
    expect(interpretCopilot(exited(0, '{"continue":false,"systemMessage":"hello","additionalContext":"c"}'), prompt)).toMatchObject({ decision: null, systemMessage: undefined, additionalContext: undefined });
    for (const event of ["postToolUse", "permissionRequest"]) {
      expect(interpretCopilot(exited(0, '{"modifiedArgs":{"command":"ls"}}'), hook("copilot", event, { dialect: "camel" })).modifiedArgs, event).toBeUndefined();
    }
    expect(interpretCopilot(exited(0, '{"permissionDecision":"allow","modifiedArgs":{"command":"ls"}}'), pre).modifiedArgs).toEqual({ command: "ls" });
  });
  it('VS Code: a Stop says its block in hookSpecificOutput (hooks reference, "Stop output"), a SubagentStop at the top level; the CLI\'s agentStop at the top level', () => {
    const stopOut = '{"hookSpecificOutput":{"hookEventName":"Stop","decision":"block","reason":"Run the test suite before finishing"}}';
    expect(interpretCopilot(exited(0, stopOut), hook("copilot", "Stop"))).toMatchObject({ decision: "block", reason: "Run the test suite before finishing", error: null });
    expect(interpretCopilot(exited(0, '{"decision":"block","reason":"tests fail"}'), hook("copilot", "Stop"))).toMatchObject({ decision: "block", reason: "tests fail" });
    expect(interpretCopilot(exited(0, '{"decision":"block","reason":"Verify subagent results before completing"}'), hook("copilot", "SubagentStop"))).toMatchObject({ decision: "block", reason: "Verify subagent results before completing" });
    expect(interpretCopilot(exited(0, '{"hookSpecificOutput":{"decision":"block","reason":"x"}}'), hook("copilot", "SubagentStop")).decision).toBeNull();
    expect(interpretCopilot(exited(0, stopOut), hook("copilot", "agentStop", { dialect: "camel" })).decision).toBeNull();
    expect(interpretCopilot(exited(0, stopOut), hook("copilot", "Stop", { readBy: "cli" })).decision).toBeNull();
  });
  it('VS Code: UserPromptSubmit and PreCompact use "the common output format only" — no decision, no context; continue: false and systemMessage still count', () => {
    const prompt = hook("copilot", "UserPromptSubmit");
    expect(interpretCopilot(exited(0, '{"decision":"block","reason":"no","permissionDecision":"deny","additionalContext":"c","hookSpecificOutput":{"additionalContext":"c"},"systemMessage":"hello"}'), prompt))
      .toMatchObject({ decision: null, reason: undefined, additionalContext: undefined, systemMessage: "hello", error: null });
    expect(interpretCopilot(exited(0, '{"continue":false,"stopReason":"no secrets in prompts","reason":"other"}'), prompt)).toMatchObject({ decision: "block", reason: "no secrets in prompts", halt: "no secrets in prompts" });
    expect(interpretCopilot(exited(0, '{"hookSpecificOutput":{"hookEventName":"PreCompact","additionalContext":"c"}}'), hook("copilot", "PreCompact")).additionalContext).toBeUndefined();
    // context where VS Code reads it
    expect(interpretCopilot(exited(0, '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"Branch: main"}}'), hook("copilot", "SessionStart")).additionalContext).toBe("Branch: main");
    // copilot-hooks.md: postToolUse cannot undo the action, and exit 2 there is a warning — in both forms
    const post = hook("copilot", "PostToolUse");
    expect(fold([{ hook: post, verdict: interpretCopilot(exited(0, '{"decision":"block","reason":"lint"}'), post) }], { interactive: true }).decision).toBeNull();
    expect(interpretCopilot(exited(2, "", "lint failed"), hook("copilot", "PostToolUse"))).toMatchObject({ decision: null, warning: "lint failed" });
  });
  it('VS Code: exit 2 is a "Blocking error" — a prompt hook\'s stops the prompt, a stop hook\'s keeps the agent going; the CLI\'s (camelCase, inline settings) a warning', () => {
    expect(interpretCopilot(exited(2, "", "no secrets in prompts"), hook("copilot", "UserPromptSubmit"))).toMatchObject({ decision: "block", reason: "no secrets in prompts", halt: "no secrets in prompts" });
    expect(interpretCopilot(exited(2, "", "run the tests first"), hook("copilot", "Stop"))).toMatchObject({ decision: "block", reason: "run the tests first" });
    expect(interpretCopilot(exited(2, "", "verify"), hook("copilot", "SubagentStop"))).toMatchObject({ decision: "block", reason: "verify" });
    expect(interpretCopilot(exited(2, "", "no"), hook("copilot", "userPromptSubmitted", { dialect: "camel" }))).toMatchObject({ decision: null, warning: "no" });
    expect(interpretCopilot(exited(2, "", "no"), hook("copilot", "UserPromptSubmit", { readBy: "cli" }))).toMatchObject({ decision: null, warning: "no" });
    expect(interpretCopilot(exited(2, "", "no"), hook("copilot", "agentStop", { dialect: "camel" }))).toMatchObject({ decision: null, warning: "no" });
  });
  it("the CLI's inline settings, which VS Code never reads: a PascalCase event there is the CLI's alias, its rules alone (no continue; prompt output ignored)", () => {
    const cliPre = hook("copilot", "PreToolUse", { readBy: "cli" });
    expect(interpretCopilot(exited(0, '{"continue":false,"stopReason":"x"}'), cliPre)).toMatchObject({ decision: null });
    expect(interpretCopilot(exited(0, '{"continue":false,"stopReason":"x"}'), cliPre).halt).toBeUndefined();
    expect(interpretCopilot(exited(0, '{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"no"}}'), cliPre)).toMatchObject({ decision: "block", reason: "no" });
    const prompt = hook("copilot", "UserPromptSubmit", { readBy: "cli" });
    expect(interpretCopilot(exited(0, '{"continue":false,"systemMessage":"hello"}'), prompt)).toMatchObject({ decision: null, systemMessage: undefined });
    // the same hook in .github/hooks/*.json, which VS Code reads: its continue: false stops the agent
    expect(interpretCopilot(exited(0, '{"continue":false,"stopReason":"x"}'), vscodePre).halt).toBe("x");
  });
});

describe("Claude Code rules per event (Claude Code hooks reference, decision control)", () => {
  const post = hook("claude", "PostToolUse");
  const perm = hook("claude", "PermissionRequest");
  const start = hook("claude", "SessionStart");
  const prompt = hook("claude", "UserPromptSubmit");
  const pre = hook("claude", "PreToolUse");
  table(interpretClaude, [
    ['PostToolUse honours only decision "block": permissionDecision "deny" has no effect', exited(0, '{"hookSpecificOutput":{"hookEventName":"PostToolUse","permissionDecision":"deny"}}'), post, { decision: null, error: false, rule: /no decision/ }],
    ['PostToolUse: decision "block" with reason', exited(0, '{"decision":"block","reason":"lint failed"}'), post, { decision: "block", reason: "lint failed", rule: /decision "block"/ }],
    ['PermissionRequest: hookSpecificOutput.decision.behavior "deny" with message', exited(0, '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"no prod"}}}'), perm, { decision: "block", reason: "no prod", rule: /decision\.behavior "deny"/ }],
    ['PermissionRequest: decision.behavior "allow"', exited(0, '{"hookSpecificOutput":{"decision":{"behavior":"allow"}}}'), perm, { decision: "allow", rule: /behavior "allow"/ }],
    ['PreToolUse: permissionDecision "defer" makes no decision', exited(0, '{"hookSpecificOutput":{"permissionDecision":"defer"}}'), pre, { decision: null, error: false, rule: /defer/ }],
    ["SessionStart: plain stdout is context, not an error", exited(0, "branch: main\nopen issues: 3\n"), start, { decision: null, error: false, rule: /plain stdout of SessionStart is added as context/ }],
    ["UserPromptSubmit: plain stdout is context", exited(0, "today is Tuesday"), prompt, { decision: null, error: false, rule: /added as context/ }],
  ]);
  it("exit codes: JSON is read at every exit; 2 blocks whatever it says (its blocking reason, else stderr), but not at PermissionRequest; at any other exit a JSON answer alone decides, and without one nothing is decided", () => {
    // exit 2: a block the JSON cannot override; the JSON's blocking reason is the message, else stderr
    expect(interpretClaude(exited(2, '{"reason":"from json"}', "from stderr"), post)).toMatchObject({ decision: "block", reason: "from stderr" });
    expect(interpretClaude(exited(2, '{"decision":"block","reason":"from json"}', "from stderr"), post)).toMatchObject({ decision: "block", reason: "from json" });
    expect(interpretClaude(exited(2, '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"json reason"}}', "stderr reason"), pre)).toMatchObject({ decision: "block", reason: "json reason" });
    const allowed = interpretClaude(exited(2, '{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"command":"x"}}}', "from stderr"), pre);
    expect(allowed).toMatchObject({ decision: "block", reason: "from stderr" });
    expect(allowed.modifiedArgs).toBeUndefined();
    // its other fields are read: a stop, a message
    expect(interpretClaude(exited(2, '{"continue":false,"stopReason":"halt now","systemMessage":"said"}', "no"), pre)).toMatchObject({ decision: "block", halt: "halt now", systemMessage: "said" });
    // JSON that is no answer still blocks, stderr the reason
    expect(interpretClaude(exited(2, '{"decision":"maybe"}', "from stderr"), pre)).toMatchObject({ decision: "block", reason: "from stderr" });
    expect(interpretClaude(exited(2, "{not json}", "from stderr"), pre)).toMatchObject({ decision: "block", reason: "from stderr" });
    // PermissionRequest: exit 2 is not honored — the flow goes on, unless its decision object denies
    expect(interpretClaude(exited(2, "", "no prod"), perm)).toMatchObject({ decision: null, rule: /not honored at PermissionRequest/ });
    expect(interpretClaude(exited(2, '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"no prod"}}}', "x"), perm)).toMatchObject({ decision: "block", reason: "no prod" });
    // …and one past hookbox's bounds is hookbox not deciding, as at any exit
    const wide = `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny"}},"x":{${Array.from({ length: 20_000 }, (_, i) => `"k${i}":0`).join(",")}}}`;
    expect(interpretClaude(exited(2, wide, "x"), perm).limit).toBeDefined();
    // another exit: a JSON answer alone decides — a deny, a block, a stop, a change
    expect(interpretClaude(exited(1, '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}'), pre)).toMatchObject({ decision: "block", reason: "no", error: null });
    expect(interpretClaude(exited(3, '{"decision":"block","reason":"r"}'), prompt)).toMatchObject({ decision: "block", reason: "r" });
    expect(interpretClaude(exited(1, '{"decision":"block","continue":false,"stopReason":"stop"}'), post).halt).toBe("stop");
    expect(interpretClaude(exited(3, '{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"command":"x"}}}'), pre).modifiedArgs).toEqual({ command: "x" });
    expect(interpretClaude(exited(1, "{}"), pre)).toMatchObject({ decision: null, error: null });
    // …and without one it is a non-blocking error: plain text (no context, even where exit 0's would be), nothing, JSON that is no answer
    expect(interpretClaude(exited(1, "oops"), pre)).toMatchObject({ decision: null, error: expect.any(String) });
    const noContext = interpretClaude(exited(1, "branch: main"), start);
    expect(noContext).toMatchObject({ decision: null, error: expect.any(String) });
    expect(noContext.additionalContext).toBeUndefined();
    expect(interpretClaude(exited(1, ""), pre)).toMatchObject({ decision: null, error: expect.any(String) });
    expect(interpretClaude(exited(1, '{"decision":"maybe"}'), pre)).toMatchObject({ decision: null, error: expect.stringMatching(/unknown decision/) });
  });
  it("a hook of another format at a Cursor gate is read as before a tool: a Copilot guard's crash, exit 2 or exit 1 denies; a Claude hook's permissionDecision counts", () => {
    for (const gate of ["beforeShellExecution", "beforeMCPExecution", "beforeReadFile", "beforeTabFileRead"]) {
      const copilot = hook("copilot", gate, { source: "policy" });
      expect(interpret(exited(2, "", "no rm"), copilot), gate).toMatchObject({ decision: "block", reason: "no rm" });
      expect(interpret(exited(1), copilot).decision, gate).toBe("block");
      expect(interpret(oom, copilot).decision, gate).toBe("block");
      expect(interpret(exited(0, '{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"no"}}'), hook("claude", gate)), gate).toMatchObject({ decision: "block", reason: "no" });
    }
  });
  it("TaskCompleted, TeammateIdle act on exit 2 only (a JSON decision there is none), TaskCreated on decision block too; hookbox's block is exit 2 at all three, and at TaskCreated its JSON too (an HTTP hook's only way)", () => {
    expect(interpretClaude(exited(0, '{"decision":"block","reason":"no"}'), hook("claude", "TaskCreated"))).toMatchObject({ decision: "block", reason: "no" });
    for (const name of ["TaskCreated", "TaskCompleted", "TeammateIdle"]) {
      const h = hook("claude", name);
      if (name !== "TaskCreated") expect(interpretClaude(exited(0, '{"decision":"block","reason":"no"}'), h).decision, name).toBeNull();
      expect(interpretClaude(exited(2, "", "tests fail"), h), name).toMatchObject({ decision: "block", reason: "tests fail" });
      const said = name === "TaskCreated" ? { decision: "block", reason: "tests fail" } : {};
      expect(answerFor("claude", resolveEventName(name)!.point, { decision: "block", reason: "tests fail", notifications: [] }), name).toEqual({ output: said, exit_code: 2 });
    }
  });
  it("Elicitation, ElicitationResult: exit 2 or action decline/cancel refuses the MCP server's request; an accept decides nothing; hookbox's refusal is a decline, as exit 2 and as JSON", () => {
    for (const name of ["Elicitation", "ElicitationResult"]) {
      const h = hook("claude", name);
      expect(interpretClaude(exited(0, `{"hookSpecificOutput":{"hookEventName":"${name}","action":"decline"}}`), h), name).toMatchObject({ decision: "block", rule: 'claude: hookSpecificOutput.action "decline"' });
      expect(interpretClaude(exited(0, '{"hookSpecificOutput":{"action":"cancel"},"reason":"not this server"}'), h), name).toMatchObject({ decision: "block", reason: "not this server" });
      expect(interpretClaude(exited(0, '{"hookSpecificOutput":{"action":"accept","content":{"token":"x"}}}'), h), name).toMatchObject({ decision: null, error: null });
      expect(interpretClaude(exited(2, "", "no elicitation"), h), name).toMatchObject({ decision: "block", reason: "no elicitation" });
      const point = resolveEventName(name)!.point;
      expect([...effectiveDecisions(point, "claude")], name).toEqual(["block"]);
      expect(answerFor("claude", point, { decision: "block", reason: "no", notifications: [] }), name).toEqual({ output: { hookSpecificOutput: { hookEventName: name, action: "decline" } }, exit_code: 2 });
    }
  });
  it("SessionStart: the plain stdout is the context", () => {
    expect(interpretClaude(exited(0, "branch: main\n"), start).additionalContext).toBe("branch: main");
  });
  it("PreToolUse: updatedInput is an argument change; PermissionRequest: decision.updatedInput too", () => {
    expect(interpretClaude(exited(0, '{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"command":"ls"}}}'), pre).modifiedArgs).toEqual({ command: "ls" });
    expect(interpretClaude(exited(0, '{"hookSpecificOutput":{"decision":{"behavior":"allow","updatedInput":{"command":"ls"}}}}'), perm).modifiedArgs).toEqual({ command: "ls" });
  });
});

describe("Gemini CLI reads continue: false where the agent loop runs (hooks reference)", () => {
  it.each(["SessionStart", "SessionEnd", "PreCompress", "Notification", "BeforeToolSelection"])("at %s it stops nothing", (event) => {
    const v = interpretGemini(exited(0, '{"continue":false,"stopReason":"nope"}'), hook("gemini", event));
    expect(v.halt).toBeUndefined();
    expect(v.decision).toBeNull();
  });
  it.each(["BeforeTool", "AfterTool", "BeforeAgent", "AfterAgent", "BeforeModel", "AfterModel"])("at %s it stops the agent", (event) => {
    expect(interpretGemini(exited(0, '{"continue":false,"stopReason":"nope"}'), hook("gemini", event)).halt).toBe("nope");
  });
});

describe("a Gemini AfterTool hook's tool_output", () => {
  it("replaces the tool's output the model sees (text only); elsewhere it is not read", () => {
    expect(interpretGemini(exited(0, '{"hookSpecificOutput":{"tool_output":"[redacted]"}}'), hook("gemini", "AfterTool"))).toMatchObject({ decision: null, updatedOutput: "[redacted]" });
    expect(interpretGemini(exited(0, '{"hookSpecificOutput":{"tool_output":{"x":1}}}'), hook("gemini", "AfterTool")).updatedOutput).toBeUndefined();
    expect(interpretGemini(exited(0, '{"hookSpecificOutput":{"tool_output":"x"}}'), hook("gemini", "BeforeTool")).updatedOutput).toBeUndefined();
  });
});

describe("a Gemini hook's plain text", () => {
  it(`is kept whole up to GEMINI_TEXT_CHARS (${GEMINI_TEXT_CHARS}) characters, as a block's reason; past them cut before a word and marked`, () => {
    const words = (n: number) => "word ".repeat(Math.ceil(n / 5)).slice(0, n - 1) + "z";
    const at = interpretGemini(exited(2, words(GEMINI_TEXT_CHARS)), hook("gemini", "BeforeTool"));
    expect(at).toMatchObject({ decision: "block", reason: words(GEMINI_TEXT_CHARS) });
    const past = interpretGemini(exited(2, words(GEMINI_TEXT_CHARS + 1)), hook("gemini", "BeforeTool"));
    expect(past.decision).toBe("block");
    expect(past.reason!.endsWith("…")).toBe(true);
    expect(past.reason!.length).toBeLessThanOrEqual(GEMINI_TEXT_CHARS + 1);
    expect(words(GEMINI_TEXT_CHARS + 1).startsWith(past.reason!.slice(0, -1))).toBe(true);
  });
});

describe("what Gemini CLI takes from a hook and hookbox does not pass on", () => {
  it.each<[string, string]>([
    ["BeforeModel", '{"hookSpecificOutput":{"hookEventName":"BeforeModel","llm_request":{"model":"gemini-pro"}}}'],
    ["AfterModel", '{"hookSpecificOutput":{"hookEventName":"AfterModel","llm_response":{"candidates":[]}}}'],
  ])("is said in the hook's record at %s, never dropped unsaid", (event, out) => {
    const v = interpretGemini(exited(0, out), hook("gemini", event));
    expect(v.decision).toBeNull();
    expect(v.rule).toMatch(/hookSpecificOutput\.(llm_request|llm_response) is not passed on by hookbox \(Gemini CLI would take it\)$/);
  });
});

describe("Gemini CLI's BeforeToolSelection toolConfig (hooks reference; its hook aggregator)", () => {
  const selection = (toolConfig: unknown, event = "BeforeToolSelection") =>
    interpretGemini(exited(0, JSON.stringify({ hookSpecificOutput: { hookEventName: event, toolConfig } })), hook("gemini", event));
  it.each<[string, unknown, unknown]>([
    ['"NONE": disables all tools', { mode: "NONE" }, { mode: "NONE" }],
    ['"ANY" with a whitelist', { mode: "ANY", allowedFunctionNames: ["read_file", "glob"] }, { mode: "ANY", names: ["read_file", "glob"] }],
    ["a mode Gemini does not know counts as AUTO", { mode: "SOMETIMES", allowedFunctionNames: ["read_file"] }, { mode: "AUTO", names: ["read_file"] }],
    ["an empty whitelist names no tool: no list", { allowedFunctionNames: [] }, { mode: "AUTO" }],
    ["a whitelist JavaScript reads as false (null, \"\"): no list", { allowedFunctionNames: "" }, { mode: "AUTO" }],
    ["a whitelist that is no array (a string, whose letters Gemini would take for names) allows nothing", { allowedFunctionNames: "read_file" }, { mode: "AUTO", names: [] }],
    ["an object for a whitelist allows nothing", { mode: "ANY", allowedFunctionNames: { read_file: true } }, { mode: "ANY", names: [] }],
    ["a name said twice is one", { allowedFunctionNames: ["glob", "glob"] }, { mode: "AUTO", names: ["glob"] }],
  ])("%s", (_what, toolConfig, expected) => {
    const v = selection(toolConfig);
    expect(v.decision).toBeNull();
    expect(v.toolSelection).toEqual(expected);
    expect(v.rule).toMatch(/; gemini: toolConfig mode (NONE|ANY|AUTO)/);
  });
  it("takes none that is no object, and none at another event", () => {
    expect(selection("NONE").toolSelection).toBeUndefined();
    expect(selection(["NONE"]).toolSelection).toBeUndefined();
    expect(selection({ mode: "NONE" }, "BeforeTool").toolSelection).toBeUndefined();
  });
  it("drops a name that is no function's name (a string of at most MAX_FUNCTION_NAME_CHARS letters, digits, _ . : -, a letter or _ first), and says so; a list of nothing but such names allows nothing", () => {
    const long = "x".repeat(MAX_FUNCTION_NAME_CHARS + 1);
    const v = selection({ allowedFunctionNames: ["read_file", 7, null, long, "y".repeat(MAX_FUNCTION_NAME_CHARS), "mcp.server:tool-1", "_t", "1t", "-t", ".t", ":t", "rm -rf", "", "\u001b[2J"] });
    expect(v.toolSelection).toEqual({ mode: "AUTO", names: ["read_file", "y".repeat(MAX_FUNCTION_NAME_CHARS), "mcp.server:tool-1", "_t"] });
    expect(v.rule).toMatch(/a name that is no function's \(64 letters, digits, _ \. : - at most, a letter or _ first\) dropped/);
    expect(selection({ allowedFunctionNames: ["read_file"] }).rule).not.toMatch(/dropped/);
    expect(selection({ allowedFunctionNames: [long, 1] }).toolSelection).toEqual({ mode: "AUTO", names: [] });
  });
  it("cuts a list at MAX_TOOL_NAMES, and says so", () => {
    const names = Array.from({ length: MAX_TOOL_NAMES + 5 }, (_, i) => `tool_${i}`);
    const v = selection({ allowedFunctionNames: names });
    expect(v.toolSelection?.names).toEqual(names.slice(0, MAX_TOOL_NAMES));
    expect(v.rule).toMatch(/cut at 1024 names/);
    expect(selection({ allowedFunctionNames: names.slice(0, MAX_TOOL_NAMES) }).rule).not.toMatch(/cut at/);
  });
});

describe("tools the model may call, folded over hooks and trust tiers", () => {
  const at = (source: HookDef["source"], toolSelection: ToolSelection) => ({ hook: hook("gemini", "BeforeToolSelection", { source }), verdict: { decision: null, error: null, rule: "r", toolSelection } });
  it.each<[string, ReturnType<typeof at>[], ToolSelection | undefined]>([
    ["no hook said: none", [], undefined],
    ["NONE from any hook, a repository's too, wins", [at("policy", { mode: "ANY", names: ["a"] }), at("repository", { mode: "NONE" })], { mode: "NONE", names: [] }],
    ["ANY from any hook, else AUTO", [at("repository", { mode: "ANY" }), at("repository", { mode: "AUTO", names: ["b"] })], { mode: "ANY", names: ["b"] }],
    ["one tier's lists are joined, as Gemini joins them, sorted", [at("repository", { mode: "AUTO", names: ["read_file", "glob"] }), at("repository", { mode: "AUTO", names: ["web_fetch"] })], { mode: "AUTO", names: ["glob", "read_file", "web_fetch"] }],
    ["a hook that names no tools adds none and takes none away", [at("repository", { mode: "AUTO", names: ["glob"] }), at("repository", { mode: "AUTO" })], { mode: "AUTO", names: ["glob"] }],
    ["a repository's list only narrows a policy's", [at("policy", { mode: "AUTO", names: ["glob", "read_file"] }), at("repository", { mode: "AUTO", names: ["read_file", "run_shell_command"] })], { mode: "AUTO", names: ["read_file"] }],
    ["a service hook's list only narrows a policy's too", [at("service", { mode: "AUTO", names: ["a", "b"] }), at("policy", { mode: "AUTO", names: ["b", "c"] })], { mode: "AUTO", names: ["b"] }],
    ["lists of two tiers that share no tool leave none: NONE, never an empty list (any tool)", [at("policy", { mode: "AUTO", names: ["glob"] }), at("repository", { mode: "ANY", names: ["run_shell_command"] })], { mode: "NONE", names: [] }],
    ["a list whose every name was dropped allows nothing", [at("repository", { mode: "AUTO", names: [] })], { mode: "NONE", names: [] }],
    ["a mode without any list", [at("repository", { mode: "AUTO" })], { mode: "AUTO" }],
  ])("%s", (_what, judged, expected) => {
    expect(foldToolSelection(judged)).toEqual(expected);
    expect(fold(judged, { interactive: true }).toolSelection).toEqual(expected);
  });
  it("joins a tier's lists in the hooks' order no further than MAX_TOOL_NAMES names, and cuts the folded list there", () => {
    const names = (from: number) => Array.from({ length: MAX_TOOL_NAMES }, (_, i) => `t${String(from + i).padStart(5, "0")}`);
    // the second hook's names sort first: the join stopped at the first hook's, never looking at them
    const f = foldToolSelection([at("repository", { mode: "AUTO", names: names(MAX_TOOL_NAMES) }), at("repository", { mode: "AUTO", names: names(0) })]);
    expect(f?.names).toEqual(names(MAX_TOOL_NAMES));
  });
  it("is written as Gemini's own aggregator writes it, at BeforeToolSelection only", () => {
    const f = fold([at("repository", { mode: "AUTO", names: ["read_file", "glob"] })], { interactive: true });
    expect(answerFor("gemini", resolveEventName("BeforeToolSelection")!.point, f).output).toEqual({ hookSpecificOutput: { toolConfig: { mode: "AUTO", allowedFunctionNames: ["glob", "read_file"] } } });
    expect(answerFor("gemini", resolveEventName("BeforeToolSelection")!.point, fold([at("repository", { mode: "ANY" })], { interactive: true })).output).toEqual({ hookSpecificOutput: { toolConfig: { mode: "ANY", allowedFunctionNames: [] } } });
    expect(answerFor("gemini", resolveEventName("BeforeToolSelection")!.point, fold([], { interactive: true })).output).toEqual({});
    // Gemini reads no decision there: hookbox's own block (a failure mode's) leaves the model no tool
    expect(answerFor("gemini", resolveEventName("BeforeToolSelection")!.point, { ...f, decision: "block", reason: "r" }).output).toEqual({ decision: "block", reason: "r", hookSpecificOutput: { toolConfig: { mode: "NONE", allowedFunctionNames: [] } } });
    expect(answerFor("gemini", resolveEventName("BeforeTool")!.point, f).output).toEqual({});
  });
});

describe("cosh-ng rules", () => {
  it('the sandbox guard\'s rewrite: decision "allow" with hookSpecificOutput.tool_input is an argument change', () => {
    expect(interpretCosh(exited(0, '{"decision":"allow","hookSpecificOutput":{"tool_input":{"command":"sandbox ls"}}}'), hook("cosh", "PreToolUse"))).toMatchObject({ decision: "allow", modifiedArgs: { command: "sandbox ls" } });
  });
});

describe("Cursor rules (Cursor hooks documentation)", () => {
  const shell = hook("cursor", "beforeShellExecution");
  const closed = hook("cursor", "beforeShellExecution", { failOpen: false });
  const stop = hook("cursor", "stop");
  it("at stop only followup_message counts: a deny, an exit 2 or a failClosed failure sends the agent nowhere", () => {
    const closedStop = hook("cursor", "stop", { failOpen: false });
    expect(interpretCursor(exited(0, '{"permission":"deny","agent_message":"no"}'), stop).decision).toBeNull();
    expect(interpretCursor(exited(2, "", "no"), stop).decision).toBeNull();
    expect(interpretCursor(exited(1, "", "boom"), closedStop).decision).toBeNull();
    expect(interpretCursor(exited(0, '{"followup_message":"run the tests"}'), stop)).toMatchObject({ decision: "block", reason: "run the tests" });
  });
  it("a stop hook's followup_message goes no further than its loop_limit (5 unset, null none), counted by the event's loop_count; at subagentStop only when the subagent completed", () => {
    const follow = exited(0, '{"followup_message":"run the tests"}');
    expect(interpretCursor(follow, stop, { loop_count: 4 })).toMatchObject({ decision: "block", reason: "run the tests" });
    expect(interpretCursor(follow, stop, { loop_count: 5 })).toMatchObject({ decision: null, rule: "cursor: followup_message not sent: loop_count 5 has reached the hook's loop_limit 5" });
    expect(interpretCursor(follow, hook("cursor", "stop", { loopLimit: 1 }), { loop_count: 0 }).decision).toBe("block");
    expect(interpretCursor(follow, hook("cursor", "stop", { loopLimit: 1 }), { loop_count: 1 }).decision).toBeNull();
    expect(interpretCursor(follow, hook("cursor", "stop", { loopLimit: null }), { loop_count: 500 }).decision).toBe("block");
    // an event of another agent's, with no loop_count: nothing to count by
    expect(interpretCursor(follow, stop, {}).decision).toBe("block");
    const sub = hook("cursor", "subagentStop");
    expect(interpretCursor(follow, sub, { status: "completed", loop_count: 0 }).decision).toBe("block");
    expect(interpretCursor(follow, sub, { status: "error", loop_count: 0 })).toMatchObject({ decision: null, rule: expect.stringMatching(/status is "error", and Cursor takes one only when it is "completed"/) });
  });
  it("postToolUse's updated_mcp_tool_output replaces the tool's output", () => {
    expect(interpretCursor(exited(0, '{"updated_mcp_tool_output":{"rows":"[redacted]"}}'), hook("cursor", "postToolUse"))).toMatchObject({ decision: null, updatedOutput: { rows: "[redacted]" } });
    expect(interpretCursor(exited(0, '{"updated_mcp_tool_output":"x"}'), shell).updatedOutput).toBeUndefined();
  });
  it("beforeSubmitPrompt reads continue only: a permission or a decision there stops no prompt", () => {
    const prompt = hook("cursor", "beforeSubmitPrompt");
    expect(interpretCursor(exited(0, '{"permission":"deny","decision":"block"}'), prompt).decision).toBeNull();
    expect(interpretCursor(exited(0, '{"continue":false,"user_message":"not that"}'), prompt)).toMatchObject({ decision: "block", systemMessage: "not that" });
  });
  table(interpretCursor, [
    ['permission "deny" blocks, agent_message is the reason', exited(0, '{"permission":"deny","user_message":"rm -rf is blocked here","agent_message":"Do not delete the tree; ask the user."}'), shell, { decision: "block", reason: "Do not delete the tree; ask the user.", rule: /permission "deny"/ }],
    ['permission "ask"', exited(0, '{"permission":"ask","user_message":"sure?"}'), shell, { decision: "ask", rule: /permission "ask"/ }],
    ["exit 2 blocks with stderr", exited(2, "", "no"), shell, { decision: "block", reason: "no", rule: /exit 2 blocks/ }],
    ["a crash lets the action through", exited(1, "", "bug"), shell, { decision: null, error: true, rule: /lets the action through/ }],
    ["failClosed: a crash blocks", exited(1, "", "bug"), closed, { decision: "block", error: true, rule: /failClosed = true/ }],
    ["failClosed: a timeout blocks", timedOut, closed, { decision: "block", error: true, rule: /failClosed = true/ }],
    ["failClosed: output that is not JSON blocks", exited(0, "oops"), closed, { decision: "block", error: true, rule: /unreadable answer blocks/ }],
    ["failClosed: no output at all blocks (Cursor: \"returned no output\")", exited(0, "  \n"), closed, { decision: "block", error: true, rule: /printed nothing; cursor: failClosed = true/ }],
    ["failClosed: {} is an answer, no decision", exited(0, "{}"), closed, { decision: null, error: false, rule: /no output makes no decision/ }],
    // Cursor: for a permission hook "invalid JSON or a schema mismatch blocks the action", failClosed or not
    ["a permission hook's output that is not JSON blocks", exited(0, "oops"), shell, { decision: "block", error: true, rule: /permission hook's unreadable answer blocks/ }],
    ["a permission hook's unknown permission blocks", exited(0, '{"permission":"maybe"}'), shell, { decision: "block", error: true, rule: /unknown permission; cursor: a permission hook's unreadable answer blocks/ }],
    ["a permission hook's output that is no object blocks", exited(0, "[1]"), hook("cursor", "preToolUse"), { decision: "block", error: true, rule: /unreadable answer blocks/ }],
    // Cursor hooks, "Hook events": beforeReadFile and beforeTabFileRead answer permission "allow" | "deny" — no ask
    ['a file read\'s permission "ask" is outside its schema: it blocks', exited(0, '{"permission":"ask"}'), hook("cursor", "beforeReadFile"), { decision: "block", error: true, rule: /unknown permission; cursor: a permission hook's unreadable answer blocks/ }],
    ['the Tab read\'s permission "ask" blocks too', exited(0, '{"permission":"ask"}'), hook("cursor", "beforeTabFileRead"), { decision: "block", error: true, rule: /unreadable answer blocks/ }],
    ['a permission hook\'s empty permission is no word of its schema: it blocks', exited(0, '{"permission":""}'), shell, { decision: "block", error: true, rule: /unreadable answer blocks/ }],
    ['a permission hook\'s permission null blocks', exited(0, '{"permission":null}'), hook("cursor", "subagentStart"), { decision: "block", error: true, rule: /unreadable answer blocks/ }],
    ['"Deny" is not Cursor\'s spelling: the answer is unreadable, and it blocks', exited(0, '{"permission":"Deny"}'), shell, { decision: "block", error: true, rule: /unreadable answer blocks/ }],
    ['preToolUse takes an ask (its schema accepts it)', exited(0, '{"permission":"ask"}'), hook("cursor", "preToolUse"), { decision: "ask", error: false, rule: /permission "ask"/ }],
    ['an observing hook\'s empty permission makes no decision', exited(0, '{"permission":""}'), hook("cursor", "afterFileEdit"), { decision: null, error: false, rule: /no permission/ }],
    ["an unknown value of the decision key (not Cursor's) is the hook's failure: through", exited(0, '{"decision":"approve"}'), shell, { decision: null, error: true, rule: /unknown permission; cursor: a failed hook lets the action through/ }],
    ["an observing hook's output that is not JSON lets the action through", exited(0, "oops"), hook("cursor", "afterShellExecution"), { decision: null, error: true, rule: /lets the action through/ }],
    ["stop: followup_message sends the agent on", exited(0, '{"followup_message":"run the tests first"}'), stop, { decision: "block", reason: "run the tests first", rule: /followup_message/ }],
  ]);
  it("user_message is the hook's message to the user; updated_input an argument change, on preToolUse", () => {
    expect(interpretCursor(exited(0, '{"permission":"allow","user_message":"rewritten","updated_input":{"command":"ls"}}'), hook("cursor", "preToolUse"))).toMatchObject({ systemMessage: "rewritten", modifiedArgs: { command: "ls" } });
  });
  // Cursor hooks, "Hook events": updated_input is preToolUse's output only; additional_context postToolUse's and sessionStart's
  it("updated_input elsewhere changes nothing (Cursor runs the command as it was); additional_context counts after a tool and at a session's start only", () => {
    const v = interpretCursor(exited(0, '{"permission":"allow","updated_input":{"command":"ls"},"additional_context":"ctx"}'), shell);
    expect(v).toMatchObject({ decision: "allow", error: null });
    expect(v).not.toHaveProperty("modifiedArgs");
    expect(v.additionalContext).toBeUndefined();
    for (const name of ["postToolUse", "sessionStart"]) expect(interpretCursor(exited(0, '{"additional_context":"ctx"}'), hook("cursor", name)).additionalContext).toBe("ctx");
    expect(interpretCursor(exited(0, '{"additional_context":"ctx"}'), hook("cursor", "preToolUse")).additionalContext).toBeUndefined();
  });
});

describe("Claude Code's PostToolUse output replacement (hooks reference, PostToolUse decision control)", () => {
  const post = hook("claude", "PostToolUse");
  it("reads updatedToolOutput, and updatedMCPToolOutput, its older name, as what the model sees in place of the tool's output", () => {
    expect(interpretClaude(exited(0, '{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":"[redacted]"}}'), post)).toMatchObject({ decision: null, error: null, updatedOutput: "[redacted]" });
    expect(interpretClaude(exited(0, '{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedMCPToolOutput":{"content":[]}}}'), post)).toMatchObject({ updatedOutput: { content: [] } });
    expect(interpretClaude(exited(0, '{"decision":"block","reason":"secret","hookSpecificOutput":{"updatedToolOutput":"x"}}'), post)).toMatchObject({ decision: "block", updatedOutput: "x" });
  });
  it("reads it nowhere else, and never from a Codex hook (Codex takes none)", () => {
    expect(interpretClaude(exited(0, '{"hookSpecificOutput":{"updatedToolOutput":"x"}}'), hook("claude", "PreToolUse")).updatedOutput).toBeUndefined();
    const codex = interpretCodex(exited(0, '{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":"x"}}'), hook("codex", "PostToolUse"));
    expect(codex.updatedOutput).toBeUndefined();
    expect(codex.rule).toMatch(/codex: a replaced tool output is not taken/);
  });
});

describe("Codex rules (Codex hooks documentation: Claude Code's shape, no ask)", () => {
  const pre = hook("codex", "PreToolUse");
  table(interpretCodex, [
    ["a Codex hook's ask is a block", exited(0, '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"needs a human"}}'), pre, { decision: "block", reason: "needs a human", rule: /codex: no ask/ }],
    ["deny blocks", exited(0, '{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"no"}}'), pre, { decision: "block", reason: "no", rule: /^codex: hookSpecificOutput\.permissionDecision "deny"/ }],
    ["exit 2 blocks with stderr", exited(2, "", "stop"), pre, { decision: "block", reason: "stop", rule: /codex: exit 2/ }],
    ["exit 2 without a reason on stderr is a failed hook", exited(2, '{"decision":"block","reason":"json"}', " \n"), pre, { decision: null, error: true, rule: /codex: exit 2 blocks only with a reason on stderr/ }],
    ["exit 2 denies a PermissionRequest (Codex reads exit 2 there, as Claude Code does not), with stderr its reason", exited(2, "", "no network"), hook("codex", "PermissionRequest"), { decision: "block", reason: "no network", rule: /codex: exit 2 blocks/ }],
    ["JSON is read at exit 0 only: a deny at exit 1 is a failed hook", exited(1, '{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"no"}}'), pre, { decision: null, error: true, rule: /codex: a non-zero exit other than 2/ }],
    // Codex's output parser: a block whose reason is missing or blank is refused, and the call goes on
    ["a deny without a reason is a failed hook", exited(0, '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny"}}'), pre, { decision: null, error: true, rule: /codex: a block without a reason is refused/ }],
    ["a PermissionRequest deny without a message still denies (Codex gives it one)", exited(0, '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny"}}}'), hook("codex", "PermissionRequest"), { decision: "block", error: false, rule: /^codex: hookSpecificOutput\.decision\.behavior "deny"$/ }],
    ["a PostToolUse block with a blank reason is a failed hook", exited(0, '{"decision":"block","reason":" "}'), hook("codex", "PostToolUse"), { decision: null, error: true, rule: /without a reason is refused/ }],
    // Blank as Rust's str::trim sees it: a byte-order mark is a reason, a NEL is none
    ["a deny whose reason is a byte-order mark blocks (Rust's trim keeps it)", exited(0, '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"\\ufeff"}}'), pre, { decision: "block", reason: "\ufeff", error: false, rule: /^codex: hookSpecificOutput\.permissionDecision "deny"/ }],
    ["a block whose reason is a NEL is a failed hook (Rust's trim takes it)", exited(0, '{"decision":"block","reason":"\\u0085 "}'), pre, { decision: null, error: true, rule: /without a reason is refused/ }],
    ["exit 2 whose stderr is a byte-order mark blocks", exited(2, "", "\ufeff"), pre, { decision: "block", reason: "\ufeff", rule: /codex: exit 2 blocks, stderr the reason/ }],
    ["exit 2 whose stderr is a NEL is a failed hook", exited(2, "", "\u0085\n"), pre, { decision: null, error: true, rule: /exit 2 blocks only with a reason on stderr/ }],
    // Codex's schema: PermissionRequest's updatedInput, updatedPermissions and interrupt are reserved and "fail closed" — the hook failed, Codex asks its user
    ["a PermissionRequest allow with updatedPermissions fails the hook: no allow", exited(0, '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedPermissions":[{"type":"setMode","mode":"bypassPermissions","destination":"session"}]}}}'), hook("codex", "PermissionRequest"), { decision: null, error: true, rule: /with updatedPermissions fails the hook — its decision is dropped and Codex asks its user/ }],
    ["a PermissionRequest allow with updatedInput fails the hook", exited(0, '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"command":"ls"}}}}'), hook("codex", "PermissionRequest"), { decision: null, error: true, rule: /with updatedInput fails the hook/ }],
    ["a PermissionRequest deny with interrupt: true fails the hook: Codex asks", exited(0, '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"no","interrupt":true}}}'), hook("codex", "PermissionRequest"), { decision: null, error: true, rule: /with interrupt:true fails the hook/ }],
    ["a PermissionRequest answer with continue: false fails the hook", exited(0, '{"continue":false,"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"no"}}}'), hook("codex", "PermissionRequest"), { decision: null, error: true, rule: /with continue:false fails the hook/ }],
    ["a PermissionRequest allow with updatedPermissions: null is an allow", exited(0, '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedPermissions":null,"interrupt":false}}}'), hook("codex", "PermissionRequest"), { decision: "allow", error: false, rule: /^codex: hookSpecificOutput\.decision\.behavior "allow"/ }],
    ["a PreToolUse deny with continue: false fails the hook: the call goes on (Codex hooks documentation)", exited(0, '{"continue":false,"stopReason":"x","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}'), pre, { decision: null, error: true, rule: /a PreToolUse answer with continue:false fails the hook — its decision is dropped and the call goes on/ }],
    ["a PreToolUse deny with suppressOutput fails the hook", exited(0, '{"suppressOutput":true,"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}'), pre, { decision: null, error: true, rule: /with suppressOutput fails the hook/ }],
    ["a PreToolUse deny with a stopReason alone fails the hook", exited(0, '{"stopReason":"x","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}'), pre, { decision: null, error: true, rule: /with stopReason fails the hook/ }],
    ["a PreToolUse deny with suppressOutput: false and a systemMessage denies", exited(0, '{"suppressOutput":false,"systemMessage":"m","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}'), pre, { decision: "block", reason: "no", error: false, rule: /^codex: hookSpecificOutput\.permissionDecision "deny"/ }],
    ["SubagentStart: plain stdout is context (Codex hooks documentation)", exited(0, "worker of the docs team"), hook("codex", "SubagentStart"), { decision: null, error: false, rule: /codex: plain stdout of SubagentStart is added as context/ }],
    ["SessionStart: plain stdout that JSON reads as no object (a number) is context: it does not look like JSON to Codex", exited(0, "42"), hook("codex", "SessionStart"), { decision: null, error: false, rule: /plain stdout of SessionStart is added as context/ }],
    ["SessionStart: a JSON array looks like JSON and is no answer: the hook failed", exited(0, "[1]"), hook("codex", "SessionStart"), { decision: null, error: true, rule: /looks like JSON and is no answer fails the hook/ }],
    ["SessionStart: stdout that looks like JSON and is none fails the hook, never context", exited(0, "{branch: main}"), hook("codex", "SessionStart"), { decision: null, error: true, rule: /looks like JSON and is no answer fails the hook/ }],
    ["UserPromptSubmit: plain stdout is context", exited(0, "[note] the repo uses pnpm"), hook("codex", "UserPromptSubmit"), { decision: null, error: false, rule: /plain stdout of UserPromptSubmit is added as context/ }],
    ["SubagentStart: continue false stops nothing", exited(0, '{"continue":false,"stopReason":"no subagents"}'), hook("codex", "SubagentStart"), { decision: null, error: false, rule: /continue = false at SubagentStart stops nothing/ }],
    ["a SubagentStop block with its reason keeps the subagent going", exited(0, '{"decision":"block","reason":"finish the tests"}'), hook("codex", "SubagentStop"), { decision: "block", reason: "finish the tests", error: false, rule: /^codex: decision "block"/ }],
    // Codex's compaction hooks: only continue: false stops; exit 2 and a decision field are failures
    ["PreCompact: exit 2 is a failed hook, no block", exited(2, "", "not now"), hook("codex", "PreCompact"), { decision: null, error: true, rule: /any non-zero exit at PreCompact is a failed hook/ }],
    ["PreCompact: a decision field costs the whole answer", exited(0, '{"decision":"block","reason":"not now","continue":false}'), hook("codex", "PreCompact"), { decision: null, error: true, rule: /takes continue, stopReason, suppressOutput and systemMessage only — with "decision"/ }],
    ["PreCompact: continue false stops compaction", exited(0, '{"continue":false,"stopReason":"keep the context"}'), hook("codex", "PreCompact"), { decision: "block", reason: "keep the context", error: false, rule: /codex: continue = false stops the agent \(and blocks this PreCompact\)/ }],
    ["PostCompact: exit 2 is a failed hook", exited(2, "", "x"), hook("codex", "PostCompact"), { decision: null, error: true, rule: /PostCompact is a failed hook/ }],
    // hookbox's bounds first: a million-deep answer is never parsed whole on the shared thread (a second of it, a hook)
    ["PreCompact: an answer past hookbox's bounds is that, never parsed whole for its fields", exited(0, `{"x":${"[".repeat(500_000)}${"]".repeat(500_000)}}`), hook("codex", "PreCompact"), { decision: null, error: true, rule: /past hookbox's bounds/ }],
  ]);
});

describe("Claude Code's onFailure: \"block\" (hooks reference, \"Block the action when a hook fails\")", () => {
  const strict = (event = "PreToolUse") => hook("claude", event, { failOpen: false });
  table(interpretClaude, [
    ["a timeout blocks", timedOut, strict(), { decision: "block", reason: 'hook h failed (timed out), and its onFailure is "block"', rule: /claude: onFailure "block"/ }],
    ["exit 1 blocks", exited(1, "", "python3: not found"), strict(), { decision: "block", rule: /onFailure "block"/ }],
    ["exit 127 blocks", exited(127), strict(), { decision: "block", rule: /onFailure "block"/ }],
    ["exit 1 with a JSON allow is no failure: its JSON decides at every exit", exited(1, '{"hookSpecificOutput":{"permissionDecision":"allow"}}'), strict(), { decision: "allow", rule: /permissionDecision "allow"/ }],
    ["exit 1 with JSON that is no answer blocks", exited(1, '{"hookSpecificOutput":{"permissionDecision":"perhaps"}}'), strict(), { decision: "block", rule: /onFailure "block"/ }],
    ["exit 2 at PermissionRequest, not honored there, is no failure", exited(2, "", "no"), strict("PermissionRequest"), { decision: null, rule: /not honored at PermissionRequest/ }],
    ["exit 2 at PermissionRequest with JSON that cannot be read blocks (only its JSON counts there)", exited(2, '{"hookSpecificOutput": }'), strict("PermissionRequest"), { decision: "block", rule: /onFailure "block"/ }],
    ["exit 2 at PermissionRequest with an answer past hookbox's bounds, which Claude Code would read, blocks", exited(2, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny"}},"x":{${Array.from({ length: 20_000 }, (_, i) => `"k${i}":0`).join(",")}}}`), strict("PermissionRequest"), { decision: "block", rule: /onFailure "block"/ }],
    ["an unknown decision at exit 0 blocks", exited(0, '{"hookSpecificOutput":{"permissionDecision":"perhaps"}}'), strict(), { decision: "block", rule: /onFailure "block"/ }],
    ["JSON that cannot be parsed blocks", exited(0, '{"decision": }'), strict(), { decision: "block", rule: /onFailure "block"/ }],
    ["a cut answer (no closing brace) is plain text: no failure", exited(0, '{"decision":'), strict(), { decision: null, rule: /plain text/ }],
    ["a JSON array is plain text: no failure", exited(0, "[1, 2]"), strict(), { decision: null, rule: /plain text/ }],
    ["a crash (out of memory) blocks", oom, strict(), { decision: "block", rule: /onFailure "block"/ }],
    ["plain text at exit 0 is no failure", exited(0, "all good"), strict(), { decision: null, rule: /plain text/ }],
    ["exit 0 with an allow is no failure", exited(0, '{"hookSpecificOutput":{"permissionDecision":"allow"}}'), strict(), { decision: "allow", rule: /permissionDecision "allow"/ }],
    ["a PermissionRequest hook that fails denies", exited(1), strict("PermissionRequest"), { decision: "block", rule: /onFailure "block"/ }],
    ["at Stop it has no effect", exited(1), strict("Stop"), { decision: null, rule: /does not block/ }],
    ["at TeammateIdle it has no effect", timedOut, strict("TeammateIdle"), { decision: null, rule: /timeout does not block/ }],
    ["without it a failure does not block", exited(1), hook("claude", "PreToolUse"), { decision: null, rule: /does not block/ }],
  ]);
});

describe("Claude Code's newer events (hooks reference)", () => {
  it("PostToolBatch: decision block stops the loop; UserPromptExpansion: block keeps the command from expanding, plain stdout is context", () => {
    expect(interpretClaude(exited(0, '{"decision":"block","reason":"tests fail"}'), hook("claude", "PostToolBatch"))).toMatchObject({ decision: "block", reason: "tests fail" });
    expect(interpretClaude(exited(2, "", "no /deploy here"), hook("claude", "UserPromptExpansion"))).toMatchObject({ decision: "block", reason: "no /deploy here" });
    expect(interpretClaude(exited(0, "remember the style guide"), hook("claude", "UserPromptExpansion"))).toMatchObject({ decision: null, additionalContext: "remember the style guide" });
    for (const name of ["PostToolBatch", "UserPromptExpansion"]) expect(effectiveDecisions(resolveEventName(name)!.point, "claude").has("block"), name).toBe(true);
    expect(answerFor("claude", resolveEventName("PostToolBatch")!.point, { decision: "block", reason: "tests fail", additionalContext: "see log", notifications: [] }))
      .toEqual({ output: { decision: "block", reason: "tests fail", hookSpecificOutput: { hookEventName: "PostToolBatch", additionalContext: "see log" } }, exit_code: 0 });
  });
  it("PreModelSwitch: permissionDecision deny or ask, or decision block, decides; a timeout cancels the switch; the answer is a permissionDecision", () => {
    const h = hook("claude", "PreModelSwitch");
    const point = h.point;
    expect(interpretClaude(exited(0, '{"hookSpecificOutput":{"hookEventName":"PreModelSwitch","permissionDecision":"ask","permissionDecisionReason":"costly"}}'), h)).toMatchObject({ decision: "ask", reason: "costly" });
    expect(interpretClaude(exited(0, '{"decision":"block","reason":"cache is warm"}'), h)).toMatchObject({ decision: "block", reason: "cache is warm" });
    expect(interpretClaude(timedOut, h)).toMatchObject({ decision: "block", rule: /a timeout at PreModelSwitch blocks the switch/ });
    expect([...effectiveDecisions(point, "claude")].sort()).toEqual(["allow", "ask", "block"]);
    expect(answerFor("claude", point, { decision: "block", reason: "no", notifications: [] })).toEqual({ output: { hookSpecificOutput: { hookEventName: "PreModelSwitch", permissionDecision: "deny", permissionDecisionReason: "no" } }, exit_code: 0 });
  });
  it.each(["Setup", "MessageDisplay", "PostModelSwitch", "DirectoryAdded"])("%s decides nothing", (name) => {
    expect(effectiveDecisions(resolveEventName(name)!.point, "claude").size).toBe(0);
  });
});

describe("matchers, each agent's own (linear: RE2 underneath)", () => {
  it.each([
    ["Claude Code: a plain name matches exactly — Write does not fire for NotebookWrite", claudeMatcher("Write")!, "NotebookWrite", false],
    ["Claude Code: a plain name matches exactly", claudeMatcher("Write")!, "Write", true],
    ["Claude Code: A|B are alternatives", claudeMatcher("Edit|Write")!, "Edit", true],
    ["Claude Code: A|B are exact alternatives", claudeMatcher("Edit|Write")!, "MultiEdit", false],
    ["Claude Code: other patterns are a regex found anywhere — mcp__.*__create fires for mcp__github__create_issue", claudeMatcher("mcp__.*__create")!, "mcp__github__create_issue", true],
    ["Claude Code: a regex anywhere — Notebook.*", claudeMatcher("Notebook.*")!, "NotebookEdit", true],
    ["Claude Code: names listed with commas and spaces are exact alternatives", claudeMatcher("Edit, Write")!, "Write", true],
    ["Claude Code: a comma list without spaces", claudeMatcher("Edit,Write")!, "Edit", true],
    ["Claude Code: a comma list is exact", claudeMatcher("Edit, Write")!, "MultiEdit", false],
    ["Claude Code: a hyphenated name is exact", claudeMatcher("my-tool")!, "my-tool-2", false],
    ["Claude Code: names are separated by | or , alone — spaces only around them (Edit Write is one name)", claudeMatcher("Edit Write")!, "Write", false],
    ["Claude Code: blanks around a name are no part of it", claudeMatcher(" Edit ,  Write |Read ")!, "Write", true],
    ["Claude Code: a space list is exact", claudeMatcher("Edit  Write")!, "NotebookEdit", false],
    ["Claude Code: a list with a trailing separator", claudeMatcher("Edit |")!, "Edit", true],
    ["cosh-ng: shell fires for run_shell_command (tool-name aliases)", coshMatcher("shell", "cosh-ng")!, "run_shell_command", true],
    ["cosh-ng: run_shell_command fires for shell", coshMatcher("run_shell_command", "cosh-ng")!, "shell", true],
    ["cosh-ng: a regex found anywhere", coshMatcher("file", "cosh-ng")!, "write_file", true],
    ["hookbox's own TOML: a regex over the whole name (SERVICE.md §4)", coshMatcher("shell|bash", "hookbox")!, "shellcheck", false],
    ["hookbox's own TOML: aliases too", coshMatcher("shell", "hookbox")!, "run_shell_command", true],
    ["Codex: a plain name matches exactly — Bash does not fire for BashOutput", codexMatcher("Bash")!, "BashOutput", false],
    ["Codex: A|B are exact alternatives, Edit standing for apply_patch", codexMatcher("Edit|Write")!, "apply_patch", true],
    ["Codex: other patterns are a regex found anywhere", codexMatcher("Edit.*")!, "MultiEdit", true],
    ["Codex: Agent stands for spawn_agent (hook_names.rs)", codexMatcher("Agent")!, "spawn_agent", true],
    ["Codex: …in a regex too", codexMatcher("^Ag.*")!, "spawn_agent", true],
    ["Codex: an alias is that tool's only", codexMatcher("Agent")!, "apply_patch", false],
  ])("%s", (_what, matcher, tool, expected) => {
    expect(matcher.test(tool)).toBe(expected);
  });

  const start = resolveEventName("SessionStart")!.point;
  const claudeStart = hook("claude", "SessionStart", { matcher: claudeMatcher("startup|resume"), matchOn: { field: "source" } });
  const sources = { policy: { hooks: [], warnings: [], disableAll: false }, service: { hooks: [], warnings: [], disableAll: false }, extension: { hooks: [], warnings: [], disableAll: false }, repository: { hooks: [claudeStart], warnings: [], disableAll: false } };
  const on = { hooksEnabled: true, repositoryHooks: true };
  it.each([
    // no source at all: the matcher cannot say the hook is not for this event — it runs (a guard is never skipped by leaving a field out)
    ["startup", 1], ["resume", 1], ["compact", 0], [undefined, 1],
  ])("Claude Code: a SessionStart matcher is compared with the event's source (%s)", (source, n) => {
    expect(selectHooks(sources, start, undefined, on, source ? { hook_event_name: "SessionStart", source } : {})).toHaveLength(n);
  });
  it("a tool event that names no tool runs every matcher's hook rather than skip a guard", () => {
    const pre = resolveEventName("PreToolUse")!.point;
    const guard = hook("cosh", "PreToolUse", { matcher: coshMatcher("shell", "hookbox") });
    const set = { hooks: [guard], warnings: [], disableAll: false };
    const empty = { hooks: [], warnings: [], disableAll: false };
    const sources = { policy: set, service: empty, extension: empty, repository: empty };
    expect(selectHooks(sources, pre, undefined, { hooksEnabled: true, repositoryHooks: true }, { tool_input: { command: "rm -rf /" } })).toHaveLength(1);
    expect(selectHooks(sources, pre, "", { hooksEnabled: true, repositoryHooks: true }, {})).toHaveLength(1);
    expect(selectHooks(sources, pre, "read_file", { hooksEnabled: true, repositoryHooks: true }, {})).toHaveLength(0);
  });

  it("a Cursor gate's matcher whose field the event leaves out, or gives as no string, runs the hook rather than skip a guard", () => {
    const shell = resolveEventName("beforeShellExecution")!.point;
    const guard = hook("cursor", "BeforeShellExecution", { matcher: { source: "rm", test: (s: string) => s.includes("rm") }, matchOn: { field: "command" } });
    const set = { hooks: [guard], warnings: [], disableAll: false };
    const empty = { hooks: [], warnings: [], disableAll: false };
    const sources = { policy: empty, service: empty, extension: empty, repository: set };
    for (const body of [{}, { command: ["rm", "-rf", "/"] }, { command: null }]) expect(selectHooks(sources, shell, undefined, on, body), JSON.stringify(body)).toHaveLength(1);
    expect(selectHooks(sources, shell, undefined, on, { command: "ls" })).toHaveLength(0);
  });

  it("a subject longer than the cap runs the hook rather than skip a guard", () => {
    const shellHook = hook("cursor", "beforeShellExecution", { matcher: claudeMatcher("rm.*-rf"), matchOn: { field: "command" } });
    const s = { ...sources, repository: { hooks: [shellHook], warnings: [], disableAll: false } };
    const p = resolveEventName("beforeShellExecution")!.point;
    expect(selectHooks(s, p, undefined, on, { command: "ls" })).toHaveLength(0);
    expect(selectHooks(s, p, undefined, on, { command: "rm -rf /" })).toHaveLength(1);
    expect(selectHooks(s, p, undefined, on, { command: `ls ${"x".repeat(10_000)}` })).toHaveLength(1);
  });
});

describe("where decisions count, per format", () => {
  it.each([
    ["Claude Code: PostToolUse decision block", "PostToolUse", "claude", ["allow", "block"]],
    ["Claude Code: SessionStart only adds context", "SessionStart", "claude", []],
    ["Cursor: beforeShellExecution permission allow | deny | ask", "beforeShellExecution", "cursor", ["allow", "block", "ask"]],
    ["Cursor: afterFileEdit observes only", "afterFileEdit", "cursor", []],
    ["Cursor: beforeTabFileRead permission allow | deny", "beforeTabFileRead", "cursor", ["allow", "block"]],
    ["Codex: PreToolUse as Claude Code", "PreToolUse", "codex", ["allow", "block", "ask"]],
  ] as const)("%s", (_what, name, format, decisions) => {
    expect([...effectiveDecisions(resolveEventName(name)!.point, format)].sort()).toEqual([...decisions].sort());
  });
});

describe("every hook's message reaches the agent; the deciding reason stays the reason", () => {
  const judged = [
    { hook: hook("cosh", "PreToolUse", { name: "advice" }), verdict: { decision: null, systemMessage: "prefer rg over grep", error: null, rule: "r" } },
    { hook: hook("cosh", "PreToolUse", { name: "guard" }), verdict: { decision: "block" as const, reason: "rm -rf is not allowed", systemMessage: "blocked by guard", error: null, rule: "r" } },
  ];
  const folded = fold(judged, { interactive: true });
  const pre = resolveEventName("PreToolUse")!.point;
  it("joins every systemMessage, in order", () => {
    expect(folded).toMatchObject({ decision: "block", reason: "rm -rf is not allowed", systemMessage: "prefer rg over grep\nblocked by guard" });
  });
  it.each([
    ["cosh", { decision: "block", reason: "rm -rf is not allowed", systemMessage: "prefer rg over grep\nblocked by guard" }],
    ["claude", { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "rm -rf is not allowed" }, systemMessage: "prefer rg over grep\nblocked by guard" }],
    ["cursor", { permission: "deny", user_message: "prefer rg over grep\nblocked by guard", agent_message: "rm -rf is not allowed" }],
    ["codex", { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "rm -rf is not allowed" }, systemMessage: "prefer rg over grep\nblocked by guard" }],
  ] as const)("in the %s dialect's user message", (format, output) => {
    expect(answerFor(format, pre, folded)).toEqual({ output, exit_code: 0 });
  });
  it("a Cursor answer says an ask as a deny where Cursor would not ask (preToolUse lets it through, subagentStart denies), and as an ask where it does", () => {
    expect(answerFor("cursor", resolveEventName("preToolUse")!.point, { decision: "ask", reason: "sure?", notifications: [] }).output).toEqual({ permission: "deny", user_message: "sure?", agent_message: "sure?" });
    expect(answerFor("cursor", resolveEventName("subagentStart")!.point, { decision: "ask", reason: "sure?", notifications: [] }).output).toEqual({ permission: "deny", user_message: "sure?" });
    expect(answerFor("cursor", resolveEventName("beforeShellExecution")!.point, { decision: "ask", reason: "sure?", notifications: [] }).output).toMatchObject({ permission: "ask" });
    expect(answerFor("cursor", resolveEventName("beforeTabFileRead")!.point, { decision: "block", reason: "secret", notifications: [] }).output).toMatchObject({ permission: "deny" });
  });
  // Cursor hooks, "Hook events": subagentStart and beforeReadFile answer permission and user_message, beforeTabFileRead permission alone
  it.each(["subagentStart", "beforeReadFile", "beforeTabFileRead"])("a Cursor %s deny carries its reason in user_message, beside every hook's message: the event takes no agent_message", (name) => {
    const p = resolveEventName(name)!.point;
    expect(answerFor("cursor", p, folded).output).toEqual({ permission: "deny", user_message: "prefer rg over grep\nblocked by guard\nrm -rf is not allowed" });
    // a reason some hook already said to the user is said once
    expect(answerFor("cursor", p, { decision: "block", reason: "secrets", systemMessage: "secrets", notifications: [] }).output).toEqual({ permission: "deny", user_message: "secrets" });
    expect(answerFor("cursor", p, { decision: "allow", reason: "fine", systemMessage: "note", notifications: [] }).output).toEqual({ permission: "allow", user_message: "note" });
  });
  it("a Cursor answer carries additional_context after a tool and at a session's start; elsewhere the context joins user_message, and updated_input is preToolUse's only", () => {
    const context = { decision: null, additionalContext: "repo uses pnpm", notifications: [] };
    expect(answerFor("cursor", resolveEventName("postToolUse")!.point, context).output).toEqual({ additional_context: "repo uses pnpm" });
    expect(answerFor("cursor", resolveEventName("sessionStart")!.point, context).output).toEqual({ additional_context: "repo uses pnpm" });
    expect(answerFor("cursor", resolveEventName("preCompact")!.point, { ...context, systemMessage: "note" }).output).toEqual({ user_message: "note\nrepo uses pnpm" });
    expect(answerFor("cursor", resolveEventName("beforeShellExecution")!.point, { decision: "block", reason: "no rm", additionalContext: "repo uses pnpm", modifiedArgs: { command: "ls" }, notifications: [] }).output)
      .toEqual({ permission: "deny", user_message: "no rm\nrepo uses pnpm", agent_message: "no rm" });
    expect(answerFor("cursor", resolveEventName("beforeSubmitPrompt")!.point, { decision: "block", reason: "no secrets", additionalContext: "ctx", notifications: [] }).output).toEqual({ continue: false, user_message: "no secrets\nctx" });
    expect(answerFor("cursor", resolveEventName("preToolUse")!.point, { decision: "allow", modifiedArgs: { command: "ls" }, notifications: [] }).output).toEqual({ permission: "allow", updated_input: { command: "ls" } });
  });
  it("a Codex answer says an ask as a deny", () => {
    expect(answerFor("codex", pre, { decision: "ask", reason: "sure?", notifications: [] }).output).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
  });
});

describe("continue: false stops the agent, and outranks every decision (Claude Code hooks reference)", () => {
  const stop = resolveEventName("Stop")!.point;
  const judge = (name: string, stdout: string, event = "Stop", format: HookDef["format"] = "claude") => {
    const h = hook(format, event, { name });
    return { hook: h, verdict: (format === "cursor" ? interpretCursor : interpretClaude)(exited(0, stdout), h) };
  };
  const keepGoing = judge("tests-first", '{"decision":"block","reason":"run the tests first"}');
  const halt = judge("budget", '{"continue":false,"stopReason":"budget spent"}');
  it("a Stop hook's halt outranks another's block that would keep the agent going", () => {
    const folded = fold([keepGoing, halt], { interactive: true });
    expect(folded).toMatchObject({ decision: null, halt: "budget spent" });
    expect(folded.note).toMatch(/budget stopped the agent/);
    expect(answerFor("claude", stop, folded).output).toEqual({ continue: false, stopReason: "budget spent" });
    expect(answerFor("copilot", stop, folded).output).toEqual({ continue: false, stopReason: "budget spent" });
    expect(answerFor("cosh", stop, folded).output).not.toHaveProperty("decision");
  });
  // There exit 2 keeps the teammate working, whatever JSON goes with it: a continue: false answered
  // with it would keep the teammate working, the opposite of what the hook asked.
  it.each(["TaskCompleted", "TeammateIdle"])("at %s the halt stops the teammate: no block, answered at exit 0 with continue: false, outranking another hook's exit 2", (event) => {
    const point = resolveEventName(event)!.point;
    const h = hook("claude", event, { name: "tests-first" });
    const keepWorking = { hook: h, verdict: interpretClaude(exited(2, "", "tests fail"), h) };
    const stops = judge("budget", '{"continue":false,"stopReason":"budget spent"}', event);
    expect(stops.verdict).toMatchObject({ decision: null, halt: "budget spent", rule: /continue = false stops the agent \(outranks/ });
    const folded = fold([keepWorking, stops], { interactive: true });
    expect(folded).toMatchObject({ decision: null, halt: "budget spent" });
    expect(answerFor("claude", point, folded)).toEqual({ output: { continue: false, stopReason: "budget spent" }, exit_code: 0 });
  });
  it("on PreToolUse the halt blocks the call and says continue: false in Claude's dialect, not in Codex's (it does not support it)", () => {
    const pre = resolveEventName("PreToolUse")!.point;
    const folded = fold([judge("budget", '{"continue":false,"stopReason":"budget spent"}', "PreToolUse")], { interactive: true });
    expect(folded).toMatchObject({ decision: "block", reason: "budget spent", halt: "budget spent" });
    expect(answerFor("claude", pre, folded).output).toMatchObject({ continue: false, stopReason: "budget spent", hookSpecificOutput: { permissionDecision: "deny" } });
    const codex = answerFor("codex", pre, folded).output;
    expect(codex).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny", permissionDecisionReason: "budget spent" } });
    expect(codex).not.toHaveProperty("continue");
  });
  it("Codex is told continue: false where it reads it (SessionStart, UserPromptSubmit, Stop), as Claude is", () => {
    for (const name of ["SessionStart", "UserPromptSubmit", "Stop"]) {
      const point = resolveEventName(name)!.point;
      const folded = fold([judge("budget", '{"continue":false,"stopReason":"budget spent"}', name)], { interactive: true });
      expect(answerFor("codex", point, folded).output, name).toMatchObject({ continue: false, stopReason: "budget spent" });
    }
  });
  it.each(["SessionStart", "SubagentStart"])("says a block at Codex's %s as its stop, never with a decision or reason its output schema refuses (the whole answer with them)", (name) => {
    const point = resolveEventName(name)!.point;
    expect(answerFor("codex", point, { decision: "block", reason: "not in this repository", notifications: [] })).toEqual({ output: { continue: false, stopReason: "not in this repository" }, exit_code: 0 });
    const halted = fold([judge("budget", '{"continue":false,"stopReason":"budget spent"}', name)], { interactive: true });
    expect(answerFor("codex", point, halted).output).toEqual({ continue: false, stopReason: "budget spent" });
    expect(answerFor("codex", point, { decision: null, additionalContext: "ctx", notifications: [] }).output).not.toHaveProperty("decision");
  });
  it("a Codex PreToolUse answer says nothing for a plain allow (Codex reports it unsupported), and keeps an allow with changed arguments", () => {
    const pre = resolveEventName("PreToolUse")!.point;
    expect(answerFor("codex", pre, { decision: "allow", notifications: [] }).output).toEqual({});
    expect(answerFor("codex", pre, { decision: "allow", modifiedArgs: { command: "ls" }, notifications: [] }).output).toMatchObject({ hookSpecificOutput: { permissionDecision: "allow", updatedInput: { command: "ls" } } });
  });
  it("Cursor reads continue: false on beforeSubmitPrompt only", () => {
    expect(judge("c", '{"continue":false}', "beforeSubmitPrompt", "cursor").verdict.decision).toBe("block");
    expect(judge("c", '{"continue":false}', "beforeShellExecution", "cursor").verdict.decision).toBeNull();
  });
});

// A cosh or Gemini hook's name is the repository's to choose: the texts hookbox writes for a
// repository hook say so, in every format, so that none passes for an administrator's guard.
describe("the reasons hookbox writes name a repository hook as one", () => {
  const repo = (format: HookDef["format"], event: string) => hook(format, event, { name: "org-guard", source: "repository", failOpen: false });
  it.each([
    ["cosh exit 2", interpretCosh, repo("cosh", "PreToolUse"), exited(2), "blocked by repository hook org-guard (exit 2)"],
    ["cosh failure with fail_open = false", interpretCosh, repo("cosh", "PreToolUse"), exited(1), /^repository hook org-guard failed: /],
    ["Claude exit 2", interpretClaude, repo("claude", "PreToolUse"), exited(2), "blocked by repository hook org-guard (exit 2)"],
    ["Copilot exit 2", interpretCopilot, repo("copilot", "preToolUse"), exited(2), "denied by repository hook org-guard (exit 2)"],
    ["Copilot crash", interpretCopilot, repo("copilot", "preToolUse"), exited(1), /^repository hook org-guard failed: /],
    ["Cursor exit 2", interpretCursor, repo("cursor", "beforeShellExecution"), exited(2), "blocked by repository hook org-guard (exit 2)"],
    ["Codex ask", interpretCodex, repo("codex", "PreToolUse"), exited(0, '{"hookSpecificOutput":{"permissionDecision":"ask"}}'), /^repository hook org-guard asked, and Codex has no ask/],
  ] as const)("%s", (_, interpret, h, run, reason) => {
    const v = interpret(run, h);
    expect(v.decision).toBe("block");
    expect(v.reason).toEqual(typeof reason === "string" ? reason : expect.stringMatching(reason));
  });
  it("and a service hook as a hook", () => {
    expect(interpretCosh(exited(2), hook("cosh", "PreToolUse", { name: "org-guard" })).reason).toBe("blocked by hook org-guard (exit 2)");
  });
  it("and its continue: false with no stopReason", () => {
    expect(interpretClaude(exited(0, '{"continue":false}'), repo("claude", "PreToolUse")).halt).toBe("repository hook org-guard stopped the agent (continue: false)");
  });
});

describe("Claude Code's team events", () => {
  it.each(["TaskCompleted", "TeammateIdle"])("%s: exit 2 blocks (the task stays open, the teammate keeps working)", (event) => {
    const point = resolveEventName(event)!.point;
    expect(effectiveDecisions(point, "claude").has("block")).toBe(true);
  });
});

describe("decision words", () => {
  it("take a loosening word only as the documents spell it, a tightening one however written", () => {
    expect(readDecision("Allow")).toBe("invalid");
    expect(readDecision("APPROVE", { approve: "allow" })).toBe("invalid");
    expect(readDecision("allow")).toBe("allow");
    expect(readDecision("Deny")).toBe("block");
    expect(readDecision("BLOCK")).toBe("block");
    expect(readDecision("Ask")).toBe("ask");
  });
  it.each(["constructor", "__proto__", "toString", "hasOwnProperty"])("takes %j for no decision word, even where a format adds its own", (word) => {
    expect(readDecision(word, { approve: "allow" })).toBe("invalid");
  });
});

describe("Claude Code's if: a permission rule, read as Claude Code reads it (hooks reference, if)", () => {
  const bash = (command: string) => ({ tool_name: "Bash", tool_input: { command } });
  it.each([
    ["Bash(git *)", "git push", true],
    ["Bash(git *)", "npm test && git push", true],
    ["Bash(rm *)", "cd build; rm -rf /", true],
    ["Bash(rm *)", "ls | rm -rf x", true],
    ["Bash(rm *)", "echo $(rm -rf /)", true],
    ["Bash(rm *)", "echo \"`rm -rf /`\"", true],
    ["Bash(rm *)", "FOO=1 BAR='a b' rm -rf /", true],
    ["Bash(rm *)", "echo 'rm -rf / && rm x'", false],
    ["Bash(rm *)", "echo \"it's rm\"", false],
    ["Bash(rm *)", "git status", false],
    ["Bash(rm *)", "echo 'unclosed", true],
    ["Bash(npm run test:*)", "npm run test:unit", true],
    // The specifier's blanks at either end are no part of it; in a rule with a wildcard, \* is a star
    // and \\ a backslash, as Claude Code reads them; a rule with none is the command as written
    ["Bash(rm -rf * )", "rm -rf /home/u", true],
    ["Bash( rm -rf *)", "rm -rf /home/u", true],
    ["Bash(chmod \\* *)", "chmod * /etc", true],
    ["Bash(chmod \\* *)", "chmod 777 /etc", false],
    ["Bash(echo a\\\\*)", "echo a\\b", true],
    ["Bash(echo a\\\\*)", "echo ab", false],
    ["Bash(grep -F '\\*' x)", "grep -F '\\*' x", true],
    ["Bash(echo '\\\\')", "echo '\\\\'", true],
    ["Bash(chmod 777 \\*)", "chmod 777 \\*", true],
  ] as const)("%s for %j: %s", (rule, command, runs) => {
    expect(claudeCondition(rule).test(bash(command))).toBe(runs);
  });
  it.each([
    ["Edit(src/**)", "/home/me/project/src/a/b.ts", true],
    ["Edit(./src/*.ts)", "/home/me/project/src/b.ts", true],
    ["Edit(/docs/*)", "/repo/docs/x.md", true],
    ["Edit(src/**)", "/home/me/project/lib/a.ts", false],
    ["Edit(//etc/*)", "/etc/passwd", true],
    ["Edit(//etc/*)", "/home/etc/passwd", false],
  ] as const)("%s for %s: %s", (rule, path, runs) => {
    expect(claudeCondition(rule).test({ tool_name: "Edit", tool_input: { file_path: path } })).toBe(runs);
  });
  it("never runs on an event without a tool", () => {
    expect(claudeCondition("Bash").test({ hook_event_name: "SessionStart" })).toBe(false);
  });
  it("reads a long hostile command in one pass", () => {
    const command = "a=1 ".repeat(1000) + "$(".repeat(1500) + "rm -rf /"; // under MAX_SUBJECT_CHARS: read, not waved through
    expect(claudeCondition("Bash(rm *)").test(bash(command))).toBe(true);
  });
});

describe("an event's messages are capped together", () => {
  it("joins messages and notifications up to MAX_EVENT_MESSAGE_CHARS, and says how many were left out", async () => {
    const { MAX_EVENT_MESSAGE_CHARS } = await import("../../engine/aggregate.js");
    const judged = Array.from({ length: 20 }, (_, i) => ({
      hook: hook("cosh", "PreToolUse", { name: `h${i}` }),
      verdict: { decision: null, systemMessage: `${i}:${"m".repeat(16 * 1024 - 8)}`, additionalContext: `${i}:${"c".repeat(16 * 1024 - 8)}`, error: null, rule: "r" },
    }));
    const folded = fold(judged, { interactive: true });
    expect(folded.systemMessage!.length).toBeLessThanOrEqual(MAX_EVENT_MESSAGE_CHARS + 200);
    expect(folded.systemMessage!.slice(-120)).toMatch(/\n… 16 more left out/); // four 16 KiB messages fit
    expect(folded.additionalContext!.length).toBeLessThanOrEqual(MAX_EVENT_MESSAGE_CHARS + 200);
    expect(folded.notifications).toHaveLength(5);
    expect(folded.notifications.at(-1)!.event).toMatchObject({ hook_name: "hookbox", message: expect.stringMatching(/^16 more hook notification/) });
  });

  it("joins a thousand repository hooks' messages of 16 Ki line breaks each, of one length and told apart at their ends, in one pass: each once, marked, only those that fit", async () => {
    const { MAX_EVENT_MESSAGE_CHARS } = await import("../../engine/aggregate.js");
    // (V8 hashes a string of more than 16,383 characters by its length alone: a set of these compared each with every other)
    const text = (i: number) => JSON.parse(JSON.stringify(`${"\n".repeat(16 * 1024 - 4)}${String(i).padStart(4, "0")}`)) as string;
    const judged = Array.from({ length: 1000 }, (_, i) => ({
      hook: hook("claude", "PreToolUse", { name: `h${i}`, source: "repository" }),
      verdict: { decision: null, systemMessage: text(i % 1000), additionalContext: text(i), error: null, rule: "r" },
    }));
    const t0 = performance.now();
    const folded = fold(judged, { interactive: true });
    // 1.4–26 s of the loop before; 20–50 ms now
    expect(performance.now() - t0).toBeLessThan(500);
    const lines = folded.systemMessage!.split("\n");
    expect(lines[0]).toBe("[repository] ");
    expect(lines.slice(1, 5)).toEqual(["  ", "  ", "  ", "  "]);
    expect(folded.systemMessage!.length).toBeLessThanOrEqual(MAX_EVENT_MESSAGE_CHARS + 200);
    // one message fits (16 Ki line breaks, each indented: 48 Ki); the other 999 are counted
    expect(lines.at(-1)).toBe(`… 999 more left out (an event's messages are capped at ${MAX_EVENT_MESSAGE_CHARS} characters)`);
    expect(folded.additionalContext!.split("\n").at(-1)).toBe(`… 999 more left out (an event's messages are capped at ${MAX_EVENT_MESSAGE_CHARS} characters)`);
    // a long text said twice by repository hooks is one (its digest), and once more beside the same words of an administrator's
    const twice = ["repository", "repository", "policy"].map((source, i) => ({ hook: hook("claude", "PreToolUse", { name: `t${i}`, source: source as HookDef["source"] }), verdict: { decision: null, systemMessage: text(7).slice(-2000), error: null, rule: "r" } }));
    const lines2 = fold(twice, { interactive: true }).systemMessage!.split("\n");
    expect(lines2.filter((l) => l.startsWith("[repository] "))).toHaveLength(1);
    expect(lines2.at(-1)).toBe("0007");
    expect(lines2.filter((l) => l.endsWith("0007"))).toHaveLength(2);
  });
});

describe("Gemini CLI rules (Gemini CLI hooks reference)", () => {
  const before = hook("gemini", "BeforeTool");
  const afterAgent = hook("gemini", "AfterAgent");
  table(interpretGemini, [
    ['decision "deny" blocks, reason the reason', exited(0, '{"decision":"deny","reason":"no rm here"}'), before, { decision: "block", reason: "no rm here", rule: /gemini: decision "deny"/ }],
    ['decision "approve" allows', exited(0, '{"decision":"approve"}'), before, { decision: "allow", rule: /approve/ }],
    ['decision "ask"', exited(0, '{"decision":"ask","reason":"sure?"}'), before, { decision: "ask", rule: /ask/ }],
    ["exit 2 blocks with stderr", exited(2, "", "stop that"), before, { decision: "block", reason: "stop that", rule: /exit 2 blocks/ }],
    ["exit 1 is a warning", exited(1, "", "oops"), before, { decision: null, error: true, warning: "oops", rule: /exit 1 is a warning; the CLI continues/ }],
    ["a timeout is a warning", timedOut, before, { decision: null, error: true, rule: /timeout is a warning/ }],
    ["text on stdout at exit 0 is a message, no decision", exited(0, "hello"), before, { decision: null, error: false, rule: /text that is not JSON at exit 0 is a message/ }],
    // Gemini CLI's hook runner: any other exit with text blocks (a hook whose jq is missing too)
    ["exit 127 with text blocks, the text its reason", exited(127, "", "sh: 1: jq: not found"), before, { decision: "block", reason: "sh: 1: jq: not found", rule: /exit 127 blocks/ }],
    ["exit 2 with nothing on stdout or stderr makes no decision", exited(2, "", "  \n"), before, { decision: null, error: true, rule: /exit 2 with nothing on stdout or stderr/ }],
    ["exit 2 with plain text on stdout blocks, stdout the reason", exited(2, "no rm here", "ignored"), before, { decision: "block", reason: "no rm here", rule: /exit 2 blocks/ }],
    ["JSON is read at any exit: a deny at exit 1 blocks", exited(1, '{"decision":"deny","reason":"nope"}'), before, { decision: "block", reason: "nope", rule: /decision "deny" \(JSON read at exit 1/ }],
    ["JSON is read at any exit: an allow at exit 2 allows", exited(2, '{"decision":"allow"}', "a message"), before, { decision: "allow", rule: /decision "allow" \(JSON read at exit 2/ }],
    ["stderr is read when stdout is empty: a deny there blocks at exit 0", exited(0, "", '{"decision":"deny","reason":"from stderr"}'), before, { decision: "block", reason: "from stderr", rule: /decision "deny"$/ }],
    ["JSON that is no object makes no decision, whatever the exit", exited(3, "42"), before, { decision: null, error: true, rule: /not a JSON object makes no decision/ }],
    ["continue: false on AfterAgent stops the agent: no block (which would send it on)", exited(0, '{"continue":false,"stopReason":"done"}'), afterAgent, { decision: null, rule: /continue = false stops the agent/ }],
  ]);
  it("answers in Gemini's words: additionalContext in camelCase, continue and stopReason", () => {
    const post = resolveEventName("AfterTool")!.point;
    expect(answerFor("gemini", post, { decision: "block", reason: "no", additionalContext: "ctx", notifications: [] }).output).toEqual({ decision: "block", reason: "no", hookSpecificOutput: { additionalContext: "ctx" } });
    expect(answerFor("gemini", resolveEventName("BeforeTool")!.point, { decision: "block", reason: "r", halt: "done", notifications: [] }).output).toMatchObject({ continue: false, stopReason: "done", decision: "block" });
  });
  // hooks reference: additionalContext is among the output fields of AfterTool, BeforeAgent and SessionStart only
  it.each(["AfterTool", "BeforeAgent", "SessionStart"])("reads hookSpecificOutput.additionalContext at %s, where Gemini CLI adds it", (event) => {
    expect(interpretGemini(exited(0, '{"hookSpecificOutput":{"additionalContext":"ctx"}}'), hook("gemini", event)).additionalContext).toBe("ctx");
  });
  it.each(["BeforeTool", "AfterAgent", "BeforeModel", "AfterModel", "BeforeToolSelection", "SessionEnd", "PreCompress", "Notification"])("reads no additionalContext at %s, where Gemini CLI reads none", (event) => {
    const v = interpretGemini(exited(0, '{"decision":"allow","systemMessage":"note","hookSpecificOutput":{"additionalContext":"ctx"}}'), hook("gemini", event));
    expect(v.additionalContext).toBeUndefined();
    if (event !== "BeforeToolSelection") expect(v.systemMessage).toBe("note");
  });
  it('reads no systemMessage at BeforeToolSelection ("Does not support decision, continue, or systemMessage"), nor text as one', () => {
    const selection = hook("gemini", "BeforeToolSelection");
    expect(interpretGemini(exited(0, '{"systemMessage":"note"}'), selection).systemMessage).toBeUndefined();
    expect(interpretGemini(exited(0, "read_file,write_file"), selection)).toMatchObject({ decision: null, systemMessage: undefined, error: null });
  });
  it("reads text with brackets in it as text, whatever its shape: a guard that echoes what it blocks still blocks", () => {
    const said = `Blocked: rm -rf / #${"[".repeat(70)}${"{}".repeat(70_000)}`;
    expect(interpretGemini(exited(2, "", said), before)).toMatchObject({ decision: "block", reason: expect.stringMatching(/^Blocked: rm -rf \/ #\[{70}\{\}/) });
    // a JSON string whose text is no JSON (here: nothing) is plain text, as Gemini's second JSON.parse throws
    expect(interpretGemini(exited(2, '""'), before)).toMatchObject({ decision: "block", reason: '""' });
    expect(interpretGemini(exited(0, '"not json"'), before)).toMatchObject({ decision: null, systemMessage: '"not json"' });
  });
  it("makes a lone surrogate in a JSON string holding the answer U+FFFD too", () => {
    const v = interpretGemini(exited(0, String.raw`"{\"decision\":\"deny\",\"reason\":\"x\ud800y\"}"`), before);
    expect(v).toMatchObject({ decision: "block", reason: "x\ufffdy" });
  });
  it("shows text at exit 0 as the hook's message, and warns of it at exit 1, as Gemini CLI does", () => {
    expect(interpretGemini(exited(0, "remember the tests"), before).systemMessage).toBe("remember the tests");
    expect(interpretGemini(exited(1, "careful", "not this"), before).warning).toBe("careful");
  });
  it("reads a JSON string that holds the answer once more, as Gemini CLI does", () => {
    expect(interpretGemini(exited(0, JSON.stringify(JSON.stringify({ decision: "deny", reason: "no" }))), before)).toMatchObject({ decision: "block", reason: "no" });
  });
  it("reads BeforeTool's hookSpecificOutput.tool_input as an argument change, and says a change and an ask as Gemini reads them", () => {
    expect(interpretGemini(exited(0, '{"hookSpecificOutput":{"tool_input":{"command":"ls -la"}}}'), before).modifiedArgs).toEqual({ command: "ls -la" });
    const pre = resolveEventName("BeforeTool")!.point;
    expect(answerFor("gemini", pre, { decision: null, modifiedArgs: { command: "ls -la" }, notifications: [] }).output).toEqual({ hookSpecificOutput: { tool_input: { command: "ls -la" } } });
    // Gemini has no ask: it would run the tool.
    expect(answerFor("gemini", pre, { decision: "ask", reason: "sure?", notifications: [] }).output).toEqual({ decision: "deny", reason: "sure?" });
  });
  it("matches tools by a regex found anywhere, lifecycle events by the exact string", () => {
    expect(geminiMatcher("write_file|replace", true)!.test("write_file")).toBe(true);
    expect(geminiMatcher("shell", true)!.test("run_shell_command")).toBe(true);
    expect(geminiMatcher("startup", false)!.test("startup")).toBe(true);
    expect(geminiMatcher("start", false)!.test("startup")).toBe(false);
  });
});

describe("a hook's answer of more arrays and objects than MAX_EVENT_CONTAINERS", () => {
  const wide = `{"decision":"block","x":[${"[],".repeat(70_000)}[]]}`;
  it.each([
    ["claude", "PreToolUse", interpretClaude],
    ["codex", "PreToolUse", interpretCodex],
    ["copilot", "preToolUse", interpretCopilot],
    ["cosh", "PreToolUse", interpretCosh],
    ["cursor", "beforeShellExecution", interpretCursor],
    ["gemini", "BeforeTool", interpretGemini],
  ] as const)("is, in %s's rules, refused by a byte pass before JSON.parse builds it: a bound of hookbox's, not the hook's error", (format, event, interpretIn) => {
    const v = interpretIn(exited(0, wide), hook(format, event));
    expect(v).toMatchObject({ decision: null, limit: "output_shape", error: expect.stringMatching(/^output holds more than 65536 arrays and objects \(MAX_EVENT_CONTAINERS\)/) });
  });
  it("in Claude's JSON lines too: a log of lines each within the bounds and one past them is refused whole, never parsed line by line", () => {
    const lines = `{"a":1}\n[${"[],".repeat(70_000)}[]]\n{"b":2}`;
    expect(interpretClaude(exited(0, lines), hook("claude", "PreToolUse"))).toMatchObject({ decision: null, limit: "output_shape" });
  });
  it.each([
    ["claude (onFailure: block)", interpretClaude, hook("claude", "PreToolUse", { failOpen: false })],
    ["cosh (fail_open = false)", interpretCosh, hook("cosh", "PreToolUse", { failOpen: false })],
    ["cursor (failClosed)", interpretCursor, hook("cursor", "beforeShellExecution", { failOpen: false })],
  ] as const)("blocks from a hook whose failure blocks, in %s's rules: still a bound of hookbox's, said as one", (_format, interpretIn, h) => {
    expect(interpretIn(exited(0, wide), h)).toMatchObject({ decision: "block", limit: "output_shape", error: expect.stringMatching(/^output holds more than 65536 arrays and objects/) });
  });
});

describe("lone surrogates in a hook's answer", () => {
  const read = (text: string) => wellFormedJson(text, JSON.parse(text));
  it("become U+FFFD in values and keys at any depth; the rest stays as parsed, __proto__ a field", () => {
    const v = read(String.raw`{"a":["x\ud800",{"k\udc00":"ok","n":1}],"__proto__":{"p":"\ud83d"},"z":"\ud83d\ude00"}`) as Record<string, unknown>;
    expect(JSON.stringify(v)).toBe('{"a":["x\ufffd",{"k\ufffd":"ok","n":1}],"__proto__":{"p":"\ufffd"},"z":"\ud83d\ude00"}');
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
  });
  it("a key that becomes one already there takes its place, as a later key of JSON does", () => {
    expect(read(String.raw`{"\ufffd":1,"\ud800":2,"b":3}`)).toEqual({ "\ufffd": 2, b: 3 });
  });
  it("leave text without an escape of one as JSON.parse made it: the same object", () => {
    const value = JSON.parse('{"a":{"b":"c"}}') as unknown;
    expect(wellFormedJson('{"a":{"b":"c"}}', value)).toBe(value);
  });
});

describe("a hook's answer with an object of more keys than MAX_OBJECT_KEYS", () => {
  const keys = (n: number) => Array.from({ length: n }, (_, i) => `"k${i}":0`).join(",");
  it.each([
    ["claude", "PreToolUse", interpretClaude],
    ["copilot", "preToolUse", interpretCopilot],
    ["cosh", "PreToolUse", interpretCosh],
    ["cursor", "beforeShellExecution", interpretCursor],
  ] as const)("is, in %s's rules, refused by a byte pass (one key fewer is read): a bound of hookbox's, not the hook's error", (format, event, interpretIn) => {
    const ask = format === "cursor" ? '"permission":"deny"' : format === "copilot" ? '"permissionDecision":"deny"' : '"decision":"block"';
    const past = interpretIn(exited(0, `{${ask},${keys(16_384)}}`), hook(format, event));
    expect(past).toMatchObject({ decision: null, limit: "output_shape", error: expect.stringMatching(/^output holds an object of more than 16384 keys \(MAX_OBJECT_KEYS\)/) });
    expect(interpretIn(exited(0, `{${ask},"x":{${keys(16_384)}},${keys(16_382)}}`), hook(format, event))).toMatchObject({ decision: "block" });
  });
});

describe("Claude PermissionRequest interrupt", () => {
  it("a deny with interrupt: true also stops Claude", () => {
    const perm = hook("claude", "PermissionRequest");
    const v = interpretClaude(exited(0, '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"not on prod","interrupt":true}}}'), perm);
    expect(v).toMatchObject({ decision: "block", reason: "not on prod", halt: "not on prod", rule: expect.stringMatching(/interrupt stops Claude/) });
    expect(interpretClaude(exited(0, '{"hookSpecificOutput":{"decision":{"behavior":"allow","interrupt":true}}}'), perm).halt).toBeUndefined();
  });
});

describe("Claude's if rule named like an Object member", () => {
  it.each(["constructor", "__proto__", "toString", "constructor(x)", "Read(*.ts)"])("%j names no tool it is not: tested, it never throws", (rule) => {
    for (const tool of ["Bash", "constructor", "__proto__", "toString", "Read"]) {
      const runs = claudeCondition(rule).test({ tool_name: tool, tool_input: { command: "ls", file_path: "a.ts" } });
      expect(runs, `${rule} on ${tool}`).toBe(rule.replace(/\(.*/, "") === tool);
    }
  });
  it("a path rule normalizes an event's path once, not once a rule (Node's normalize of 8 KiB of ../ costs a millisecond)", () => {
    const rules = Array.from({ length: 1000 }, (_, i) => claudeCondition(`Read(src/x${i}/*.ts)`));
    const body = { tool_name: "Read", tool_input: { file_path: `${"../".repeat(2700)}${Math.random()}` } };
    const normalize = vi.spyOn(posix, "normalize");
    try {
      for (const rule of rules) expect(rule.test(body)).toBe(false);
      expect(normalize).toHaveBeenCalledTimes(1);
    } finally {
      normalize.mockRestore();
    }
  });
});

describe("Claude's if reads commands as bash does: what a guard must not miss", () => {
  const runs = (rule: string, command: string) => claudeCondition(rule).test({ tool_name: "Bash", tool_input: { command } });
  it.each([
    'rm -rf "/tmp/a\nb" /',
    "rm -rf \\\n/",
    "echo $'\\''; rm -rf /; #'",
    "echo hi # it's\nrm -rf / # it's",
    "cat <<EOF\nit's\nEOF\nrm -rf / # '",
    "if true; then rm -rf /; fi",
    "{ rm -rf /; }",
    "! rm -rf /",
    "time rm -rf /",
    "'rm' -rf /",
    "r\\m -rf /",
    "A+=1 rm -rf /",
    "A[0]=1 rm -rf /",
    ">/dev/null rm -rf /",
    "env X=1 rm -rf /",
    // a command word the shell makes from a file-name pattern
    "/bin/r[m] -rf /",
    "/bin/r? -rf /",
    "/usr/bin/e?v rm -rf /",
    "/usr/bin/tim[e]out 5 rm -rf /",
    "/bin/[b]ash -c 'rm -rf /'",
    // a case in a substitution: its pattern's `)` does not close it
    "echo $(case a in a) rm -rf /;; esac)",
    'true "$(case a in a) rm -rf /;; esac)"',
    // backticks nested in backticks, and a comment that ends at the closing backtick
    "echo `echo \\`rm -rf /\\``",
    "echo `#`; rm -rf /\n`",
    "echo `#a \\` ' b` ; rm -rf ~ ; echo \\'",
  ])("Bash(rm *) fires for %j", (command) => {
    expect(runs("Bash(rm *)", command)).toBe(true);
    expect(runs("Bash(rm:*)", command)).toBe(true);
  });
  it.each(["echo 'rm -rf /'", "echo \"# rm\"", "git status # rm -rf /", "ls -la", "ls *.rm", "[ -f rm ] && echo '[x]'", "echo `# rm`", "case a in a) ls;; esac"])("and not for %j", (command) => {
    expect(runs("Bash(rm *)", command)).toBe(false);
  });
  it.each([
    ["Edit(src/**/*.ts)", "Edit", "/proj/src/a.ts", true],
    ["Edit(src/**/*.ts)", "Edit", "/proj/src/x/y/a.ts", true],
    ["Edit(secrets/?.txt)", "Edit", "/proj/secrets/a.txt", true],
    ["Edit(src/**)", "Write", "/proj/src/new.ts", true],
    ["Edit(src/**)", "MultiEdit", "/proj/src/a.ts", true],
    ["Edit(src/**)", "Write", "/proj/lib/a.ts", false],
    ["Read(.env)", "Grep", "/proj/.env", true],
  ] as const)("%s fires for %s of %s: %s (gitignore-style paths; an Edit rule covers every editing tool)", (rule, tool, path, runs) => {
    expect(claudeCondition(rule).test({ tool_name: tool, tool_input: { file_path: path, path } })).toBe(runs);
  });
  it("an MCP server's rule covers each of its tools; a path class [ ] is not read (the hook runs, warned at load)", () => {
    expect(claudeCondition("mcp__github").test({ tool_name: "mcp__github__create_issue", tool_input: {} })).toBe(true);
    expect(claudeCondition("mcp__github__*").test({ tool_name: "mcp__github__create_issue", tool_input: {} })).toBe(true);
    expect(claudeCondition("mcp__github").test({ tool_name: "mcp__gitlab__create_issue", tool_input: {} })).toBe(false);
    expect(() => claudeCondition("Edit(*.[jt]s)")).toThrow(/\[ \] is not read/);
  });
  it("a path is read as the file it names", () => {
    for (const p of ["/p/src/./secret.ts", "/p/src//secret.ts", "/p/x/../src/secret.ts"])
      expect(claudeCondition("Edit(src/secret.ts)").test({ tool_name: "Edit", tool_input: { file_path: p } })).toBe(true);
  });
  it("more than MAX_SUBCOMMANDS parts run the hook; a thousand conditions over one hostile command spend the event's budget, then run", async () => {
    const { withMatchBudget } = await import("../../engine/hooks.js");
    expect(runs("Bash(nope *)", "a;".repeat(600))).toBe(true);
    const conditions = Array.from({ length: 1000 }, (_, i) => claudeCondition(`Bash(q${i})`));
    const body = { tool_name: "Bash", tool_input: { command: "a;".repeat(200) } };
    // Each test of a one-character part is charged as 64 characters: the budget ends long before
    // 200 000 tests, and every condition past it runs its hook rather than be skipped.
    const results = withMatchBudget(() => conditions.map((c) => c.test(body)));
    expect(results[0]).toBe(false);
    expect(results.at(-1)).toBe(true);
  });
});

describe("Claude's if: commands hidden by shell syntax still fire the hook (a second look)", () => {
  const runs = (rule: string, command: string) => claudeCondition(rule).test({ tool_name: "Bash", tool_input: { command } });
  it.each([
    'echo "$(cd /tmp; rm -rf x)"',
    'x="$(cd /tmp && rm -rf x)"',
    'echo "`true; rm x`"',
    "echo ${x:- #}; rm -rf x",
    "echo\u00a0#'\n';rm -rf x;#'",
    "rm\t-rf x",
    "r\\\nm -rf x",
    "rm\\\n -rf x",
    "\\\nrm -rf x",
    "$'rm' -rf x",
    "$'\\x72m' -rf x",
    "r$'m' -rf x",
    '$"rm" -rf x',
    "\\command rm -rf x",
    "'env' rm -rf x",
    "command -- rm -rf x",
    "env -i PATH=/bin rm -rf x",
    "exec -a x rm -rf x",
    "time -p rm -rf x",
    "timeout 5 rm -rf x",
    "nice -n 5 rm -rf x",
    "> /dev/null rm -rf x",
    ">&2 rm -rf x",
    "2>&1 rm -rf x",
    "{fd}>f rm -rf x",
    "rm>/dev/null -rf x",
    "function f { rm -rf x; }; f",
    "coproc rm -rf x",
    "eval 'rm -rf x'",
    "sh -c 'rm -rf x'",
    "xargs rm",
    "x=rm; $x -rf y",
    "{rm,-rf,x}",
    "/bin/rm -rf x",
    "sudo rm -rf x",
  ])("Bash(rm *) fires for %j", (command) => {
    expect(runs("Bash(rm *)", command)).toBe(true);
  });
  it.each(["git  push", "git\tpush origin", "git \\\npush", "git $'push' origin", "git 2>/dev/null push"])("Bash(git push*) fires for %j", (command) => {
    expect(runs("Bash(git push*)", command)).toBe(true);
  });
  it.each(["echo 'rm -rf /'", 'echo "rm -rf /"', "ls # rm -rf x", "git status"])("and still not for %j", (command) => {
    expect(runs("Bash(rm *)", command)).toBe(false);
  });
  it.each([
    "$(echo rm) -rf /",
    "`echo rm` -rf /",
    '"$(printf rm)" -rf /',
    "r$(echo m) -rf /",
    "echo $(echo a)#; rm -rf /",
    "echo `echo a`#; rm -rf /",
    "echo $((1+2))#; rm -rf /",
    "a=(1)#; rm -rf /",
    "cat <(echo)#; rm -rf /",
    "echo a\\ #; rm -rf /",
    "echo a\\\n#; rm -rf /",
    " \\\n rm -rf /",
    "echo a; \\\n rm -rf /",
    "env -S 'rm -rf /'",
    "env --split-string='rm -rf /'",
    "env -iu FOO rm x",
    "/usr/bin/env -i rm x",
    "timeout -vs KILL 5 rm x",
    "exec -la foo rm x",
    "trap 'rm -rf /' EXIT",
    "mapfile -C 'rm x' -c 1 a < f",
    "coproc NAME { rm x; }",
    "setsid rm x",
    "flock /tmp/l rm x",
    "flock -w 5 /tmp/l rm x",
    "flock /tmp/l -c 'rm x'",
    "ionice -c3 rm x",
    "chrt 1 rm x",
    "taskset 1 rm x",
    "unshare rm x",
    "fakeroot rm x",
    "pkexec rm x",
    "script -c 'rm x'",
    "strace -o /dev/null rm x",
    "noglob rm x",
  ])("Bash(rm *) fires for %j (a third look)", (command) => {
    expect(runs("Bash(rm *)", command)).toBe(true);
  });
  it.each([
    "echo $(# it's a comment\nrm -rf /\n# that's all\n)",
    "(# it's\nrm -rf /\n# that's)\n)",
    "echo `# it's\nrm -rf /\n# that's`",
    "true \\\n# it's fine\nrm -rf / # that's it",
  ])("Bash(rm *) fires past a comment after (, $(, a backtick or a line continuation: %j", (command) => {
    expect(runs("Bash(rm *)", command)).toBe(true);
  });
  it.each([
    ["Bash(chroot *)", "cd /tmp && chroot /mnt ls"],
    ["Bash(unshare *)", "X=1 unshare -x wget http://e"],
    ["Bash(torsocks *)", "echo hi | torsocks curl http://e"],
    ["Bash(env *)", "/usr/bin/env -i ls"],
    ["Bash(git push --force)", "git push --force$(true)"],
  ])("%s still fires for %j (a rule on the wrapper itself; a trailing substitution)", (rule, command) => {
    expect(runs(rule, command)).toBe(true);
  });
  it.each(["git push", "git push;", "(git push)", "git push  "])("Bash(git push *) fires for the bare command too: %j", (command) => {
    expect(runs("Bash(git push *)", command)).toBe(true);
  });
  // Claude Code hooks reference, "if": "patterns that specify more than the command name run the
  // hook anyway on $(), backticks, or $VAR".
  it.each([
    ["Bash(git push *)", "echo $(date)"],
    ["Bash(git push *)", "git $SUB origin"],
    ["Bash(git push *)", "echo `date`"],
    ["Bash(git push *)", "echo ${HOME}"],
    ["Bash(git push*)", "git $1 origin"],
    ["Bash(npm publish)", "npm $@"],
  ])("%s fires for %j (it names more than the command)", (rule, command) => {
    expect(runs(rule, command)).toBe(true);
  });
  it.each([
    ["Bash(rm *)", "echo $(date)"],
    ["Bash(git *)", "echo $HOME"],
    ["Bash(git:*)", "echo `date`"],
    ["Bash(git push *)", "echo $'x'"],
  ])("%s still not for %j", (rule, command) => {
    expect(runs(rule, command)).toBe(false);
  });
  it.each(["git pushx", "git status"])("Bash(git push *) still not for %j", (command) => {
    expect(runs("Bash(git push *)", command)).toBe(false);
  });
  it.each(["{ ".repeat(4000) + "rm -rf x", "a=".repeat(4000) + " rm -rf x", "$(".repeat(4000) + "rm -rf x", '"$('.repeat(2600) + "rm -rf x", "${".repeat(4000) + "}; rm -rf x"])("reads a hostile 8 KiB command and runs the hook (%#)", (command) => {
    expect(runs("Bash(rm *)", command)).toBe(true);
  });
});

describe("answers each agent acts on (its hooks reference)", () => {
  const point = (name: string) => resolveEventName(name)!.point;
  it("Copilot CLI permissionRequest: behavior deny with a message, read before the permission service runs; a hook's own behavior is read too", () => {
    expect(answerFor("copilot", point("permissionRequest"), { decision: "block", reason: "no prod", notifications: [] }).output).toMatchObject({ behavior: "deny", message: "no prod", permissionDecision: "deny" });
    expect(answerFor("copilot", point("permissionRequest"), { decision: "allow", notifications: [] }).output).toMatchObject({ behavior: "allow" });
    expect(interpretCopilot(exited(0, '{"behavior":"deny","message":"not here"}'), hook("copilot", "permissionRequest", { dialect: "camel" }))).toMatchObject({ decision: "block", reason: "not here" });
  });
  it("Copilot in VS Code: a preToolUse deny in hookSpecificOutput too (VS Code reads nothing else), the CLI's at the top level", () => {
    expect(answerFor("copilot", point("preToolUse"), { decision: "block", reason: "no", modifiedArgs: undefined, notifications: [] }).output).toEqual({
      permissionDecision: "deny", permissionDecisionReason: "no",
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "no" },
    });
    expect(answerFor("copilot", point("postToolUse"), { decision: null, additionalContext: "lint: 2 warnings", notifications: [] }).output).toEqual({
      additionalContext: "lint: 2 warnings", hookSpecificOutput: { hookEventName: "PostToolUse", additionalContext: "lint: 2 warnings" },
    });
  });
  it("Copilot in VS Code: a block where the CLI has none said as VS Code takes it — continue: false at a prompt, decision block after a tool", () => {
    expect(answerFor("copilot", point("UserPromptSubmit"), { decision: "block", reason: "no secrets in prompts", notifications: [] })).toEqual({
      output: { continue: false, stopReason: "no secrets in prompts", decision: "block", reason: "no secrets in prompts" }, exit_code: 0,
    });
    expect(answerFor("copilot", point("PostToolUse"), { decision: "block", reason: "lint failed", additionalContext: "3 errors", notifications: [] }).output).toEqual({
      decision: "block", reason: "lint failed", additionalContext: "3 errors", hookSpecificOutput: { hookEventName: "PostToolUse", additionalContext: "3 errors" },
    });
    expect(answerFor("copilot", point("postToolUse"), { decision: "block", reason: "lint failed", notifications: [] }).output).toEqual({ decision: "block", reason: "lint failed" });
    // nothing decided: nothing said
    expect(answerFor("copilot", point("UserPromptSubmit"), { decision: null, notifications: [] }).output).toEqual({});
  });
  it("Cursor's Tab read is a gate: a policy hook's block counts there, and an ask is said as a deny where Cursor cannot ask", () => {
    expect([...effectiveDecisions(point("beforeTabFileRead"), "cosh")].sort()).toEqual(["allow", "ask", "block"]);
    expect([...effectiveDecisions(point("beforeReadFile"), "cosh")]).toContain("ask");
    expect(answerFor("cursor", point("beforeReadFile"), { decision: "ask", reason: "secrets?", notifications: [] }).output).toMatchObject({ permission: "deny" });
  });
  it("hookbox's failure at a stop lets the agent stop: a block there would keep it going, told the error", async () => {
    const { failureAnswer } = await import("../../engine/index.js");
    for (const [format, event] of [["claude", "Stop"], ["copilot", "agentStop"], ["cursor", "stop"], ["gemini", "AfterAgent"], ["codex", "Stop"], ["claude", "SubagentStop"]] as const) {
      const a = failureAnswer(format, event, "block", "hookbox could not decide");
      expect(a.exit_code, `${format} ${event}`).toBe(0);
      expect(JSON.stringify(a.output), `${format} ${event}`).not.toMatch(/block|followup_message|could not decide/);
    }
    expect(failureAnswer("claude", "PreToolUse", "block", "x").output).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
  });
  it("cosh-ng merges a tool_input deeply: policy looks at the merged whole", () => {
    expect(changeAsRun("cosh", { args: ["-rf", "/"], opts: { force: true } }, () => ({ command: "rm", args: [], opts: { verbose: true } }))).toEqual({ command: "rm", args: ["-rf", "/"], opts: { verbose: true, force: true } });
  });
});
