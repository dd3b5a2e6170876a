/**
 * Each agent's example configuration, exercised as that agent would: the forwarder line from the
 * example file, fed the payload that agent sends, against a running hookbox; the agent-native
 * answer and exit code for allow, block and ask, and for an unreachable service both ways — through
 * `hookbox forward` and through the shell forwarder it prints (`hookbox forward --print-script`).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parse as parseToml } from "smol-toml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startService, TOKEN_A, type Service } from "./helpers/service.js";

const dir = mkdtempSync(join(tmpdir(), "hookbox-examples-"));
const policy = join(dir, "decide.mjs");
// A policy hook that decides by the command: rm -rf → block, git push → ask, anything else → allow.
writeFileSync(policy, `
import { readFileSync } from "node:fs";
const e = JSON.parse(readFileSync(0, "utf8"));
const cmd = JSON.stringify(e.tool_input ?? {});
const d = /rm -rf/.test(cmd) ? { decision: "block", reason: "no rm -rf here" }
  : /curl evil/.test(cmd) ? { decision: "block", reason: "evil \\u001b]0;title\\u0007 \\u009b31m \\u007f \\u202e\\u200b\\ufeff\\u2066\\u00ad\\u115f\\uffa0\\u034f\\ufe00\\u2065\\udb40\\udd00\\ud834\\udd73 é 😀 ⚠\\ufe0f \\"q\\" \\\\ tab\\tline\\nnext" }
  : /git push/.test(cmd) ? { decision: "ask", reason: "pushing needs a human" } : { decision: "allow" };
process.stdout.write(JSON.stringify(d));
`);

// The shell forwarder, as a user would keep it next to the agent's config.
const script = join(dir, "forward.sh");
writeFileSync(script, spawnSync(process.execPath, ["dist/cli/hookbox.cjs", "forward", "--print-script"], { encoding: "utf8" }).stdout);
const forwarders = [
  { forwarder: "hookbox forward", bin: `${process.execPath} dist/cli/hookbox.cjs forward ` },
  { forwarder: "forward.sh (POSIX sh + curl)", bin: `sh ${script} ` },
];

let svc: Service;
beforeAll(async () => {
  svc = await startService(`[[policy.PreToolUse]]\nname = "decide"\ncommand = "node ${policy}"\n`);
});
afterAll(() => svc.stop());

type Cmd = "rm -rf /" | "git push" | "ls" | "curl evil";
interface Agent {
  name: string;
  file: string;
  /** the forwarder line in the agent's own config */
  line: (config: string) => string;
  payload: (cmd: Cmd) => unknown;
  allow: unknown;
  block: (reason: string) => unknown;
  ask: unknown;
  /** exit code of an ask (Codex has none: a block) */
  askCode?: number;
  blockCode: number;
}

const claudeOut = (permissionDecision: string, reason?: string) => ({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision, ...(reason ? { permissionDecisionReason: reason } : {}) } });
const snakePayload = (tool: string, event = "PreToolUse") => (cmd: Cmd) => ({ session_id: "s-1", transcript_path: "/tmp/t.jsonl", cwd: "/repo", hook_event_name: event, tool_name: tool, tool_input: { command: cmd } });

