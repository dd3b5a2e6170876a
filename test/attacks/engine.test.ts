/**
 * Attacks through the engine and the host, replayed against a running service: a container engine
 * that stops answering (dockerd paused with SIGSTOP) under a cold and a warm run, a hook that fills
 * /workspace, a policy hook that escapes its process group with setsid, a second service on the
 * same data_dir, and SIGTERM with a warm pool and a hook running. Each is answered in bounded time,
 * and nothing of the hook or of hookbox is left behind.
 */
import { execFile, execFileSync, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { LABEL_MANAGED } from "../../engine/names.js";
import { docker, leftovers } from "../helpers/engine.js";
import { underProbe, WORST_HEALTH_MS } from "../helpers/probe.js";
import { freePort, startService, tenantsToml, TOKEN_A, TOKEN_B, type Service } from "../helpers/service.js";
import { tarOf } from "../helpers/tar.js";

const pre = { session_id: "s", hook_event_name: "PreToolUse", tool_name: "shell", tool_input: { command: "ls" } };

interface Answer {
  status: number;
  body: { decision: string | null; reason?: string; systemMessage?: string; hooks: Array<{ name: string; outcome: string; error: string | null; systemMessage?: string }> };
}

async function answer(res: Response): Promise<Answer> {
  return { status: res.status, body: (await res.json()) as Answer["body"] };
}

async function until(what: () => Promise<boolean> | boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await what()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return what();
}

async function poolReady(svc: Service): Promise<number> {
  const text = await (await fetch(`${svc.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN_A}` } })).text();
  return Number(/^hookbox_pool_ready (\d+)/m.exec(text)?.[1] ?? 0);
}

const started: Service[] = [];
async function service(config: string, opts: Parameters<typeof startService>[1] = {}): Promise<Service> {
  const svc = await startService(config, opts);
  started.push(svc);
  return svc;
}
afterEach(async () => {
  for (const svc of started.splice(0)) await svc.stop();
});

