/**
 * Attacks through what hookbox keeps and prints, replayed against a running service: fields built
 * to make redaction backtrack (while a probe calls /healthz every 50 ms), a 1 MB session id, secrets
 * in a hook's reason, message and error, an audit log asked to grow without end, hooks that
 * print terminal escapes for `hookbox trace`, `tail` and `forward` to pass on (and a repository's
 * names, matchers and warnings for `hookbox check` and `workspace push`), one tenant's flood of
 * no-hook events (against other tenants' traces, and a live follower that never reads), and a large
 * event read by hundreds of hooks; a container hook writing its output a byte at a time, and one
 * printing its wrapper's end mark and flooding past it.
 */
import { spawn, spawnSync } from "node:child_process";
import { connect } from "node:net";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { underProbe, WORST_HEALTH_MS } from "../helpers/probe.js";
import { startService, tenantsToml, TOKEN_A, TOKEN_B, type Service } from "../helpers/service.js";

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
name = "cut-error"
matcher = "cut-key"
command = '''cat >/dev/null; y=$(head -c 189 /dev/zero | tr '\\0' y); printf '%s ${SECRETS.github}\\n' "$y" >&2; exit 1'''

[[policy.PreToolUse]]
name = "cut-decision"
matcher = "cut-key"
command = '''cat >/dev/null; z=$(head -c 99 /dev/zero | tr '\\0' z); printf '{"decision":"%s ${SECRETS.github}"}' "$z"'''

[[policy.PreToolUse]]
name = "cut-url"
matcher = "cut-key"
command = '''cat >/dev/null; x=$(head -c 1000 /dev/zero | tr '\\0' x); printf '{"systemMessage":"%s postgres://u:hunter2!xyz@db/app"}' "$x"'''

[[policy.PreToolUse]]
name = "cut-reason"
matcher = "cut-key"
command = '''cat >/dev/null; x=$(head -c 1004 /dev/zero | tr '\\0' x); printf '{"decision":"block","reason":"%s ${SECRETS.github}","systemMessage":"%s ${SECRETS.github}"}' "$x" "$x"'''

[[policy.PreToolUse]]
name = "margin-echo"
matcher = "cut-margin"
command = '''sed -n 's/.*"notes":"\\([^"]*\\)".*/\\1/p' >&2'''

[[policy.PreToolUse]]
name = "escape-policy"
matcher = "escape"
command = '''printf '\\033]0;pwned\\007 \\033[1A\\033[2K \\302\\23331m\\n' >&2; printf '{"systemMessage":"\\\\u001b]0;pwned\\\\u0007 \\\\u009b31m\\\\u007f"}\\n' '''

[[policy.PreToolUse]]
name = "emoji-policy"
matcher = "emoji"
command = '''cat >/dev/null; a=$(head -c 16383 /dev/zero | tr '\\0' a); printf '{"decision":"block","reason":"%s\\360\\237\\230\\200tail"}' "$a"'''

[[policy.PreToolUse]]
name = "deep-policy"
matcher = "deep"
command = '''cat >/dev/null; s=$(head -c 100000 /dev/zero | tr '\\0' '['); e=$(head -c 100000 /dev/zero | tr '\\0' ']'); printf '{"decision":"allow","modifiedArgs":%s1%s}' "$s" "$e"'''

[[policy.PreToolUse]]
name = "wide-policy"
matcher = "wide-answer"
command = '''cat >/dev/null; awk 'BEGIN { printf "{\\"decision\\":\\"block\\",\\"reason\\":\\"wide\\""; for (i = 0; i < 16384; i++) printf ",\\"k%d\\":0", i; printf "}" }' '''

[[policy.PreToolUse]]
name = "keyset-policy"
matcher = "keyset-answer"
command = '''cat >/dev/null; awk 'BEGIN { printf "{\\"decision\\":\\"block\\",\\"reason\\":\\"keys\\",\\"a\\":["; for (i = 0; i < 20000; i++) printf "%s{\\"a%d\\":0,\\"b%d\\":0,\\"c%d\\":0,\\"d%d\\":0}", (i ? "," : ""), i, i, i, i; printf "]}" }' '''

${Array.from({ length: 100 }, (_, i) => `[[policy.PreToolUse]]
name = "loud-${i}"
matcher = "loud"
command = '''cat >/dev/null; head -c 1000000 /dev/zero | tr '\\0' e >&2; printf '{"systemMessage":"%d ' ${i}; head -c 1000000 /dev/zero | tr '\\0' m; printf '"}''''
`).join("\n")}
[[hooks.PreToolUse]]
name = "leaky-box"
matcher = "secret-box"
command = '''echo "API_KEY=${SECRETS.password} ${SECRETS.github}" >&2; exit 1'''

[[hooks.PreToolUse]]
name = "dribble-box"
matcher = "dribble"
timeout = 30000
command = '''cat >/dev/null; i=0; while [ $i -lt 30000 ]; do printf ' '; printf e >&2; i=$((i+1)); done; printf '{"decision":"block","reason":"dribbled"}' '''

