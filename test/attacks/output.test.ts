/**
 * Attacks through what hookbox keeps and prints, replayed against a running service: fields built
 * to make redaction backtrack (while a probe calls /healthz every 50 ms), a 1 MB session id, secrets
 * in a hook's reason, message and error, an audit log asked to grow without end, and hooks that
 * print terminal escapes for `hookbox trace`, `tail` and `forward` to pass on.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { underProbe, WORST_HEALTH_MS } from "../helpers/probe.js";
import { startService, TOKEN_A, type Service } from "../helpers/service.js";

const SECRETS = {
  openai: "sk-proj-9f8e7d6c5b4a39281706f5e4d3c2b1a0",
  github: "ghp_1234567890abcdefghijABCDEFGHIJ123456",
  password: "hunter2-correct-horse",
};
// Hooks per tool name: "stall" echoes the event and gives a 64 KiB a-a-a- reason, message and
// stderr; "secret" and "secret-box" put secrets in a reason, a message and an error; "escape"
// prints terminal escapes from the host, and from a container that blocks with them as its reason.
const CONFIG = `
[[policy.PreToolUse]]
name = "echo-policy"
matcher = "stall"
command = "cat; echo"

[[policy.PreToolUse]]
name = "long-reason"
matcher = "stall"
command = '''a=$(yes a- | tr -d '\\n' | head -c 65536); printf '%s' "$a" >&2; printf '{"decision":"block","reason":"%s","systemMessage":"%s"}' "$a" "$a"'''

[[policy.PreToolUse]]
name = "leaky-policy"
matcher = "secret"
command = '''echo '{"decision":"block","reason":"use ${SECRETS.openai}","systemMessage":"API_KEY=${SECRETS.password}"}' '''

[[policy.PreToolUse]]
name = "escape-policy"
matcher = "escape"
command = '''printf '\\033]0;pwned\\007 \\033[1A\\033[2K \\302\\23331m\\n' >&2; printf '{"systemMessage":"\\\\u001b]0;pwned\\\\u0007 \\\\u009b31m\\\\u007f"}\\n' '''

[[hooks.PreToolUse]]
name = "leaky-box"
matcher = "secret-box"
command = '''echo "API_KEY=${SECRETS.password} ${SECRETS.github}" >&2; exit 1'''

[[hooks.PreToolUse]]
name = "escape-box"
matcher = "escape"
command = '''printf '\\033]0;pwned\\007\\033[1A\\033[2K\\302\\23331m\\n'; printf '\\033]0;pwned\\007 \\033[1A\\033[2K \\302\\23331m\\n' >&2; exit 2'''
`;

const pre = (tool: string, extra: Record<string, unknown> = {}) => ({ session_id: "s", hook_event_name: "PreToolUse", tool_name: tool, tool_input: { command: "ls" }, ...extra });
const auth = { authorization: `Bearer ${TOKEN_A}` };
const getTrace = (svc: Service, id: string) => fetch(`${svc.url}/v1/events/${id}`, { headers: auth });
const aDash = (bytes: number) => "a-".repeat(bytes / 2);
const settle = () => new Promise((r) => setTimeout(r, 300)); // the trace is written after the answer
const cli = (args: string[], input?: string) =>
  spawnSync(process.execPath, ["dist/cli/main.js", ...args], { input, env: { PATH: process.env.PATH ?? "" } });

/** No C0 control but tab and newline, no DEL, no C1 control: nothing a terminal acts on. */
function expectPrintable(out: Buffer): void {
  const bad = [...out].filter((b) => b <= 0x08 || (b >= 0x0b && b <= 0x1f) || b === 0x7f);
  expect(bad).toEqual([]);
  expect(out.toString("utf8")).not.toMatch(/[\u0080-\u009f]/);
}

let svc: Service;
beforeAll(async () => {
  svc = await startService(CONFIG);
});
afterAll(() => svc.stop());

