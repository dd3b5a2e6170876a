/**
 * Before the suite: the engine starts with no hookbox containers or volumes, so that every test's
 * "nothing left behind" check sees only what that test made. Anything labelled hookbox here is a
 * leftover of an earlier run that was killed (a CI machine reused, a developer's Ctrl-C).
 */
import Docker from "dockerode";
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LABEL_MANAGED } from "../engine/names.js";

/** A hookbox service process of another test run on this machine (its containers are not leftovers). */
function serviceRunning(): boolean {
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    const cmd = (() => { try { return readFileSync(`/proc/${pid}/cmdline`, "utf8"); } catch { return ""; } })();
    if (cmd.includes("dist/service/main.js")) return true;
  }
  return false;
}

const RUN_DIR_PREFIX = "hookbox-test-run-";

/** A process of that id runs (another user's too). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Every temporary folder the tests, their services and their hooks make lands in one folder of
 * this run's (TMPDIR, read by os.tmpdir() in the workers and the processes they start), removed
 * when the run ends; a killed run's folder is removed by the next run.
 */
function runTmpdir(): () => void {
  const base = tmpdir();
  for (const name of readdirSync(base).filter((n) => n.startsWith(RUN_DIR_PREFIX))) {
    const pid = Number(name.slice(RUN_DIR_PREFIX.length));
    if (!Number.isInteger(pid) || pid <= 0 || alive(pid)) continue;
    try {
      rmSync(join(base, name), { recursive: true, force: true });
    } catch {
      // another user's, say: not this run's to remove
    }
  }
  const dir = join(base, `${RUN_DIR_PREFIX}${process.pid}`);
  mkdirSync(dir, { recursive: true });
  process.env.TMPDIR = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}

export default async function setup(): Promise<() => void> {
  const teardown = runTmpdir();
  await cleanEngine();
  return teardown;
}

async function cleanEngine(): Promise<void> {
  // `npm run test:edge` starts no container: another run's on the same engine are not leftovers.
  if (process.env.HOOKBOX_TEST_EDGE === "1" || serviceRunning()) return;
  const docker = new Docker();
  const filters = JSON.stringify({ label: [`${LABEL_MANAGED}=true`] });
  // Without an engine there is nothing to clean; the tests that need one fail on their own.
  const containers = await docker.listContainers({ all: true, filters }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== "ENOENT" && err.code !== "ECONNREFUSED" && err.code !== "EACCES") throw err;
    console.warn(`[test] no container engine answers (${err.code}): only tests that need none can pass`);
    return undefined;
  });
  if (containers === undefined) return;
  await Promise.all(containers.map((c) => docker.getContainer(c.Id).remove({ force: true, v: true }).catch(() => undefined)));
  const { Volumes: volumes } = await docker.listVolumes({ filters });
  await Promise.all((volumes ?? []).map((v) => docker.getVolume(v.Name).remove().catch(() => undefined)));
  if (containers.length > 0) console.warn(`[test] removed ${containers.length} hookbox container(s) left by an earlier run`);
}