describe("a container engine that stops answering", () => {
  const dockerd = () => Number(execFileSync("pidof", ["dockerd"]).toString().trim().split(/\s+/)[0]);
  let paused: number | undefined;
  const resume = () => {
    if (paused !== undefined) process.kill(paused, "SIGCONT");
    paused = undefined;
  };
  afterAll(resume);

  const config = (poolSize: number) => `
[sandbox]
engine_timeout_ms = 2000
pool_size = ${poolSize}

[[hooks.PreToolUse]]
name = "boxed"
command = "cat > /dev/null; echo '{\\"systemMessage\\":\\"ran\\"}'"
timeout = 2000
`;

  it.each([
    ["cold", 0, "failed_to_start", /container engine did not answer within 2000 ms/],
    // the wrapper's start line never comes through: hookbox did not run the hook (never its timeout)
    ["warm", 1, "failed_to_start", /did not say its hook started within the run's time .*the container engine stopped passing on its output/],
  ])("a %s run is answered within 5 s under its format's rule, /healthz stays fast, and the next event runs", async (_mode, poolSize, outcome, error) => {
    const svc = await service(config(poolSize));
    if (poolSize > 0) expect(await until(async () => (await poolReady(svc)) >= 1, 30_000)).toBe(true);
    paused = dockerd();
    try {
      process.kill(paused, "SIGSTOP");
      const { value, ms, health } = await underProbe(svc.url, async () => answer(await svc.event(pre)));
      expect(value.status).toBe(200);
      // cosh: a hook that failed or timed out passes through.
      expect(value.body.decision).toBeNull();
      expect(value.body.hooks).toEqual([expect.objectContaining({ name: "boxed", outcome })]);
      expect(value.body.hooks[0]!.error).toMatch(error);
      expect(ms).toBeLessThan(5_000);
      expect(health.failures).toBe(0);
      expect(health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
      // Readiness says why, in bounded time.
      const t0 = performance.now();
      const ready = await fetch(`${svc.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(((await ready.json()) as { problems: string[] }).problems).toContain("container engine did not answer within 2000 ms");
      expect(performance.now() - t0).toBeLessThan(3_000);
    } finally {
      resume();
    }
    const next = await answer(await svc.event(pre));
    expect(next.body.hooks).toEqual([expect.objectContaining({ name: "boxed", outcome: "exited", systemMessage: "ran" })]);
    // Readiness is cached for a second: it comes back with the engine.
    expect(await until(async () => (await fetch(`${svc.url}/readyz`)).status === 200, 5_000)).toBe(true);
    expect(await svc.stop()).toBe(0);
    // What the engine did late (a creation asked for before the pause) is removed too.
    expect(await until(async () => (await leftovers()).containers.length === 0, 15_000)).toBe(true);
  }, 60_000);

  it("a creation given up on that the engine makes while hookbox stops is removed before it exits", async () => {
    const svc = await service(config(0));
    paused = dockerd();
    let exited: Promise<number | null>;
    try {
      process.kill(paused, "SIGSTOP");
      const { body } = await answer(await svc.event(pre));
      expect(body.hooks).toEqual([expect.objectContaining({ name: "boxed", outcome: "failed_to_start" })]);
      // The engine comes back only once hookbox is stopping: what it was asked before, it does now.
      exited = svc.stop();
      await new Promise((r) => setTimeout(r, 300));
    } finally {
      resume();
    }
    expect(await exited).toBe(0);
    // Nothing removes a container after hookbox is gone: what is there a few seconds on stays.
    await new Promise((r) => setTimeout(r, 3_000));
    expect((await leftovers()).containers).toEqual([]);
  }, 60_000);
});

describe("a repository's own container limits", () => {
  it("run its hooks cold and never become pool shapes of their own: the shared pool stays everyone's", async () => {
    const svc = await service(`[sandbox]\npool_size = 1\npool_max = 8\n`);
    // Eight hooks, each lowering max_output_bytes differently: eight shapes, were they pooled.
    const toml = [
      ...Array.from({ length: 8 }, (_, i) => `[[hooks.PreToolUse]]\nname = "own-${i}"\ncommand = "cat >/dev/null; echo '{}'"\nmax_output_bytes = ${4096 + i}\n`),
      `[[hooks.PreToolUse]]\nname = "plain"\ncommand = "cat >/dev/null; echo '{}'"\n`,
    ].join("\n");
    const put = await fetch(`${svc.url}/v1/workspaces/own-limits`, { method: "PUT", headers: { authorization: `Bearer ${TOKEN_A}` }, body: await tarOf([{ name: ".copilot-shell/config.toml", content: toml }]) });
    expect(put.status, await put.clone().text()).toBe(200);
    expect(await until(async () => (await poolReady(svc)) >= 1, 30_000)).toBe(true);
    const { status, body } = await answer(await svc.event(pre, { query: "workspace=own-limits" }));
    expect(status).toBe(200);
    expect(body.hooks.map((h) => h.outcome)).toEqual(Array(9).fill("exited"));
    const trace = (await (await fetch(`${svc.url}/v1/events/${(body as unknown as { event_id: string }).event_id}`, { headers: { authorization: `Bearer ${TOKEN_A}` } })).json()) as { hooks: { name: string; warm: boolean }[] };
    expect(trace.hooks.filter((h) => h.warm).map((h) => h.name)).toEqual(["plain"]);
    // What the pool holds afterwards: the operator's one shape, refilled — not a container per lowered limit.
    await new Promise((r) => setTimeout(r, 3_000));
    expect(await poolReady(svc)).toBeLessThanOrEqual(2);
    const managed = await docker.listContainers({ filters: JSON.stringify({ label: [`${LABEL_MANAGED}=true`] }) });
    expect(managed.length).toBeLessThanOrEqual(2);
  }, 90_000);
});

describe("a hook that fills /workspace", () => {
  const TMP_BYTES = 64 * 1024 * 1024;
  const SLACK_BYTES = 4 * 1024 * 1024;
  // Copilot format: the hook says how its write ended in its deny reason.
  const hookFile = {
    version: 1,
    hooks: {
      preToolUse: [{
        type: "command",
        timeoutSec: 30,
        bash: "head -c 400000000 /dev/zero > big 2>/tmp/err; rc=$?; sleep 1; printf '{\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"rc=%s size=%s %s\"}' $rc $(wc -c < big) \"$(tr -d '\\n\"' </tmp/err)\"",
      }],
    },
  };

  /** Bytes under `dir` (tmpfs mounts included: du crosses into them). */
  const du = (dir: string) => new Promise<number>((resolve) => {
    execFile("du", ["-sb", dir], (_err, stdout) => resolve(Number(String(stdout).split("\t")[0]) || 0));
  });

  /**
   * Bytes a running hookbox container holds in its /workspace, seen from the host through its
   * init's root (a pooled container's /workspace is a tmpfs of its own, not under the scratch folder).
   */
  const containerWorkspaces = async () => {
    let bytes = 0;
    for (const { Id } of await docker.listContainers({ filters: JSON.stringify({ label: [`${LABEL_MANAGED}=true`], status: ["running"] }) })) {
      const pid = (await docker.getContainer(Id).inspect().catch(() => undefined))?.State.Pid;
      if (pid) bytes = Math.max(bytes, await du(`/proc/${pid}/root/workspace`));
    }
    return bytes;
  };

  it.each([
    ["cold", "the host's scratch folder: the overlay's upper layer", 0],
    ["warm", "the container's own /workspace tmpfs", 1],
  ])("gets a write error %s, and what it wrote never grows past tmp_size (%s)", async (round, _where, poolSize) => {
    const svc = await service(`[sandbox]\npool_size = ${poolSize}\n`);
    const archive = await tarOf([{ name: ".github/hooks/fill.json", content: JSON.stringify(hookFile) }, { name: "README.md", content: "hi\n" }], { gzip: true });
    const put = await fetch(`${svc.url}/v1/workspaces/fill`, { method: "PUT", headers: { authorization: `Bearer ${TOKEN_A}` }, body: archive });
    expect(put.status).toBe(200);
    const scratch = join(svc.dataDir, "scratch");
    // One pool for every workspace: the container started before the upload serves it.
    if (round === "warm") expect(await until(async () => (await poolReady(svc)) >= 1, 30_000)).toBe(true);
    let running = true;
    let maxBytes = 0;
    const measuring = (async () => {
      while (running) {
        maxBytes = Math.max(maxBytes, round === "cold" ? await du(scratch) : await containerWorkspaces());
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const { value, ms, health } = await underProbe(svc.url, async () => answer(await svc.event(pre, { query: "workspace=fill" })));
    running = false;
    await measuring;
    expect(value.body.decision).toBe("block");
    const m = /^\[repository\] rc=(\d+) size=(\d+)/.exec(value.body.reason ?? "");
    expect(m, value.body.reason).not.toBeNull();
    expect(Number(m![1])).not.toBe(0);
    expect(Number(m![2])).toBeLessThanOrEqual(TMP_BYTES);
    expect(value.body.reason).toMatch(/No space left on device|File too large|^\[repository\] rc=153 /);
    // The measurement saw the write (it is not measuring nothing) and never more than the bound.
    expect(maxBytes).toBeGreaterThan(TMP_BYTES / 2);
    expect(maxBytes).toBeLessThanOrEqual(TMP_BYTES + SLACK_BYTES);
    expect(health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
    expect(ms).toBeLessThan(5_000);
    expect(await svc.stop()).toBe(0);
    expect(readdirSync(scratch)).toEqual([]);
    expect(readFileSync("/proc/self/mountinfo", "utf8")).not.toContain(scratch);
  }, 90_000);
});

describe("a policy hook that calls setsid", () => {
  /** Processes whose command line holds `marker`. */
  const holding = (marker: string) =>
    readdirSync("/proc").filter((p) => /^\d+$/.test(p)).filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker);
      } catch {
        return false;
      }
    });

  it("is answered when its command ends, and nothing it started is left 3 s later", async () => {
    const marker = `hookbox-setsid-${randomUUID()}`;
    const svc = await service(`
[[policy.PreToolUse]]
name = "escaper"
command = "setsid sh -c 'sleep 30; : ${marker}' & sleep 0.2; echo '{}'"
timeout = 10000
`);
    expect(svc.logs()).not.toMatch(/no PID namespace for policy hooks/);
    const { value: res, ms, health } = await underProbe(svc.url, async () => answer(await svc.event(pre)));
    expect(res.body.hooks).toEqual([expect.objectContaining({ name: "escaper", outcome: "exited" })]);
    expect(ms).toBeLessThan(2_000);
    expect(health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
    await new Promise((r) => setTimeout(r, 3_000));
    expect(holding(marker)).toEqual([]);
  }, 30_000);
});

describe("two services on one data_dir", () => {
  const slow = `
[sandbox]
pool_size = 1

[[hooks.PreToolUse]]
name = "slow"
command = "sleep 3; echo '{\\"systemMessage\\":\\"first still runs\\"}'"
timeout = 20000
`;

  it("the second refuses to start, naming the data_dir and the first one's pid; a stale lock is taken over", async () => {
    const first = await service(slow);
    expect(await until(async () => (await poolReady(first)) >= 1, 30_000)).toBe(true);
    const running = first.event(pre).then(answer);
    await new Promise((r) => setTimeout(r, 500));
    // The first one answers throughout: the second touches none of what it holds.
    const { value: second, health } = await underProbe(first.url, () => startService(slow, { dir: first.dir }).then(
      (svc) => { started.push(svc); return "started"; },
      (err: Error) => err.message,
    ));
    expect(health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
    expect(second).toMatch(/^service exited 2:/);
    expect(second).toContain(`data_dir ${first.dataDir} is in use by another hookbox process (pid ${first.proc.pid}`);
    // The first one's containers were left alone: its running hook and its pool.
    const ran = await running;
    const stillRuns = [expect.objectContaining({ name: "slow", outcome: "exited", systemMessage: "first still runs" })];
    expect(ran.body.hooks).toEqual(stillRuns);
    expect((await answer(await first.event(pre))).body.hooks).toEqual(stillRuns);

    // After kill -9 the lock is stale: the next service takes it over and clears what the first left.
    await first.stop("SIGKILL");
    const third = await service(slow, { dir: first.dir });
    expect(third.logs()).toMatch(/took over the data_dir lock/);
    expect((await answer(await third.event(pre))).body.hooks).toEqual(stillRuns);
  }, 90_000);

  it("two replicas whose data_dirs have one path on different filesystems (each its own volume, its own pid namespace, one engine) leave each other's containers alone", async () => {
    const first = await service(slow);
    expect(await until(async () => (await poolReady(first)) >= 1, 30_000)).toBe(true);
    const running = first.event(pre).then(answer);
    await new Promise((r) => setTimeout(r, 500));
    // The second: a folder of its own mounted at the first one's path, in namespaces of its own —
    // what a second container with its own volume at the same path sees.
    const own = mkdtempSync(join(tmpdir(), "hookbox-svc-"));
    writeFileSync(join(own, "hookbox.toml"), readFileSync(join(first.dir, "hookbox.toml")));
    const listen = `127.0.0.1:${await freePort()}`;
    const second = spawn("unshare", ["--pid", "--fork", "--mount-proc", "sh", "-c", 'mount --bind "$1" "$2" && exec "$3" dist/service/main.js --config "$2/hookbox.toml" --listen "$4"', "sh", own, first.dir, process.execPath, listen], {
      env: { PATH: process.env.PATH ?? "", HOOKBOX_TEST_TOKEN_B: TOKEN_B },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    for (const s of [second.stdout!, second.stderr!]) s.on("data", (c: Buffer) => (out += c.toString()));
    const exited = new Promise((r) => second.once("exit", r));
    try {
      expect(await until(() => out.includes("hookbox listening"), 30_000), out).toBe(true);
      // It holds its own lock, in its own folder, and took none of the first one's containers for leftovers.
      expect(existsSync(join(own, "data", "hookbox.lock"))).toBe(true);
      expect(out).not.toMatch(/removed leftover hook containers/);
      const stillRuns = [expect.objectContaining({ name: "slow", outcome: "exited", systemMessage: "first still runs" })];
      expect((await running).body.hooks).toEqual(stillRuns);
      expect((await answer(await first.event(pre))).body.hooks).toEqual(stillRuns);
    } finally {
      // unshare passes no signal on: the service (its child) is stopped itself, and waited for.
      const child = Number(execFileSync("pgrep", ["-P", String(second.pid)]).toString().trim());
      process.kill(child, "SIGTERM");
      await exited;
    }
  }, 90_000);
});

describe("SIGTERM", () => {
  it("with a warm pool and a hook running, leaves no container and no volume", async () => {
    const svc = await service(`
[sandbox]
pool_size = 2

[[hooks.PreToolUse]]
name = "long"
command = "sleep 30; echo '{}'"
timeout = 60000
`);
    expect(await until(async () => (await poolReady(svc)) >= 2, 30_000)).toBe(true);
    const running = svc.event(pre).catch(() => undefined);
    // The hook runs in a pooled container; its replacement starts after it, so wait a little.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await svc.stop("SIGTERM")).toBe(0);
    await running;
    expect(await leftovers()).toEqual({ containers: [], volumes: [] });
    expect(existsSync(join(svc.dataDir, "hookbox.lock"))).toBe(false);
  }, 60_000);
  it("while it starts, its pre-started containers asked for and its port not yet open: taken up once it is up — exit 0, no container, no lock left", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hookbox-svc-"));
    writeFileSync(join(dir, "hookbox.toml"), `[server]\ndata_dir = "./data"\n\n${tenantsToml()}\n[sandbox]\npool_size = 2\n`);
    const proc = spawn(process.execPath, ["dist/service/main.js", "--config", join(dir, "hookbox.toml"), "--listen", `127.0.0.1:${await freePort()}`], {
      env: { PATH: process.env.PATH ?? "", HOOKBOX_TEST_TOKEN_B: TOKEN_B },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    for (const s of [proc.stdout!, proc.stderr!]) s.on("data", (c: Buffer) => (out += c.toString()));
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((r) => proc.once("exit", (code, signal) => r([code, signal])));
    // The lock is the first thing it holds; the stop comes right after, long before it listens.
    const lockFile = join(dir, "data", "hookbox.lock");
    for (const end = Date.now() + 30_000; !existsSync(lockFile) && Date.now() < end; ) await new Promise((r) => setTimeout(r, 1));
    proc.kill("SIGTERM");
    expect(await exited, out).toEqual([0, null]);
    expect(out).toMatch(/a stop was asked for while starting/);
    expect(await leftovers()).toEqual({ containers: [], volumes: [] });
    expect(existsSync(lockFile)).toBe(false);
  }, 60_000);
});