describe("redaction costs linear time over capped text", () => {
  it.each([
    ["64 KiB", 64 * 1024],
    ["1 MiB", 1024 * 1024 - 4096],
  ])("a %s a-a-a- field, echoed by a hook, stalls nothing", async (_label, bytes) => {
    const { value, ms, health } = await underProbe(svc.url, async () => {
      const res = await svc.event(pre("stall", { notes: aDash(bytes) }));
      expect(res.status).toBe(200);
      const { event_id } = (await res.json()) as { event_id: string };
      const trace = await (await getTrace(svc, event_id)).text();
      await settle();
      return trace;
    });
    expect(health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
    expect(ms).toBeLessThan(10_000);
    const t = JSON.parse(value) as { reason: string; hooks: Array<{ stdin: string; stdout: string; stderr: string; reason?: string; systemMessage?: string; truncated: Record<string, boolean> }> };
    const [echo, long] = t.hooks;
    // 4 KiB of each stream, marked cut; hook-controlled strings capped too.
    for (const s of [echo!.stdin, echo!.stdout, long!.stderr]) expect(Buffer.byteLength(s)).toBeLessThanOrEqual(4096);
    expect(echo!.truncated).toMatchObject({ stdin: true, stdout: true });
    for (const s of [echo!.stdin, echo!.stdout]) expect(s).toMatch(/^\{"session_id":"s","hook_event_name":"PreToolUse".*"notes":"(a-){1000}/);
    expect(long!.truncated.stderr).toBe(true);
    expect(long!.reason).toMatch(/^(a-)+a?…\[truncated \d+ bytes\]$/);
    expect(Buffer.byteLength(long!.reason!)).toBeLessThan(4096 + 64);
    expect(Buffer.byteLength(long!.systemMessage!)).toBeLessThan(4096 + 64);
    expect(Buffer.byteLength(t.reason)).toBeLessThan(1024 + 64);
    expect(value.length).toBeLessThan(64 * 1024);
  });
});

describe("what is kept is bounded", () => {
  it("keeps 1 KiB of a 1 MB session_id in the audit log and the trace", async () => {
    const audit = join(svc.dataDir, "audit.jsonl");
    const before = existsSync(audit) ? statSync(audit).size : 0;
    const session = aDash(1_000_000);
    const { value: id, health } = await underProbe(svc.url, async () => {
      const res = await svc.event(pre("stall", { session_id: session }));
      expect(res.status).toBe(200);
      const { event_id } = (await res.json()) as { event_id: string };
      await settle();
      return event_id;
    });
    expect(health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
    expect(statSync(audit).size - before).toBeLessThanOrEqual(64 * 1024);
    const line = svc.auditLines().find((l) => l.event_id === id)!;
    expect(line.session_id).toMatch(/^(a-)+…\[truncated 998976 bytes\]$/);
    const trace = await (await getTrace(svc, id)).text();
    expect(trace.length).toBeLessThan(64 * 1024);
    const listed = (await (await fetch(`${svc.url}/v1/events?limit=1`, { headers: auth })).json()) as { events: Array<{ session_id: string }> };
    expect(Buffer.byteLength(listed.events[0]!.session_id)).toBeLessThan(1024 + 64);
  });

  it("rotates the audit log by size, whole lines only, keeping audit_keep files", async () => {
    const small = await startService("", { server: "audit_max_bytes = 4096\naudit_keep = 2" });
    try {
      const file = (i: number) => join(small.dataDir, i === 0 ? "audit.jsonl" : `audit.jsonl.${i}`);
      const lines = (i: number) => (existsSync(file(i)) ? readFileSync(file(i), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as { session_id: string }) : []);
      const sent: string[] = [];
      for (let i = 0; i < 40; i++) {
        sent.push(`rot-${i}`);
        expect((await small.event({ hook_event_name: "Stop", session_id: `rot-${i}` })).status).toBe(200);
      }
      // Oldest to newest, .2 then .1 then the file itself: the newest lines, none lost between them.
      const kept = [2, 1, 0].flatMap((i) => lines(i).map((l) => l.session_id));
      expect(kept.length).toBeGreaterThan(20);
      expect(kept).toEqual(sent.slice(-kept.length));
      expect(existsSync(file(3))).toBe(false);
      // Lines written together in one batch are split between files at line ends.
      const burst = Array.from({ length: 20 }, (_, i) => `burst-${i}`);
      await Promise.all(burst.map((s) => small.event({ hook_event_name: "Stop", session_id: s })));
      const after = [2, 1, 0].flatMap((i) => lines(i).map((l) => l.session_id));
      expect(after).toEqual(expect.arrayContaining(burst));
      for (const i of [0, 1, 2]) expect(statSync(file(i)).size).toBeLessThanOrEqual(4096);
      expect(existsSync(file(3))).toBe(false);
    } finally {
      await small.stop();
    }
  });
});

describe("secrets in what a hook says are redacted", () => {
  it("in its reason, message and error, in the trace and the audit line", async () => {
    const ids: string[] = [];
    for (const tool of ["secret", "secret-box"]) ids.push(((await (await svc.event(pre(tool))).json()) as { event_id: string }).event_id);
    const traces = await Promise.all(ids.map(async (id) => (await getTrace(svc, id)).text()));
    const audit = JSON.stringify(svc.auditLines().filter((l) => ids.includes(l.event_id as string)));
    for (const text of [...traces, audit]) for (const secret of Object.values(SECRETS)) expect(text).not.toContain(secret);
    const [policy, box] = traces.map((t) => (JSON.parse(t) as { hooks: Array<Record<string, string>> }).hooks[0]!);
    expect(policy).toMatchObject({ reason: "use [redacted]", systemMessage: "API_KEY=[redacted]" });
    expect(box!.error).toMatch(/API_KEY=\[redacted\] \[redacted\]/);
    expect(audit).toContain("use [redacted]");
  });
});

describe("hookbox prints no terminal escapes a hook wrote", () => {
  let id: string;
  beforeAll(async () => {
    const res = (await (await svc.event(pre("escape", { tool_input: { command: "\u001b]0;in\u0007\u009b2J" } }))).json()) as { event_id: string; decision: string };
    expect(res.decision).toBe("block");
    id = res.event_id;
  });

  it("`hookbox trace`, as a tree and as JSON", () => {
    const tree = cli(["trace", id, "--url", svc.url, "--token", TOKEN_A]);
    expect(tree.status).toBe(0);
    expectPrintable(tree.stdout);
    expectPrintable(tree.stderr);
    const text = tree.stdout.toString();
    expect(text).toContain("\\x1b]0;pwned\\x07"); // shown, escaped
    expect(text).toContain("\\u009b31m");
    expect(text).toMatch(/escape-box/);
    const json = cli(["trace", id, "--json", "--url", svc.url, "--token", TOKEN_A]);
    expect(json.status).toBe(0);
    expectPrintable(json.stdout);
    expect((JSON.parse(json.stdout.toString()) as { reason: string }).reason).toContain("\u009b31m"); // the same value
  });

  it("`hookbox forward`: valid JSON for the agent, the reason escaped", () => {
    for (const format of ["claude", "codex", "cosh"]) {
      const r = cli(["forward", "--url", svc.url, "--token", TOKEN_A, "--event", "PreToolUse", "--format", format], JSON.stringify(pre("escape")));
      expectPrintable(r.stdout);
      expectPrintable(r.stderr);
      expect(() => JSON.parse(r.stdout.toString()) as unknown).not.toThrow();
      if (format === "codex") {
        expect(r.status).toBe(2);
        expect(r.stderr.toString()).toContain("\\x1b]0;pwned\\x07 \\x1b[1A\\x1b[2K \\u009b31m");
      }
    }
  });

  it("`hookbox tail`", async () => {
    const tail = spawn(process.execPath, ["dist/cli/main.js", "tail", "--url", svc.url, "--token", TOKEN_A], { env: { PATH: process.env.PATH ?? "" } });
    const chunks: Buffer[] = [];
    tail.stdout.on("data", (c: Buffer) => chunks.push(c));
    tail.stderr.on("data", (c: Buffer) => chunks.push(c));
    try {
      // Once the stream is open, a decision made elsewhere shows up as a line.
      for (let i = 0; i < 50 && !Buffer.concat(chunks).includes("pwned"); i++) {
        await svc.event(pre("escape"));
        await new Promise((r) => setTimeout(r, 100));
      }
      const out = Buffer.concat(chunks);
      expect(out.toString()).toMatch(/PreToolUse +block .*\\x1b\]0;pwned\\x07/);
      expectPrintable(out);
    } finally {
      tail.kill();
    }
  });
});
