/**
 * Every exit-code and output rule of the source documents, one row each, citing its sentence.
 * Pure: a run's result goes in, the format's verdict comes out.
 */
import { describe, expect, it } from "vitest";
import { interpretCosh } from "../../engine/formats/cosh-toml.js";
import { interpretCopilot } from "../../engine/formats/copilot-json.js";
import { interpretClaude } from "../../engine/formats/claude-settings.js";
import { resolveEventName } from "../../engine/events.js";
import type { HookDef } from "../../engine/hooks.js";
import type { RunResult } from "../../engine/run/types.js";
import type { Interpret } from "../../engine/verdict.js";

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

function table(interpret: Interpret, rows: Row[]) {
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
    ["SERVICE.md §4: an unknown decision is an error (preToolUse fails closed)", exited(0, '{"permissionDecision":"perhaps"}'), pre, { decision: "block", error: true, rule: /unknown permissionDecision/ }],
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
    ['continue: false stops, with stopReason', exited(0, '{"continue":false,"stopReason":"halt"}'), stop, { decision: "block", reason: "halt", rule: /continue = false/ }],
    ["empty output makes no decision", exited(0, ""), pre, { decision: null, error: false, rule: /no JSON output/ }],
    ["SERVICE.md §4: output that is not a JSON object is an error", exited(0, "hello"), pre, { decision: null, error: true, rule: /not a JSON object/ }],
  ]);
});
