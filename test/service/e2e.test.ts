/**
 * The product as its users meet it: the real service process, HTTP, real containers.
 */
import Docker from "dockerode";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LABEL_EVENT_ID, LABEL_MANAGED } from "../../engine/names.js";
import { leftovers } from "../helpers/engine.js";
import { startService, TOKEN_A, TOKEN_B, type Service } from "../helpers/service.js";
import { tarOf } from "../helpers/tar.js";

const docker = new Docker();
const rmrf = { session_id: "s-1", hook_event_name: "PreToolUse", tool_name: "shell", tool_input: { command: "rm -rf /tmp/old" } };
const ls = { ...rmrf, tool_input: { command: "ls" } };

const CONFIG = `
[[policy.PreToolUse]]
name = "org-guard"
command = '''grep -q 'cat /etc/shadow' && echo '{"decision":"block","reason":"org policy: no shadow"}' || echo '{}' '''

[[hooks.PreToolUse]]
name = "security-check"
matcher = "shell"
command = '''
cmd=$(jq -r '.tool_input.command // empty')
case "$cmd" in
  *"rm -rf"*) echo '{"decision":"block","reason":"Dangerous rm -rf command","systemMessage":"Command blocked by security policy"}' ;;
  *) echo '{}' ;;
esac
'''

[[hooks.Stop]]
name = "first"
command = '''echo '{"systemMessage":"first hook done"}' '''

[[hooks.Stop]]
name = "slow-second"
command = '''sleep 2; echo '{"systemMessage":"second hook done"}' '''
`;

/** Containers the engine created for one event (each carries its event id). */
async function containersCreatedFor(eventId: string): Promise<number> {
  const since = Math.floor(Date.now() / 1000) - 120;
  const until = Math.floor(Date.now() / 1000) + 1;
  const filters = { type: ["container"], event: ["create"], label: [`${LABEL_MANAGED}=true`, `${LABEL_EVENT_ID}=${eventId}`] };
  const stream = (await docker.getEvents({ since, until, filters: JSON.stringify(filters) })) as NodeJS.ReadableStream;
  let text = "";
  for await (const chunk of stream) text += chunk.toString();
  return text.split("\n").filter(Boolean).length;
}

let svc: Service;
const answered = new Set<string>();
async function decide(res: Response) {
  const body = (await res.json()) as Record<string, unknown>;
  if (res.status === 200) answered.add(body.event_id as string);
  return body;
}

beforeAll(async () => {
  svc = await startService(CONFIG);
});
afterAll(async () => {
  await svc.stop();
  // Every decision of this file is in the audit log, none twice, none missing.
  const ids = svc.auditLines().map((l) => l.event_id as string);
  expect(new Set(ids).size).toBe(ids.length);
  expect(new Set(ids)).toEqual(answered);
  expect((await leftovers()).containers).toEqual([]);
});

