/**
 * Event names in every dialect, payload translation, interceptable points, folding and the answer
 * in each dialect. Pure; rows cite the source documents.
 */
import { describe, expect, it } from "vitest";
import { afterPolicyLook, applyTrust, fold, type Folded, type Judged } from "../../engine/aggregate.js";
import { answerFor, effectiveDecisions } from "../../engine/formats/registry.js";
import { nestedDeeperThan, parseEventBody, MAX_EVENT_DEPTH, MAX_OBJECT_KEYS } from "../../engine/event-body.js";
import { boundedDistance, resolveEventName, unknownEventMessage, type EventPoint } from "../../engine/events.js";
import type { HookDef } from "../../engine/hooks.js";
import { jsonSyntaxError } from "../../engine/formats/locate.js";
import { jsonSyntaxErrorOffThread } from "../../engine/formats/parse-off-thread.js";
import { detectDialect, PayloadCache, translate } from "../../engine/payload.js";
import type { Verdict } from "../../engine/verdict.js";

const point = (name: string) => resolveEventName(name)!.point;

describe("suggesting an event name", () => {
  it.each([
    ["kitten", "sitting", 3],
    ["pretooluse", "pretooluse", 0],
    ["pretooluse", "pretoolused", 1],
    ["pretooluse", "pretoluse", 1],
    ["pretooluse", "perotooluse", 2],
    ["stop", "post", 3],
    ["", "ab", 2],
    ["abc", "", 3],
    ["a".repeat(40), "b".repeat(40), 3],
  ])("the distance of %j and %j within 2 is %i (3: farther)", (a, b, d) => {
    expect(boundedDistance(a, b, 2)).toBe(d);
    expect(boundedDistance(b, a, 2)).toBe(d);
  });
  it("names the close one; a far or long name gets none", () => {
    expect(unknownEventMessage("pre_tool_used")).toMatch(/did you mean "(PreToolUse|preToolUse)"/);
    expect(unknownEventMessage("SesionStart")).toMatch(/did you mean "(SessionStart|sessionStart)"/);
    expect(unknownEventMessage("x".repeat(60))).not.toMatch(/did you mean/);
    expect(unknownEventMessage("y".repeat(100))).toBe(`unknown event "${"y".repeat(64)}…"`);
  });
});

