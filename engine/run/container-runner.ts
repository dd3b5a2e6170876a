/**
 * @module Container runner — the only file that talks to the Docker engine. One new container per
 * hook run, never reused, removed afterwards; every limit of SERVICE.md §5. Also the engine's
 * health check and the reaper's sweep, since both need the engine.
 */
import Docker from "dockerode";
import { randomUUID } from "node:crypto";
import { posix } from "node:path";
import { Writable } from "node:stream";
import {
  DEFAULT_IMAGE, HOOK_GID, HOOK_HOME, HOOK_UID, LABEL_DEADLINE, LABEL_EVENT_ID, LABEL_INSTANCE, LABEL_MANAGED,
  LABEL_OWNER, LABEL_RUN_ID, REAP_GRACE_MS, WORKSPACE_PATH, type Runtime,
} from "../names.js";
import { OutputCapture } from "./output-capture.js";
import { hookEnv } from "./hook-env.js";
import { cowDirs, type CowDirs } from "./workspace-view.js";
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
}

type StopReason = "timed_out" | "output_truncated" | "cancelled";

export interface EngineStatus {
  ok: boolean;
  problems: string[];
  runtimes: string[];
}

export class ContainerRunner implements Runner {
  readonly kind = "container";
  private readonly docker: Docker;
  /** this process: a container of our owner but another instance was left by a predecessor */
  private readonly instance = randomUUID();

  constructor(private readonly options: ContainerRunnerOptions) {
    this.docker = options.docker ?? new Docker();
  }

