/**
 * Leftovers after a crash: a process running a container hook is killed with SIGKILL mid-run, so
 * its container stays; the reaper, started afterwards, removes it once its deadline has passed —
 * or at once at start-up when it was the same data_dir's (owner's), but never while that process lives.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { afterEach, expect, it } from "vitest";
import { ContainerRunner } from "../engine/run/container-runner.js";
import { startReaper } from "../engine/run/reaper.js";
import { DEFAULT_LIMITS, REAP_GRACE_MS } from "../engine/names.js";
import { leftovers } from "./helpers/engine.js";

const SCRATCH = "/tmp/hookbox-test-scratch";
const ENGINE_TIMEOUT_MS = 1_000;
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
});

/** Another process that runs two container hooks (one with a workspace) of `owner`, until killed. */
async function holder(owner: string): Promise<ChildProcess> {
  expect(existsSync("dist/engine/run/container-runner.js"), "run `npm run build` first (npm test does)").toBe(true);
  const script = `
    import { ContainerRunner } from "./dist/engine/run/container-runner.js";
    import { DEFAULT_LIMITS } from "./dist/engine/names.js";
    const r = new ContainerRunner({ scratchDir: "${SCRATCH}", owner: "${owner}", engineTimeoutMs: ${ENGINE_TIMEOUT_MS} });
    const dir = (await import("node:fs")).mkdtempSync((await import("node:path")).join((await import("node:os")).tmpdir(), "hookbox-reap-ws-"));
    (await import("node:fs")).chownSync(dir, 1000, 1000);
    for (const workspaceDir of [undefined, dir])
      void r.run({ command: "echo up; sleep 600", stdin: new Uint8Array(), env: {}, timeoutMs: 1000, limits: DEFAULT_LIMITS, workspaceDir });
  `;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: "inherit" });
  children.push(child);
  // Wait until both containers run.
  for (let i = 0; i < 100 && (await leftovers()).containers.length < 2; i++) await new Promise((r) => setTimeout(r, 100));
  expect((await leftovers()).containers).toHaveLength(2);
  return child;
}

async function kill9(child: ChildProcess): Promise<void> {
  child.kill("SIGKILL");
  await new Promise((r) => child.once("exit", r));
}

it("removes every container left by a killed process, and nothing that is still in its time", async () => {
  await kill9(await holder("some-data-dir"));
  expect((await leftovers()).containers).toHaveLength(2);

  const runner = new ContainerRunner({ scratchDir: SCRATCH });
  // Before the deadline (plus grace) has passed, a run may still be in progress: nothing is removed.
  expect(await runner.reap(Date.now() - 60_000)).toBe(0);
  expect((await leftovers()).containers).toHaveLength(2);

  // The run's deadline is its timeout plus the engine timeout; then the grace.
  await new Promise((r) => setTimeout(r, 1_000 + ENGINE_TIMEOUT_MS + REAP_GRACE_MS));
  const reaped = await new Promise<number>((resolve) => {
    const reaper = startReaper(runner, { intervalMs: 60_000, onReaped: (n) => { reaper.stop(); resolve(n); } });
  });
  expect(reaped).toBe(2);
  expect(await leftovers()).toEqual({ containers: [], volumes: [] });
  // The killed process's workspace layer is still mounted: a service clears it at start.
  await runner.clearScratch();
  expect(readFileSync("/proc/self/mountinfo", "utf8")).not.toContain(SCRATCH);
}, 30_000);

it("at start-up removes the same owner's leftovers at once, but never those of a process that is alive", async () => {
  const child = await holder("shared-data-dir");
  const runner = new ContainerRunner({ scratchDir: SCRATCH, owner: "shared-data-dir" });
  // Alive (another service on the same data_dir that the lock did not stop, say): left alone.
  expect(await runner.reap(Date.now(), { orphans: true })).toBe(0);
  // Periodic sweeps never take another process's containers for leftovers before their deadline.
  await kill9(child);
  expect(await runner.reap(Date.now())).toBe(0);
  expect(await runner.reap(Date.now(), { orphans: true })).toBe(2);
  expect(await leftovers()).toEqual({ containers: [], volumes: [] });
  await runner.clearScratch();
  expect(readFileSync("/proc/self/mountinfo", "utf8")).not.toContain(SCRATCH);
}, 30_000);

it("never removes a container this process still runs a hook in, even past its label's deadline", async () => {
  const runner = new ContainerRunner({ scratchDir: SCRATCH });
  try {
    const running = runner.run({ command: "sleep 2; echo done", stdin: new Uint8Array(), env: {}, timeoutMs: 20_000, limits: DEFAULT_LIMITS });
    for (let i = 0; i < 100 && (await leftovers()).containers.length < 1; i++) await new Promise((r) => setTimeout(r, 50));
    expect((await leftovers()).containers).toHaveLength(1);
    // an hour on: past every deadline label — a pre-started container that waited long and then
    // took a long hook can outlive its label in earnest
    expect(await runner.reap(Date.now() + 3_600_000)).toBe(0);
    expect(await running).toMatchObject({ outcome: "exited", exitCode: 0, stdout: "done\n" });
  } finally {
    await runner.drain({ close: true });
  }
  expect(await leftovers()).toEqual({ containers: [], volumes: [] });
}, 30_000);
