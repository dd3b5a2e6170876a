/**
 * Faults: overload, clients that go away, SIGTERM mid-run, kill -9 and restart, and the container
 * engine stopped and started again under a running service.
 */
import { execFileSync, execSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { docker, leftovers } from "../helpers/engine.js";
import { startService } from "../helpers/service.js";

const ev = { session_id: "s", hook_event_name: "PreToolUse", tool_name: "shell", tool_input: { command: "ls" } };
// These tests count containers: without a warm pool, every container they see belongs to a hook.
const sleepy = (seconds: number, timeoutMs = 60_000, sandbox = "") => `[sandbox]\npool_size = 0\n${sandbox}\n[[hooks.PreToolUse]]\nname = "sleepy"\ncommand = "sleep ${seconds}; echo '{}'"\ntimeout = ${timeoutMs}\n`;

async function until(what: () => Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await what()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return what();
}

const engineAnswers = async () => docker.ping().then(() => true, () => false);

afterAll(async () => {
  // Whatever happened above, leave an engine running for the rest of the suite.
  if (!(await engineAnswers())) execFileSync("bash", ["scripts/setup.sh"], { stdio: "inherit" });
});

describe("overload", () => {
  it("200 concurrent requests against a queue of 8 get only 200s and 429s, never a 5xx or a hang", async () => {
    const limited = await startService(sleepy(0.2, 60_000, "max_concurrency = 2\nmax_tenant_concurrency = 2\nmax_queue = 8\n"));
    try {
      const t0 = performance.now();
      const responses = await Promise.all(Array.from({ length: 200 }, () => limited.event(ev)));
      const statuses = responses.map((r) => r.status);
      expect(performance.now() - t0).toBeLessThan(30_000);
      expect(new Set(statuses)).toEqual(new Set([200, 429]));
      expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(10);
      for (const r of responses.filter((r) => r.status === 429)) {
        expect(r.headers.get("retry-after")).toMatch(/^\d+$/);
        expect(((await r.json()) as { error: { code: string } }).error.code).toBe("overloaded");
      }
      // Every answered event is in the audit log, once.
      const ids = await Promise.all(responses.filter((r) => r.status === 200).map(async (r) => ((await r.json()) as { event_id: string }).event_id));
      expect(limited.auditLines().map((l) => l.event_id).sort()).toEqual(ids.sort());
    } finally {
      await limited.stop();
    }
    expect((await leftovers()).containers).toEqual([]);
  }, 60_000);
});

describe("cancellation and shutdown", () => {
  it("a client that goes away cancels its hooks and removes their containers", async () => {
    const svc = await startService(sleepy(30));
    try {
      const controller = new AbortController();
      const kept = svc.event(ev).catch(() => undefined);
      const aborted = fetch(`${svc.url}/v1/events`, {
        method: "POST", signal: controller.signal,
        headers: { authorization: "Bearer token-of-team-a", "content-type": "application/json" }, body: JSON.stringify(ev),
      }).catch((e: unknown) => e);
      expect(await until(async () => (await leftovers()).containers.length === 2, 10_000)).toBe(true);
      controller.abort();
      await aborted;
      // One of the two containers goes at once; the other keeps running for its own client.
      expect(await until(async () => (await leftovers()).containers.length === 1, 5_000)).toBe(true);
      expect(await until(async () => svc.auditLines().some((l) => l.cancelled === true), 5_000)).toBe(true);
      void kept;
    } finally {
      await svc.stop();
    }
  }, 60_000);

  it("SIGTERM mid-run stops intake, then kills running hooks after the grace period and leaves no container", async () => {
    const svc = await startService(sleepy(30));
    const running = svc.event(ev).catch(() => undefined);
    expect(await until(async () => (await leftovers()).containers.length === 1, 10_000)).toBe(true);
    const t0 = performance.now();
    const code = await svc.stop("SIGTERM");
    expect(code).toBe(0);
    expect(performance.now() - t0).toBeLessThan(8_000); // grace 1 s, then the kill
    await running;
    expect(await leftovers()).toEqual({ containers: [], volumes: [] });
    expect(svc.logs()).toMatch(/grace period over: killing running hooks/);
  }, 60_000);

  it("after kill -9 and a restart, no container is left within 10 s", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hookbox-kill9-"));
    const first = await startService(sleepy(600), { dir });
    void first.event(ev).catch(() => undefined);
    expect(await until(async () => (await leftovers()).containers.length === 1, 10_000)).toBe(true);
    await first.stop("SIGKILL");
    expect((await leftovers()).containers).toHaveLength(1);
    const second = await startService(sleepy(600), { dir });
    try {
      expect(await until(async () => (await leftovers()).containers.length === 0, 10_000)).toBe(true);
    } finally {
      await second.stop();
    }
  }, 60_000);
});

describe("the container engine goes away and comes back", () => {
  it("keeps answering (policy hooks run; a container hook not run is hookbox not deciding), says why in /readyz, and recovers without a restart", async () => {
    const svc = await startService(
      `[[policy.PreToolUse]]\nname = "policy"\ncommand = "echo '{\\"decision\\":\\"allow\\"}'"\n\n[[hooks.PreToolUse]]\nname = "boxed"\ncommand = "echo '{\\"decision\\":\\"ask\\"}'"\n`,
    );
    try {
      expect((await (await svc.event(ev)).json()) as object).toMatchObject({ decision: "ask" });
      execSync("kill -TERM $(pidof dockerd)");
      expect(await until(async () => !(await engineAnswers()), 30_000)).toBe(true);

      const down = (await (await svc.event(ev)).json()) as { decision: string | null; note: string; hooks: Array<Record<string, unknown>> };
      // The container hook could not be run: hookbox could not decide. The tenant's failure mode is
      // allow, so the agent asks as it would — the policy hook's allow is not answered without it.
      expect(down.decision).toBeNull();
      expect(down.note).toMatch(/^hook boxed could not be run \(failed_to_start\): the allow the other hooks gave is not answered for it$/);
      expect(down.hooks).toEqual([
        expect.objectContaining({ name: "policy", outcome: "exited" }),
        expect.objectContaining({ name: "boxed", outcome: "failed_to_start", error: expect.stringMatching(/failed to start/) }),
      ]);
      await new Promise((r) => setTimeout(r, 1_100)); // past the readiness cache
      const ready = await fetch(`${svc.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(((await ready.json()) as { problems: string[] }).problems.join()).toMatch(/container engine unreachable/);

      execFileSync("bash", ["scripts/setup.sh"], { stdio: "ignore" });
      expect(await engineAnswers()).toBe(true);
      const back = (await (await svc.event(ev)).json()) as { decision: string };
      expect(back.decision).toBe("ask");
      await new Promise((r) => setTimeout(r, 1_100));
      expect((await fetch(`${svc.url}/readyz`)).status).toBe(200);
    } finally {
      await svc.stop();
    }
    // Pre-started containers the engine's stop killed, and the ones used since, are all gone.
    expect(await leftovers()).toEqual({ containers: [], volumes: [] });
  }, 120_000);
});
