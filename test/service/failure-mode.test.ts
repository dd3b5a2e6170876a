/**
 * The organisation decides what a failure means (SERVICE.md §8): `[[tenants]] on_failure`. Against
 * a running service, `hookbox forward` denies for a "block" tenant — natively, with the right exit
 * code — when hookbox answers 429 or 503, when the agent's deadline comes first, and, having been
 * told once, when hookbox is gone; an "allow" tenant passes through with a warning in each case.
 * Both forwarders go through every case: `hookbox forward` and the shell script it prints.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startService, TOKEN_A, TOKEN_B, type Service } from "../helpers/service.js";

const sha = (t: string) => createHash("sha256").update(t).digest("hex");
const cache = mkdtempSync(join(tmpdir(), "hookbox-forward-cache-"));
const script = join(cache, "forward.sh");
writeFileSync(script, execFileSync(process.execPath, ["dist/cli/hookbox.cjs", "forward", "--print-script"], { encoding: "utf8" }));
type Via = "node" | "sh";
const VIAS: Via[] = ["node", "sh"];
/** The command line of a forwarder; each keeps its own cache, so each must learn the failure mode itself. */
const forwarder = (via: Via, args: string[]): [string, string[], string] =>
  via === "node" ? [process.execPath, ["dist/cli/hookbox.cjs", "forward", ...args], join(cache, via)] : ["/bin/sh", [script, ...args], join(cache, via)];

let svc: Service;
beforeAll(async () => {
  // Four more tenants, a "block" and an "allow" one for each forwarder, whose events may hold their
  // slots for 20 s while the other tests go on.
  const more = SLEEPERS.map((token, i) => `[[tenants]]\nname = "sleeper-${i}"\ntoken_sha256 = "${sha(token)}"\non_failure = ${i % 2 === 0 ? '{ preToolUse = "block" }' : '"allow"'}\n`);
  const tenants = [`[[tenants]]\nname = "team-a"\ntoken_sha256 = "${sha(TOKEN_A)}"\non_failure = { preToolUse = "block" }\n\n[[tenants]]\nname = "team-b"\ntoken_env = "HOOKBOX_TEST_TOKEN_B"\non_failure = "allow"\n`, ...more].join("\n");
  // Events that mention "slow" hold their slot for 20 s, "careful" for 4 s; "careful" is asked
  // about first, by a policy hook that answers at once.
  const policy = [
    `[[policy.PreToolUse]]\nname = "careful"\ncommand = '''case $(cat) in *careful*) echo '{"decision":"ask","reason":"a human should look"}' ;; *) echo '{}' ;; esac'''\n`,
    `[[policy.PreToolUse]]\nname = "slow"\ncommand = "case $(cat) in *slow*) sleep 20 ;; *careful*) sleep 4 ;; esac; echo '{}'"\ntimeout = 30000\n`,
  ].join("\n");
  svc = await startService(`[sandbox]\npool_size = 0\nmax_concurrency = 6\nmax_tenant_concurrency = 1\nmax_queue = 0\n\n${policy}`, { tenants, server: "shutdown_grace_ms = 4000" });
});
afterAll(async () => {
  await svc.stop("SIGKILL");
});

const event = JSON.stringify({ toolName: "bash", toolArgs: JSON.stringify({ command: "ls" }) });
/** Tokens of the tenants whose events sleep 20 s: [block, allow] for `hookbox forward`, then for the script. */
const SLEEPERS = ["token-of-sleeper-0", "token-of-sleeper-1", "token-of-sleeper-2", "token-of-sleeper-3"];

function forward(via: Via, token: string, extra: string[] = [], body = event, cacheHome?: string): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const t0 = performance.now();
  const [file, args, cacheDir] = forwarder(via, ["--url", svc.url, "--event", "preToolUse", "--format", "copilot", ...extra]);
  const child = spawn(file, args, {
    env: { PATH: process.env.PATH ?? "", HOOKBOX_TOKEN: token, XDG_CACHE_HOME: cacheHome ?? cacheDir },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  // A forwarder that refuses its flags exits before it reads the event: its stdin may be gone.
  child.stdin.on("error", () => undefined);
  child.stdin.end(body);
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr, ms: performance.now() - t0 })));
}