describe("event names", () => {
  it.each([
    ["preToolUse", "PreToolUse", "camel"],
    ["PreToolUse", "PreToolUse", "snake"],
    ["agentStop", "Stop", "camel"],
    ["Stop", "Stop", "snake"],
    ["userPromptSubmitted", "UserPromptSubmit", "camel"],
    ["UserPromptSubmit", "UserPromptSubmit", "snake"],
    ["postToolUseFailure", "PostToolUseFailure", "camel"],
    ["sessionStart", "SessionStart", "camel"],
    ["permissionRequest", "PermissionRequest", "camel"],
    ["subagentStop", "SubagentStop", "camel"],
    ["preCompact", "PreCompact", "camel"],
    ["sessionEnd", "SessionEnd", "camel"],
    ["errorOccurred", "ErrorOccurred", "camel"],
    ["BeforeModel", "BeforeModel", "snake"],
    ["BeforeTool", "PreToolUse", "snake"], // Gemini CLI
    ["AfterTool", "PostToolUse", "snake"],
    ["BeforeAgent", "UserPromptSubmit", "snake"],
    ["AfterAgent", "Stop", "snake"],
    ["PreCompress", "PreCompact", "snake"],
    ["AfterModel", "AfterModel", "snake"],
  ])("%s names the point %s (%s payload)", (name, canonical, dialect) => {
    expect(resolveEventName(name)).toEqual({ point: canonical, dialect });
  });
  it("knows all eight cosh events (cosh-hooks.md Event Points)", () => {
    for (const name of ["PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "SessionStart", "Stop", "BeforeModel", "AfterModel"])
      expect(resolveEventName(name)).toBeDefined();
  });
  it("rejects unknown names", () => expect(resolveEventName("PreTool")).toBeUndefined());
});

describe("interceptable points", () => {
  it.each([
    ["cosh-hooks.md: PreToolUse Yes (block/allow/ask)", "PreToolUse", "cosh", ["allow", "block", "ask"]],
    ["cosh-hooks.md: PostToolUse Yes (block/allow)", "PostToolUse", "cosh", ["allow", "block"]],
    ["cosh-hooks.md: UserPromptSubmit Yes (block/allow)", "UserPromptSubmit", "cosh", ["allow", "block"]],
    ["cosh-hooks.md: Stop Yes (block/allow)", "Stop", "cosh", ["allow", "block"]],
    ["cosh-hooks.md: PostToolUseFailure No", "PostToolUseFailure", "cosh", []],
    ["cosh-hooks.md: SessionStart No", "SessionStart", "cosh", []],
    ["cosh-hooks.md: BeforeModel No", "BeforeModel", "cosh", []],
    ["cosh-hooks.md: AfterModel No", "AfterModel", "cosh", []],
    ["copilot-hooks.md: preToolUse allow, deny (or ask)", "preToolUse", "copilot", ["allow", "block", "ask"]],
    ["copilot-hooks.md: permissionRequest can allow or deny", "permissionRequest", "copilot", ["allow", "block"]],
    ["copilot-hooks.md: agentStop decision block forces another turn", "agentStop", "copilot", ["allow", "block"]],
    ["copilot-hooks.md: userPromptSubmitted command-hook output is ignored", "userPromptSubmitted", "copilot", []],
    ["copilot-hooks.md: postToolUse cannot undo the action", "postToolUse", "copilot", []],
    ["copilot-hooks.md: preCompact notification only", "preCompact", "copilot", []],
    ["copilot-hooks.md: sessionEnd No", "sessionEnd", "copilot", []],
  ] as const)("%s", (_citation, name, format, decisions) => {
    expect([...effectiveDecisions(point(name), format)].sort()).toEqual([...decisions].sort());
  });
});

describe("payloads", () => {
  const snake = { session_id: "abc-123", cwd: "/home/user/project", hook_event_name: "PreToolUse", timestamp: "2026-07-01T10:00:00Z", tool_name: "shell", tool_input: { command: "rm -rf /tmp/old" } };
  it("keeps fields named like Object's own properties as fields, in both directions", () => {
    const camel = translate(JSON.parse('{"constructor":1,"toString":2,"tool_name":"shell"}') as Record<string, unknown>, point("PreToolUse"), "camel");
    expect(JSON.stringify(camel)).toBe('{"constructor":1,"toString":2,"toolName":"shell"}');
    const snake = translate(JSON.parse('{"__proto__":{"x":3},"constructor":1,"toolName":"shell"}') as Record<string, unknown>, point("PreToolUse"), "snake");
    expect(JSON.stringify(snake)).toBe('{"hook_event_name":"PreToolUse","__proto__":{"x":3},"constructor":1,"tool_name":"shell"}');
    expect(Object.getPrototypeOf(snake)).toBe(Object.prototype);
  });

  it("translates a cosh event for a Copilot camelCase registration: toolName, toolArgs as a JSON string", () => {
    expect(translate(snake, point("PreToolUse"), "camel")).toEqual({
      sessionId: "abc-123", cwd: "/home/user/project", timestamp: Date.parse("2026-07-01T10:00:00Z"), toolName: "shell", toolArgs: '{"command":"rm -rf /tmp/old"}',
    });
  });
  it("translates a Copilot event for a PascalCase registration: snake_case fields", () => {
    const camel = { timestamp: 1704614400000, cwd: "/p", toolName: "bash", toolArgs: '{"command":"ls"}' };
    expect(translate(camel, point("preToolUse"), "snake")).toEqual({
      hook_event_name: "PreToolUse", timestamp: "2024-01-07T08:00:00.000Z", cwd: "/p", tool_name: "bash", tool_input: { command: "ls" },
    });
  });
  it("gives a hook of the other dialect the body's own tool and arguments, whatever decoys of the same name sit beside them, in any order", () => {
    const rm = { command: "rm -rf ~" };
    for (const body of [
      { hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: rm, tool_args: '{"command":"ls"}', toolName: "Read" },
      { toolName: "Read", tool_args: '{"command":"ls"}', hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: rm },
    ]) expect(translate(body, point("PreToolUse"), "camel"), JSON.stringify(body)).toMatchObject({ toolName: "Bash", toolArgs: JSON.stringify(rm) });
    for (const body of [
      { toolName: "bash", toolArgs: JSON.stringify(rm), toolInput: { command: "ls" }, tool_input: { command: "ls" } },
      { tool_input: { command: "ls" }, toolInput: { command: "ls" }, toolName: "bash", toolArgs: JSON.stringify(rm) },
    ]) expect(translate(body, point("preToolUse"), "snake"), JSON.stringify(body)).toMatchObject({ tool_name: "bash", tool_input: rm });
  });
  it("detects the dialect from the fields, else from the event name", () => {
    expect(detectDialect(snake, "camel")).toBe("snake");
    expect(detectDialect({ toolName: "x" }, "snake")).toBe("camel");
    expect(detectDialect({ cwd: "/" }, "camel")).toBe("camel");
  });
  it("hands the body's own bytes verbatim to hooks of its dialect that name the event as it does; others get it under their own name", () => {
    const raw = Buffer.from(' {"hook_event_name" : "PreToolUse", "tool_name" : "x"} ');
    const cache = new PayloadCache(raw, { hook_event_name: "PreToolUse", tool_name: "x" }, "snake", point("PreToolUse"));
    expect(cache.for("snake")).toBe(raw);
    expect(cache.for("snake", "PreToolUse")).toBe(raw);
    expect(JSON.parse(Buffer.from(cache.for("snake", "BeforeTool")).toString())).toEqual({ hook_event_name: "BeforeTool", tool_name: "x" });
    expect(JSON.parse(Buffer.from(cache.for("camel")).toString())).toEqual({ toolName: "x" });
    // A body that names no event (its name was in the path) still tells a snake_case hook which one it is.
    const unnamed = new PayloadCache(Buffer.from('{"tool_name":"x"}'), { tool_name: "x" }, "snake", point("PreToolUse"));
    expect(JSON.parse(Buffer.from(unnamed.for("snake")).toString())).toEqual({ hook_event_name: "PreToolUse", tool_name: "x" });
    // No field of a camelCase body becomes the event's name (`hookEvent_name` → hook_event_name).
    const camel = new PayloadCache(Buffer.from("{}"), { toolName: "bash", hookEvent_name: "Stop" }, "camel", point("preToolUse"));
    expect(JSON.parse(Buffer.from(camel.for("snake", "PreToolUse")).toString())).toMatchObject({ hook_event_name: "PreToolUse", tool_name: "bash" });
  });
  it("refuses a body that names its tool call in both dialects, crossed too: a hook of one would read another call than the matcher tested", () => {
    for (const body of [
      '{"tool_name":"Bash","toolName":"Read"}',
      '{"tool_input":{"command":"ls"},"toolArgs":"{\\"command\\":\\"rm -rf /\\"}"}',
      '{"hook_event_name":"PreToolUse","tool_name":"Read","toolArgs":"{\\"file_path\\":\\"/root/.ssh/id_rsa\\"}"}',
      '{"toolName":"Read","tool_input":{"file_path":"/root/.ssh/id_rsa"}}',
      '{"tool_name":"Bash","toolResult":{}}',
    ]) {
      expect(() => parseEventBody(Buffer.from(body)), body).toThrow(/an event names its tool and arguments in one dialect/);
    }
  });
  it("refuses a key said twice in one object, escaped or not, in toolArgs' JSON too: JSON.parse keeps the last, a hook's reader may keep the first", () => {
    for (const body of [
      '{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_name":"Read","tool_input":{"command":"rm -rf /"}}',
      '{"tool_name":"Bash","tool_input":{"command":"ls","\\u0063ommand":"rm -rf /"}}',
    ]) expect(() => parseEventBody(Buffer.from(body)), body).toThrow(/is given twice in one object/);
    expect(() => parseEventBody(Buffer.from('{"toolName":"bash","toolArgs":"{\\"command\\":\\"ls\\",\\"command\\":\\"rm -rf /\\"}"}'))).toThrow(/toolArgs: the key "command" is given twice/);
    // one key in each of two objects, and keys in strings, are no repeat
    expect(parseEventBody(Buffer.from('{"a":{"b":1},"c":{"b":2},"d":[{"e":1},{"e":2}],"f":"\\"a\\":1"}'))).toMatchObject({ c: { b: 2 } });
  });
  it("refuses a body whose two event names name two events; takes VS Code's hookEventName beside tool_name", () => {
    expect(() => parseEventBody(Buffer.from('{"hook_event_name":"SessionStart","hookEventName":"preToolUse","toolName":"bash"}'))).toThrow(/naming another event/);
    expect(parseEventBody(Buffer.from('{"hook_event_name":"PreToolUse","hookEventName":"preToolUse"}'))).toMatchObject({ hookEventName: "preToolUse" });
    expect(parseEventBody(Buffer.from('{"hookEventName":"PreToolUse","tool_name":"editFiles","tool_input":{"files":["a"]}}'))).toMatchObject({ tool_name: "editFiles" });
  });
});

const hookAt = (name: string, p: string, format: HookDef["format"] = "cosh"): HookDef => ({
  name, source: "service", format, point: point(p), dialect: "snake", command: "x", timeoutMs: 1, env: {}, failOpen: true, limits: {}, mounts: [], origin: "t",
});
const j = (name: string, verdict: Partial<Verdict>, p = "PreToolUse", format: HookDef["format"] = "cosh"): Judged => ({
  hook: hookAt(name, p, format), verdict: { decision: null, error: null, rule: "r", ...verdict },
});

describe("folding (SERVICE.md §4)", () => {
  it.each([
    ["block beats ask beats allow", [j("a", { decision: "allow" }), j("b", { decision: "ask" }), j("c", { decision: "block", reason: "no" })], "block"],
    ["ask beats allow", [j("a", { decision: "allow" }), j("b", { decision: "ask" })], "ask"],
    ["allow beats pass-through", [j("a", {}), j("b", { decision: "allow" })], "allow"],
    ["nothing decided: pass-through (null)", [j("a", {}), j("b", {})], null],
    ["{} does not approve", [], null],
    ["a block on a non-interceptable event changes nothing", [j("a", { decision: "block" }, "SessionStart")], null],
    ["ask on PostToolUse (block/allow only) changes nothing", [j("a", { decision: "ask" }, "PostToolUse")], null],
  ] as const)("%s", (_what, judged, decision) => {
    expect(fold([...judged], { interactive: true }).decision).toBe(decision);
  });

  it("turns ask into a block when no one can answer (copilot-hooks.md autopilot)", () => {
    const f = fold([j("a", { decision: "ask", reason: "sure?" })], { interactive: false });
    expect(f).toMatchObject({ decision: "block", reason: "sure?" });
    expect(f.note).toMatch(/interactive=false/);
  });

  it("gives one notification per hook with a systemMessage, else a reason, in order (cosh-hooks.md Notifications)", () => {
    const f = fold([
      j("first", { decision: "allow", reason: "fine", systemMessage: "shown" }),
      j("second", { reason: "only a reason" }),
      j("third", {}),
      j("fourth", { decision: "block", reason: "Dangerous rm -rf command", systemMessage: "Command blocked by security policy" }, "SessionStart"),
    ], { interactive: true });
    expect(f.notifications).toEqual([
      { type: "stream_event", event: { subtype: "hook_notification", hook_name: "first", message: "shown", decision: "allow" } },
      { type: "stream_event", event: { subtype: "hook_notification", hook_name: "second", message: "only a reason" } },
      // a block at SessionStart, where cosh's decisions do not count: its card says no decision
      { type: "stream_event", event: { subtype: "hook_notification", hook_name: "fourth", message: "Command blocked by security policy" } },
    ]);
  });

  it("joins additional context with newlines, from every hook, even where decisions do not count", () => {
    const f = fold([j("a", { additionalContext: "one" }, "SessionStart"), j("b", { additionalContext: "two" }, "SessionStart")], { interactive: true });
    expect(f.additionalContext).toBe("one\ntwo");
  });
});

describe("trust tiers (SERVICE.md §8): untrusted code can only tighten", () => {
  const v = (verdict: Partial<Verdict>): Verdict => ({ decision: null, error: null, rule: "r", ...verdict });
  const fromRepo = (verdict: Partial<Verdict>, mayRewrite = false): Judged => ({ ...j("repo", {}), verdict: applyTrust(v(verdict), "repository", { repositoryMayRewrite: mayRewrite }) });
  it.each<[string, Partial<Verdict>, boolean, Folded["decision"], unknown]>([
    ["a repository allow does not count", { decision: "allow" }, false, null, undefined],
    ["a repository block counts", { decision: "block", reason: "no" }, false, "block", undefined],
    ["a repository ask counts", { decision: "ask" }, false, "ask", undefined],
    ["a repository rewrite is dropped", { decision: "allow", modifiedArgs: { command: "cat ~/.ssh/id_rsa" } }, false, null, undefined],
    ["a trusted repository's rewrite stays (its allow still does not count)", { decision: "allow", modifiedArgs: { command: "ls -la" } }, true, null, { command: "ls -la" }],
  ])("%s", (_what, verdict, mayRewrite, decision, modifiedArgs) => {
    const folded = fold([fromRepo(verdict, mayRewrite)], { interactive: true });
    expect(folded.decision).toBe(decision);
    expect(folded.modifiedArgs).toEqual(modifiedArgs);
  });
  it("drops a repository hook's replacement of the tool's output unless its tenant trusts its rewrites; the last replacement stands, with a block too", () => {
    const at = "PostToolUse" as EventPoint;
    const redact = (name: string, to: string, more: Partial<Verdict> = {}): Judged => ({ ...j(name, {}, at), verdict: v({ updatedOutput: to, ...more }) });
    expect(fold([{ ...redact("repo", "[redacted]"), verdict: applyTrust(v({ updatedOutput: "[redacted]" }), "repository", { repositoryMayRewrite: false }) }], { interactive: true }).updatedOutput).toBeUndefined();
    expect(applyTrust(v({ updatedOutput: "x" }), "repository", { repositoryMayRewrite: false }).rule).toMatch(/replacement of the tool's output is ignored \(repository_may_rewrite = false\)/);
    expect(fold([{ ...redact("repo", "[redacted]"), verdict: applyTrust(v({ updatedOutput: "[redacted]" }), "repository", { repositoryMayRewrite: true }) }], { interactive: true }).updatedOutput).toBe("[redacted]");
    expect(fold([redact("a", "one"), redact("b", "two", { decision: "block", reason: "secret seen" })], { interactive: true })).toMatchObject({ decision: "block", updatedOutput: "two" });
  });

  it("leaves operators' and administrators' verdicts alone", () => {
    for (const source of ["policy", "service", "extension"] as const) {
      const verdict = v({ decision: "allow", modifiedArgs: { a: 1 } });
      expect(applyTrust(verdict, source, { repositoryMayRewrite: false })).toBe(verdict);
    }
  });
});

describe("answers in each dialect (SERVICE.md §3 output / exit_code)", () => {
  const blocked = { decision: "block" as const, reason: "Dangerous rm -rf command", systemMessage: "Command blocked by security policy", notifications: [] };
  const pre = "PreToolUse" as EventPoint;
  it.each([
    ["cosh", pre, blocked, { decision: "block", reason: "Dangerous rm -rf command", systemMessage: "Command blocked by security policy" }],
    // the CLI's form at the top level, VS Code's in hookSpecificOutput
    ["copilot", pre, blocked, { permissionDecision: "deny", permissionDecisionReason: "Dangerous rm -rf command", hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "Dangerous rm -rf command" } }],
    ["claude", pre, blocked, { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "Dangerous rm -rf command" }, systemMessage: "Command blocked by security policy" }],
    ["cosh", pre, { decision: null, notifications: [] }, {}],
    ["copilot", pre, { decision: null, notifications: [] }, {}],
    ["claude", pre, { decision: null, notifications: [] }, {}],
    ["copilot", pre, { decision: "allow", modifiedArgs: { command: "ls" }, notifications: [] }, { permissionDecision: "allow", modifiedArgs: { command: "ls" }, hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow", updatedInput: { command: "ls" } } }],
    // the CLI's agentStop at the top level; VS Code's Stop in hookSpecificOutput (hooks reference, "Stop output"), its SubagentStop at the top level
    ["copilot", "Stop", { decision: "block", reason: "tests fail", notifications: [] }, { decision: "block", reason: "tests fail", hookSpecificOutput: { hookEventName: "Stop", decision: "block", reason: "tests fail" } }],
    ["copilot", "SubagentStop", { decision: "block", reason: "tests fail", notifications: [] }, { decision: "block", reason: "tests fail" }],
    ["claude", "Stop", { decision: "block", reason: "tests fail", notifications: [] }, { decision: "block", reason: "tests fail" }],
    ["cosh", "SessionStart", { decision: null, additionalContext: "ctx", notifications: [] }, { hookSpecificOutput: { additional_context: "ctx" } }],
    // the CLI's context at the top level; VS Code's SessionStart and SubagentStart context in hookSpecificOutput (hooks reference, their outputs)
    ["copilot", "SessionStart", { decision: null, additionalContext: "ctx", notifications: [] }, { additionalContext: "ctx", hookSpecificOutput: { hookEventName: "SessionStart", additionalContext: "ctx" } }],
    ["copilot", "SubagentStart", { decision: null, additionalContext: "ctx", notifications: [] }, { additionalContext: "ctx", hookSpecificOutput: { hookEventName: "SubagentStart", additionalContext: "ctx" } }],
    ["copilot", "PreCompact", { decision: null, additionalContext: "ctx", notifications: [] }, { additionalContext: "ctx" }],
    ["claude", "SessionStart", { decision: null, additionalContext: "ctx", notifications: [] }, { hookSpecificOutput: { hookEventName: "SessionStart", additionalContext: "ctx" } }],
  ] as const)("%s %s", (format, p, folded, output) => {
    expect(answerFor(format, p as EventPoint, folded as Folded)).toEqual({ output, exit_code: 0 });
  });
});

describe("answers an agent accepts whole (an answer it refuses loses the block with it)", () => {
  const n = (f: Partial<Folded>): Folded => ({ decision: null, notifications: [], ...f });
  it.each([
    // Stop and SubagentStop take additionalContext: feedback that keeps the conversation going (hooks reference, Stop decision control)
    ["claude", "Stop", n({ decision: "block", reason: "tests fail", additionalContext: "ctx" }), { decision: "block", reason: "tests fail", hookSpecificOutput: { hookEventName: "Stop", additionalContext: "ctx" } }],
    ["claude", "SubagentStop", n({ additionalContext: "run the tests first" }), { hookSpecificOutput: { hookEventName: "SubagentStop", additionalContext: "run the tests first" } }],
    // Claude Code's output schema has no hookSpecificOutput for PreCompact: context goes in systemMessage
    ["claude", "PreCompact", n({ decision: "block", reason: "not now", additionalContext: "ctx" }), { decision: "block", reason: "not now", systemMessage: "ctx" }],
    ["claude", "PreCompact", n({ additionalContext: "ctx", systemMessage: "note" }), { systemMessage: "note\nctx" }],
    ["claude", "PostToolUse", n({ additionalContext: "ctx" }), { hookSpecificOutput: { hookEventName: "PostToolUse", additionalContext: "ctx" } }],
    // Claude Code: a replaced tool output under both its names (updatedMCPToolOutput before 2.1.121, MCP tools only)
    ["claude", "PostToolUse", n({ updatedOutput: "[redacted]", additionalContext: "ctx" }), { hookSpecificOutput: { hookEventName: "PostToolUse", additionalContext: "ctx", updatedToolOutput: "[redacted]", updatedMCPToolOutput: "[redacted]" } }],
    ["claude", "PostToolUse", n({ decision: "block", reason: "a secret was printed", updatedOutput: { lines: [] } }), { decision: "block", reason: "a secret was printed", hookSpecificOutput: { hookEventName: "PostToolUse", updatedToolOutput: { lines: [] }, updatedMCPToolOutput: { lines: [] } } }],
    // every other agent takes none: its user is told the model sees the output as the tool gave it
    ["codex", "PostToolUse", n({ updatedOutput: "[redacted]", systemMessage: "note" }), { systemMessage: "note\nhookbox: a hook replaced the tool's output, and Codex takes no replacement from a hook: the model sees the output as the tool gave it" }],
    // Gemini CLI takes AfterTool's hookSpecificOutput.tool_output: text (another format's replacement as its JSON)
    ["gemini", "PostToolUse", n({ updatedOutput: "[redacted]" }), { hookSpecificOutput: { tool_output: "[redacted]" } }],
    ["gemini", "PostToolUse", n({ updatedOutput: { lines: [] } }), { hookSpecificOutput: { tool_output: '{"lines":[]}' } }],
    // Cursor takes it as updated_mcp_tool_output, for an MCP tool's output only: its user is told so
    ["cursor", "PostToolUse", n({ updatedOutput: "[redacted]", systemMessage: "note" }), { updated_mcp_tool_output: "[redacted]", user_message: "note\nhookbox: a hook replaced the tool's output; Cursor takes the replacement for an MCP tool only — of any other tool the model sees the output as the tool gave it" }],
    // Gemini CLI reads additionalContext at AfterTool, BeforeAgent and SessionStart only (hooks reference): elsewhere it goes in systemMessage
    ["gemini", "PostToolUse", n({ additionalContext: "ctx" }), { hookSpecificOutput: { additionalContext: "ctx" } }],
    ["gemini", "UserPromptSubmit", n({ additionalContext: "ctx", systemMessage: "note" }), { systemMessage: "note", hookSpecificOutput: { additionalContext: "ctx" } }],
    ["gemini", "SessionStart", n({ additionalContext: "ctx" }), { hookSpecificOutput: { additionalContext: "ctx" } }],
    ["gemini", "PreToolUse", n({ decision: "block", reason: "no", additionalContext: "ctx" }), { decision: "block", reason: "no", systemMessage: "ctx" }],
    ["gemini", "PreToolUse", n({ additionalContext: "ctx", systemMessage: "note", modifiedArgs: { command: "ls" } }), { systemMessage: "note\nctx", hookSpecificOutput: { tool_input: { command: "ls" } } }],
    ["gemini", "Stop", n({ decision: "block", reason: "tests fail", additionalContext: "ctx" }), { decision: "block", reason: "tests fail", systemMessage: "ctx" }],
    // Codex: no hookSpecificOutput on Stop (it denies unknown fields)
    ["codex", "Stop", n({ decision: "block", reason: "tests fail", additionalContext: "ctx" }), { decision: "block", reason: "tests fail", systemMessage: "ctx" }],
    // Codex: its compaction answers take continue, stopReason, suppressOutput and systemMessage only — a block is the stop
    ["codex", "PreCompact", n({ decision: "block", reason: "not now", additionalContext: "ctx" }), { continue: false, stopReason: "not now", systemMessage: "ctx" }],
    ["codex", "PreCompact", n({ decision: "block", halt: "keep the context" }), { continue: false, stopReason: "keep the context" }],
    ["codex", "PostCompact", n({ systemMessage: "note" }), { systemMessage: "note" }],
    ["codex", "SubagentStart", n({ additionalContext: "ctx" }), { hookSpecificOutput: { hookEventName: "SubagentStart", additionalContext: "ctx" } }],
    ["codex", "SubagentStop", n({ decision: "block", reason: "finish the tests", additionalContext: "ctx" }), { decision: "block", reason: "finish the tests", systemMessage: "ctx" }],
    // Codex: changed arguments only with an allow
    ["codex", "PreToolUse", n({ decision: "allow", modifiedArgs: { command: "ls" } }), { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow", updatedInput: { command: "ls" } } }],
    ["codex", "PreToolUse", n({ decision: "ask", reason: "confirm", modifiedArgs: { command: "ls" } }), { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "confirm" } }],
    ["codex", "PreToolUse", n({ modifiedArgs: { command: "ls" } }), { systemMessage: expect.stringMatching(/changed the arguments, and Codex takes a change only together with an allow: the change was not applied/) }],
    ["codex", "PreToolUse", n({ decision: "allow" }), {}],
    // Codex refuses updatedInput in a PermissionRequest answer: the allow given with the change goes too
    ["codex", "PermissionRequest", n({ decision: "allow", modifiedArgs: { command: "ls" } }), { systemMessage: expect.stringMatching(/the change was not applied/) }],
    ["codex", "PermissionRequest", n({ decision: "allow" }), { hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "allow" } } }],
    // Codex refuses a deny without a reason, or with a blank one
    ["codex", "PreToolUse", n({ decision: "ask" }), { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "a hook asked for confirmation, and Codex cannot ask here" } }],
    ["codex", "PreToolUse", n({ decision: "block", reason: "  " }), { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "blocked by a hook" } }],
    // … blank as Rust's str::trim sees it (a NEL is white space there)
    ["codex", "PreToolUse", n({ decision: "block", reason: "\u0085" }), { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "blocked by a hook" } }],
    ["codex", "PreToolUse", n({ decision: "ask", reason: "\u0085" }), { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "a hook asked for confirmation, and Codex cannot ask here" } }],
    // PermissionRequest's hookSpecificOutput holds the decision only: context goes with the message
    ["claude", "PermissionRequest", n({ decision: "allow", additionalContext: "ctx" }), { hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "allow" } }, systemMessage: "ctx" }],
    // A change Claude Code takes at PermissionRequest only inside an allow: without one, the user is told it was not applied
    ["claude", "PermissionRequest", n({ decision: "allow", modifiedArgs: { command: "ls" } }), { hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "allow", updatedInput: { command: "ls" } } } }],
    ["claude", "PermissionRequest", n({ modifiedArgs: { command: "ls" }, systemMessage: "note" }), { systemMessage: "note\nhookbox: a hook changed the arguments, and Claude Code takes a change here only with an allow: the change was not applied" }],
    ["claude", "PermissionRequest", n({ decision: "block", reason: "no", modifiedArgs: { command: "ls" } }), { hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "deny", message: "no" } } }],
    // Copilot takes no change at permissionRequest (copilot-hooks.md: it "can allow or deny"): the
    // allow given with a change was for the changed call — neither goes out, and the user is told
    ["copilot", "PermissionRequest", n({ decision: "allow", reason: "wrapped", modifiedArgs: { command: "sandbox-run -- rm -rf x" } }), { additionalContext: "hookbox: a hook changed the arguments, and Copilot takes a change only before the tool runs (preToolUse): the change was not applied" }],
    ["copilot", "PermissionRequest", n({ modifiedArgs: { command: "ls" }, additionalContext: "ctx" }), { additionalContext: "ctx\nhookbox: a hook changed the arguments, and Copilot takes a change only before the tool runs (preToolUse): the change was not applied" }],
    ["copilot", "PermissionRequest", n({ decision: "block", reason: "no", modifiedArgs: { command: "ls" } }), { behavior: "deny", message: "no", permissionDecision: "deny", permissionDecisionReason: "no" }],
    ["copilot", "PermissionRequest", n({ decision: "allow", reason: "ok" }), { behavior: "allow", permissionDecision: "allow", permissionDecisionReason: "ok" }],
    // Cursor takes no change at beforeMCPExecution: an ask stays the user's, told that the change was not applied
    ["cursor", "BeforeMCPExecution", n({ decision: "ask", reason: "confirm: a dry run", modifiedArgs: { dry_run: true } }), { permission: "ask", user_message: "confirm: a dry run\nhookbox: a hook changed the arguments, and Cursor takes a change only before a tool (preToolUse): the change was not applied", agent_message: "confirm: a dry run" }],
    ["cursor", "BeforeMCPExecution", n({ modifiedArgs: { dry_run: true } }), { user_message: "hookbox: a hook changed the arguments, and Cursor takes a change only before a tool (preToolUse): the change was not applied" }],
    ["cursor", "BeforeMCPExecution", n({ decision: "block", reason: "no", modifiedArgs: { dry_run: true } }), { permission: "deny", user_message: "no", agent_message: "no" }],
  ] as const)("%s %s", (format, p, folded, output) => {
    expect(answerFor(format, p as EventPoint, folded)).toEqual({ output, exit_code: 0 });
  });

  it("gives an ask without a reason, or with a blank one, one of its own", () => {
    expect(fold([j("q", { decision: "ask" })], { interactive: true }).reason).toBe("hook q asks for confirmation");
    expect(fold([j("b", { decision: "block", reason: " \n" })], { interactive: true }).reason).toBe("blocked by hook b");
  });

  it("says once what the policy hooks said in both looks at a changed event", () => {
    const note = { type: "stream_event" as const, event: { subtype: "hook_notification" as const, hook_name: "p", message: "policy: watched" } };
    const first: Folded = { decision: null, modifiedArgs: { command: "ls -la" }, systemMessage: "policy: watched\nsvc: changed", notifications: [note] };
    const again: Folded = { decision: null, systemMessage: "policy: watched", notifications: [note] };
    const out = afterPolicyLook(first, again, false, false, "block");
    expect(out.systemMessage).toBe("policy: watched\nsvc: changed");
    expect(out.notifications).toEqual([note]);
  });

  it.each([
    ["an allow", { decision: "allow" as const, reason: "wrapped" }],
    ["no decision", { decision: null }],
  ])("blocks a call whose change the policy hooks change in turn, with %s of theirs on it: no arguments no policy hook saw, nor the call as sent, which a hook changed", (_what, theirs) => {
    const first: Folded = { decision: "ask", reason: "a human must confirm network access", modifiedArgs: { command: "npm install --registry https://npm.internal foo" }, notifications: [] };
    const again: Folded = { ...theirs, modifiedArgs: { command: "sudo firejail --net=none npm install foo" }, notifications: [] };
    for (const decision of ["ask", null] as const) {
      const out = afterPolicyLook({ ...first, decision }, again, false, true, "block");
      expect(out.decision).toBe("block");
      expect(out.reason).toMatch(/changed the changed event in turn .*the call is blocked, run neither as changed nor as sent/);
      expect(out.modifiedArgs).toBeUndefined();
    }
  });

  it.each([
    ["an allow", { decision: "allow" as const, reason: "wrapped" }],
    ["no decision", { decision: null }],
  ])("drops such a change, with %s of theirs on it, where a block stops nothing: the other hooks' ask stands, no allow goes out", (_what, theirs) => {
    const first: Folded = { decision: "ask", reason: "a human must confirm network access", modifiedArgs: { command: "npm install --registry https://npm.internal foo" }, notifications: [] };
    const again: Folded = { ...theirs, modifiedArgs: { command: "sudo firejail --net=none npm install foo" }, notifications: [] };
    const out = afterPolicyLook(first, again, false, false, "drop");
    expect(out.decision).toBe("ask");
    expect(out.reason).toBe("a human must confirm network access");
    expect(out.modifiedArgs).toBeUndefined();
    // With nothing else decided, nothing is: the agent asks as it would.
    expect(afterPolicyLook({ ...first, decision: null }, again, false, false, "drop")).toMatchObject({ decision: null });
    expect(afterPolicyLook({ ...first, decision: null }, again, false, false, "drop").modifiedArgs).toBeUndefined();
  });

  it("blocks a call whose change the policy hooks could not check (one of them failed, or the event's time ran out), whatever the others decided", () => {
    const first: Folded = { decision: "allow", reason: "wrapped for you", modifiedArgs: { command: "sandbox-run rm -rf ~" }, notifications: [] };
    for (const again of [undefined, { decision: null, notifications: [] }, { decision: "ask" as const, reason: "sure?", notifications: [] }]) {
      const out = afterPolicyLook(first, again, true, false, "block");
      expect(out).toMatchObject({ decision: "block", reason: expect.stringMatching(/could not check the changed event: the call is blocked/) });
      expect(out.modifiedArgs).toBeUndefined();
    }
    // A policy block of the changed event says its own reason.
    expect(afterPolicyLook(first, { decision: "block", reason: "no", notifications: [] }, true, false, "block")).toMatchObject({ decision: "block", reason: "no" });
  });

  it("lets a change go out when the policy hooks, shown it, give back the same (a wrapper that always prints its wrapping)", () => {
    const wrapped = { command: "firejail --net=none curl-evil" };
    const first: Folded = { decision: "allow", reason: "sandboxed", modifiedArgs: wrapped, notifications: [] };
    const out = afterPolicyLook(first, { decision: "allow", modifiedArgs: { ...wrapped }, notifications: [] }, false, false, "block");
    expect(out).toMatchObject({ decision: "allow", modifiedArgs: wrapped });
  });

  it("gives a block without a reason one, so every agent takes it (Codex, Claude Code stop points, Cursor's follow-up)", () => {
    const f = fold([j("guard", { decision: "block" }, "Stop", "claude")], { interactive: true });
    expect(f.reason).toBe("blocked by hook guard");
    expect(answerFor("cursor", "Stop" as EventPoint, f).output).toMatchObject({ followup_message: "blocked by hook guard" });
    expect(answerFor("codex", "Stop" as EventPoint, f).output).toEqual({ decision: "block", reason: "blocked by hook guard" });
  });
});

