/**
 * @module One container, created and attached, with every limit of SERVICE.md §5 — cold runs and
 * pre-started ones both come through `makeContainer`, so a pooled container is exactly as locked
 * down as a cold one. Also what the runner's files share: its fleet (what this process has in the
 * engine) and a container's shape.
 */
import { posix } from "node:path";
import type { Duplex } from "node:stream";
import {
  HOOK_GID, HOOK_HOME, HOOK_UID, LABEL_DEADLINE, LABEL_EVENT_ID, LABEL_INSTANCE, LABEL_MANAGED, LABEL_OWNER,
  LABEL_PROCESS, LABEL_RUN_ID, MIN_LIMITS, WORKSPACE_PATH, type Limits, type Runtime,
} from "../names.js";
import { EngineTimeoutError, type DockerClient, type MountSpec } from "./docker-client.js";
import { cowDirs, type CowDirs } from "./workspace-view.js";

/**
 * Refuses limits Docker would read as none: a zero memory, CPU or pids value, or a zero tmpfs size,
 * lifts the limit. The config and the loaders refuse such values first; this is the last word
 * before the engine sees them.
 */
function unlimitedIn(limits: Limits): void {
  const low =
    !(limits.memoryBytes >= MIN_LIMITS.memoryBytes) ? "memory" :
    !(Math.round(limits.cpus * 1e9) >= MIN_LIMITS.cpus * 1e9) ? "cpus" :
    !(limits.pids >= 1) ? "pids" :
    !(limits.tmpBytes >= MIN_LIMITS.tmpBytes) ? "tmp_size" :
    !(limits.openFiles >= 1) ? "open_files" : undefined;
  if (low) throw new Error(`refused to create a container: its ${low} limit is below the least hookbox allows (Docker would read it as no limit)`);
}

/** What this process has in the engine, shared by cold runs, pre-starts and the reaper. */
export interface Fleet {
  readonly client: DockerClient;
  /** host folder for the runs' copy-on-write layers */
  readonly scratchDir: string;
  /** this process: a container of our owner but another instance was left by a predecessor */
  readonly instance: string;
  /** LABEL_PROCESS of this process */
  readonly process: string;
  readonly owner: string | undefined;
  /** containers of this process still in use (waiting in the pool or running a hook) */
  readonly live: Set<string>;
  /** container creations under way: their ids are not known yet */
  creating: number;
  /**
   * Creations given up on (engine timeout, deadline) whose container the engine may still make
   * later: its name → its deadline label. Removed by name when it appears (reaper, shutdown).
   */
  readonly abandoned: Map<string, number>;
  /** keeps a background removal in view, for `drain` */
  track(removal: Promise<unknown>): void;
}

/** What a container looks like before it is given a hook: everything that goes into its spec. */
export interface Shape {
  image: string;
  runtime: Runtime;
  limits: Limits;
  mounts: readonly string[];
  workspaceDir?: string;
}

export interface Made {
  id: string;
  stream: Duplex;
  /** resolves when the engine closes the attach stream (the container is gone) */
  streamDone: Promise<void>;
  /** removes the container, its workspace volume and layers, each call under the engine timeout; never throws */
  cleanup(): Promise<void>;
}

/** Before a failed removal is tried again. */
const REMOVE_RETRY_MS = 250;

/** The engine's name of a run's container. */
export function containerName(runId: string): string {
  return `hookbox-${runId}`;
}

export function labelsFor(fleet: Fleet, runId: string, deadlineMs: number, eventId?: string): Record<string, string> {
  return {
    [LABEL_MANAGED]: "true",
    [LABEL_RUN_ID]: runId,
    [LABEL_DEADLINE]: String(Math.ceil(deadlineMs)),
    [LABEL_INSTANCE]: fleet.instance,
    [LABEL_PROCESS]: fleet.process,
    ...(fleet.owner ? { [LABEL_OWNER]: fleet.owner } : {}),
    ...(eventId ? { [LABEL_EVENT_ID]: eventId } : {}),
  };
}

/**
 * Creates (not starts) a container of `shape` running `cmd`, attached, with its copy-on-write
 * workspace. Engine calls end at `signal` (the run's deadline) or the engine timeout.
 */
