/**
 * @module Container runner — the only file that talks to the Docker engine. Every hook runs in a
 * container of its own, never reused, removed afterwards, with every limit of SERVICE.md §5:
 * either a new one (cold), or one pre-started by the warm pool and handed its one hook. Both are
 * created by `make`, so a pooled container is exactly as locked down as a cold one. Also the
 * engine's health check and the reaper's sweep, since both need the engine.
 */
import Docker from "dockerode";
import { randomUUID } from "node:crypto";
import { statSync } from "node:fs";
import { posix } from "node:path";
import type { Duplex } from "node:stream";
import {
  DEFAULT_IMAGE, HOOK_GID, HOOK_HOME, HOOK_UID, LABEL_DEADLINE, LABEL_EVENT_ID, LABEL_INSTANCE, LABEL_MANAGED,
  LABEL_OWNER, LABEL_RUN_ID, REAP_GRACE_MS, WORKSPACE_PATH, type Limits, type Runtime,
} from "../names.js";
import { OutputCapture } from "./output-capture.js";
import { hookEnv } from "./hook-env.js";
import { cowDirs, type CowDirs } from "./workspace-view.js";
import { WarmPool, type PoolOptions } from "./warm-pool.js";
import { HANDOVER_SCRIPT } from "./handover.js";
import { describeError, sink, stoppedEnd, type ContainerHandle, type StopReason } from "./container-parts.js";
import { WarmContainer } from "./warm-container.js";
import type { RunEnd, RunRequest, RunResult, Runner } from "./types.js";

export interface ContainerRunnerOptions {
  /** Engine connection; default: DOCKER_HOST or the local socket, as dockerode reads it. */
  docker?: Docker;
  /** Host folder for the copy-on-write layers of workspaces (upper and work dirs). */
  scratchDir: string;
  defaultImage?: string;
  defaultRuntime?: Runtime;
  /** Names this service (its data_dir, say): containers of the same owner made by another process are leftovers. */
  owner?: string;
  /** Pre-started single-use containers; absent or size 0: every run starts its own. */
  pool?: PoolOptions;
  /** The longest a pooled container may be asked to run (the server's max_timeout). @default 60 s */
  maxTimeoutMs?: number;
}

export interface EngineStatus {
  ok: boolean;
  problems: string[];
  runtimes: string[];
}

/** What a container looks like before it is given a hook: everything that goes into its spec. */
interface Shape {
  image: string;
  runtime: Runtime;
  limits: Limits;
  mounts: readonly string[];
  workspaceDir?: string;
}

interface Made {
  container: Docker.Container;
  stream: Duplex;
  streamDone: Promise<void>;
  cleanup: () => Promise<void>;
}

export class ContainerRunner implements Runner {
  readonly kind = "container";
  private readonly docker: Docker;
  /** this process: a container of our owner but another instance was left by a predecessor */
  private readonly instance = randomUUID();
  private readonly pool: WarmPool<WarmContainer> | undefined;
  private readonly removals = new Set<Promise<unknown>>();
  /** containers of this process still in use (waiting in the pool or running a hook) */
  private readonly live = new Set<string>();
  /** container creations under way: their ids are not known yet */
  private creating = 0;

  constructor(private readonly options: ContainerRunnerOptions) {
    this.docker = options.docker ?? new Docker();
    if (options.pool && options.pool.size > 0) this.pool = new WarmPool<WarmContainer>(options.pool);
  }

  async run(request: RunRequest): Promise<RunResult> {
    const shape = this.shapeOf(request);
    if (this.pool && !request.signal?.aborted) {
      const warm = this.pool.take(shapeKey(shape), () => this.prestart(shape));
      if (warm) {
        const pool = this.pool;
        return warm.claim(request, (p) => this.track(p)).finally(() => pool.refill());
      }
    }
    return this.runCold(request, shape);
  }

  /** Starts keeping pre-started containers for runs shaped like `request` (no command needed). */
  prewarm(request: Pick<RunRequest, "limits"> & Partial<RunRequest>): void {
    const shape = this.shapeOf(request as RunRequest);
    this.pool?.want(shapeKey(shape), () => this.prestart(shape));
  }