describe("event bodies (hostile input costs linear time)", () => {
  const refusal = (text: string): string => {
    try {
      parseEventBody(Buffer.from(text));
    } catch (err) {
      return (err as Error).message;
    }
    throw new Error("expected a refusal");
  };

  it.each([
    ["a missing comma", '{\n  "a": 1\n  "b": 2\n}', /^the body is not valid JSON: expected ',' or '}', found "\\"" at line 3, column 3$/],
    ["a missing comma in an array", "[1 2]", /expected ',' or '\]', found "2" at line 1, column 4$/],
    ["an unfinished object", '{"hook_event_name": "PreToolUse",', /unexpected end of JSON, expected a string at line 1, column 34$/],
    ["a trailing comma", '{"a": 1,}', /expected a string, found "}" at line 1, column 9$/],
    ["a comment", '// x\n{"a": 1}', /comments are not JSON, found "\/" at line 1, column 1$/],
    ["text after the value", '{"a": 1} {}', /unexpected text after the JSON value, found "{" at line 1, column 10$/],
    ["a word after the value", '{"hook_event_name":"PostToolUse"} x', /unexpected text after the JSON value, found "x" at line 1, column 35$/],
    ["a word after a plain value", "1 x", /unexpected text after the JSON value, found "x" at line 1, column 3$/],
    ["a word after an array", "[1]\nnope", /unexpected text after the JSON value, found "n" at line 2, column 1$/],
    ["a word where a value is due", '{"a": x}', /expected a value, found "x" at line 1, column 7$/],
    ["a byte-order mark", '\uFEFF{"a": 1}', /expected a value, found a byte-order mark \(U\+FEFF\) at line 1, column 1$/],
  ])("locates %s", async (_what, text, message) => {
    expect(refusal(text)).toMatch(message);
    // A large body's error is walked to in the parser's worker: the same words, the same place.
    let refused: unknown;
    try {
      JSON.parse(text);
    } catch (err) {
      refused = err;
    }
    const here = jsonSyntaxError(text, refused);
    const there = await jsonSyntaxErrorOffThread(text, refused);
    expect({ message: there.message, line: there.line, column: there.column }).toEqual({ message: here.message, line: here.line, column: here.column });
  });

  it.each<[string, number[], RegExp]>([
    ["a byte no character starts with", [0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d], /^the body is not UTF-8 \(at byte offset 6, line 1\)/],
    ["a sequence cut short, on line 3", [...Buffer.from('{\n"a":\n"x'), 0xc3, ...Buffer.from('"}')], /^the body is not UTF-8 \(at byte offset 10, line 3\)/],
    ["an encoded surrogate after 10 000 bytes of é", [...Buffer.from(`{"a":"${"é".repeat(5000)}`), 0xed, 0xa0, 0x80, ...Buffer.from('"}')], /^the body is not UTF-8 \(at byte offset 1000[6-8], line 1\)/],
    ["an overlong '/'", [...Buffer.from('{"a":"'), 0xc0, 0xaf, ...Buffer.from('"}')], /^the body is not UTF-8 \(at byte offset 6, line 1\)/],
    ["a sequence left open at the end", [...Buffer.from('{"a":"x"}'), 0xe2, 0x82], /^the body is not UTF-8 \(at byte offset 11, line 1\)/],
  ])("refuses a body that is not UTF-8 (%s), saying where: a hook of its dialect reads its bytes, and a strict JSON reader refuses them", (_what, bytes, message) => {
    expect(() => parseEventBody(Uint8Array.from(bytes))).toThrow(message);
  });

  it("takes every character UTF-8 says, U+FFFD itself included", () => {
    expect(parseEventBody(Buffer.from('{"hook_event_name":"Stop","a":"é€😀\uFFFD\u{10FFFF}"}'))).toMatchObject({ a: expect.stringContaining("😀") });
  });

  it("locates an error in 120 KB of invalid JSON with many lines at once", () => {
    const text = `{\n${Array.from({ length: 16_000 }, (_, i) => `"k${i}": ${i},`).join("\n")}\n}`;
    const t0 = performance.now();
    expect(refusal(text)).toMatch(/expected a string, found "}" at line 16002, column 1$/);
    expect(performance.now() - t0).toBeLessThan(200);
  });

  it(`refuses a body with an object of more than ${MAX_OBJECT_KEYS} keys (MAX_OBJECT_KEYS), and takes objects of ${MAX_OBJECT_KEYS} each`, () => {
    const keys = (n: number, p = "k") => Array.from({ length: n }, (_, i) => `"${p}${i}":0`).join(",");
    // at the limit, in the body itself and in two objects inside it (counted per object); colons in strings count for nothing
    const atLimit = `{"hook_event_name":"Stop","a":{${keys(MAX_OBJECT_KEYS)}},"b":[{${keys(MAX_OBJECT_KEYS)}}],"c":"${":".repeat(1000)}",${keys(MAX_OBJECT_KEYS - 4, "t")}}`;
    expect(() => parseEventBody(Buffer.from(atLimit))).not.toThrow();
    expect(refusal(`{"hook_event_name":"Stop","a":{${keys(MAX_OBJECT_KEYS + 1)}}}`)).toBe(`the body holds an object of more than ${MAX_OBJECT_KEYS} keys (MAX_OBJECT_KEYS)`);
    expect(refusal(`{"hook_event_name":"Stop",${keys(MAX_OBJECT_KEYS)}}`)).toBe(`the body holds an object of more than ${MAX_OBJECT_KEYS} keys (MAX_OBJECT_KEYS)`);
    // the keys of an object go on being counted past the objects inside it
    expect(refusal(`{"hook_event_name":"Stop","a":{${keys(MAX_OBJECT_KEYS / 2)},"in":{"x":1},${keys(MAX_OBJECT_KEYS / 2, "j")}}}`)).toBe(`the body holds an object of more than ${MAX_OBJECT_KEYS} keys (MAX_OBJECT_KEYS)`);
  });

  it(`refuses a body nested deeper than ${MAX_EVENT_DEPTH} levels, and takes one ${MAX_EVENT_DEPTH} deep`, () => {
    const nest = (n: number) => `{"hook_event_name":"Stop","x":${"[".repeat(n - 2)}{}${"]".repeat(n - 2)}}`;
    expect(() => parseEventBody(Buffer.from(nest(MAX_EVENT_DEPTH)))).not.toThrow();
    expect(refusal(nest(MAX_EVENT_DEPTH + 1))).toBe(`the body is nested deeper than ${MAX_EVENT_DEPTH} levels`);
  });

  it.each<[string, string, number, boolean]>([
    ["an object", '{"a":{"b":[1]}}', 3, false],
    ["an object one too deep", '{"a":{"b":[1]}}', 2, true],
    ["brackets inside a string", `{"a":"${"[{".repeat(100)}"}`, 1, false],
    ["an escaped quote inside a string", `{"a":"\\"${"[".repeat(100)}"}`, 1, false],
    ["an escaped backslash before the closing quote", `{"a":"\\\\"${"[".repeat(3)}`, 3, true],
    ["closers outside strings", "[[]][[]][[]]", 2, false],
    ["a closer too many, then openers", "]]]][[", 1, true],
    ["multi-byte UTF-8 around brackets", '{"é":"€[","ü":[[]]}', 3, false],
  ])("counts nesting byte by byte: %s", (_what, text, max, deeper) => {
    expect(nestedDeeperThan(Buffer.from(text), max)).toBe(deeper);
  });

  it("refuses a deep body with the depth message, not a syntax error, whatever follows", () => {
    expect(refusal(`{"a":${"[".repeat(MAX_EVENT_DEPTH)}`)).toBe(`the body is nested deeper than ${MAX_EVENT_DEPTH} levels`);
    expect(refusal(`{"a":"${"[".repeat(1000)}"`)).toMatch(/^the body is not valid JSON: unexpected end of JSON/);
  });

  it.each([
    ["1 MiB of '['", "[".repeat(1024 * 1024), /^the body is nested deeper than 64 levels$/],
    ["1 MiB of balanced brackets", `{"a":${"[".repeat(512 * 1024)}${"]".repeat(512 * 1024)}}`, /nested deeper than 64 levels/],
  ])("answers %s without a stack overflow", (_what, text, message) => {
    expect(refusal(text)).toMatch(message);
  });
});