const agents: Agent[] = [
  {
    name: "Claude Code", file: "examples/claude-code/settings.json",
    line: (c) => JSON.parse(c).hooks.PreToolUse[0].hooks[0].command,
    payload: snakePayload("Bash"),
    allow: claudeOut("allow"), block: (r) => claudeOut("deny", r), ask: claudeOut("ask", "pushing needs a human"), blockCode: 0,
  },
  {
    name: "Copilot CLI", file: "examples/copilot/.github/hooks/hookbox.json",
    line: (c) => JSON.parse(c).hooks.preToolUse[0].bash,
    payload: (cmd) => ({ timestamp: 1704614600000, cwd: "/repo", toolName: "bash", toolArgs: JSON.stringify({ command: cmd }) }),
    allow: { permissionDecision: "allow" }, block: (r) => ({ permissionDecision: "deny", permissionDecisionReason: r }),
    ask: { permissionDecision: "ask", permissionDecisionReason: "pushing needs a human" }, blockCode: 0,
  },
  {
    name: "cosh", file: "examples/cosh/config.toml",
    line: (c) => ((parseToml(c).hooks as Record<string, Array<{ command: string }>>).PreToolUse)![0]!.command,
    payload: snakePayload("shell"),
    allow: { decision: "allow" }, block: (r) => ({ decision: "block", reason: r }), ask: { decision: "ask", reason: "pushing needs a human" }, blockCode: 0,
  },
  {
    name: "Codex", file: "examples/codex/hooks.json",
    line: (c) => JSON.parse(c).hooks.PreToolUse[0].hooks[0].command,
    payload: snakePayload("shell"),
    // Codex has no ask: an ask is answered as a deny, and blocks (exit 2). A bare allow Codex reports
    // as unsupported: it is said as nothing, and the call goes to Codex's own approval flow.
    allow: {}, block: (r) => claudeOut("deny", r), ask: claudeOut("deny", "pushing needs a human"), askCode: 2, blockCode: 2,
  },
  {
    name: "Gemini CLI", file: "examples/gemini/settings.json",
    line: (c) => JSON.parse(c).hooks.BeforeTool[0].hooks[0].command,
    payload: snakePayload("run_shell_command", "BeforeTool"),
    // Gemini CLI has no ask (it would run the tool): an ask is answered as a deny.
    allow: { decision: "allow" }, block: (r) => ({ decision: "block", reason: r }), ask: { decision: "deny", reason: "pushing needs a human" }, blockCode: 0,
  },
  {
    name: "Cursor", file: "examples/cursor/hooks.json",
    line: (c) => JSON.parse(c).hooks.preToolUse[0].command,
    payload: (cmd) => ({ conversation_id: "c-1", generation_id: "g-1", hook_event_name: "preToolUse", tool_name: "Shell", tool_input: { command: cmd }, cwd: "/repo", workspace_roots: ["/repo"] }),
    allow: { permission: "allow" }, block: (r) => ({ permission: "deny", user_message: r, agent_message: r }),
    // Cursor takes an ask at preToolUse but does not enforce it (the tool would run): answered as a deny.
    ask: { permission: "deny", user_message: "pushing needs a human", agent_message: "pushing needs a human" }, blockCode: 0,
  },
];

/** Runs the example's forwarder line as the agent would (`sh -c`), with `hookbox forward` being `bin` (this build, or its shell forwarder). */
function runLine(bin: string, line: string, url: string, payload: unknown, extra = "") {
  const command = line.replace(/^hookbox forward /, bin).replace("http://127.0.0.1:8080", url) + extra;
  const r = spawnSync("/bin/sh", ["-c", command], { input: JSON.stringify(payload), env: { PATH: process.env.PATH, HOOKBOX_TOKEN: TOKEN_A }, encoding: "utf8" });
  return { stdout: r.stdout, stderr: r.stderr, code: r.status, output: r.stdout.trim() ? (JSON.parse(r.stdout) as unknown) : undefined };
}

describe.each(agents)("$name example ($file)", (agent) => {
  const line = agent.line(readFileSync(agent.file, "utf8"));
  it("forwards to hookbox in one line", () => expect(line).toMatch(/^hookbox forward --url http:\/\/127\.0\.0\.1:8080 --event \S+ --format \S+( --deadline \d+)?$/));
  describe.each(forwarders)("through $forwarder", ({ bin }) => {
    it("allows", () => {
      const r = runLine(bin, line, svc.url, agent.payload("ls"));
      expect(r).toMatchObject({ code: 0, output: agent.allow, stderr: "" });
    });
    it("blocks, with the reason on stderr", () => {
      const r = runLine(bin, line, svc.url, agent.payload("rm -rf /"));
      expect(r).toMatchObject({ code: agent.blockCode, output: agent.block("no rm -rf here") });
      expect(r.stderr).toBe("no rm -rf here\n");
    });
    it("asks", () => {
      const r = runLine(bin, line, svc.url, agent.payload("git push"));
      expect(r).toMatchObject({ code: agent.askCode ?? 0, output: agent.ask });
    });
    it("turns ask into a block when no one can answer", () => {
      const r = runLine(bin, line, svc.url, agent.payload("git push"), " --interactive false");
      expect(r).toMatchObject({ code: agent.blockCode, output: agent.block("pushing needs a human"), stderr: "pushing needs a human\n" });
    });
    it("passes through when hookbox is unreachable and --on-unreachable allow (the default)", async () => {
      const r = runLine(bin, line, `http://127.0.0.1:${await freePort()}`, agent.payload("rm -rf /"));
      expect(r).toMatchObject({ code: 0, output: {} });
      expect(r.stderr).toMatch(/unreachable.*passing through/);
    });
    it("blocks when hookbox is unreachable and --on-unreachable block", async () => {
      const r = runLine(bin, line, `http://127.0.0.1:${await freePort()}`, agent.payload("ls"), " --on-unreachable block");
      // cosh-hooks.md: a non-zero exit "does not affect main flow" — cosh's block is its JSON at exit 0
      expect(r.code).toBe(agent.name === "cosh" ? 0 : 2);
      expect(r.stderr).toMatch(/unreachable.*blocking: --on-unreachable = block/);
      // The agent's own deny, with the same reason as on stderr.
      expect(JSON.stringify(r.output)).toContain(JSON.stringify(r.stderr.trim()));
    });
  });
});