describe("events", () => {
  it("a cosh config's PreToolUse hook blocks rm -rf and allows ls, in a container", async () => {
    const blocked = await svc.event(rmrf);
    expect(blocked.status).toBe(200);
    const b = await decide(blocked);
    expect(b).toMatchObject({
      event: "PreToolUse", decision: "block", reason: "Dangerous rm -rf command", systemMessage: "Command blocked by security policy",
      notifications: [{ type: "stream_event", event: { subtype: "hook_notification", hook_name: "security-check", message: "Command blocked by security policy", decision: "block" } }],
      output: { decision: "block", reason: "Dangerous rm -rf command", systemMessage: "Command blocked by security policy" },
      exit_code: 0,
    });
    expect(b.hooks).toEqual([
      expect.objectContaining({ name: "org-guard", source: "policy", sandbox: "host", decision: null }),
      expect.objectContaining({ name: "security-check", source: "service", sandbox: "container", decision: "block", exit_code: 0, timed_out: false, error: null }),
    ]);
    const allowed = await decide(await svc.event(ls));
    expect(allowed).toMatchObject({ decision: null, output: {}, exit_code: 0 });
  });

  it("answers in the dialect asked for, and the same point under its camelCase name", async () => {
    const copilot = await decide(await svc.event({ toolName: "shell", toolArgs: JSON.stringify({ command: "rm -rf /" }) }, { path: "/v1/events/preToolUse" }));
    expect(copilot).toMatchObject({ event: "PreToolUse", decision: "block", output: { permissionDecision: "deny", permissionDecisionReason: "Dangerous rm -rf command" } });
    const claude = await decide(await svc.event(rmrf, { query: "format=claude" }));
    expect(claude.output).toEqual({
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "Dangerous rm -rf command" },
      systemMessage: "Command blocked by security policy",
    });
  });

  it("a policy hook on the host blocks before a repository hook runs: its container never starts", async () => {
    const archive = await tarOf([{ name: ".github/hooks/h.json", content: JSON.stringify({ version: 1, hooks: { preToolUse: [{ type: "command", bash: "echo '{}'" }] } }) }]);
    expect((await fetch(`${svc.url}/v1/workspaces/policy-first`, { method: "PUT", headers: { authorization: `Bearer ${TOKEN_A}` }, body: archive })).status).toBe(200);
    const body = await decide(await svc.event({ ...ls, tool_name: "Read", tool_input: { command: "cat /etc/shadow" } }, { query: "workspace=policy-first" }));
    expect(body).toMatchObject({ decision: "block", reason: "org policy: no shadow" });
    expect((body.hooks as unknown[]).length).toBe(1);
    expect(await containersCreatedFor(body.event_id as string)).toBe(0);
    // Without the policy block the same repository hook does run, in a container.
    const ran = await decide(await svc.event({ ...ls, tool_name: "Read" }, { query: "workspace=policy-first" }));
    expect(ran.hooks).toEqual([expect.objectContaining({ source: "policy" }), expect.objectContaining({ source: "repository", sandbox: "container" })]);
    // It ran in a container of its own: a new one for this event, or a pre-started one handed to it.
    const trace = (await (await fetch(`${svc.url}/v1/events/${String(ran.event_id)}`, { headers: { authorization: `Bearer ${TOKEN_A}` } })).json()) as { hooks: { source: string; warm: boolean }[] };
    const warm = trace.hooks.find((h) => h.source === "repository")!.warm;
    expect(await containersCreatedFor(ran.event_id as string)).toBe(warm ? 0 : 1);
  });

  it("streams NDJSON: the first notification arrives before the slow second hook finishes", async () => {
    const t0 = performance.now();
    const res = await svc.event({ session_id: "s-1", hook_event_name: "Stop" }, { headers: { accept: "application/x-ndjson" } });
    expect(res.headers.get("content-type")).toMatch(/application\/x-ndjson/);
    const reader = res.body!.getReader();
    const lines: { at: number; value: Record<string, unknown> }[] = [];
    let buffer = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += Buffer.from(value).toString();
      let nl;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        lines.push({ at: performance.now() - t0, value: JSON.parse(buffer.slice(0, nl)) as Record<string, unknown> });
        buffer = buffer.slice(nl + 1);
      }
    }
    expect(lines.map((l) => l.value.type)).toEqual(["stream_event", "stream_event", "result"]);
    expect(lines[0]!.value).toEqual({ type: "stream_event", event: { subtype: "hook_notification", hook_name: "first", message: "first hook done" } });
    expect(lines[0]!.at).toBeLessThan(lines[2]!.at - 1_500); // the second hook sleeps 2 s
    const result = lines[2]!.value;
    answered.add(result.event_id as string);
    expect(result.notifications).toHaveLength(2);
  });
});