[[hooks.PreToolUse]]
name = "forged-mark-box"
matcher = "forge-mark"
timeout = 30000
command = '''python3 -c '
import os, re
def parent(p):
    return int(open("/proc/%d/stat" % p).read().rsplit(")", 1)[1].split()[1])
found = set()
p = os.getpid()
for _ in range(3):
    p = parent(p)
    if p <= 1:
        break
    try:
        mem = open("/proc/%d/mem" % p, "rb", 0)
        for line in open("/proc/%d/maps" % p).read().splitlines():
            addr, perms = line.split()[:2]
            if "rw" not in perms:
                continue
            a, b = [int(x, 16) for x in addr.split("-")]
            try:
                mem.seek(a)
                data = mem.read(b - a)
            except OSError:
                continue
            found.update(m.group() for m in re.finditer(rb"(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])", data))
    except OSError:
        pass
out = os.fdopen(1, "wb", 0)
for c in found:
    out.write(c + b" 0 0" + bytes([10]))
os.execvp("yes", ["yes"])
' '''
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
  spawnSync(process.execPath, ["dist/cli/hookbox.cjs", ...args], { input, env: { PATH: process.env.PATH ?? "" } });

/** No C0 control but tab and newline, no DEL, no C1 control: nothing a terminal acts on. */
function expectPrintable(out: Buffer): void {
  const bad = [...out].filter((b) => b <= 0x08 || (b >= 0x0b && b <= 0x1f) || b === 0x7f);
  expect(bad).toEqual([]);
  expect(out.toString("utf8")).not.toMatch(/[\u0080-\u009f]/);
}

/** team-a keeps tool inputs in its traces: these attacks aim at the redaction of what is kept. */
const KEEPING = tenantsToml().replace('name = "team-a"\n', 'name = "team-a"\ntrace_tool_input = true\n');

let svc: Service;
beforeAll(async () => {
  svc = await startService(CONFIG, { tenants: KEEPING });
});
afterAll(() => svc.stop());