describe.each(forwarders)("$forwarder blocking when hookbox is unreachable", ({ bin }) => {
  it.each([
    ["PreToolUse", true],
    ["UserPromptSubmit", false],
  ])("answers Claude's %s with exit 2 and JSON valid at that event (a hookSpecificOutput only on PreToolUse)", async (event, specific) => {
    const r = runLine(bin, `hookbox forward --url http://127.0.0.1:8080 --event ${event} --format claude`, `http://127.0.0.1:${await freePort()}`, { hook_event_name: event, prompt: "hi" }, " --on-unreachable block");
    expect(r.code).toBe(2);
    expect(r.output).toMatchObject({ decision: "block", reason: r.stderr.trim() });
    expect(Object.hasOwn(r.output as object, "hookSpecificOutput")).toBe(specific);
  });
  it("lets Claude stop at Stop: a block there would keep it going, told the error", async () => {
    const r = runLine(bin, "hookbox forward --url http://127.0.0.1:8080 --event Stop --format claude", `http://127.0.0.1:${await freePort()}`, { hook_event_name: "Stop" }, " --on-unreachable block");
    expect(r.code).toBe(0);
    expect(r.output).toEqual({});
    expect(r.stderr).toMatch(/at Stop a block would keep the agent going: it goes on as it would/);
  });
  it("answers Claude's PermissionRequest, which ignores exit 2, with its decision object's deny", async () => {
    const r = runLine(bin, "hookbox forward --url http://127.0.0.1:8080 --event PermissionRequest --format claude", `http://127.0.0.1:${await freePort()}`, { hook_event_name: "PermissionRequest", tool_name: "Bash" }, " --on-unreachable block");
    expect(r.output).toEqual({ hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "deny", message: r.stderr.trim() } } });
  });
});

describe("the shell forwarder", () => {
  // Each agent's line, the same payloads: the shell forwarder's stdout, stderr and exit code are
  // byte for byte those of hookbox forward — terminal controls in a hook's reason escaped alike.
  const cases = agents.flatMap((agent) => (["ls", "rm -rf /", "git push", "curl evil"] as const).map((cmd) => ({ name: agent.name, agent, cmd })));
  it.each(cases)("answers $name for $cmd exactly like hookbox forward", ({ agent, cmd }) => {
    const line = agent.line(readFileSync(agent.file, "utf8"));
    const payload = agent.payload(cmd as Cmd);
    const [node, sh] = forwarders.map(({ bin }) => runLine(bin, line, svc.url, payload));
    expect(sh!.stdout).toBe(node!.stdout);
    expect(sh!.stderr).toBe(node!.stderr);
    expect(sh!.code).toBe(node!.code);
    if (cmd === "curl evil") expect(node!.stdout + node!.stderr, JSON.stringify(node)).toContain("evil \\x1b]0;title\\x07 \\u009b31m \\x7f \\u202e\\u200b\\ufeff\\u2066\\u00ad\\u115f\\uffa0\\u034f\\ufe00\\u2065\\ue0100\\u1d173 é 😀 ⚠\ufe0f");
  });
});

