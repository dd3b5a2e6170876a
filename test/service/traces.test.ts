/**
 * Traces: what each hook received and printed (up to the cap), with secrets redacted and tool
 * inputs kept only where the tenant allows; tenant-scoped; kept across a restart; gone when expired;
 * capped per tenant.
 */
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startService, TOKEN_A, TOKEN_B, type Service } from "../helpers/service.js";
import { tarOf } from "../helpers/tar.js";

const sha = (t: string) => createHash("sha256").update(t).digest("hex");
// team-a keeps tool inputs in its traces; team-b does not.
const TENANTS = `[[tenants]]\nname = "team-a"\ntoken_sha256 = "${sha(TOKEN_A)}"\ntrace_tool_input = true\n\n[[tenants]]\nname = "team-b"\ntoken_sha256 = "${sha(TOKEN_B)}"\n`;
const SECRETS = {
  openai: "sk-proj-9f8e7d6c5b4a39281706f5e4d3c2b1a0",
  github: "ghp_1234567890abcdefghijABCDEFGHIJ123456",
  password: "hunter2-correct-horse",
  bearer: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlLXNpZ25hdHVyZQ",
  envToken: "tok_live_5ecr3t5ecr3t5ecr3t",
};
const CONFIG = `
[traces]
capture_bytes = 512

[[policy.PreToolUse]]
name = "echo-policy"
command = "cat; echo; echo 'API_KEY=${SECRETS.password}' >&2"

[[hooks.PreToolUse]]
name = "echo-box"
env = { DEPLOY_TOKEN = "${SECRETS.envToken}", MODE = "strict" }
command = '''cat; echo; echo "Authorization: Bearer ${SECRETS.bearer}"; head -c 2000 /dev/zero | tr '\\0' y; echo '{"decision":"block","reason":"seen"}' >&2; exit 2'''
`;
const event = {
  session_id: "trace-session", hook_event_name: "PreToolUse", tool_name: "shell",
  tool_input: { command: `curl -H 'x-api-key: ${SECRETS.openai}' https://example.invalid`, password: SECRETS.password, note: `push with ${SECRETS.github}` },
};

let dir: string;
let svc: Service;
let id: string;
const getTrace = (s: Service, eventId: string, token = TOKEN_A) => fetch(`${s.url}/v1/events/${eventId}`, { headers: { authorization: `Bearer ${token}` } });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "hookbox-traces-"));
  svc = await startService(CONFIG, { dir, tenants: TENANTS });
  const res = (await (await svc.event(event)).json()) as { event_id: string; decision: string };
  expect(res.decision).toBe("block");
  id = res.event_id;
});
afterAll(() => svc.stop());

