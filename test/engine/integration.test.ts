/**
 * Real hook scripts (bash, python3, node) through the real runners: containers for service and
 * repository hooks, the host for policy hooks. The same script means what each format's document
 * says it means.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createEngine, type EventRequest } from "../../engine/index.js";
import { parseConfig } from "../../engine/config.js";
import { ContainerRunner } from "../../engine/run/container-runner.js";
import { HostRunner } from "../../engine/run/host-runner.js";
import { loadRepositoryHooks } from "../../engine/repository.js";
import { leftovers, makeWorkspace } from "../helpers/engine.js";

const runners = { host: new HostRunner(), container: new ContainerRunner({ scratchDir: "/tmp/hookbox-test-scratch" }) };
const tenant = { name: "t", repositoryHooks: true };
const coshBody = { session_id: "abc-123", cwd: "/home/user/project", hook_event_name: "PreToolUse", timestamp: "2026-07-01T10:00:00Z", tool_name: "shell", tool_input: { command: "rm -rf /tmp/old" } };

function request(body: Record<string, unknown>, extra: Partial<EventRequest> = {}): EventRequest {
  return { body, raw: Buffer.from(JSON.stringify(body)), tenant, interactive: true, ...extra };
}

/** A stored workspace with these files, and the repository hooks it declares. */
async function repoWith(files: Record<string, string>) {
  const dir = await makeWorkspace(files);
  return { dir, hooks: await loadRepositoryHooks(dir, 60_000) };
}

const engineFor = (toml: string) => createEngine({ config: parseConfig("test.toml", toml), runners });

afterEach(async () => {
  // (a cold run's removal may go on a moment behind its answer: REMOVE_WAIT_MS)
  await expect.poll(async () => (await leftovers()).containers, { timeout: 10_000 }).toEqual([]);
});

describe.each([
  ["bash", "exit.sh", "#!/bin/bash\ncat >/dev/null\necho 'failing on purpose' >&2\nexit $CODE\n", "bash"],
  ["python3", "exit.py", "import sys, os\nsys.stdin.read()\nsys.stderr.write('failing on purpose\\n')\nsys.exit(int(os.environ['CODE']))\n", "python3"],
  ["node", "exit.cjs", "require('fs').readFileSync(0);process.stderr.write('failing on purpose\\n');process.exit(Number(process.env.CODE))\n", "node"],
])("a %s script that exits non-zero, under three formats", (_lang, file, script, interpreter) => {
  const workspace = (code: number, format: "copilot" | "claude") =>
    format === "copilot"
      ? { [file]: script, ".github/hooks/h.json": JSON.stringify({ version: 1, hooks: { preToolUse: [{ type: "command", bash: `${interpreter} ${file}`, env: { CODE: String(code) } }] } }) }
      : { [file]: script, ".claude/settings.json": JSON.stringify({ hooks: { PreToolUse: [{ matcher: "shell", hooks: [{ type: "command", command: `CODE=${code} ${interpreter} ${file}` }] }] } }) };
  const coshToml = (code: number) => `[[hooks.PreToolUse]]\nname = "h"\ncommand = "${interpreter} /workspace/${file}"\nenv = { CODE = "${code}" }\n`;

  it("exit 1 on preToolUse: deny under Copilot, pass under cosh and Claude", async () => {
    const copilot = await engineFor("").handleEvent(request(coshBody, { workspace: await repoWith(workspace(1, "copilot")) }));
    expect(copilot.decision).toBe("block");
    expect(copilot.hooks[0]).toMatchObject({ source: "repository", sandbox: "container", format: "copilot", exit_code: 1, effective: true });
    expect(copilot.hooks[0]!.rule).toMatch(/fail-closed/);

    const cosh = await engineFor(coshToml(1)).handleEvent(request(coshBody, { workspace: await repoWith({ [file]: script }) }));
    expect(cosh.decision).toBeNull();
    expect(cosh.hooks[0]).toMatchObject({ format: "cosh", exit_code: 1, decision: null, error: expect.stringMatching(/exit 1: failing on purpose/) });

    const claude = await engineFor("").handleEvent(request(coshBody, { workspace: await repoWith(workspace(1, "claude")) }));
    expect(claude.decision).toBeNull();
    expect(claude.hooks[0]).toMatchObject({ format: "claude", exit_code: 1, decision: null });
  });

  it("exit 2: a block under all three, with stderr as the reason", async () => {
    const results = [
      await engineFor("").handleEvent(request(coshBody, { workspace: await repoWith(workspace(2, "copilot")) })),
      await engineFor(coshToml(2)).handleEvent(request(coshBody, { workspace: await repoWith({ [file]: script }) })),
      await engineFor("").handleEvent(request(coshBody, { workspace: await repoWith(workspace(2, "claude")) })),
    ];
    // (the repositories' reasons marked as theirs; the operator's cosh hook's as written)
    expect(results.map((r) => [r.decision, r.reason])).toEqual([["block", "[repository] failing on purpose"], ["block", "failing on purpose"], ["block", "[repository] failing on purpose"]]);
  });
});