describe("workspaces", () => {
  const hookFile = {
    version: 1,
    hooks: {
      preToolUse: [
        {
          type: "command",
          // Real hooks log into the repository under set -e; this one also says whether an earlier run's log is visible.
          bash: "set -e; seen=$(test -e .github/logs/tool-use.log && echo yes || echo no); mkdir -p .github/logs; jq -r .toolName >> .github/logs/tool-use.log; if grep -qx \"$(tail -n1 .github/logs/tool-use.log)\" denied-tools.txt; then printf '{\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"listed in denied-tools.txt (log seen before: %s)\"}' $seen; else printf '{\"permissionDecision\":\"allow\",\"permissionDecisionReason\":\"log seen before: %s\"}' $seen; fi",
        },
      ],
    },
  };

  it("runs a workspace's .github/hooks/*.json in containers that read /workspace and may log there; no write survives", async () => {
    const archive = await tarOf([
      { name: ".github/hooks/audit.json", content: JSON.stringify(hookFile) },
      { name: "denied-tools.txt", content: "shell\n" },
    ], { gzip: true });
    const put = await fetch(`${svc.url}/v1/workspaces/repo-1`, { method: "PUT", headers: { authorization: `Bearer ${TOKEN_A}` }, body: archive });
    expect(put.status).toBe(200);
    const info = (await put.json()) as Record<string, unknown>;
    expect(info).toMatchObject({ id: "repo-1", files: 2, digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
    expect(info.hooks).toEqual([expect.objectContaining({ event: "PreToolUse", format: "copilot" })]);

    const first = await decide(await svc.event(rmrf, { query: "workspace=repo-1" }));
    // The service hook blocks rm -rf first; take a command it lets through to reach the repository hook.
    expect(first.decision).toBe("block");
    const denied = await decide(await svc.event(ls, { query: "workspace=repo-1" }));
    expect(denied).toMatchObject({ decision: "block", reason: "[repository] listed in denied-tools.txt (log seen before: no)" });
    expect(denied.hooks).toEqual(expect.arrayContaining([expect.objectContaining({ source: "repository", sandbox: "container", format: "copilot" })]));
    // Its allow is recorded but does not count: a repository hook can only tighten (trust tiers).
    const other = await decide(await svc.event({ ...ls, tool_name: "Read" }, { headers: { "hookbox-workspace": "repo-1" } }));
    expect(other.decision).toBeNull();
    expect(other.hooks).toEqual(expect.arrayContaining([expect.objectContaining({ source: "repository", decision: "allow", effective: false, reason: "log seen before: no" })]));

    // Nothing the hooks wrote reached the stored workspace.
    const stored = readdirSync(join(svc.dataDir, "workspaces"), { recursive: true }).map(String);
    expect(stored.some((p) => p.includes("logs"))).toBe(false);
    const listed = (await (await fetch(`${svc.url}/v1/workspaces/repo-1`, { headers: { authorization: `Bearer ${TOKEN_A}` } })).json()) as Record<string, unknown>;
    expect(listed).toMatchObject({ id: "repo-1", files: 2 });
  });

  it("refuses another tenant's workspace with 404, none of its hooks run — after the policy hooks looked, whose block is answered", async () => {
    const auditBefore = svc.auditLines().length;
    const teamBBefore = svc.auditLines("team-b").length;
    const res = await svc.event(ls, { token: TOKEN_B, query: "workspace=repo-1" });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("not_found");
    expect((await fetch(`${svc.url}/v1/workspaces/repo-1`, { headers: { authorization: `Bearer ${TOKEN_B}` } })).status).toBe(404);
    expect((await fetch(`${svc.url}/v1/workspaces/repo-1`, { method: "DELETE", headers: { authorization: `Bearer ${TOKEN_B}` } })).status).toBe(404);
    // A workspace that is not there (one whose upload failed, say) never keeps the policy hooks from looking.
    const shadow = await svc.event({ ...ls, tool_input: { command: "cat /etc/shadow" } }, { token: TOKEN_B, query: "workspace=repo-1" });
    expect(shadow.status).toBe(200);
    const blocked = (await shadow.json()) as { decision: string; reason: string; hooks: { name: string }[] };
    expect(blocked).toMatchObject({ decision: "block", reason: "org policy: no shadow" });
    expect(blocked.hooks.map((h) => h.name)).toEqual(["org-guard"]);
    // Both recorded as team-b's own events (the 404 as answered so); team-a's record untouched.
    expect(svc.auditLines().length).toBe(auditBefore);
    await expect.poll(() => svc.auditLines("team-b").length - teamBBefore).toBe(2);
    expect(svc.auditLines("team-b").at(-2)).toMatchObject({ workspace: "repo-1", answered: { why: expect.stringMatching(/^no workspace "repo-1": its repository's hooks did not run/) } });
  });

  it("deletes a workspace", async () => {
    const archive = await tarOf([{ name: "a.txt", content: "a" }]);
    await fetch(`${svc.url}/v1/workspaces/gone`, { method: "PUT", headers: { authorization: `Bearer ${TOKEN_A}` }, body: archive });
    expect((await fetch(`${svc.url}/v1/workspaces/gone`, { method: "DELETE", headers: { authorization: `Bearer ${TOKEN_A}` } })).status).toBe(204);
    expect((await fetch(`${svc.url}/v1/workspaces/gone`, { headers: { authorization: `Bearer ${TOKEN_A}` } })).status).toBe(404);
  });
});

describe("observability", () => {
  it("answers /healthz and /readyz without a token, /metrics with one", async () => {
    expect((await fetch(`${svc.url}/healthz`)).status).toBe(200);
    expect(await (await fetch(`${svc.url}/readyz`)).json()).toEqual({ ready: true, problems: [] });
    expect((await fetch(`${svc.url}/metrics`)).status).toBe(401);
    const text = await (await fetch(`${svc.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN_A}` } })).text();
    expect(text).toMatch(/^hookbox_events_total\{[^}]*decision="block"[^}]*\} \d+$/m);
    expect(text).toMatch(/^hookbox_hooks_total\{.*source="policy".*\} \d+$/m);
    expect(text).toMatch(/^hookbox_event_duration_seconds_bucket\{le="0.5"\} \d+$/m);
    expect(text).toMatch(/^hookbox_queue_depth 0$/m);
    expect(text).toMatch(/^hookbox_containers_running 0$/m);
  });

  it("with a metrics token, reads /metrics for that token alone: no tenant sees the others' figures", async () => {
    const own = await startService("", { server: 'metrics_token_env = "HOOKBOX_METRICS"', env: { HOOKBOX_METRICS: "scraper-of-the-operator" } });
    try {
      expect(own.logs()).not.toMatch(/every tenant's token reads \/metrics/);
      for (const token of [TOKEN_A, TOKEN_B]) expect((await fetch(`${own.url}/metrics`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
      const res = await fetch(`${own.url}/metrics`, { headers: { authorization: "Bearer scraper-of-the-operator" } });
      expect(res.status).toBe(200);
      expect(await res.text()).toMatch(/^hookbox_queue_depth 0$/m);
    } finally {
      await own.stop();
    }
    // without one, two tenants: said at start
    expect(svc.logs()).toMatch(/every tenant's token reads \/metrics, whose figures are all tenants' together/);
  });

  it("writes tool inputs to the audit log only when configured", async () => {
    const lines = svc.auditLines();
    expect(lines.length).toBeGreaterThan(0);
    for (const l of lines) expect(l).not.toHaveProperty("tool_input");
    expect(JSON.stringify(lines)).not.toMatch(/\/tmp\/old/);
  });

  it("keeps the server's environment away from container and policy hooks", async () => {
    const probe = await startService(`[[policy.PreToolUse]]\nname = "env-host"\ncommand = '''env | grep -q do-not-leak && echo '{"decision":"block","reason":"host leak"}' || echo '{}' '''\n\n[[hooks.PreToolUse]]\nname = "env-box"\ncommand = '''env | grep -q do-not-leak && echo '{"decision":"block","reason":"container leak"}' || echo '{"decision":"allow"}' '''\n`);
    try {
      const res = (await (await probe.event(ls)).json()) as Record<string, unknown>;
      expect(res).toMatchObject({ decision: "allow" });
    } finally {
      await probe.stop();
    }
    expect(JSON.stringify(probe.auditLines())).toMatch(/env-box/);
  });
});