  async run(request: RunRequest): Promise<RunResult> {
    const t0 = performance.now();
    const runId = randomUUID();
    const runtime = request.runtime ?? this.options.defaultRuntime ?? "runc";
    const capture = new OutputCapture(request.limits.maxOutputBytes, () => void stop("output_truncated"));
    let container: Docker.Container | undefined;
    let dirs: CowDirs | undefined;
    let volumeName: string | undefined;
    let stopped: StopReason | null = null;
    let tStarted = t0;
    const stop = async (why: StopReason) => {
      stopped ??= why;
      // SIGKILL to the container: its whole process tree, init included.
      await container?.kill({ signal: "SIGKILL" }).catch(() => undefined);
    };
    const onAbort = () => void stop("cancelled");
    const result = (tail: RunEnd): RunResult =>
      ({
        ...tail,
        stdout: capture.stdout.text(),
        stderr: capture.stderr.text(),
        startMs: tStarted - t0,
        durationMs: performance.now() - tStarted,
      }) as RunResult;
    const labels = {
      [LABEL_MANAGED]: "true",
      [LABEL_RUN_ID]: runId,
      [LABEL_DEADLINE]: String(Date.now() + request.timeoutMs + REAP_GRACE_MS),
      [LABEL_INSTANCE]: this.instance,
      ...(this.options.owner ? { [LABEL_OWNER]: this.options.owner } : {}),
      ...(request.eventId ? { [LABEL_EVENT_ID]: request.eventId } : {}),
    };
    let timer: NodeJS.Timeout | undefined;
    try {
      if (request.signal?.aborted) return result({ outcome: "cancelled", exitCode: null });
      const mounts: Docker.MountSettings[] = (request.mounts ?? []).map((path) => ({
        Type: "bind", Source: path, Target: path, ReadOnly: true,
      }));
      const tmpfs: Record<string, string> = {
        "/tmp": `rw,nosuid,nodev,size=${request.limits.tmpBytes},mode=1777`,
        [HOOK_HOME]: `rw,nosuid,nodev,size=${Math.max(1 << 20, request.limits.tmpBytes >> 2)},uid=${HOOK_UID},gid=${HOOK_GID},mode=0700`,
      };
      if (request.workspaceDir) {
        dirs = await cowDirs(this.options.scratchDir, runId);
        volumeName = `hookbox-ws-${runId}`;
        await this.docker.createVolume({
          Name: volumeName,
          Driver: "local",
          DriverOpts: { type: "overlay", device: "overlay", o: `lowerdir=${request.workspaceDir},upperdir=${dirs.upper},workdir=${dirs.work}` },
          Labels: labels,
        });
        mounts.push({ Type: "volume", Source: volumeName, Target: WORKSPACE_PATH });
      } else {
        // No workspace: an empty, writable one, so hooks that log into their cwd still work.
        tmpfs[WORKSPACE_PATH] = `rw,nosuid,nodev,size=${request.limits.tmpBytes},uid=${HOOK_UID},gid=${HOOK_GID},mode=0755`;
      }
      const env = hookEnv({ declared: request.env, projectDir: WORKSPACE_PATH, runtime: "container", home: HOOK_HOME });
      container = await this.docker.createContainer({
        Image: request.image ?? this.options.defaultImage ?? DEFAULT_IMAGE,
        Cmd: ["/bin/sh", "-c", request.command],
        User: `${HOOK_UID}:${HOOK_GID}`,
        WorkingDir: request.cwd ? posix.join(WORKSPACE_PATH, posix.normalize(request.cwd)) : WORKSPACE_PATH,
        Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
        Labels: labels,
        AttachStdin: true, AttachStdout: true, AttachStderr: true,
        OpenStdin: true, StdinOnce: true, Tty: false,
        NetworkDisabled: true,
        HostConfig: {
          Runtime: runtime,
          NetworkMode: "none",
          ReadonlyRootfs: true,
          Tmpfs: tmpfs,
          Mounts: mounts,
          CapDrop: ["ALL"],
          SecurityOpt: ["no-new-privileges"],
          Memory: request.limits.memoryBytes,
          MemorySwap: request.limits.memoryBytes, // equal to Memory: no swap
          NanoCpus: Math.round(request.limits.cpus * 1e9),
          PidsLimit: request.limits.pids,
          Ulimits: [{ Name: "nofile", Soft: request.limits.openFiles, Hard: request.limits.openFiles }],
          // SERVICE.md §5: an init where the runtime takes one; gVisor reaps on its own.
          Init: runtime === "runc",
          IpcMode: "private",
          Privileged: false,
        },
      });
      const stream = await container.attach({ stream: true, stdin: true, stdout: true, stderr: true, hijack: true });
      const streamDone = new Promise<void>((resolve) => {
        stream.on("end", resolve);
        stream.on("close", resolve);
        stream.on("error", () => resolve());
      });
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
      (stream as unknown as { destroy(): void }).destroy();
      const state = (await container.inspect()).State;
      const reason = stopped as StopReason | null;
      if (reason === "timed_out") return result({ outcome: "timed_out", exitCode: null });
      if (reason === "cancelled") return result({ outcome: "cancelled", exitCode: null });
      if (reason === "output_truncated")
        return result({ outcome: "output_truncated", exitCode: null, stream: capture.overflowedStream ?? "stdout" });
      if (state.OOMKilled) return result({ outcome: "oom_killed", exitCode: waited.StatusCode });
      return result({ outcome: "exited", exitCode: waited.StatusCode });
    } catch (err) {
      return result({ outcome: "failed_to_start", exitCode: null, error: describe(err) });
    } finally {
      clearTimeout(timer);
      request.signal?.removeEventListener("abort", onAbort);
      await container?.remove({ force: true, v: true }).catch(() => undefined);
      if (volumeName) await this.docker.getVolume(volumeName).remove().catch(() => undefined);
      await dirs?.remove();
    }
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
      return { ok: false, problems: [`container engine unreachable: ${describe(err)}`], runtimes: [] };
    }
  }

  /**
   * Removes hookbox containers and volumes whose deadline has passed, and those our owner's earlier
   * process left (after kill -9, say); returns how many containers.
   */
  async reap(nowMs = Date.now()): Promise<number> {
    const filters = JSON.stringify({ label: [`${LABEL_MANAGED}=true`] });
    const listed = await this.docker.listContainers({ all: true, filters });
    const orphan = (labels: Record<string, string>) =>
      this.options.owner !== undefined && labels[LABEL_OWNER] === this.options.owner && labels[LABEL_INSTANCE] !== this.instance;
    const stale = listed.filter((c) => Number(c.Labels[LABEL_DEADLINE] ?? 0) < nowMs || orphan(c.Labels));
    await Promise.all(stale.map((c) => this.docker.getContainer(c.Id).remove({ force: true, v: true }).catch(() => undefined)));
    const { Volumes: volumes } = await this.docker.listVolumes({ filters });
    await Promise.all(
      (volumes ?? [])
        .filter((v) => Number((v.Labels ?? {})[LABEL_DEADLINE] ?? 0) < nowMs || orphan(v.Labels ?? {}))
        .map((v) => this.docker.getVolume(v.Name).remove().catch(() => undefined)),
    );
    return stale.length;
  }

  /** Hookbox containers that exist now (tests, metrics). */
  async listManaged(): Promise<string[]> {
    const filters = JSON.stringify({ label: [`${LABEL_MANAGED}=true`] });
    return (await this.docker.listContainers({ all: true, filters })).map((c) => c.Id);
  }
}

function sink(onChunk: (chunk: Buffer) => void): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, callback) {
      onChunk(chunk);
      callback();
    },
  });
}

function describe(err: unknown): string {
  if (err && typeof err === "object" && "json" in err) {
    const json = (err as { json?: { message?: string } }).json;
    if (json?.message) return json.message;
  }
  return err instanceof Error ? err.message : String(err);
}
