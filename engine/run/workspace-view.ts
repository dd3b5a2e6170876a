/**
 * @module Host side of the copy-on-write /workspace: per run, an overlay upper dir (owned by the
 * hooks' uid, so they may write) and its work dir, both on a tmpfs of the run's own, mounted here
 * for the run with the size of `/tmp` (`limits.tmpBytes`): what a hook writes to /workspace is
 * bounded like what it writes to /tmp. The stored workspace is the lower layer and is never
 * written; the tmpfs goes when the run ends. There is no unbounded fallback: when the tmpfs cannot
 * be mounted, the run does not start.
 */
import { readFileSync } from "node:fs";
import { chown, mkdir, readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { HOOK_GID, HOOK_UID } from "../names.js";
import { sharedHostSpawner } from "./host-spawner.js";

export interface CowDirs {
  upper: string;
  work: string;
  /** unmounts the run's tmpfs (lazily if the overlay still holds it) and removes its folder; never throws */
  remove(): Promise<void>;
}

/** mount(8) and umount(8) from util-linux, found once. */
const MOUNT = "/usr/bin/mount";
const UMOUNT = "/usr/bin/umount";

/** How long a mount or unmount may take before it is killed and counts as failed. */
const MOUNT_TIMEOUT_MS = 10_000;

/**
 * Runs mount(8) or umount(8) through the host spawner's small helper process (host-spawner.ts):
 * a fork from the service itself would hold the event loop that serves every tenant for as long as
 * copying its page tables takes — twice per cold run with a workspace.
 */
function exec(file: string, args: string[], signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const clock: { timer?: NodeJS.Timeout } = {};
    const onAbort = () => {
      run.kill();
      done(new Error(`${file} was stopped: the run ended before it finished`));
    };
    const done = (err?: Error) => {
      clearTimeout(clock.timer);
      signal?.removeEventListener("abort", onAbort);
      if (err) reject(err);
      else resolve();
    };
    const run = sharedHostSpawner().run(
      { file, args, cwd: "/", env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" }, stdin: new Uint8Array(), maxOutputBytes: 4096 },
      {
        onError: (message) => done(new Error(message)),
        onClose: ({ code, signal, stderr }) =>
          code === 0 ? done() : done(new Error(stderr.toString("utf8").trim() || `${file} ended with ${code ?? signal}`)),
      },
    );
    clock.timer = setTimeout(() => {
      run.kill();
      done(new Error(`${file} did not finish within ${MOUNT_TIMEOUT_MS} ms`));
    }, MOUNT_TIMEOUT_MS);
    // The run's deadline or cancellation: its set-up is not waited for past it.
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
  });
}

async function mountTmpfs(dir: string, sizeBytes: number, signal?: AbortSignal): Promise<void> {
  await exec(MOUNT, ["-t", "tmpfs", "-o", `size=${sizeBytes},mode=0711,nosuid,nodev`, "hookbox-scratch", dir], signal);
}

async function unmount(dir: string): Promise<void> {
  // The overlay may still hold it (the engine did not answer the removal): detach it now, the
  // kernel frees it when the reaper's removal lets the overlay go.
  await exec(UMOUNT, [dir]).catch(() => exec(UMOUNT, ["-l", dir])).catch(() => undefined);
}

/** `signal`: the run's; at its abort the mount is given up (and undone, should it have happened). */
export async function cowDirs(scratchDir: string, runId: string, sizeBytes: number, signal?: AbortSignal): Promise<CowDirs> {
  const root = join(scratchDir, runId);
  await mkdir(root, { recursive: true, mode: 0o711 });
  try {
    await mountTmpfs(root, sizeBytes, signal);
  } catch (err) {
    // A mount killed at its deadline may have happened all the same: undone before the folder goes.
    if (mountPointsUnder(scratchDir).includes(root)) await unmount(root);
    await rm(root, { recursive: true, force: true }).catch(() => undefined);
    throw new Error(`the size limit of /workspace could not be set up (a tmpfs on ${root}): ${(err as Error).message}`);
  }
  const remove = async () => {
    await unmount(root);
    await rm(root, { recursive: true, force: true }).catch(() => undefined);
  };
  try {
    const upper = join(root, "upper");
    const work = join(root, "work");
    await mkdir(upper);
    await mkdir(work);
    await chown(upper, HOOK_UID, HOOK_GID);
    return { upper, work, remove };
  } catch (err) {
    await remove();
    throw err;
  }
}

/** Start-up check: can a size-limited tmpfs be mounted under `scratchDir`? The reason when not. */
export async function scratchBoundProblem(scratchDir: string): Promise<string | undefined> {
  try {
    const dirs = await cowDirs(scratchDir, `check-${process.pid}`, 1 << 20);
    await dirs.remove();
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** Removes what an earlier process left under `scratchDir`: tmpfs mounts first, then the folders. */
export async function clearScratch(scratchDir: string): Promise<void> {
  const mounted = mountPointsUnder(scratchDir);
  for (const dir of mounted) await unmount(dir);
  for (const entry of await readdir(scratchDir).catch(() => [] as string[])) {
    await rm(join(scratchDir, entry), { recursive: true, force: true }).catch(() => undefined);
  }
}

function mountPointsUnder(dir: string): string[] {
  try {
    return readFileSync("/proc/self/mountinfo", "utf8")
      .split("\n")
      .map((line) => line.split(" ")[4] ?? "")
      .map((path) => path.replace(/\\040/g, " "))
      .filter((path) => path.startsWith(`${dir}/`))
      // deepest first
      .sort((a, b) => b.length - a.length);
  } catch {
    return [];
  }
}