  /** Resolves once a pre-started container shaped for `request` is ready (false: none came in time). */
  async warmFor(request: Pick<RunRequest, "limits"> & Partial<RunRequest>, timeoutMs = 30_000): Promise<boolean> {
    if (!this.pool) return false;
    const shape = this.shapeOf(request as RunRequest);
    const key = shapeKey(shape);
    const end = Date.now() + timeoutMs;
    while (Date.now() < end) {
      this.pool.want(key, () => this.prestart(shape));
      if (this.pool.readyCount(key) > 0) return true;
      await new Promise((r) => setTimeout(r, 20));
    }
    return false;
  }

  /** Resolves when containers used by finished runs are removed, and the pool is emptied when `close`. */
  async drain(opts: { close?: boolean } = {}): Promise<void> {
    if (opts.close) await this.pool?.close();
    while (this.removals.size > 0) await Promise.allSettled([...this.removals]);
  }

  poolStats(): { ready: number; starting: number } {
    return this.pool?.stats() ?? { ready: 0, starting: 0 };
  }

  private track(p: Promise<unknown>): void {
    this.removals.add(p);
    void p.finally(() => this.removals.delete(p));
  }

  private shapeOf(request: RunRequest): Shape {
    return {
      image: request.image ?? this.options.defaultImage ?? DEFAULT_IMAGE,
      runtime: request.runtime ?? this.options.defaultRuntime ?? "runc",
      limits: request.limits,
      mounts: request.mounts ?? [],
      workspaceDir: request.workspaceDir,
    };
  }

  private labels(runId: string, deadlineMs: number, eventId?: string): Record<string, string> {
    return {
      [LABEL_MANAGED]: "true",
      [LABEL_RUN_ID]: runId,
      [LABEL_DEADLINE]: String(deadlineMs),
      [LABEL_INSTANCE]: this.instance,
      ...(this.options.owner ? { [LABEL_OWNER]: this.options.owner } : {}),
      ...(eventId ? { [LABEL_EVENT_ID]: eventId } : {}),
    };
  }