export async function makeContainer(
  fleet: Fleet, shape: Shape, cmd: string[], env: Record<string, string>, cwd: string | undefined, labels: Record<string, string>, signal?: AbortSignal,
): Promise<Made> {
  const { client } = fleet;
  const runId = labels[LABEL_RUN_ID]!;
  // Named after the run: a creation the engine performs after we gave up on it is still found.
  const name = containerName(runId);
  let dirs: CowDirs | undefined;
  let volumeName: string | undefined;
  let id: string | undefined;
  const cleanup = async () => {
    // Whether or not the engine answers now, the container is no longer in use: if this removal
    // fails, the reaper's next sweep removes it.
    if (id) fleet.live.delete(id);
    const target = id ?? (fleet.abandoned.has(name) ? name : undefined);
    // A container that exists: gone if the engine says it is not there. One the engine may still
    // make (abandoned): only once removed.
    const remove = () => client.remove(target!).then(() => true, (err: { statusCode?: number }) => id !== undefined && err.statusCode === 404);
    // A removal the engine refused or did not finish in time (a slow runtime under load) is tried
    // once more before it is left to the reaper.
    let removed = target ? await remove() : true;
    if (!removed && target) removed = await new Promise((r) => setTimeout(r, REMOVE_RETRY_MS)).then(remove);
    if (removed) fleet.abandoned.delete(name);
    if (volumeName && removed) await client.removeVolume(volumeName).catch(() => undefined);
    await dirs?.remove();
  };
  try {
    const { limits } = shape;
    unlimitedIn(limits);
    const mounts: MountSpec[] = shape.mounts.map((path) => ({ Type: "bind", Source: path, Target: path, ReadOnly: true }));
    const tmpfs: Record<string, string> = {
      "/tmp": `rw,nosuid,nodev,size=${limits.tmpBytes},mode=1777`,
      [HOOK_HOME]: `rw,nosuid,nodev,size=${Math.max(1 << 20, limits.tmpBytes >> 2)},uid=${HOOK_UID},gid=${HOOK_GID},mode=0700`,
    };
    if (shape.workspaceDir) {
      // The overlay's upper layer lives on a tmpfs of tmp_size: writes to /workspace are bounded.
      dirs = await cowDirs(fleet.scratchDir, runId, limits.tmpBytes, signal);
      volumeName = `hookbox-ws-${runId}`;
      await client.createVolume({
        Name: volumeName,
        Driver: "local",
        DriverOpts: { type: "overlay", device: "overlay", o: `lowerdir=${shape.workspaceDir},upperdir=${dirs.upper},workdir=${dirs.work}` },
        Labels: labels,
      }, signal);
      mounts.push({ Type: "volume", Source: volumeName, Target: WORKSPACE_PATH });
    } else {
      // No workspace: an empty, writable one, so hooks that log into their cwd still work.
      tmpfs[WORKSPACE_PATH] = `rw,nosuid,nodev,size=${limits.tmpBytes},uid=${HOOK_UID},gid=${HOOK_GID},mode=0755`;
    }
    fleet.creating++;
    id = await client.createContainer({
      name,
      Image: shape.image,
      Cmd: cmd,
      User: `${HOOK_UID}:${HOOK_GID}`,
      WorkingDir: cwd ? posix.join(WORKSPACE_PATH, posix.normalize(cwd)) : WORKSPACE_PATH,
      Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
      Labels: labels,
      AttachStdin: true, AttachStdout: true, AttachStderr: true,
      OpenStdin: true, StdinOnce: true, Tty: false,
      NetworkDisabled: true,
      HostConfig: {
        Runtime: shape.runtime,
        NetworkMode: "none",
        ReadonlyRootfs: true,
        Tmpfs: tmpfs,
        // /dev/shm is a tmpfs too (the engine's 64 MiB by default): as large as /tmp, no more.
        ShmSize: limits.tmpBytes,
        Mounts: mounts,
        CapDrop: ["ALL"],
        SecurityOpt: ["no-new-privileges"],
        Memory: limits.memoryBytes,
        MemorySwap: limits.memoryBytes, // equal to Memory: no swap
        NanoCpus: Math.round(limits.cpus * 1e9),
        PidsLimit: limits.pids,
        Ulimits: [
          { Name: "nofile", Soft: limits.openFiles, Hard: limits.openFiles },
          // No single file larger than the writable space (/tmp's size), whatever it is written on.
          { Name: "fsize", Soft: limits.tmpBytes, Hard: limits.tmpBytes },
          { Name: "core", Soft: 0, Hard: 0 },
        ],
        // SERVICE.md §5: an init where the runtime takes one; gVisor reaps on its own (and its
        // exchange with a pre-started container loses output under Docker's init).
        Init: shape.runtime === "runc",
        IpcMode: "private",
        Privileged: false,
        // Output is read over the attach stream, capped there; the engine keeps no copy of its own
        // (a log file on the host's disk that no cap bounds, written until the container is gone).
        LogConfig: { Type: "none", Config: {} },
      },
    }, signal).catch((err: unknown) => {
      // Given up on while the engine may still be at it (not refused): it may appear later.
      if (err instanceof EngineTimeoutError || signal?.aborted) fleet.abandoned.set(name, Number(labels[LABEL_DEADLINE]));
      throw err;
    }).finally(() => fleet.creating--);
    fleet.live.add(id);
    const stream = await client.attach(id, signal);
    const streamDone = new Promise<void>((resolve) => {
      stream.on("end", resolve);
      stream.on("close", resolve);
      stream.on("error", () => resolve());
    });
    return { id, stream, streamDone, cleanup };
  } catch (err) {
    // Set-up failed (maybe at the run's deadline): the removal goes on in the background.
    fleet.track(cleanup());
    throw err;
  }
}