describe("timeouts", () => {
  it("pass under Copilot, even for a policy hook on the host", async () => {
    const dir = await makeWorkspace({ "policy.d/slow.json": JSON.stringify({ version: 1, hooks: { preToolUse: [{ type: "command", bash: "sleep 5", timeoutSec: 0.5 }] } }) });
    const engine = createEngine({ config: parseConfig(join(dir, "hookbox.toml"), '[policy]\ndirs = ["policy.d"]\n'), runners });
    const r = await engine.handleEvent(request(coshBody));
    expect(r.decision).toBeNull();
    expect(r.hooks[0]).toMatchObject({ source: "policy", sandbox: "host", timed_out: true, outcome: "timed_out" });
    expect(r.hooks[0]!.rule).toMatch(/timeout is fail-open/);
  });

  it("block under cosh with fail_open = false", async () => {
    const r = await engineFor('[[hooks.PreToolUse]]\nname = "slow"\ncommand = "sleep 5"\ntimeout = 500\nfail_open = false\n').handleEvent(request(coshBody));
    expect(r.decision).toBe("block");
    expect(r.hooks[0]).toMatchObject({ sandbox: "container", timed_out: true });
    expect(r.hooks[0]!.rule).toMatch(/fail_open = false/);
  });

  it("pass under cosh by default", async () => {
    const r = await engineFor('[[hooks.PreToolUse]]\nname = "slow"\ncommand = "sleep 5"\ntimeout = 500\n').handleEvent(request(coshBody));
    expect(r.decision).toBeNull();
  });
});

describe("payload shapes and interceptability", () => {
  it("a Copilot repository hook reading .toolName with jq decides on an event a cosh agent posted in snake_case", async () => {
    // jq reads stdin once: keep the event in a variable.
    const script = `#!/bin/sh\nevent=$(cat)\nname=$(printf '%s' "$event" | jq -r .toolName)\ncmd=$(printf '%s' "$event" | jq -r .toolArgs | jq -r .command)\ncase "$cmd" in *"rm -rf"*) printf '{"permissionDecision":"deny","permissionDecisionReason":"%s may not rm -rf"}' "$name";; *) printf '{"permissionDecision":"allow"}';; esac\n`;
    const workspace = await repoWith({ "guard.sh": script, ".github/hooks/guard.json": JSON.stringify({ version: 1, hooks: { preToolUse: [{ type: "command", bash: "sh guard.sh" }] } }) });
    const engine = engineFor("");
    const denied = await engine.handleEvent(request(coshBody, { workspace }));
    expect(denied).toMatchObject({ decision: "block", reason: "[repository] shell may not rm -rf" });
    expect(denied.output).toEqual({ decision: "block", reason: "[repository] shell may not rm -rf" });
    // The repository hook's allow is recorded, but untrusted code can only tighten: no decision.
    const allowed = await engine.handleEvent(request({ ...coshBody, tool_input: { command: "ls" } }, { workspace, format: "copilot" }));
    expect(allowed).toMatchObject({ decision: null, output: {} });
    expect(allowed.hooks[0]).toMatchObject({ source: "repository", decision: "allow", effective: false });
  });

  it("a block from a SessionStart hook changes nothing, but its notification and context count", async () => {
    const r = await engineFor(`[[hooks.SessionStart]]\nname = "loader"\ncommand = '''echo '{"decision":"block","systemMessage":"loaded","hookSpecificOutput":{"additional_context":"repo uses pnpm"}}' '''\n`)
      .handleEvent(request({ session_id: "s", hook_event_name: "SessionStart" }));
    expect(r.decision).toBeNull();
    expect(r.hooks[0]).toMatchObject({ decision: "block", effective: false });
    expect(r.notifications).toHaveLength(1);
    expect(r.hookSpecificOutput).toEqual({ additional_context: "repo uses pnpm" });
  });

  it("a policy block on the host stops the event before a repository hook's container starts", async () => {
    const workspace = await repoWith({ ".github/hooks/h.json": JSON.stringify({ version: 1, hooks: { preToolUse: [{ type: "command", bash: "touch /workspace/ran; echo '{}'" }] } }) });
    const r = await engineFor(`[[policy.PreToolUse]]\nname = "org-guard"\ncommand = '''echo '{"decision":"block","reason":"org policy"}' '''\n`).handleEvent(request(coshBody, { workspace }));
    expect(r).toMatchObject({ decision: "block", reason: "org policy" });
    expect(r.hooks.map((h) => h.name)).toEqual(["org-guard"]);
  });

  it("runs `parallel = true` hooks of one source together and folds block > ask > allow", async () => {
    const toml = ["[hooks]", "parallel = true", ...["allow", "ask", "block"].flatMap((d) => ["", "[[hooks.PreToolUse]]", `name = "${d}"`, `command = '''sleep 1; echo '{"decision":"${d}"}' '''`])].join("\n");
    const t0 = performance.now();
    const r = await engineFor(toml).handleEvent(request(coshBody));
    expect(r.decision).toBe("block");
    expect(r.hooks).toHaveLength(3);
    expect(performance.now() - t0).toBeLessThan(2_900); // three 1 s hooks, not one after another
  });

  it("short-circuits sequential hooks on the first block", async () => {
    const toml = `[[hooks.PreToolUse]]\nname = "a"\ncommand = '''echo '{"decision":"block","reason":"first"}' '''\n\n[[hooks.PreToolUse]]\nname = "b"\ncommand = "echo '{}'"\n`;
    const r = await engineFor(toml).handleEvent(request(coshBody));
    expect(r.hooks.map((h) => h.name)).toEqual(["a"]);
  });
});
