/**
 * @module `npm run bench`: hookbox's latency and throughput next to baselines measured in the same
 * run on the same machine. Prints a table and writes it as JSON to bench/results/latest.json.
 * Figures, never pass/fail.
 */
import Docker from "dockerode";
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import type { Duplex } from "node:stream";
import { get, post } from "./http-client.js";
import { startService, TOKEN } from "./service-process.js";
import { percentiles, table, type Figures } from "./stats.js";
import { fetchRow, forwarderRows, overloadRows, workspaceRows } from "./traffic.js";

const IMAGE = "hookbox/runtime:latest";
const HOOK = "cat >/dev/null; echo '{}'";
const EVENT = JSON.stringify({ session_id: "bench", hook_event_name: "PreToolUse", tool_name: "shell", tool_input: { command: "ls" } });
const NO_HOOK_EVENT = JSON.stringify({ session_id: "bench", hook_event_name: "SessionStart" });
const docker = new Docker();
const rows: Figures[] = [];
const log = (s: string) => process.stderr.write(`[bench] ${s}\n`);

async function timeEach(n: number, fn: () => Promise<unknown>, before?: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    await before?.();
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out;
}

function hostSpawn(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", HOOK], { stdio: ["pipe", "pipe", "pipe"] });
    child.stdout.resume();
    child.stderr.resume();
    child.on("error", reject);
    child.on("close", () => resolve());
    child.stdin.end(EVENT);
  });
}

async function rawContainer(runtime = "runc"): Promise<void> {
  const c = await docker.createContainer({
    Image: IMAGE, Cmd: ["/bin/sh", "-c", HOOK], OpenStdin: true, StdinOnce: true,
    AttachStdin: true, AttachStdout: true, AttachStderr: true,
    // No network, like every hook container: the baseline measures the same container start, not bridge set-up.
    HostConfig: { Runtime: runtime, NetworkMode: "none" },
  });
  const stream = (await c.attach({ stream: true, stdin: true, stdout: true, stderr: true, hijack: true })) as unknown as Duplex;
  stream.resume();
  await c.start();
  stream.end(EVENT);
  await c.wait();
  await c.remove({ force: true });
}

async function rate(concurrency: number, durationMs: number, fn: () => Promise<boolean>): Promise<{ rate: number; samples: number[] }> {
  const samples: number[] = [];
  const end = performance.now() + durationMs;
  const t0 = performance.now();
  let ok = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() < end) {
      const s = performance.now();
      if (await fn()) ok++;
      samples.push(performance.now() - s);
    }
  }));
  return { rate: ok / ((performance.now() - t0) / 1000), samples };
}

const event = (url: string, body = EVENT) => post(`${url}/v1/events`, body, TOKEN).then((r) => {
  if (r.status !== 200) throw new Error(`status ${r.status}: ${r.body}`);
  return true;
});

async function poolReady(url: string): Promise<number> {
  const m = /^hookbox_pool_ready (\d+)$/m.exec(await get(`${url}/metrics`, TOKEN));
  return Number(m?.[1] ?? 0);
}

async function waitPool(url: string, atLeast = 1): Promise<void> {
  for (let i = 0; i < 500 && (await poolReady(url)) < atLeast; i++) await new Promise((r) => setTimeout(r, 10));
}

const containerHook = `[[hooks.PreToolUse]]\nname = "bench"\ncommand = "${HOOK.replace(/"/g, '\\"')}"\n`;

/**
 * p50/p90/p99 of events with one container hook, against a service of its own: cold (no pool), or
 * warm (each request waits until a pre-started container is ready, then is timed).
 */
async function containerHookRow(mode: "cold" | "warm", runtime: "runc" | "runsc", samples: number, port: number): Promise<Figures> {
  const svc = await startService(`[sandbox]\nruntime = "${runtime}"\npool_size = ${mode === "warm" ? 2 : 0}\n\n${containerHook}`, port);
  try {
    const ready = mode === "warm" ? () => waitPool(svc.url) : undefined;
    await timeEach(3, () => event(svc.url), ready);
    const name = `hookbox: event, one container hook, ${mode}${runtime === "runsc" ? ", runsc" : ""}`;
    return percentiles(name, await timeEach(samples, () => event(svc.url), ready), mode === "warm" ? "each request waits for a ready container" : undefined);
  } finally {
    await svc.stop();
  }
}

