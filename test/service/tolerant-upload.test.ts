/**
 * What a user sees of a repository hook file hookbox cannot read, in-process (`createApp(...).request()`,
 * fake runners): the upload is stored, its answer names the file skipped (file, line, why), and the
 * workspace's other guards run; a bound on the workspace's files together still answers 400. And
 * Claude Code's DirectoryAdded, an event hookbox knows.
 */
import { describe, expect, it } from "vitest";
import { DecisionSchema, ErrorSchema, WorkspaceInfoSchema } from "../../service/schemas.js";
import { edgeApp } from "../helpers/app.js";
import { tarOf, type Entry } from "../helpers/tar.js";

const post = (body: unknown) => ({ method: "POST", body: JSON.stringify(body) });
const ls = { session_id: "s-1", hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "ls" } };
const deny = JSON.stringify({ permissionDecision: "deny", permissionDecisionReason: "the guard says no" });
const guard: Entry = { name: ".github/hooks/guard.json", content: JSON.stringify({ version: 1, hooks: { preToolUse: [{ type: "command", bash: `say ${deny}` }] } }) };

describe("an upload whose .claude/settings.json cannot be read", () => {
  it.each([
    ["a UTF-8 byte-order mark", '\uFEFF{ "hooks": {} }', undefined],
    ["a // comment", '{\n  // notes\n  "hooks": {}\n}\n', /^\.claude\/settings\.json:2:3: invalid JSON: comments are not JSON.*; the file is skipped: none of its hooks are read$/],
    ['"timeout": "30"', '{\n  "hooks": { "PreToolUse": [ { "hooks": [\n    { "type": "command", "command": "x", "timeout": "30" }\n  ] } ] }\n}\n', /^\.claude\/settings\.json:3:\d+: hooks\.PreToolUse\[0\]\.hooks\[0\]\.timeout: .*; the file is skipped: none of its hooks are read$/],
    ["a handler with no command", '{\n  "hooks": { "PreToolUse": [ { "hooks": [\n    { "type": "command" }\n  ] } ] }\n}\n', /^\.claude\/settings\.json:3:\d+: .*needs "command"; the file is skipped/],
  ])("with %s is stored with a warning naming file and line, and the Copilot guard beside it still blocks", async (_what, settings, warning) => {
    const edge = edgeApp();
    const put = await edge.request("/v1/workspaces/w", { method: "PUT", body: new Uint8Array(await tarOf([{ name: ".claude/settings.json", content: settings }, guard])) });
    expect(put.status).toBe(200);
    const info = WorkspaceInfoSchema.parse(await put.json());
    expect(info.hooks.map((h) => h.origin)).toEqual([".github/hooks/guard.json:1"]);
    expect(info.warnings).toEqual(warning ? [expect.stringMatching(warning)] : []);
    const answer = DecisionSchema.parse(await (await edge.request("/v1/events?workspace=w", post(ls))).json());
    expect(answer).toMatchObject({ decision: "block", reason: "[repository] the guard says no" });
  });

  it("is refused with 400 workspace_hooks_invalid only past a bound on all its files together (max_repository_hooks)", async () => {
    const edge = edgeApp({ server: "max_repository_hooks = 1" });
    const claude = { name: ".claude/settings.json", content: JSON.stringify({ hooks: { PreToolUse: [{ hooks: [{ type: "command", command: "a" }] }] } }) };
    const put = await edge.request("/v1/workspaces/w", { method: "PUT", body: new Uint8Array(await tarOf([claude, guard])) });
    expect(put.status).toBe(400);
    expect(ErrorSchema.parse(await put.json()).error).toMatchObject({ code: "workspace_hooks_invalid", message: expect.stringMatching(/more than 1 hooks \(server\.max_repository_hooks\)/) });
  });
});

describe("Claude Code's DirectoryAdded", () => {
  it("is an event hookbox takes, its repository hooks selected by how the directory was added, deciding nothing", async () => {
    const edge = edgeApp();
    const settings = { hooks: { DirectoryAdded: [{ matcher: "slash_command", hooks: [{ type: "command", command: 'say {"decision":"block","reason":"no"}' }] }] } };
    const put = await edge.request("/v1/workspaces/w", { method: "PUT", body: new Uint8Array(await tarOf([{ name: ".claude/settings.json", content: JSON.stringify(settings) }])) });
    expect(WorkspaceInfoSchema.parse(await put.json())).toMatchObject({ hooks: [{ event: "DirectoryAdded" }], warnings: [] });
    const event = (source: string) => ({ session_id: "s-1", hook_event_name: "DirectoryAdded", directory: "/home/me/other-repo", source });
    const added = await edge.request("/v1/events?workspace=w&format=claude", post(event("slash_command")));
    expect(added.status).toBe(200);
    const answer = DecisionSchema.parse(await added.json());
    expect(answer.decision).toBeNull();
    expect(answer.hooks).toEqual([expect.objectContaining({ decision: "block", effective: false })]);
    const other = DecisionSchema.parse(await (await edge.request("/v1/events?workspace=w", post(event("register_repo_root")))).json());
    expect(other.hooks).toEqual([]);
    expect(edge.ran).toHaveLength(1);
  });
});