describe("native HTTP hooks", () => {
  it("answers a Claude Code http hook with exactly its hook JSON (examples/claude-code/settings.http.json)", async () => {
    const hook = JSON.parse(readFileSync("examples/claude-code/settings.http.json", "utf8")).hooks.PreToolUse[0].hooks[0];
    const url = (hook.url as string).replace("http://127.0.0.1:8080", svc.url);
    const headers = { "content-type": "application/json", authorization: (hook.headers.Authorization as string).replace("$HOOKBOX_TOKEN", TOKEN_A) };
    const blocked = await fetch(url, { method: "POST", headers, body: JSON.stringify(snakePayload("Bash")("rm -rf /")) });
    expect(blocked.status).toBe(200);
    expect(await blocked.json()).toEqual(claudeOut("deny", "no rm -rf here"));
  });
  it("answers a Copilot http hook with its hook JSON, the event from the path", async () => {
    const res = await fetch(`${svc.url}/v1/hooks/copilot/preToolUse`, {
      method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN_A}` },
      body: JSON.stringify({ toolName: "bash", toolArgs: JSON.stringify({ command: "git push" }) }),
    });
    // the CLI reads the top level, VS Code hookSpecificOutput
    expect(await res.json()).toEqual({
      permissionDecision: "ask", permissionDecisionReason: "pushing needs a human",
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "ask", permissionDecisionReason: "pushing needs a human" },
    });
  });
});

describe("hookbox check", () => {
  it("lists the hooks each event would run", () => {
    const r = spawnSync(process.execPath, ["dist/cli/main.js", "check", "hookbox.example.toml"], { encoding: "utf8" });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/PreToolUse:\n {2}1\. org-guard {2}\[policy, host, cosh rules, timeout 3000 ms\]/);
    expect(r.stdout).toMatch(/ {2}2\. security-check {2}\[service, container, cosh rules, matcher/);
  });
  it("names the file and line of a bad configuration", () => {
    const bad = join(dir, "bad.toml");
    writeFileSync(bad, '[[hooks.PreToolUse]]\nname = "x"\ncomand = "y"\n');
    const r = spawnSync(process.execPath, ["dist/cli/main.js", "check", bad], { encoding: "utf8" });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/bad\.toml:3:1: hooks\.PreToolUse\[0\]\.comand: Unrecognized key/);
  });
  it("says a --workspace that is no folder, never an ok for hooks it never read", () => {
    const r = spawnSync(process.execPath, ["dist/cli/main.js", "check", "hookbox.example.toml", "--workspace", join(dir, "no-such-repo")], { encoding: "utf8" });
    expect(r.status).toBe(66);
    expect(r.stderr).toMatch(/--workspace .*no-such-repo is not a folder/);
  });
  it("escapes the image's name as it escapes every name it prints", () => {
    const odd = join(dir, "odd-image.toml");
    writeFileSync(odd, '[sandbox]\nimage = "x\\u001b]0;PWNED\\u0007\\u009b31m"\n');
    const r = spawnSync(process.execPath, ["dist/cli/main.js", "check", odd], { encoding: "utf8" });
    // eslint-disable-next-line no-control-regex -- the bytes a terminal acts on
    expect(r.stdout + r.stderr).not.toMatch(/[\u001b\u0007\u009b]/);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain("image x\\x1b]0;PWNED\\x07\\u009b31m");
  });
  it("names a policy folder that is a file at its key, never a stack trace", () => {
    const bad = join(dir, "bad-dirs.toml");
    writeFileSync(bad, `[policy]\ndirs = [${JSON.stringify(bad)}]\n`);
    const r = spawnSync(process.execPath, ["dist/cli/main.js", "check", bad], { encoding: "utf8" });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/bad-dirs\.toml:2:1: policy\.dirs\[0\]: policy directory .* is not a folder/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});

describe("the README's repository example (examples/repository)", () => {
  it("uploads as the README shows, and its guard denies a force push in a container", async () => {
    const tar = spawnSync("tar", ["-czf", "-", "-C", "examples/repository", ".github"]);
    expect(tar.status).toBe(0);
    const put = await fetch(`${svc.url}/v1/workspaces/my-repo`, { method: "PUT", headers: { authorization: `Bearer ${TOKEN_A}` }, body: tar.stdout });
    expect(put.status, await put.clone().text()).toBe(200);
    const ask = async (command: string) => (await (await svc.event({ hook_event_name: "PreToolUse", tool_name: "bash", tool_input: { command } }, { query: "workspace=my-repo" })).json()) as { decision: string | null; reason?: string; hooks: Array<{ source: string; sandbox: string; decision: string | null }> };
    const forced = await ask("git push --force origin main");
    expect(forced).toMatchObject({ decision: "block", reason: "[repository] no force pushes from the agent: open a pull request" });
    expect(forced.hooks.find((h) => h.source === "repository")).toMatchObject({ sandbox: "container", decision: "block" });
    const listed = await ask("ls");
    expect(listed.decision).not.toBe("block");
  });
});

describe("hookbox workspace push", () => {
  it("uploads a repository's hook files and prints the id; its hooks then run", async () => {
    const r = spawnSync(process.execPath, ["dist/cli/main.js", "workspace", "push", "test/fixtures/repo-copilot", "--url", svc.url, "--id", "copilot-demo"], {
      encoding: "utf8", env: { PATH: process.env.PATH, HOOKBOX_TOKEN: TOKEN_A },
    });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe("copilot-demo\n");
    const info = (await (await fetch(`${svc.url}/v1/workspaces/copilot-demo`, { headers: { authorization: `Bearer ${TOKEN_A}` } })).json()) as { hooks: unknown[] };
    expect(info.hooks).toHaveLength(1);
    const res = (await (await svc.event(snakePayload("shell")("ls"), { query: "workspace=copilot-demo" })).json()) as { hooks: Array<{ source: string; outcome: string; exit_code: number }> };
    expect(res.hooks.find((h) => h.source === "repository")).toMatchObject({ outcome: "exited", exit_code: 0 });
  });

  it("sends an agent's hook files and hook folders, never the rest of its folder (.cursor/mcp.json holds keys)", async () => {
    const repo = mkdtempSync(join(tmpdir(), "hookbox-push-"));
    const put = (name: string, text: string) => {
      mkdirSync(dirname(join(repo, name)), { recursive: true });
      writeFileSync(join(repo, name), text);
    };
    put(".cursor/hooks.json", JSON.stringify({ version: 1, hooks: { beforeShellExecution: [{ command: ".cursor/hooks/guard.sh" }], afterFileEdit: [{ command: "python3 ./scripts/fmt.py" }] } }));
    put("scripts/fmt.py", "print('{}')\n");
    put(".cursor/hooks/guard.sh", "echo '{}'\n");
    put(".cursor/mcp.json", JSON.stringify({ mcpServers: { x: { env: { API_KEY: "sk-secret" } } } }));
    // Codex's settings and keys, and its inline hooks: the hooks table alone is sent.
    put(".codex/config.toml", '# env = { GITHUB_TOKEN = "sk-secret" }\napi_key = "sk-secret"\n[mcp_servers.x]\nenv = { TOKEN = "sk-secret" }\n[[hooks.PreToolUse]]\nmatcher = "Bash"\n[[hooks.PreToolUse.hooks]]\ntype = "command"\ncommand = "echo codex-inline"\n');
    put(".github/copilot/instructions.md", "be nice\n");
    // Settings files with hooks among keys: their hook settings alone are sent.
    put(".claude/settings.local.json", JSON.stringify({ env: { ANTHROPIC_API_KEY: "sk-secret" }, hooks: { Stop: [{ hooks: [{ type: "command", command: "echo claude-stop" }] }] } }));
    put(".gemini/settings.json", '{ // comments, as Gemini CLI reads them: "apiKey": "sk-secret"\n "mcpServers": { "gh": { "env": { "GITHUB_TOKEN": "sk-secret" } } },\n "hooksConfig": { "enabled": true },\n}\n');
    // hooks alone, and a key commented out: written again, the comment stays here
    put(".copilot-shell/config.toml", '# api_key = "sk-secret"\n[[hooks.PreToolUse]]\nname = "c"\ncommand = "echo cosh"\n');
    put(".copilot-shell/.env", "TOKEN=sk-secret\n");
    const r = spawnSync(process.execPath, ["dist/cli/main.js", "workspace", "push", repo, "--url", svc.url, "--id", "narrow"], { encoding: "utf8", env: { PATH: process.env.PATH, HOOKBOX_TOKEN: TOKEN_A } });
    expect(r.status, r.stderr).toBe(0);
    const info = (await (await fetch(`${svc.url}/v1/workspaces/narrow`, { headers: { authorization: `Bearer ${TOKEN_A}` } })).json()) as { files: number; hooks: { format: string; origin: string }[] };
    expect(info.files).toBe(6);
    expect(info.hooks.map((h) => [h.format, h.origin])).toEqual([
      ["cosh", ".copilot-shell/config.toml:2"],
      ["claude", expect.stringMatching(/^\.claude\/settings\.local\.json:\d+/)],
      ["cursor", expect.stringMatching(/^\.cursor\/hooks\.json/)],
      ["cursor", expect.stringMatching(/^\.cursor\/hooks\.json/)],
      // the file's own line (its other settings blanked where they stand): the handler's table
      ["codex", ".codex/config.toml:7"],
    ]);
    for (const file of [".codex/config.toml", ".claude/settings.local.json", ".gemini/settings.json", ".copilot-shell/config.toml"]) expect(r.stderr).toContain(`warning: ${file}: only its hook settings`);
    expect(spawnSync("grep", ["-r", "sk-secret", svc.dataDir]).status).toBe(1);
    // a script a hook names outside every hook path is said, never silently left out
    expect(r.stderr).toMatch(/warning: \.cursor\/hooks\.json names scripts\/fmt\.py, which is not sent/);
    expect(r.stderr).not.toMatch(/guard\.sh, which is not sent/);
  });
});