/** Holds the tenant's one slot with a slow event (20 s). */
function holdSlot(token: string): void {
  void svc.event({ toolName: "bash", toolArgs: JSON.stringify({ command: "slow" }) }, { path: "/v1/events/preToolUse", token }).catch(() => undefined);
}

const denied = (r: { code: number | null; stdout: string }) => {
  expect(r.code).toBe(2);
  expect(JSON.parse(r.stdout)).toMatchObject({ permissionDecision: "deny", permissionDecisionReason: expect.stringMatching(/on_failure = block/) });
};
const passed = (r: { code: number | null; stdout: string; stderr: string }) => {
  expect(r.code).toBe(0);
  expect(JSON.parse(r.stdout)).toEqual({});
  expect(r.stderr).toMatch(/passing through: on_failure = allow/);
};

describe("usage errors", () => {
  it.each([
    ["an unknown flag", ["--bogus", "x"]],
    ["a flag without its value", ["--timeout"]],
    ["a timeout that is not a number", ["--timeout", "abc"]],
    ["a timeout of 0", ["--timeout", "0"]],
    ["a timeout under 1 ms", ["--timeout", "0.5"]],
    ["a gopher:// URL (curl would speak it)", ["--url", "gopher://127.0.0.1:6379/_FLUSHALL"]],
    ["a file:// URL", ["--url", "file:///etc/hostname"]],
    ["an empty --on-unreachable", ["--on-unreachable="]],
    ["an empty --deadline", ["--deadline="]],
    ["an --interactive that is neither true nor false", ["--interactive", "yes"]],
  ])("block as the failure mode does — the line's own deny, exit 2, the usage and the problem on stderr — the same from both forwarders: %s", async (_what, extra) => {
    for (const via of VIAS) {
      const r = await forward(via, TOKEN_A, extra);
      expect({ via, code: r.code }).toEqual({ via, code: 2 });
      expect(JSON.parse(r.stdout)).toMatchObject({ permissionDecision: "deny", permissionDecisionReason: expect.stringMatching(/: blocking \(a guard whose line is wrong lets nothing through/) });
      expect(r.stderr).toMatch(/usage: (hookbox forward|forward\.sh)/);
      expect(r.stderr).toMatch(/: blocking \(a guard whose line is wrong lets nothing through/);
    }
  });

  it("block without a token, the same from both forwarders: hookbox would refuse every call", async () => {
    for (const via of VIAS) {
      const r = await forward(via, "", []);
      expect({ via, code: r.code }).toEqual({ via, code: 2 });
      expect(JSON.parse(r.stdout)).toMatchObject({ permissionDecision: "deny" });
      expect(r.stderr).toMatch(/no token: set HOOKBOX_TOKEN \(or --token\): blocking/);
    }
  });

  it("block in cosh's way for a cosh line (its JSON at exit 0), and by exit 2 with a plain block where the format is no agent's", async () => {
    for (const via of VIAS) {
      const [file, args] = forwarder(via, ["--url", svc.url, "--event", "PreToolUse", "--bogus", "x"]);
      const cosh = spawnSync(file, args, { input: "{}", env: { PATH: process.env.PATH ?? "", HOOKBOX_TOKEN: TOKEN_A } });
      expect({ via, code: cosh.status }).toEqual({ via, code: 0 });
      expect(JSON.parse(cosh.stdout.toString())).toMatchObject({ decision: "block" });
      const [file2, args2] = forwarder(via, ["--url", svc.url, "--event", "PreToolUse", "--format", "claud"]);
      const typo = spawnSync(file2, args2, { input: "{}", env: { PATH: process.env.PATH ?? "", HOOKBOX_TOKEN: TOKEN_A } });
      expect({ via, code: typo.status }).toEqual({ via, code: 2 });
      expect(JSON.parse(typo.stdout.toString())).toMatchObject({ decision: "block" });
    }
  });

  it("never pass a flag's control characters to the terminal, in both", async () => {
    for (const via of VIAS) {
      const [file, args] = forwarder(via, ["--url", svc.url, "--event", "preToolUse", "--format", "copilot", "--x\u001b]0;pwned\u0007", "v"]);
      const r = spawnSync(file, args, { input: "{}", env: { PATH: process.env.PATH ?? "", HOOKBOX_TOKEN: TOKEN_A } });
      expect(r.status).toBe(2);
      expect([...r.stderr].filter((b) => b === 0x1b || b === 0x07)).toEqual([]);
    }
  });

  it("let the agent stop at a stop event, where a block would keep it going", async () => {
    for (const via of VIAS) {
      const [file, args] = forwarder(via, ["--url", svc.url, "--event", "agentStop", "--format", "copilot", "--bogus", "x"]);
      const r = spawnSync(file, args, { input: "{}", env: { PATH: process.env.PATH ?? "", HOOKBOX_TOKEN: TOKEN_A } });
      expect({ via, code: r.status, stdout: r.stdout.toString() }).toEqual({ via, code: 0, stdout: "{}\n" });
      expect(r.stderr.toString()).toMatch(/a block would keep the agent going/);
    }
  });
});

describe("hookbox answers, but cannot decide", () => {
  it("tells every answer the tenant's failure mode", async () => {
    const a = await svc.event(JSON.parse(event) as unknown, { path: "/v1/events/preToolUse" });
    expect(a.headers.get("hookbox-on-failure")).toBe("block");
    const b = await svc.event(JSON.parse(event) as unknown, { path: "/v1/events/preToolUse", token: TOKEN_B });
    expect(b.headers.get("hookbox-on-failure")).toBe("allow");
  });

  it.each(VIAS)("answers the failure mode before the agent's deadline (--deadline 3, a hook that sleeps 20 s), through %s", async (via) => {
    const [block, allow] = (via === "node" ? SLEEPERS.slice(0, 2) : SLEEPERS.slice(2)) as [string, string];
    // A cache of their own: the two forwarders' caches of team-a and team-b are compared later.
    const own = join(cache, `${via}-sleepers`);
    const forwardSlow = (token: string) => forward(via, token, ["--deadline", "3"], JSON.stringify({ toolName: "bash", toolArgs: JSON.stringify({ command: "slow" }) }), own);
    // One answer first: the forwarder learns the tenant's failure mode.
    expect((await forward(via, block, [], event, own)).code).toBe(0);
    // The forwarder asks hookbox to answer by its own deadline; hookbox says it could not decide in
    // time (503), and the event goes on (its slot taken for 20 s) and is recorded.
    const a = await forwardSlow(block);
    denied(a);
    expect(a.ms).toBeLessThan(3_500);
    expect(a.stderr).toMatch(/hookbox answered 503: hookbox did not decide within 2\d{3} ms/);
    // The same for an "allow" tenant passes through, with a warning.
    expect((await forward(via, allow, [], event, own)).code).toBe(0);
    const b = await forwardSlow(allow);
    passed(b);
    expect(b.ms).toBeLessThan(3_500);
  });

  it.each(VIAS)("keeps a policy hook's ask when a slower hook runs past the deadline, even for on_failure = allow, through %s", async (via) => {
    const careful = JSON.stringify({ toolName: "bash", toolArgs: JSON.stringify({ command: "careful" }) });
    const r = await forward(via, TOKEN_B, ["--deadline", "3"], careful);
    expect(r.ms).toBeLessThan(3_500);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ permissionDecision: "ask", permissionDecisionReason: expect.stringMatching(/^a human should look \(answered within 2\d{3} ms, before the agent's hook deadline; other hooks still running\)$/) });
    await slotFree(TOKEN_B);
    // The event finished later and was recorded whole.
    const list = (await (await fetch(`${svc.url}/v1/events?limit=5`, { headers: { authorization: `Bearer ${TOKEN_B}` } })).json()) as { events: { decision: string | null }[] };
    expect(list.events.some((e) => e.decision === "ask")).toBe(true);
  });

  it("429: denies for on_failure = block, passes with a warning for allow", async () => {
    holdSlot(TOKEN_A);
    holdSlot(TOKEN_B);
    await new Promise((r) => setTimeout(r, 500));
    for (const via of VIAS) {
      const a = await forward(via, TOKEN_A);
      denied(a);
      expect(a.stderr).toMatch(/hookbox answered 429/);
      const b = await forward(via, TOKEN_B);
      passed(b);
      expect(b.stderr).toMatch(/hookbox answered 429/);
    }
  });
});

/** Waits until the tenant's one run slot is free again (an event answered early goes on to its end). */
async function slotFree(token: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const res = await svc.event(JSON.parse(event) as unknown, { path: "/v1/events/preToolUse", token });
    await res.arrayBuffer();
    if (res.status === 200) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the tenant's slot stayed taken");
}

describe("an event that never ends on stdin", () => {
  it("is answered by its deadline, with the failure mode, from both forwarders: the agent's wait is never the answer", async () => {
    for (const via of VIAS) {
      const [file, args, cacheDir] = forwarder(via, ["--url", svc.url, "--event", "preToolUse", "--format", "copilot", "--timeout", "1500", "--on-unreachable", "block"]);
      const t0 = performance.now();
      const child = spawn(file, args, { env: { PATH: process.env.PATH ?? "", HOOKBOX_TOKEN: TOKEN_A, XDG_CACHE_HOME: cacheDir } });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
      child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
      child.stdin.on("error", () => undefined);
      child.stdin.write('{"toolName":"bash"'); // and never more, never ended
      const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
      const ms = performance.now() - t0;
      child.stdin.destroy();
      expect({ via, code }).toEqual({ via, code: 2 });
      expect(ms, via).toBeLessThan(6_000);
      expect(JSON.parse(stdout)).toMatchObject({ permissionDecision: "deny" });
      expect(stderr).toMatch(via === "node" ? /the event did not arrive on stdin within 1500 ms/ : /within 1500 ms/);
    }
  });
});

describe("hookbox stops", () => {
  it("503 while draining, then unreachable: the remembered failure mode applies", async () => {
    // Slow events are in flight, so SIGTERM leaves the service draining (503) for a few seconds.
    const stopped = svc.stop("SIGTERM");
    await new Promise((r) => setTimeout(r, 300));
    for (const via of VIAS) {
      const a = await forward(via, TOKEN_A);
      denied(a);
      expect(a.stderr).toMatch(/hookbox answered 503/);
      passed(await forward(via, TOKEN_B));
    }
    await stopped;
    for (const via of VIAS) {
      const gone = await forward(via, TOKEN_A);
      expect(gone.stderr).toMatch(/unreachable/);
      expect(gone.code).toBe(2);
      expect(JSON.parse(gone.stdout)).toMatchObject({ permissionDecision: "deny", permissionDecisionReason: expect.stringMatching(/on_failure = block/) });
      expect(gone.stderr).toMatch(/as hookbox last said/);
      const goneB = await forward(via, TOKEN_B);
      expect(goneB.code).toBe(0);
      expect(JSON.parse(goneB.stdout)).toEqual({});
      expect(goneB.stderr).toMatch(/passing through: on_failure = allow.*as hookbox last said|as hookbox last said.*passing through/s);
    }
    // Both keep the same file per URL + token + event.
    expect(execFileSync("ls", [join(cache, "node", "hookbox")], { encoding: "utf8" })).toBe(execFileSync("ls", [join(cache, "sh", "hookbox")], { encoding: "utf8" }));
    // Without any knowledge (another cache), the default passes through and says so.
    for (const via of VIAS) {
      const [file, args] = forwarder(via, ["--url", svc.url, "--event", "preToolUse", "--format", "copilot"]);
      const fresh = spawn(file, args, {
        env: { PATH: process.env.PATH ?? "", HOOKBOX_TOKEN: TOKEN_A, XDG_CACHE_HOME: mkdtempSync(join(tmpdir(), "hookbox-forward-empty-")) },
      });
      let err = "";
      fresh.stderr.on("data", (c: Buffer) => (err += c.toString()));
      fresh.stdin.on("error", () => undefined);
      fresh.stdin.end(event);
      const code = await new Promise((r) => fresh.on("close", r));
      expect(code).toBe(0);
      expect(err).toMatch(/no failure mode known yet/);
    }
  });
});
