/**
 * Leftovers after a crash: a process running a container hook is killed with SIGKILL mid-run, so
 * its container stays; the reaper, started afterwards, removes it once its deadline has passed.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { expect, it } from "vitest";
import { ContainerRunner } from "../engine/run/container-runner.js";
import { startReaper } from "../engine/run/reaper.js";
import { REAP_GRACE_MS } from "../engine/names.js";
import { leftovers } from "./helpers/engine.js";

it("removes every container left by a killed process, and nothing that is still in its time", async () => {
  expect(existsSync("dist/engine/run/container-runner.js"), "run `npm run build` first (npm test does)").toBe(true);
  const script = `
    import { ContainerRunner } from "./dist/engine/run/container-runner.js";
    import { DEFAULT_LIMITS } from "./dist/engine/names.js";
    const r = new ContainerRunner({ scratchDir: "/tmp/hookbox-test-scratch" });
    const dir = (await import("node:fs")).mkdtempSync("/tmp/hookbox-reap-ws-");
    (await import("node:fs")).chownSync(dir, 1000, 1000);
    for (const workspaceDir of [undefined, dir])
      void r.run({ command: "echo up; sleep 600", stdin: new Uint8Array(), env: {}, timeoutMs: 1000, limits: DEFAULT_LIMITS, workspaceDir });
  `;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: "inherit" });
  // Wait until both containers run, then kill the process that owns them.
  for (let i = 0; i < 100 && (await leftovers()).containers.length < 2; i++) await new Promise((r) => setTimeout(r, 100));
  child.kill("SIGKILL");
  await new Promise((r) => child.once("exit", r));
  expect((await leftovers()).containers).toHaveLength(2);

  const runner = new ContainerRunner({ scratchDir: "/tmp/hookbox-test-scratch" });
  // Before the deadline (plus grace) has passed, a run may still be in progress: nothing is removed.
  expect(await runner.reap(Date.now() - 60_000)).toBe(0);
  expect((await leftovers()).containers).toHaveLength(2);

  await new Promise((r) => setTimeout(r, 1_000 + REAP_GRACE_MS));
  const reaped = await new Promise<number>((resolve) => {
    const reaper = startReaper(runner, { intervalMs: 60_000, onReaped: (n) => { reaper.stop(); resolve(n); } });
  });
  expect(reaped).toBe(2);
  expect(await leftovers()).toEqual({ containers: [], volumes: [] });
}, 30_000);