async function main(): Promise<void> {
  const N = Number(process.env.BENCH_N ?? 1);
  const n = (k: number) => Math.max(3, Math.round(k * N));
  log(`machine: ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ${cpus()[0]?.model ?? "?"}`);

  log("baseline: host spawn");
  await timeEach(10, hostSpawn);
  const spawnRow = percentiles("baseline: host spawn of the hook", await timeEach(n(200), hostSpawn));
  rows.push(spawnRow);

  log("baseline: raw dockerode create+attach+start+wait+remove");
  await timeEach(3, () => rawContainer());
  const rawRow = percentiles("baseline: raw dockerode container run", await timeEach(n(30), () => rawContainer()));
  rows.push(rawRow);

  log("baseline: raw container churn");
  const churn: Record<number, number> = {};
  for (const c of [4, 16]) {
    const r = await rate(c, 8_000 * N, () => rawContainer().then(() => true));
    churn[c] = r.rate;
    rows.push({ ...percentiles(`baseline: raw container churn, concurrency ${c}`, r.samples), rate: r.rate });
  }

  let port = 18_080 + Math.floor(Math.random() * 1000);

  log("hookbox: one policy (host) hook");
  let svc = await startService(`[[policy.PreToolUse]]\nname = "bench"\ncommand = "${HOOK.replace(/"/g, '\\"')}"\n`, port++);
  await timeEach(20, () => event(svc.url));
  const policyRow = percentiles("hookbox: event, one policy hook (host)", await timeEach(n(200), () => event(svc.url)));
  rows.push(policyRow);
  const forwarders = await forwarderRows(svc.url, n(100), { noHook: NO_HOOK_EVENT, policy: EVENT });
  rows.push(...forwarders.rows);
  await svc.stop();

  log("hookbox: event that matches no hook");
  svc = await startService(`[sandbox]\npool_size = 0\n\n${containerHook}`, port++);
  await timeEach(500, () => event(svc.url, NO_HOOK_EVENT));
  const noHookRow = percentiles("hookbox: event matching no hook", await timeEach(n(3000), () => event(svc.url, NO_HOOK_EVENT)));
  const noHookRate = await rate(16, 3_000 * N, () => event(svc.url, NO_HOOK_EVENT));
  const noHookFetch = await fetchRow(svc.url, NO_HOOK_EVENT, n(3000));
  rows.push(noHookRow, noHookFetch, { ...percentiles("hookbox: event matching no hook, concurrency 16", noHookRate.samples), rate: noHookRate.rate });

  await svc.stop();

  log("hookbox: one container hook, cold");
  const coldRow = await containerHookRow("cold", "runc", n(30), port++);
  log("hookbox: one container hook, warm");
  const warmRow = await containerHookRow("warm", "runc", n(60), port++);
  rows.push(coldRow, warmRow);

  log("hookbox: events/s with one container hook each");
  svc = await startService(`[sandbox]\npool_size = 16\npool_max = 24\nmax_concurrency = 16\n\n${containerHook}`, port++);
  const throughput: Record<number, number> = {};
  for (const c of [1, 4, 16]) {
    await waitPool(svc.url, 12);
    const r = await rate(c, 8_000 * N, () => event(svc.url));
    throughput[c] = r.rate;
    rows.push({ ...percentiles(`hookbox: events/s, one container hook, concurrency ${c}`, r.samples), rate: r.rate });
  }
  await svc.stop();

  // Steady arrivals below what the engine churns (half the raw rate at 16), never waiting for the pool.
  const steadyRate = Math.max(2, Math.min(10, churn[16]! / 2));
  const wsRows = await workspaceRows(port++, HOOK, EVENT, steadyRate, n(100));
  rows.push(...wsRows);

  // Sustained arrivals above what hookbox itself sustains (1.5 × its events/s at concurrency 16,
  // at least twice the raw churn) for a minute.
  const overload = await overloadRows(port++, containerHook, EVENT, Math.max(10, churn[16]! * 2, throughput[16]! * 1.5), 60_000 * N);
  rows.push(overload.answered, overload.refused);

  log("gVisor (runsc)");
  let runscWarm: Figures | undefined;
  try {
    rows.push(percentiles("baseline: raw dockerode container run, runsc", await timeEach(n(10), () => rawContainer("runsc"))));
    rows.push(await containerHookRow("cold", "runsc", n(10), port++));
    runscWarm = await containerHookRow("warm", "runsc", n(30), port++);
    rows.push(runscWarm);
  } catch (err) {
    log(`runsc not measured: ${(err as Error).message}`);
  }

  const ratios = {
    "warm p50 - host spawn p50 (ms; target <= 15)": warmRow.p50 - spawnRow.p50,
    "cold p50 / raw dockerode p50 (target <= 1.15)": coldRow.p50 / rawRow.p50,
    "events/s at concurrency 16 / raw churn at 16 (target >= 0.9)": throughput[16]! / churn[16]!,
    "no-hook p50 (ms; target <= 1)": noHookRow.p50,
    "no-hook events/s (target >= 3000)": noHookRate.rate,
    "policy p50 - host spawn p50 (ms; target <= 3)": policyRow.p50 - spawnRow.p50,
    ...(runscWarm ? { "runsc warm p50 (ms; target <= 100)": runscWarm.p50 } : {}),
    "hookbox forward p50 - node -e 0 p50 (ms; target <= 25)": forwarders.nodeForward.p50 - forwarders.nodeStart.p50,
    "forward.sh p50 - curl p50 (ms; target <= 10)": forwarders.shellForward.p50 - forwarders.curl.p50,
    "no-hook p50 with fetch (ms; target <= 2)": noHookFetch.p50,
    ...Object.fromEntries(wsRows.filter((r) => r.workspaces >= 100).flatMap((r) => [
      [`${r.workspaces} workspaces: p50 - host spawn p50 (ms; target <= 25)`, r.p50 - spawnRow.p50],
      [`${r.workspaces} workspaces: p90 - host spawn p50 (ms; target <= 60)`, r.p90 - spawnRow.p50],
      [`${r.workspaces} workspaces: share warm (% ; target >= 95)`, r.warmShare * 100],
    ])),
    "overload: service RSS at 5 s (MiB)": overload.rssStartMiB,
    "overload: service RSS at the end (MiB)": overload.rssEndMiB,
    "overload: service RSS max (MiB)": overload.rssMaxMiB,
  };
  console.log(table(rows));
  console.log("\nratios (measured in this run):");
  for (const [k, v] of Object.entries(ratios)) console.log(`  ${k}: ${v.toFixed(2)}`);
  mkdirSync("bench/results", { recursive: true });
  const machine = { cores: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30), cpu: cpus()[0]?.model, node: process.version, at: new Date().toISOString() };
  writeFileSync("bench/results/latest.json", JSON.stringify({ machine, rows, ratios }, null, 2) + "\n");
  log("written: bench/results/latest.json");
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