describe("redaction costs linear time over capped text", () => {
  it.each([
    ["64 KiB", 64 * 1024],
    ["1 MiB", 1024 * 1024 - 4096],
  ])("a %s a-a-a- field, echoed by a hook, stalls nothing", async (_label, bytes) => {
    let answeredMs = Infinity;
    const { value, health } = await underProbe(svc.url, async () => {
      const t0 = performance.now();
      const res = await svc.event(pre("stall", { notes: aDash(bytes) }));
      expect(res.status).toBe(200);
      const { event_id } = (await res.json()) as { event_id: string };
      answeredMs = performance.now() - t0;
      const trace = await (await getTrace(svc, event_id)).text();
      await settle();
      return trace;
    });
    expect(health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
    expect(answeredMs).toBeLessThan(5_000);
    const t = JSON.parse(value) as { reason: string; hooks: Array<{ stdin: string; stdout: string; stderr: string; reason?: string; systemMessage?: string; truncated: Record<string, boolean> }> };
    const [echo, long] = t.hooks;
    // 4 KiB of each stream, marked cut; hook-controlled strings capped too.
    for (const s of [echo!.stdin, echo!.stdout, long!.stderr]) expect(Buffer.byteLength(s)).toBeLessThanOrEqual(4096);
    expect(echo!.truncated).toMatchObject({ stdin: true, stdout: true });
    for (const s of [echo!.stdin, echo!.stdout]) expect(s).toMatch(/^\{"session_id":"s","hook_event_name":"PreToolUse".*"notes":"(a-){1000}/);
    expect(long!.truncated.stderr).toBe(true);
    // cut inside the one word it is: what it kept of it dropped (up to MAX_WORD_CUT_CHARS, 1024)
    expect(long!.reason).toMatch(/^…\[truncated \d+ bytes\]$/);
    expect(Buffer.byteLength(long!.reason!)).toBeLessThan(4096 + 64);
    expect(Buffer.byteLength(long!.systemMessage!)).toBeLessThan(4096 + 64);
    expect(Buffer.byteLength(t.reason)).toBeLessThan(1024 + 64);
    expect(value.length).toBeLessThan(64 * 1024);
  });
});

/** A "stall" event with `extra` in it, sent under the probe; its trace once written, as text. */
const tracedUnderProbe = async (extra: Record<string, unknown>) => {
  const { value: id, ...probed } = await decidedUnderProbe(svc, pre("stall", extra));
  return { ...probed, value: await (await getTrace(svc, id)).text() };
};

/** `body` posted to `service` under the health probe, answered 200, its trace written: its event id. */
const decidedUnderProbe = (service: Service, body: unknown) =>
  underProbe(service.url, async () => {
    const res = await service.event(body);
    expect(res.status).toBe(200);
    const { event_id } = (await res.json()) as { event_id: string };
    await settle();
    return event_id;
  });

describe("redaction of many user:password options costs linear time", () => {
  it("16 KiB of `curl -u a:b ` in the working folder and the command, echoed by a hook, stalls nothing, and every password is redacted", async () => {
    // Each match once cost the rest of its line: 16 KiB took seconds of the one thread.
    const curls = "curl -u admin:hunter2 ".repeat(Math.floor(16_384 / 22));
    const { value, ms, health } = await tracedUnderProbe({ cwd: curls, tool_input: { command: curls } });
    expect(health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
    expect(ms).toBeLessThan(10_000);
    expect(value).toContain("curl -u admin:[redacted] curl -u admin:[redacted]");
    expect(value).not.toContain("hunter2");
  });
});

describe("redaction of JSON members, a secret's number too, costs linear time", () => {
  it("a 700 KiB field of nothing but \"password\":1, (a megabyte once JSON escapes its quotes), echoed by a hook, stalls nothing and is redacted", async () => {
    const member = '"password":1,';
    const notes = member.repeat(Math.floor((700 * 1024) / member.length));
    const { value, ms, health } = await tracedUnderProbe({ notes });
    expect(health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
    expect(ms).toBeLessThan(10_000);
    const t = JSON.parse(value) as { hooks: Array<{ stdin: string }> };
    expect(t.hooks[0]!.stdin).toContain('\\"password\\":\\"[redacted]\\"');
    expect(t.hooks[0]!.stdin).not.toContain('\\"password\\":1');
  });
});

describe("a container hook's output a byte a write", () => {
  // The engine sends one frame a write it reads: thousands of 9-byte frames a socket read, which
  // the splitter must take in one pass (docker-client.ts demuxFrames), whatever piles up.
  it("is split in one pass: the answer read whole, the service answering throughout", async () => {
    const { value: res, ms, health } = await underProbe(svc.url, () => svc.event(pre("dribble")));
    expect(health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
    expect(ms).toBeLessThan(30_000);
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { decision: string; reason: string; hooks: Array<{ name: string; outcome: string }> };
    expect(answer).toMatchObject({ decision: "block", reason: "dribbled" });
    expect(answer.hooks).toEqual([expect.objectContaining({ name: "dribble-box", outcome: "exited" })]);
    expect((await fetch(`${svc.url}/healthz`)).status).toBe(200);
  });
});

describe("a container hook that prints its wrapper's end mark (the nonce read from the wrapper's memory), then floods its stdout", () => {
  // Past the mark its output is not the hook's and is not counted by the cap: without a bound on
  // the wait for the second mark, the flood ran to the hook's 30 s timeout.
  it("is read as its mark says within MARKER_GRACE_MS, the service answering throughout", async () => {
    // warm: a cold run has no wrapper and no mark
    const ready = async () => Number(/^hookbox_pool_ready (\d+)/m.exec(await (await fetch(`${svc.url}/metrics`, { headers: auth })).text())?.[1] ?? 0);
    await expect.poll(ready, { timeout: 30_000, interval: 100 }).toBeGreaterThanOrEqual(1);
    const { value: res, ms, health } = await underProbe(svc.url, () => svc.event(pre("forge-mark")));
    expect(health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { hooks: Array<{ name: string; outcome: string; warm?: boolean }> };
    // exited: it did find the nonce (without it, its flood is output_truncated at the cap)
    expect(answer.hooks).toEqual([expect.objectContaining({ name: "forged-mark-box", outcome: "exited" })]);
    expect(ms).toBeLessThan(10_000);
    expect((await fetch(`${svc.url}/healthz`)).status).toBe(200);
  });
});

describe("nesting past every parser's stack", () => {
  it("judges a hook's 100 000-deep JSON answer as invalid output, and answers the event", async () => {
    const { value: res, ms, health } = await underProbe(svc.url, () => svc.event(pre("deep")));
    expect(health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
    expect(ms).toBeLessThan(5_000);
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { hooks: Array<{ name: string; error: string | null }>; modifiedArgs?: unknown };
    expect(answer.hooks[0]).toMatchObject({ name: "deep-policy", error: expect.stringMatching(/output is nested deeper than 64 levels/) });
    expect(answer.modifiedArgs).toBeUndefined();
  });

  it("judges a hook's answer with one object of 16,386 keys past MAX_OBJECT_KEYS, and reads one of 800 KB of small objects of distinct keys, the service answering throughout", async () => {
    const { value, ms, health } = await underProbe(svc.url, async () => {
      const [wide, keyset] = await Promise.all([svc.event(pre("wide-answer")), svc.event(pre("keyset-answer"))]);
      return { wide: (await wide.json()) as { decision: unknown; hooks: Array<{ name: string; error: string | null }> }, keyset: (await keyset.json()) as { decision: unknown; reason: unknown } };
    });
    expect(health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
    expect(ms).toBeLessThan(5_000);
    expect(value.wide.hooks[0]).toMatchObject({ name: "wide-policy", error: expect.stringMatching(/output holds an object of more than 16384 keys \(MAX_OBJECT_KEYS\)/) });
    expect(value.keyset).toMatchObject({ decision: "block", reason: "keys" });
  });

  it("refuses a Copilot toolArgs string of 400 000-deep JSON with 400 naming the field", async () => {
    const toolArgs = `${"[".repeat(400_000)}${"]".repeat(400_000)}`;
    const { value: res, ms, health } = await underProbe(svc.url, () => svc.event({ toolName: "bash", toolArgs }, { path: "/v1/events/preToolUse" }));
    expect(health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
    expect(ms).toBeLessThan(5_000);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: unknown }).error).toEqual({ code: "bad_field", field: "toolArgs", message: "toolArgs: the JSON in it is nested deeper than 64 levels" });
    expect((await svc.event({ toolName: "bash", toolArgs: '{"command":"ls"}' }, { path: "/v1/events/preToolUse" })).status).toBe(200);
  });
});

describe("what is kept is bounded", () => {
  it("answers 100 hooks each printing 1 MB on both streams with 16 KiB of each message and 64 KiB of all, and keeps the traces' heads only", async () => {
    const { value, ms, health } = await underProbe(svc.url, async () => {
      const res = await svc.event(pre("loud"));
      return { status: res.status, text: await res.text() };
    });
    expect(health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
    expect(ms).toBeLessThan(30_000);
    expect(value.status).toBe(200);
    // Each message stands four times in the answer (systemMessage, output, notifications, its hook's
    // record): uncut, 100 messages of 1 MB would be 400 MB; each hook's cut at 16 KiB, 6.4 MB. The
    // first three together are capped at 64 KiB, the records at 1 KiB each.
    expect(value.text.length).toBeLessThan(3 * (64 * 1024 + 256) + 100 * 2 * 1024 + 256 * 1024);
    const answer = JSON.parse(value.text) as { event_id: string; hooks: { systemMessage: string }[]; systemMessage: string; notifications: { event: { message: string } }[] };
    expect(answer.hooks).toHaveLength(100);
    // each cut inside its one word of m: what it kept of that word dropped (up to MAX_WORD_CUT_CHARS, 1024)
    expect(answer.hooks[0]!.systemMessage).toMatch(/^0 …\[truncated \d+ bytes\]$/);
    const lines = answer.systemMessage.split("\n");
    expect(lines[0]).toMatch(/^0 m{15358}…$/);
    expect(lines.at(-1)).toMatch(/^… \d+ more left out \(an event's messages are capped at 65536 characters\)$/);
    expect(answer.notifications.at(-1)!.event.message).toMatch(/more hook notification\(s\) left out/);
    await settle();
    const trace = (await (await getTrace(svc, answer.event_id)).json()) as { hooks: Array<{ stdout: string; stderr: string; truncated: Record<string, boolean> }> };
    for (const h of trace.hooks) {
      expect(Buffer.byteLength(h.stdout)).toBeLessThanOrEqual(4096);
      expect(h.truncated).toMatchObject({ stdout: true, stderr: true });
    }
    expect((await fetch(`${svc.url}/healthz`)).status).toBe(200);
  });

  it("keeps 1 KiB of a 1 MB session_id in the audit log and the trace", async () => {
    const audit = svc.auditFile();
    const before = existsSync(audit) ? statSync(audit).size : 0;
    const session = aDash(1_000_000);
    let answeredMs = Infinity;
    const { value: id, health } = await underProbe(svc.url, async () => {
      const t0 = performance.now();
      const res = await svc.event(pre("stall", { session_id: session }));
      expect(res.status).toBe(200);
      const { event_id } = (await res.json()) as { event_id: string };
      answeredMs = performance.now() - t0;
      await settle();
      return event_id;
    });
    expect(health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
    expect(answeredMs).toBeLessThan(5_000);
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
      const file = (i: number) => small.auditFile("team-a", i);
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

  it("keeps each tenant's audit history from another tenant's flood: a file per tenant, rotated on its own", async () => {
    const small = await startService("", { server: "audit_max_bytes = 4096\naudit_keep = 1" });
    try {
      expect((await small.event({ hook_event_name: "Stop", session_id: "b-before-the-flood" }, { token: TOKEN_B })).status).toBe(200);
      // team-a's canaries and no-hook events: forty files' worth of its own lines
      for (let i = 0; i < 200; i++) expect((await small.event({ hook_event_name: "Stop", session_id: `a-flood-${i}` }, { headers: { "hookbox-canary": "1" } })).status).toBe(200);
      expect(small.auditLines("team-b").map((l) => l.session_id)).toEqual(["b-before-the-flood"]);
      expect(small.auditLines("team-a").every((l) => String(l.session_id).startsWith("a-flood-"))).toBe(true);
      expect(existsSync(small.auditFile("team-a", 2))).toBe(false);
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

describe("a key that a cut made before redaction would leave short (a hook's record, an error quoting its output)", () => {
  it("is not shown in part: a reason and message past MAX_RECORD_MESSAGE_CHARS, a stderr line past 200 characters, a decision word past 120, each with the key across the cut", async () => {
    const id = ((await (await svc.event(pre("cut-key"))).json()) as { event_id: string }).event_id;
    await settle();
    const trace = await (await getTrace(svc, id)).text();
    const hooks = (JSON.parse(trace) as { hooks: Array<Record<string, string>> }).hooks;
    const of = (name: string) => hooks.find((h) => h.name === name)!;
    // each field was cut inside the key: what it kept of it is dropped, not shown
    expect(of("cut-reason").reason).toMatch(/^x{1004} …\[truncated \d+ bytes\]$/);
    expect(of("cut-reason").systemMessage).toMatch(/^x{1004} …/);
    expect(of("cut-error").error).toMatch(/^exit 1: y{189} …$/);
    expect(of("cut-decision").error).toMatch(/z{99} …/);
    // a URL's password without its @ is no password the pattern knows: the URL goes whole
    expect(of("cut-url").systemMessage).toMatch(/^x{1000} …\[truncated \d+ bytes\]$/);
    expect(trace).not.toContain("hunter2");
    const audit = JSON.stringify(svc.auditLines().filter((l) => l.event_id === id));
    const shown = cli(["trace", id, "--url", svc.url, "--token", TOKEN_A]).stdout.toString();
    expect(shown).toMatch(/cut-reason/);
    for (const text of [trace, audit, shown]) expect(text).not.toContain(SECRETS.github.slice(0, 8));
  });
});

describe("a key the margin's cut goes through, pulled inside the capture by a secret redacted ahead of it", () => {
  const NPM = "npm_Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7d";
  it("is not shown in part in the hook's stdin or stderr kept in the trace, for any length of what stood past the cut", async () => {
    // capture_bytes (4096) plus its margin (512) are redacted: a password of about that length
    // becomes "[redacted]", and the key that stood across the margin's end moves inside the capture.
    for (const k of [0, 3, 8, 20, 35]) {
      const notes = `password=${"x".repeat(4096 + 512 - 10 - k)} ${NPM} end`;
      const res = await svc.event(pre("cut-margin", { notes }));
      expect(res.status).toBe(200);
      const { event_id } = (await res.json()) as { event_id: string };
      await settle();
      const trace = await (await getTrace(svc, event_id)).text();
      const [echo] = (JSON.parse(trace) as { hooks: Array<{ name: string; stdin: string; stderr: string }> }).hooks.filter((h) => h.name === "margin-echo");
      expect(echo!.stderr, `k=${k}`).toMatch(/^password=\[redacted\]/);
      expect(echo!.stdin, `k=${k}`).toContain('"notes":"password=[redacted]');
      expect(trace, `k=${k}`).not.toMatch(/npm_[A-Za-z0-9]/);
    }
  });
});

describe("a reason hookbox cuts mid-pair (MAX_HOOK_MESSAGE_CHARS, an emoji straddling the cut)", () => {
  it("is cut before the pair: every answer is well-formed, as a strict JSON parser (Codex's) needs to read the block", async () => {
    for (const o of [{ query: "format=codex" }, { path: "/v1/hooks/codex/PreToolUse" }, {}]) {
      const res = await svc.event(pre("emoji"), o);
      const text = await res.text();
      expect(text, JSON.stringify(o)).not.toMatch(/\\u[dD][89a-fA-F]/);
      expect(Buffer.from(text).toString() === text, JSON.stringify(o)).toBe(true); // a lone surrogate does not survive UTF-8
      expect(text, JSON.stringify(o)).toMatch(/a{100}…/);
      expect(JSON.parse(text)).toMatchObject(o.path ? { hookSpecificOutput: { permissionDecision: "deny" } } : { decision: "block" });
    }
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

  it("`hookbox check --workspace` and `hookbox workspace push`: a repository's names, matchers and warnings escaped", () => {
    const repo = mkdtempSync(join(tmpdir(), "hookbox-escapes-"));
    mkdirSync(join(repo, ".claude"));
    writeFileSync(join(repo, ".claude/settings.json"), JSON.stringify({
      hooks: {
        "\u001b]0;pwned\u0007": [{ hooks: [{ type: "command", command: "true" }] }],
        PreToolUse: [{ matcher: "x\u001b(2J)\u009b31m", hooks: [{ type: "command", command: "echo \u001b[1A\u001b[2K", "\u001b]0;key\u0007": 1 }] }],
      },
    }));
    const checked = cli(["check", "hookbox.example.toml", "--workspace", repo]);
    expect(checked.status).toBe(0);
    expectPrintable(checked.stdout);
    expectPrintable(checked.stderr);
    expect(checked.stdout.toString()).toContain("\\x1b]0;pwned\\x07"); // the unknown event's warning, escaped
    expect(checked.stdout.toString()).toContain("x\\x1b(2J)\\u009b31m"); // the matcher
    const pushed = cli(["workspace", "push", repo, "--url", svc.url, "--token", TOKEN_A]);
    expect(pushed.status).toBe(0);
    expectPrintable(pushed.stdout);
    expectPrintable(pushed.stderr);
    expect(pushed.stderr.toString()).toContain("\\x1b]0;pwned\\x07");
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

// A tenant posting events that match no hook (they skip admission: thousands a second), while it
// follows its own decisions on a stream it never reads. Traces are capped per tenant.
describe("one tenant's flood of no-hook events", () => {
  const MAX_EVENTS = 200;
  const HEAP_MB = 64;
  let flood: Service;
  beforeAll(async () => {
    // A small heap: memory that grows with the flood ends the service here, instead of hiding in
    // a heap V8 lets grow before it collects.
    flood = await startService(`[traces]\nmax_events = ${MAX_EVENTS}\n`, { env: { NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}` } });
  });
  afterAll(() => flood.stop());

  const stop = (session: string) => ({ hook_event_name: "Stop", session_id: session });
  /** `count` events of tenant A, `workers` at a time; resolves with how many were answered 200 */
  async function post(count: number, workers = 16, session = (i: number) => `flood-${i}-${"f".repeat(1000)}`): Promise<number> {
    let next = 0;
    let ok = 0;
    await Promise.all(
      Array.from({ length: workers }, async () => {
        while (next < count) {
          const res = await flood.event(stop(session(next++))).catch(async (err: Error) => {
            await new Promise((r) => setTimeout(r, 200)); // its last words reach the log
            const log = flood.logs();
            const fatal = log.indexOf("FATAL ERROR");
            throw new Error(`the service stopped answering (${err.message}):\n${fatal >= 0 ? log.slice(fatal, fatal + 200) : log.slice(-600)}`);
          });
          await res.arrayBuffer();
          if (res.status === 200) ok++;
        }
      }),
    );
    return ok;
  }
  const list = async (token: string) =>
    ((await (await fetch(`${flood.url}/v1/events?limit=500`, { headers: { authorization: `Bearer ${token}` } })).json()) as { events: Array<{ event_id: string; session_id: string }> }).events;

  it("evicts only that tenant's traces: another tenant's are still listed and readable", async () => {
    const kept: string[] = [];
    for (let i = 0; i < 3; i++) kept.push(((await (await flood.event(stop(`b-${i}`), { token: TOKEN_B })).json()) as { event_id: string }).event_id);
    const { value: ok, health } = await underProbe(flood.url, () => post(MAX_EVENTS * 5));
    expect(ok).toBe(MAX_EVENTS * 5);
    expect(health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
    await settle();
    expect((await list(TOKEN_B)).map((e) => e.event_id)).toEqual([...kept].reverse());
    for (const id of kept) {
      const res = await fetch(`${flood.url}/v1/events/${id}`, { headers: { authorization: `Bearer ${TOKEN_B}` } });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ event_id: id, tenant: "team-b" });
    }
    // The flooding tenant keeps its own newest, up to max_events.
    const own = await list(TOKEN_A);
    expect(own.length).toBe(MAX_EVENTS);
    expect(own[0]!.session_id).toMatch(/^flood-\d+-f+$/);
  });

  it("HEADs of the live stream hold no follower; at most 16 GETs follow at once", async () => {
    for (let i = 0; i < 200; i++) {
      const head = await fetch(`${flood.url}/v1/events/live`, { method: "HEAD", headers: auth });
      expect(head.status).toBe(200);
    }
    const followers = await Promise.all(Array.from({ length: 16 }, () => fetch(`${flood.url}/v1/events/live`, { headers: auth })));
    try {
      expect(followers.map((f) => f.status)).toEqual(Array(16).fill(200));
      const more = await fetch(`${flood.url}/v1/events/live`, { headers: auth });
      expect(more.status).toBe(429);
      await more.arrayBuffer();
    } finally {
      for (const f of followers) await f.body!.cancel();
    }
    // Closed followers are let go: a new one is taken again.
    await expect.poll(async () => {
      const again = await fetch(`${flood.url}/v1/events/live`, { headers: auth });
      await again.body?.cancel();
      return again.status;
    }, { timeout: 5_000 }).toBe(200);
  });

  it("a live follower that never reads holds a bounded queue, and is told what it missed", async () => {
    const follower = new AbortController();
    const res = await fetch(`${flood.url}/v1/events/live`, { headers: auth, signal: follower.signal });
    expect(res.status).toBe(200);
    try {
      await post(500); // warm up: what a flood costs whatever the follower does
      const rssBeforeKb = flood.rssKb();
      const EVENTS = 20_000;
      const { value: ok, health } = await underProbe(flood.url, () => post(EVENTS));
      expect(ok).toBe(EVENTS);
      expect(health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
      // 20 000 summaries of ~1.3 KiB queued would be ~26 MB more heap; 1000 and the socket's buffers are not.
      expect(flood.rssKb() - rssBeforeKb).toBeLessThan(HEAP_MB * 1024);
      expect((await fetch(`${flood.url}/healthz`)).status).toBe(200);

      // Catching up: the oldest were dropped and counted, nothing else lost.
      const reader = res.body!.getReader();
      let buf = "";
      let decisions = 0;
      let dropped = 0;
      let sawLast = false;
      const last = post(1, 1, () => "the-last-one");
      while (!sawLast) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += Buffer.from(value).toString();
        let nl;
        while ((nl = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (!line) continue;
          const msg = JSON.parse(line) as { type: string; count?: number; event?: { session_id: string } };
          if (msg.type === "dropped") dropped += msg.count!;
          if (msg.type === "decision") {
            decisions++;
            if (msg.event!.session_id === "the-last-one") sawLast = true;
          }
        }
      }
      await last;
      expect(sawLast).toBe(true);
      expect(dropped).toBeGreaterThan(0);
      expect(decisions + dropped).toBe(500 + EVENTS + 1);
    } finally {
      follower.abort();
    }
    // 20 000 events take some 40 s here when the machine is quiet: more than the default 60 s when it is not
  }, 180_000);
});

// An event of 400 KB read by hundreds of hooks: its trace parses and redacts that body once, not
// once per hook, and the build lets /healthz in while it runs.
describe("a large event read by many hooks", () => {
  const HOOKS = 500;
  let many: Service;
  beforeAll(async () => {
    // The first hook outlives the event's max_event_ms; the others are recorded as not run, at once.
    const policy = Array.from({ length: HOOKS }, (_, i) => `[[policy.PreToolUse]]\nname = "many-${i}"\nmatcher = "many"\ncommand = "${i === 0 ? "sleep 5" : "cat"}"\n`).join("\n");
    many = await startService(`[sandbox]\nmax_event_ms = 500\n\n${policy}`, { tenants: KEEPING });
  });
  afterAll(() => many.stop());

  it("has its trace built without stalling the service, and right", async () => {
    const body = pre("many", { api_key: SECRETS.openai, notes: aDash(400 * 1024) });
    const { value, health } = await underProbe(many.url, async () => {
      const res = await many.event(body);
      expect(res.status).toBe(200);
      const { event_id } = (await res.json()) as { event_id: string };
      const trace = await (await getTrace(many, event_id)).text();
      await settle();
      return { event_id, trace, again: await (await getTrace(many, event_id)).text() };
    });
    expect(health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
    const t = JSON.parse(value.trace) as { event_id: string; hooks: Array<{ name: string; stdin: string; outcome: string; truncated: { stdin: boolean } }> };
    expect(t.event_id).toBe(value.event_id);
    expect(t.hooks.map((h) => h.name)).toEqual(Array.from({ length: HOOKS }, (_, i) => `many-${i}`));
    for (const h of t.hooks) {
      expect(h.outcome).toBe("timed_out");
      expect(h.stdin).toBe(t.hooks[0]!.stdin); // one body, redacted once, the same for each
      expect(h.truncated.stdin).toBe(true);
    }
    expect(t.hooks[0]!.stdin).toMatch(/^\{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"many".*"notes":"(a-){1000}/);
    expect(Buffer.byteLength(t.hooks[0]!.stdin)).toBeLessThanOrEqual(4096);
    expect(t.hooks[0]!.stdin).toContain('"api_key":"[redacted]"');
    expect(value.trace).not.toContain(SECRETS.openai);
    // Built from memory first, then read from disk: the same trace.
    expect(JSON.parse(value.again)).toEqual(t);
  });
});

// Two thousand hooks named to make redaction work hardest (256 characters each, the most a name
// may have): each event's audit line redacts every name, in slices that let /healthz in.
describe("an event of two thousand hooks with hostile names", () => {
  const HOOKS = 2000;
  const NAME = `Bearer sk- ghp_ github_pat_ AKIA xoxb- AIza eyJ ${"a=b,".repeat(60)}`.slice(0, 250);
  let named: Service;
  beforeAll(async () => {
    const policy = Array.from({ length: HOOKS }, (_, i) => `[[policy.PreToolUse]]\nname = "${`${i} ${NAME}`.slice(0, 256)}"\nmatcher = "named"\ncommand = "${i === 0 ? "sleep 5" : "cat"}"\n`).join("\n");
    named = await startService(`[sandbox]\nmax_event_ms = 500\n\n${policy}`);
  });
  afterAll(() => named.stop());

  it("has its audit line built without stalling the service", async () => {
    const before = named.auditLines().length;
    const { health } = await underProbe(named.url, async () => {
      for (let i = 0; i < 3; i++) expect((await named.event(pre("named"))).status).toBe(200);
    });
    expect(health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
    const lines = named.auditLines().slice(before) as Array<{ hooks: Array<{ name: string }> }>;
    expect(lines).toHaveLength(3);
    expect(lines[0]!.hooks).toHaveLength(HOOKS);
  });
});

describe("redaction at the widest capture_bytes", () => {
  let wide: Service;
  beforeAll(async () => {
    const policy = `[[policy.PreToolUse]]\nname = "echo-both"\nmatcher = "wide"\ncommand = '''t=$(cat); printf '%s' "$t"; printf '%s' "$t" >&2'''\n`;
    // Host hooks only: no pre-started containers, whose creation (the engine's CPU) would be measured with the redactor.
    wide = await startService(`[sandbox]\npool_size = 0\n\n[traces]\ncapture_bytes = ${64 * 1024}\n\n${policy}`, { tenants: KEEPING });
  });
  afterAll(() => wide.stop());

  it("64 KiB of `token:` chained in one bare run, in the event and both streams, stalls nothing, every link redacted", async () => {
    // Each link once re-read the run to its end: 64 KiB cost a third of a second a stream, and it grows as the square.
    const notes = "token:".repeat(Math.floor((64 * 1024) / 6));
    const { value: id, health } = await decidedUnderProbe(wide, pre("wide", { notes }));
    expect(health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
    const t = JSON.parse(await (await getTrace(wide, id)).text()) as { hooks: Array<{ stdin: string; stdout: string; stderr: string }> };
    for (const s of [t.hooks[0]!.stdin, t.hooks[0]!.stdout, t.hooks[0]!.stderr]) expect(s).toContain("token:[redacted]token:[redacted]token:[redacted]");
  });
});

// Hooks printing nothing but the redactor's trigger words, which cost it a few microseconds a
// character: one event's trace redacts at most MAX_TRACE_REDACT_CHARS, the rest listed without streams.
describe("an event of four hundred hooks printing what redaction works hardest on", () => {
  const HOOKS = 400;
  let red: Service;
  beforeAll(async () => {
    const text = `$(yes 'password=a "token":"x",--secret y ' | head -c 4096 | tr -d '\\n')`;
    const command = `cat >/dev/null; t="${text}"; printf '%s' "$t" >&2; printf '%s' "$t"`;
    const policy = Array.from({ length: HOOKS }, (_, i) => `[[policy.PreToolUse]]\nname = "red-${i}"\nmatcher = "red"\ncommand = '''${command}'''\n`).join("\n");
    red = await startService(`[sandbox]\nmax_event_ms = 60000\npool_size = 0\n\n${policy}`, { tenants: KEEPING });
  });
  afterAll(() => red.stop());

  it("redacts the first hooks' streams, lists the rest without them, and the service answers throughout", async () => {
    const { MAX_TRACE_REDACT_CHARS, TRACE_FULL } = await import("../../service/records/trace-content.js");
    const { value: id, health } = await decidedUnderProbe(red, pre("red"));
    expect(health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
    const t = JSON.parse(await (await getTrace(red, id)).text()) as { hooks: Array<{ name: string; stdout: string; stderr: string }> };
    expect(t.hooks).toHaveLength(HOOKS);
    const kept = t.hooks.filter((h) => h.stdout !== TRACE_FULL);
    expect(kept[0]!.stdout).toContain("password=[redacted]");
    // each kept hook redacted about 9 KiB (two 4 KiB streams and the margin, its fields): the budget, and one hook past it
    expect(kept.length).toBeGreaterThan(MAX_TRACE_REDACT_CHARS / 12_000);
    expect(kept.length).toBeLessThan(MAX_TRACE_REDACT_CHARS / 8_000 + 2);
    expect(t.hooks.at(-1)).toMatchObject({ name: "red-399", stdout: TRACE_FULL, stderr: TRACE_FULL });
  });
});

// Hooks whose every field and stream is control characters, which JSON escaping makes six times
// longer: one event's trace is capped (MAX_TRACE_EVENT_BYTES), and it is sent as the client reads.
describe("an event of three hundred hooks printing control characters", () => {
  const HOOKS = 300;
  let ctl: Service;
  beforeAll(async () => {
    const say = `$(yes '\\u0001' | head -n 4096 | tr -d '\\n')`;
    const command = `cat >/dev/null; m="${say}"; head -c 8192 /dev/zero | tr '\\0' '\\1' >&2; printf '{"systemMessage":"%s"}' "$m"`;
    const policy = Array.from({ length: HOOKS }, (_, i) => `[[policy.PreToolUse]]\nname = "ctl-${i}"\nmatcher = "ctl"\ncommand = '''${command}'''\n`).join("\n");
    ctl = await startService(`[sandbox]\nmax_event_ms = 60000\npool_size = 0\n\n${policy}`, { tenants: KEEPING });
  });
  afterAll(() => ctl.stop());

  it("keeps a trace of at most about MAX_TRACE_EVENT_BYTES, and holds no copy of it for clients that never read", async () => {
    const { MAX_TRACE_EVENT_BYTES, TRACE_FULL } = await import("../../service/records/trace-content.js");
    const res = await ctl.event(pre("ctl"));
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { event_id: string; hooks: unknown[] };
    expect(answer.hooks).toHaveLength(HOOKS); // none decides: every one runs
    const { event_id } = answer;
    await settle();
    const text = await (await getTrace(ctl, event_id)).text();
    // whichever comes first, MAX_TRACE_EVENT_BYTES of JSON or MAX_TRACE_REDACT_CHARS redacted (here: the characters, at about 7 MiB)
    expect(text.length).toBeGreaterThan(MAX_TRACE_EVENT_BYTES / 2);
    expect(text.length).toBeLessThan(MAX_TRACE_EVENT_BYTES + 512 * 1024);
    const t = JSON.parse(text) as { hooks: Array<{ name: string; stdout: string; stderr: string }> };
    expect(t.hooks).toHaveLength(HOOKS);
    expect(t.hooks[0]!.stderr.startsWith("\u0001".repeat(64))).toBe(true);
    expect(t.hooks.at(-1)).toMatchObject({ name: "ctl-299", stdout: TRACE_FULL, stderr: TRACE_FULL });
    // Twenty clients ask for it and never read: each holds a chunk, not the trace.
    const url = new URL(ctl.url);
    const rssBeforeKb = ctl.rssKb();
    const sockets = Array.from({ length: 20 }, () => {
      const s = connect(Number(url.port), url.hostname);
      s.on("error", () => undefined);
      s.write(`GET /v1/events/${event_id} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${TOKEN_A}\r\n\r\n`);
      s.pause();
      return s;
    });
    try {
      await new Promise((r) => setTimeout(r, 2_000));
      expect(ctl.rssKb() - rssBeforeKb).toBeLessThan(64 * 1024);
      expect((await fetch(`${ctl.url}/healthz`)).status).toBe(200);
    } finally {
      for (const s of sockets) s.destroy();
    }
  });
});