describe("a trace", () => {
  it("holds exactly what each hook received and printed, up to the cap, with its timings", async () => {
    const res = await getTrace(svc, id);
    expect(res.status).toBe(200);
    const t = (await res.json()) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(t).toMatchObject({ event_id: id, tenant: "team-a", event: "PreToolUse", decision: "block", session_id: "trace-session", tool_name: "shell", blocked_by: "echo-box" });
    const [policy, box] = t.hooks;
    expect(policy).toMatchObject({ name: "echo-policy", source: "policy", sandbox: "host", outcome: "exited", exit_code: 0, truncated: { stdin: false, stdout: false } });
    expect(box).toMatchObject({ name: "echo-box", source: "service", sandbox: "container", outcome: "exited", exit_code: 2, decision: "block", effective: true, rule: "cosh: exit 2 blocks with stderr as the reason" });
    // What the hook read is what it printed back (cat), and both are the event, redacted.
    expect(JSON.parse(policy.stdin)).toMatchObject({ hook_event_name: "PreToolUse", tool_name: "shell", session_id: "trace-session" });
    expect(policy.stdout).toBe(`${policy.stdin}\n`);
    expect(JSON.parse(policy.stdin).tool_input.command).toMatch(/^curl -H 'x-api-key: \[redacted\]' https:\/\/example\.invalid$/);
    // 2000 bytes printed: at most the first 512 are kept — of the word the margin's cut goes through
    // (2000 y's), no more than stood within them before the secrets ahead of it were redacted shorter.
    expect(Buffer.byteLength(box.stdout)).toBeLessThanOrEqual(512);
    expect(box.stdout).toMatch(/Authorization: Bearer \[redacted\]\ny{64,}$/);
    expect(box.truncated.stdout).toBe(true);
    expect(box.stderr).toBe('{"decision":"block","reason":"seen"}\n');
    expect(box.offset_ms).toBeGreaterThanOrEqual(policy.duration_ms);
    expect(box.duration_ms).toBeGreaterThanOrEqual(0);
    expect(typeof box.warm).toBe("boolean");
  });

  it("hides seeded secrets in the input, the output and the environment", async () => {
    const text = await (await getTrace(svc, id)).text();
    for (const secret of Object.values(SECRETS)) expect(text).not.toContain(secret);
    const t = JSON.parse(text) as { hooks: Array<{ env: Record<string, string>; stdout: string; stderr: string }> };
    // A service hook's env is the operator's: every tenant sees its names only.
    expect(t.hooks[1]!.env).toEqual({ DEPLOY_TOKEN: "[hidden]", MODE: "[hidden]" });
    expect(t.hooks[1]!.stdout).toContain("Authorization: Bearer [redacted]");
    expect(t.hooks[0]!.stderr).toBe("API_KEY=[redacted]\n");
  });

  it("leaves tool inputs, prompts, file contents and every other field but the metadata out for a tenant that does not keep them", async () => {
    // Cursor's file content, Gemini's model request, Claude's last assistant message: content whatever its name
    const extra = { content: `API=${SECRETS.password}`, llm_request: { messages: ["private plan"] }, last_assistant_message: "private plan", command: "cat .env" };
    const res = (await (await svc.event({ ...event, ...extra }, { token: TOKEN_B })).json()) as { event_id: string };
    const t = (await (await getTrace(svc, res.event_id, TOKEN_B)).json()) as { hooks: Array<{ stdin: string }> };
    const stdin = JSON.parse(t.hooks[0]!.stdin) as Record<string, unknown>;
    expect(stdin).toMatchObject({ tool_input: "[omitted]", session_id: "trace-session", hook_event_name: "PreToolUse", tool_name: "shell" });
    for (const k of Object.keys(extra)) if (k in stdin) expect(stdin[k]).toBe("[omitted]");
    expect(t.hooks[0]!.stdin).not.toContain("private plan");
    expect(t.hooks[0]!.stdin).not.toContain("cat .env");
  });

  it("is 404 for another tenant, and absent from its listing", async () => {
    expect((await getTrace(svc, id, TOKEN_B)).status).toBe(404);
    const list = (await (await fetch(`${svc.url}/v1/events`, { headers: { authorization: `Bearer ${TOKEN_B}` } })).json()) as { events: Array<{ event_id: string }> };
    expect(list.events.map((e) => e.event_id)).not.toContain(id);
  });

  it("is listed newest first, filtered by session and decision, and paged", async () => {
    for (const s of ["other-1", "other-2"]) await svc.event({ ...event, session_id: s, hook_event_name: "SessionStart" });
    const auth = { authorization: `Bearer ${TOKEN_A}` };
    const bySession = (await (await fetch(`${svc.url}/v1/events?session_id=trace-session`, { headers: auth })).json()) as { events: Array<{ event_id: string }> };
    expect(bySession.events.map((e) => e.event_id)).toEqual([id]);
    const blocks = (await (await fetch(`${svc.url}/v1/events?decision=block`, { headers: auth })).json()) as { events: Array<{ decision: string }> };
    expect(blocks.events.every((e) => e.decision === "block")).toBe(true);
    const page1 = (await (await fetch(`${svc.url}/v1/events?limit=2`, { headers: auth })).json()) as { events: Array<{ session_id: string }>; next_cursor: string };
    expect(page1.events.map((e) => e.session_id)).toEqual(["other-2", "other-1"]);
    const page2 = (await (await fetch(`${svc.url}/v1/events?limit=2&cursor=${page1.next_cursor}`, { headers: auth })).json()) as { events: Array<{ event_id: string }>; next_cursor: null };
    expect(page2.events.map((e) => e.event_id)).toEqual([id]);
    expect(page2.next_cursor).toBeNull();
    expect((await fetch(`${svc.url}/v1/events?decision=maybe`, { headers: auth })).status).toBe(400);
  });

  it("prints as a tree with `hookbox trace`", () => {
    const r = spawnSync(process.execPath, ["dist/cli/main.js", "trace", id, "--url", svc.url], { encoding: "utf8", env: { PATH: process.env.PATH, HOOKBOX_TOKEN: TOKEN_A } });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^${id}  PreToolUse  decision: block`));
    expect(r.stdout).toMatch(/├─ echo-policy  policy\/host  cosh  exited 0/);
    expect(r.stdout).toMatch(/└─ echo-box  service\/container.*exited 2  → block.*⟵ blocked here/);
    expect(r.stdout).toMatch(/rule: cosh: exit 2 blocks with stderr as the reason/);
  });

  it("follows new decisions live with `hookbox tail`", async () => {
    const tail = spawn(process.execPath, ["dist/cli/main.js", "tail", "--url", svc.url], { env: { PATH: process.env.PATH, HOOKBOX_TOKEN: TOKEN_A } });
    let out = "";
    tail.stdout.on("data", (c: Buffer) => (out += c.toString()));
    try {
      // Once the stream is open, a decision made elsewhere shows up as a line.
      for (let i = 0; i < 50 && !(await svc.event({ session_id: "tailed", hook_event_name: "Stop" }).then(() => out.includes("Stop"))); i++) await new Promise((r) => setTimeout(r, 100));
      expect(out).toMatch(/evt_[0-9a-f]+  Stop +pass +0 hook\(s\) \d+ ms/);
    } finally {
      tail.kill();
    }
  });

  it("shows a repository hook's env values redacted, and a secret-named one as [redacted] whatever its value", async () => {
    const toml = `[[hooks.PostToolUse]]\nname = "repo-env"\ncommand = "true"\nenv = { DB_PASSWORD = "plainvalue1", GITHUB_TOKEN = "plainvalue2", MODE = "fast" }\n`;
    const auth = { authorization: `Bearer ${TOKEN_A}` };
    const put = await fetch(`${svc.url}/v1/workspaces/envs`, { method: "PUT", headers: auth, body: await tarOf([{ name: ".copilot-shell/config.toml", content: toml }]) });
    expect(put.status).toBe(200);
    // PostToolUse: no service hook blocks before the repository's runs
    const res = (await (await svc.event({ ...event, session_id: "repo-env", hook_event_name: "PostToolUse" }, { query: "workspace=envs" })).json()) as { event_id: string };
    const t = (await (await getTrace(svc, res.event_id)).json()) as { hooks: Array<{ name: string; env: Record<string, string> }> };
    expect(t.hooks.find((h) => h.name === "repo-env")!.env).toEqual({ DB_PASSWORD: "[redacted]", GITHUB_TOKEN: "[redacted]", MODE: "fast" });
  });

  it("survives a restart, as do stored workspaces and their digests", async () => {
    const auth = { authorization: `Bearer ${TOKEN_A}` };
    const put = (await (await fetch(`${svc.url}/v1/workspaces/kept`, { method: "PUT", headers: auth, body: await tarOf([{ name: "a.txt", content: "a" }]) })).json()) as { digest: string };
    await svc.stop();
    svc = await startService(CONFIG, { dir, tenants: TENANTS });
    expect((await getTrace(svc, id)).status).toBe(200);
    expect(await (await fetch(`${svc.url}/v1/workspaces/kept`, { headers: auth })).json()).toMatchObject({ id: "kept", files: 1, digest: put.digest });
  });
});

it("expires on time", async () => {
  const short = await startService(`[traces]\nretention_ms = 1500\n\n[[policy.Stop]]\nname = "p"\ncommand = "echo '{}'"\n`);
  try {
    const { event_id } = (await (await short.event({ hook_event_name: "Stop" })).json()) as { event_id: string };
    expect((await getTrace(short, event_id)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2_000));
    expect((await getTrace(short, event_id)).status).toBe(404);
  } finally {
    await short.stop();
  }
});

it("keeps max_events per tenant: one tenant's newest never push out another's, after a restart too", async () => {
  const capped = mkdtempSync(join(tmpdir(), "hookbox-traces-capped-"));
  const listed = async (s: Service, token: string) =>
    ((await (await fetch(`${s.url}/v1/events`, { headers: { authorization: `Bearer ${token}` } })).json()) as { events: Array<{ session_id: string }> }).events.map((e) => e.session_id);
  let s = await startService(`[traces]\nmax_events = 3\n`, { dir: capped, tenants: TENANTS });
  try {
    for (const i of [1, 2]) await s.event({ hook_event_name: "Stop", session_id: `b-${i}` }, { token: TOKEN_B });
    for (const i of [1, 2, 3, 4, 5]) await s.event({ hook_event_name: "Stop", session_id: `a-${i}` });
    expect(await listed(s, TOKEN_A)).toEqual(["a-5", "a-4", "a-3"]);
    expect(await listed(s, TOKEN_B)).toEqual(["b-2", "b-1"]);
    await s.stop();
    s = await startService(`[traces]\nmax_events = 2\n`, { dir: capped, tenants: TENANTS });
    expect(await listed(s, TOKEN_A)).toEqual(["a-5", "a-4"]);
    expect(await listed(s, TOKEN_B)).toEqual(["b-2", "b-1"]);
  } finally {
    await s.stop();
  }
});

it("are read after the port opens at a restart: events are answered while stored traces are still being read; the listing waits for them, then holds them", async () => {
  const kept = mkdtempSync(join(tmpdir(), "hookbox-traces-late-"));
  const list = async (s: Service, query = "") =>
    (await (await fetch(`${s.url}/v1/events${query}`, { headers: { authorization: `Bearer ${TOKEN_A}` } })).json()) as { events: Array<{ session_id: string }>; next_cursor: string | null };
  let s = await startService("", { dir: kept, tenants: TENANTS });
  const first = (await (await s.event({ hook_event_name: "Stop", session_id: "a-1" })).json()) as { event_id: string };
  await s.event({ hook_event_name: "Stop", session_id: "a-2" });
  await s.stop();
  // A stored trace that takes as long to read as the test wants: a pipe nobody writes to yet.
  const [tenantDir] = readdirSync(join(kept, "data", "traces"));
  const folder = join(kept, "data", "traces", tenantDir!);
  const stored = JSON.parse(readFileSync(join(folder, `${first.event_id}.json`), "utf8")) as { event_id: string; session_id: string; time: string };
  const slow = join(folder, "evt_stored-slowly.json");
  expect(spawnSync("mkfifo", [slow]).status).toBe(0);
  // Read before listening, it held the port closed: the start never finished.
  s = await startService("", { dir: kept, tenants: TENANTS });
  try {
    expect((await s.event({ hook_event_name: "Stop", session_id: "a-3" })).status).toBe(200);
    const listing = list(s);
    expect(await Promise.race([listing.then(() => "listed"), new Promise((r) => setTimeout(() => r("waiting"), 500))])).toBe("waiting");
    const older = { ...stored, event_id: "evt_stored-slowly", session_id: "stored-slowly", time: new Date(Date.parse(stored.time) - 1_000).toISOString() };
    await writeFile(slow, JSON.stringify(older));
    expect((await listing).events.map((e) => e.session_id)).toEqual(["a-3", "a-2", "a-1", "stored-slowly"]);
    // One order for the old and the new: pages neither skip nor repeat.
    const page = await list(s, "?limit=2");
    const rest = await list(s, `?limit=2&cursor=${page.next_cursor!}`);
    expect([...page.events, ...rest.events].map((e) => e.session_id)).toEqual(["a-3", "a-2", "a-1", "stored-slowly"]);
  } finally {
    await s.stop();
  }
});