  /**
   * Creates (not starts) a container of `shape` running `cmd`, attached, with its copy-on-write
   * workspace. Cold and warm runs both come through here: one lockdown for both.
   */
  private async make(shape: Shape, cmd: string[], env: Record<string, string>, cwd: string | undefined, labels: Record<string, string>): Promise<Made> {
    const runId = labels[LABEL_RUN_ID]!;
    let dirs: CowDirs | undefined;
    let volumeName: string | undefined;
    let container: Docker.Container | undefined;
    const cleanup = async () => {
      // Whether or not the engine answers now, the container is no longer in use: if this removal
      // fails, the reaper's next sweep removes it.
      if (container) this.live.delete(container.id);
      await container?.remove({ force: true, v: true }).catch(() => undefined);
      if (volumeName) await this.docker.getVolume(volumeName).remove().catch(() => undefined);
      await dirs?.remove();
    };
    try {
      const { limits } = shape;
      const mounts: Docker.MountSettings[] = shape.mounts.map((path) => ({ Type: "bind", Source: path, Target: path, ReadOnly: true }));
      const tmpfs: Record<string, string> = {
        "/tmp": `rw,nosuid,nodev,size=${limits.tmpBytes},mode=1777`,
        [HOOK_HOME]: `rw,nosuid,nodev,size=${Math.max(1 << 20, limits.tmpBytes >> 2)},uid=${HOOK_UID},gid=${HOOK_GID},mode=0700`,
      };
      if (shape.workspaceDir) {
        dirs = await cowDirs(this.options.scratchDir, runId);
        volumeName = `hookbox-ws-${runId}`;
        await this.docker.createVolume({
          Name: volumeName,
          Driver: "local",
          DriverOpts: { type: "overlay", device: "overlay", o: `lowerdir=${shape.workspaceDir},upperdir=${dirs.upper},workdir=${dirs.work}` },
          Labels: labels,
        });
        mounts.push({ Type: "volume", Source: volumeName, Target: WORKSPACE_PATH });
      } else {
        // No workspace: an empty, writable one, so hooks that log into their cwd still work.
        tmpfs[WORKSPACE_PATH] = `rw,nosuid,nodev,size=${limits.tmpBytes},uid=${HOOK_UID},gid=${HOOK_GID},mode=0755`;
      }
      this.creating++;
      container = await this.docker.createContainer({
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
          Mounts: mounts,
          CapDrop: ["ALL"],
          SecurityOpt: ["no-new-privileges"],
          Memory: limits.memoryBytes,
          MemorySwap: limits.memoryBytes, // equal to Memory: no swap
          NanoCpus: Math.round(limits.cpus * 1e9),
          PidsLimit: limits.pids,
          Ulimits: [{ Name: "nofile", Soft: limits.openFiles, Hard: limits.openFiles }],
          // SERVICE.md §5: an init where the runtime takes one; gVisor reaps on its own (and its
          // exchange with a pre-started container loses output under Docker's init).
          Init: shape.runtime === "runc",
          IpcMode: "private",
          Privileged: false,
        },
      }).finally(() => this.creating--);
      this.live.add(container.id);
      const stream = (await container.attach({ stream: true, stdin: true, stdout: true, stderr: true, hijack: true })) as unknown as Duplex;
      const streamDone = new Promise<void>((resolve) => {
        stream.on("end", resolve);
        stream.on("close", resolve);
        stream.on("error", () => resolve());
      });
      return { container, stream, streamDone, cleanup };
    } catch (err) {
      await cleanup();
      throw err;
    }
  }

  private async runCold(request: RunRequest, shape: Shape): Promise<RunResult> {
    const t0 = performance.now();
    const capture = new OutputCapture(request.limits.maxOutputBytes, () => void stop("output_truncated"));
    let made: Made | undefined;
    let stopped: StopReason | null = null;
    let tStarted = t0;
    const stop = async (why: StopReason) => {
      stopped ??= why;
      // SIGKILL to the container: its whole process tree, init included.
      await made?.container.kill({ signal: "SIGKILL" }).catch(() => undefined);
    };
    const onAbort = () => void stop("cancelled");
    let finished: RunResult | undefined;
    const result = (tail: RunEnd): RunResult =>
      (finished = { ...tail, stdout: capture.stdout.text(), stderr: capture.stderr.text(), startMs: tStarted - t0, durationMs: performance.now() - tStarted, warm: false } as RunResult);
    let timer: NodeJS.Timeout | undefined;
    try {
      if (request.signal?.aborted) return result({ outcome: "cancelled", exitCode: null });
      const env = hookEnv({ declared: request.env, projectDir: WORKSPACE_PATH, runtime: "container", home: HOOK_HOME });
      const labels = this.labels(randomUUID(), Date.now() + request.timeoutMs + REAP_GRACE_MS, request.eventId);
      made = await this.make(shape, ["/bin/sh", "-c", request.command], env, request.cwd, labels);
      const { container, stream, streamDone } = made;
      container.modem.demuxStream(stream, sink((c) => capture.stdout.push(c)), sink((c) => capture.stderr.push(c)));
      request.signal?.addEventListener("abort", onAbort, { once: true });
      await container.start();
      tStarted = performance.now();
      timer = setTimeout(() => void stop("timed_out"), request.timeoutMs);
      stream.end(Buffer.from(request.stdin));
      const waited = (await container.wait()) as { StatusCode: number };
      clearTimeout(timer);
      // The engine closes the attach stream once the container is gone; read what is left.
      await Promise.race([streamDone, new Promise((r) => setTimeout(r, 1_000))]);
      stream.destroy();
      const reason = stopped as StopReason | null;
      if (reason) return result(stoppedEnd(reason, capture));
      const state = (await container.inspect()).State;
      if (state.OOMKilled) return result({ outcome: "oom_killed", exitCode: waited.StatusCode });
      return result({ outcome: "exited", exitCode: waited.StatusCode });
    } catch (err) {
      return result({ outcome: "failed_to_start", exitCode: null, error: describeError(err) });
    } finally {
      clearTimeout(timer);
      request.signal?.removeEventListener("abort", onAbort);
      const tRemove = performance.now();
      await made?.cleanup();
      if (finished && made) finished.removeMs = performance.now() - tRemove;
    }
  }

  /** A container of `shape`, started, its wrapper waiting on stdin for the one hook it will run. */
  private async prestart(shape: Shape): Promise<WarmContainer> {
    const idleMs = this.options.pool?.idleMs ?? 0;
    const deadline = Date.now() + idleMs + (this.options.maxTimeoutMs ?? 60_000) + REAP_GRACE_MS;
    const env = hookEnv({ declared: {}, projectDir: WORKSPACE_PATH, runtime: "container", home: HOOK_HOME });
    const made = await this.make(shape, ["/bin/sh", "-c", HANDOVER_SCRIPT], env, undefined, this.labels(randomUUID(), deadline));
    try {
      await made.container.start();
    } catch (err) {
      await made.cleanup();
      throw err;
    }
    const warm = new WarmContainer(handleOf(made));
    await Promise.race([warm.up, new Promise((r) => setTimeout(r, 10_000))]);
    if (!warm.alive) {
      await warm.discard();
      throw new Error("the pre-started container's wrapper did not come up");
    }
    return warm;
  }

  /** Is the engine reachable, with the runtimes and images hooks need? For /readyz. */
  async status(images: readonly string[], runtimes: readonly Runtime[]): Promise<EngineStatus> {
    try {
      const info = (await this.docker.info()) as { Runtimes?: Record<string, unknown> };
      const have = Object.keys(info.Runtimes ?? {});
      const problems = runtimes.filter((r) => !have.includes(r)).map((r) => `runtime ${r} is not registered with the engine`);
      for (const image of images) {
        await this.docker.getImage(image).inspect().catch(() => problems.push(`image ${image} is missing (run npm run setup)`));
      }
      return { ok: problems.length === 0, problems, runtimes: have };
    } catch (err) {
      return { ok: false, problems: [`container engine unreachable: ${describeError(err)}`], runtimes: [] };
    }
  }

  /**
   * Removes hookbox containers and volumes whose deadline has passed, those our owner's earlier
   * process left (after kill -9, say), and ours that are no longer in use but could not be removed
   * then (the engine was down); returns how many containers.
   */
  async reap(nowMs = Date.now()): Promise<number> {
    const filters = JSON.stringify({ label: [`${LABEL_MANAGED}=true`] });
    const listed = await this.docker.listContainers({ all: true, filters });
    const orphan = (labels: Record<string, string>) =>
      this.options.owner !== undefined && labels[LABEL_OWNER] === this.options.owner && labels[LABEL_INSTANCE] !== this.instance;
    // While a creation is under way its container is not in `live` yet: then only older ones count.
    const dropped = (c: Docker.ContainerInfo) =>
      c.Labels[LABEL_INSTANCE] === this.instance && !this.live.has(c.Id) && (this.creating === 0 || c.Created * 1000 < nowMs - 5_000);
    const stale = listed.filter((c) => Number(c.Labels[LABEL_DEADLINE] ?? 0) < nowMs || orphan(c.Labels) || dropped(c));
    await Promise.all(stale.map((c) => this.docker.getContainer(c.Id).remove({ force: true, v: true }).catch(() => undefined)));
    const { Volumes: volumes } = await this.docker.listVolumes({ filters });
    await Promise.all(
      (volumes ?? [])
        .filter((v) => Number((v.Labels ?? {})[LABEL_DEADLINE] ?? 0) < nowMs || orphan(v.Labels ?? {}))
        .map((v) => this.docker.getVolume(v.Name).remove().catch(() => undefined)),
    );
    return stale.length;
  }
}

/** Everything that makes two containers interchangeable before they get their hook. */
function shapeKey(shape: Shape): string {
  // A re-uploaded workspace is a new folder at the same path: its inode tells the two apart.
  const stamp = shape.workspaceDir ? statSync(shape.workspaceDir, { throwIfNoEntry: false })?.ino ?? 0 : null;
  return JSON.stringify([shape.image, shape.runtime, shape.limits, [...shape.mounts].sort(), shape.workspaceDir ?? null, stamp]);
}


function handleOf(made: Made): ContainerHandle {
  return {
    stream: made.stream,
    streamDone: made.streamDone,
    cleanup: made.cleanup,
    demux: (stdout, stderr) => made.container.modem.demuxStream(made.stream, stdout, stderr),
    kill: () => made.container.kill({ signal: "SIGKILL" }).then(() => undefined, () => undefined),
    state: async () => {
      const state = (await made.container.inspect()).State;
      return { oomKilled: state.OOMKilled, exitCode: state.ExitCode };
    },
  };
}
