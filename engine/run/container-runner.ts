/**
 * @module Container runner: every hook runs in a container of its own, never reused, removed
 * afterwards — either a new one (cold-run.ts) or one pre-started by the warm pool and handed its
 * one hook (warm-start.ts, warm-container.ts). One pool serves every workspace: a pre-started
 * container is shaped by image, runtime, limits and mounts only, and the workspace reaches it at
 * hand-over as a tar (workspace-archive.ts) unpacked into its own /workspace, a tmpfs of tmp_size.
 * Also the engine's health check (engine-status.ts) and the reaper's sweep (reaper.ts). Only
 * docker-client.ts talks to the engine, every call under a deadline.
 */
import { randomUUID } from "node:crypto";
import { DEFAULT_IMAGE, type Runtime } from "../names.js";
import { runCold } from "./cold-run.js";
import { DockerClient } from "./docker-client.js";
import { engineStatus, type EngineStatus } from "./engine-status.js";
import type { Fleet, Shape } from "./make-container.js";
import { thisProcess } from "./process-info.js";
import { reapLeftovers, type ReapOptions } from "./reaper.js";
import { WarmPool, type PoolOptions } from "./warm-pool.js";
import { WorkspaceArchives } from "./workspace-archive.js";
import { prestart } from "./warm-start.js";
import type { WarmContainer } from "./warm-container.js";
import { clearScratch, scratchBoundProblem } from "./workspace-view.js";
import { STALE_WORKSPACE_ERROR, type RunRequest, type RunResult, type Runner } from "./types.js";

export type { EngineStatus } from "./engine-status.js";

export interface ContainerRunnerOptions {
  /** Engine connection; default: DOCKER_HOST or the local socket, under `engineTimeoutMs`. */
  client?: DockerClient;
  /** The longest one engine call may take; a run ends at most this long past its timeout. @default 5 s */
  engineTimeoutMs?: number;
  /** Host folder for the copy-on-write layers of workspaces (a size-limited tmpfs per run). */
  scratchDir: string;
  defaultImage?: string;
  defaultRuntime?: Runtime;
  /** Names this service (its data_dir, say): containers of the same owner made by another process are leftovers. */
  owner?: string;
  /** Pre-started single-use containers; absent or size 0: every run starts its own. */
  pool?: PoolOptions;
  /** The longest a pooled container may be asked to run (the server's max_timeout). @default 60 s */
  maxTimeoutMs?: number;
  /** Where what an operator should know is said (pino's warn): an image whose pre-started containers take no workspace. */
  warn?: (fields: Record<string, unknown>, message: string) => void;
}

/** Time hookbox may take to prepare a run (build a workspace's archive) without taking it from the hook. @default 100 ms */
export const PREPARE_GRACE_MS = 100;

export class ContainerRunner implements Runner {
  readonly kind = "container";
  private readonly fleet: Fleet;
  private readonly pool: WarmPool<WarmContainer> | undefined;
  private readonly removals = new Set<Promise<unknown>>();
  private readonly archives = new WorkspaceArchives();
  /**
   * Shapes whose pre-started containers chose the sh wrapper (no bash, or a `head -c` that reads
   * ahead: handover.ts): they take no workspace (`head -c` may read past the archive, into the
   * event — BusyBox's does), so a run with one goes cold there.
   */
  private readonly noWorkspaceShapes = new Set<string>();
  private statusInFlight: Promise<EngineStatus> | undefined;

  constructor(private readonly options: ContainerRunnerOptions) {
    const removals = this.removals;
    this.fleet = {
      client: options.client ?? new DockerClient(options.engineTimeoutMs),
      scratchDir: options.scratchDir,
      instance: randomUUID(),
      process: thisProcess(),
      owner: options.owner,
      live: new Set(),
      creating: 0,
      abandoned: new Map(),
      track(p) {
        const settled = p.catch(() => undefined);
        removals.add(settled);
        void settled.finally(() => removals.delete(settled));
      },
    };
    if (options.pool && options.pool.size > 0) this.pool = new WarmPool<WarmContainer>(options.pool);
  }

  async run(request: RunRequest): Promise<RunResult> {
    const t0 = performance.now();
    const shape = this.shapeOf(request);
    let timeoutMs = request.timeoutMs;
    if (this.pool && request.poolable !== false && !request.signal?.aborted) {
      // The workspace goes in the container's /workspace, a tmpfs of tmp_size that also takes what
      // the hook writes — and whose pages count against the container's memory: one that fills more
      // than half of the tmpfs, or a quarter of the memory, runs cold, on its overlay (unpacked
      // there, it could leave the hook too little memory, or run out of it before the hook starts).
      const fits = Math.min(request.limits.tmpBytes / 2, request.limits.memoryBytes / 4);
      // Waited for no longer than the hook's time (the event's deadline is in it) nor past a
      // cancellation, builds taking turns between tenants: a build that has started goes on for the
      // cache (a slow disk's), one no event waits for any more before its turn is dropped.
      const wait = { party: request.party ?? "", waitMs: request.timeoutMs, ...(request.signal ? { signal: request.signal } : {}) };
      const archive = request.workspaceDir ? await this.archives.get(request.workspaceDir, fits, { ...wait, ...(request.workspaceVersion !== undefined ? { version: request.workspaceVersion } : {}) }).catch(() => null) : undefined;
      // Replaced or deleted while its files were packed (or waited for): neither these files nor
      // the folder's new ones are the workspace its hooks were read from.
      if (request.workspaceCurrent && !request.workspaceCurrent()) return { outcome: "failed_to_start", exitCode: null, error: STALE_WORKSPACE_ERROR, stdout: "", stderr: "", startMs: 0, durationMs: performance.now() - t0 };
      // Building the workspace's archive (not when it is cached) takes from the hook's time: the
      // hook gets what is left, and a timeout then is hookbox's doing (`preparedMs`), not the hook's.
      const spentMs = performance.now() - t0;
      if (spentMs > PREPARE_GRACE_MS) {
        timeoutMs = Math.floor(request.timeoutMs - spentMs);
        if (timeoutMs <= 0) return { outcome: "failed_to_start", exitCode: null, error: `the workspace was not ready within the hook's ${request.timeoutMs} ms`, stdout: "", stderr: "", startMs: 0, durationMs: spentMs, preparedMs: Math.round(spentMs) };
      }
      // (with what a warm run's hand-over took of it, when that cut the hook's time short too)
      const prepared = <R extends RunResult>(r: R): R => (spentMs > PREPARE_GRACE_MS ? { ...r, preparedMs: Math.round(spentMs) + (r.preparedMs ?? 0) } : r);
      const pooled = { ...shape, workspaceDir: undefined };
      const key = shapeKey(pooled);
      const withWorkspace = archive !== undefined && archive !== null && archive.length > 0;
      if (archive !== null && !request.signal?.aborted && !(withWorkspace && this.noWorkspaceShapes.has(key))) {
        let warm = this.pool.take(key, () => this.prestart(pooled), request.party);
        if (warm && withWorkspace && warm.wrapperKind === "sh") {
          this.noWorkspaceShapes.add(key);
          this.options.warn?.({ image: pooled.image, runtime: pooled.runtime }, "this image's pre-started containers take no workspace (no bash, or a head -c that reads ahead — BusyBox's): its runs with a workspace start cold");
          this.fleet.track(warm.discard());
          this.pool.refill();
          warm = undefined;
        }
        if (warm) {
          const pool = this.pool;
          const { beforeHook, ...claimed } = await warm.claim({ ...request, timeoutMs }, (p) => this.fleet.track(p), archive).finally(() => pool.refill());
          // The hand-over failed before the hook ran (its workspace did not fit, say): it runs cold,
          // once, in the time the hook has left — never a second full timeout.
          const leftMs = Math.floor(request.timeoutMs - (performance.now() - t0));
          if (!beforeHook || request.signal?.aborted || leftMs <= 0) return prepared(claimed as RunResult);
          return { ...(await runCold(this.fleet, { ...request, timeoutMs: leftMs }, shape)), preparedMs: Math.round(request.timeoutMs - leftMs) };
        }
      }
      return prepared(await runCold(this.fleet, { ...request, timeoutMs }, shape));
    }
    return runCold(this.fleet, request, shape);
  }

  /** Starts keeping pre-started containers for runs shaped like `request` (no command needed). */
  prewarm(request: Pick<RunRequest, "limits"> & Partial<RunRequest>): void {
    const shape = { ...this.shapeOf(request as RunRequest), workspaceDir: undefined };
    this.pool?.want(shapeKey(shape), () => this.prestart(shape));
  }

  /** Resolves once a pre-started container shaped for `request` is ready (false: none came in time). */
  async warmFor(request: Pick<RunRequest, "limits"> & Partial<RunRequest>, timeoutMs = 30_000): Promise<boolean> {
    if (!this.pool) return false;
    const shape = { ...this.shapeOf(request as RunRequest), workspaceDir: undefined };
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

  /** Is the engine reachable, with the runtimes and images hooks need? For /readyz; one check at a time. */
  status(images: readonly string[], runtimes: readonly Runtime[]): Promise<EngineStatus> {
    this.statusInFlight ??= engineStatus(this.fleet.client, images, runtimes).finally(() => (this.statusInFlight = undefined));
    return this.statusInFlight;
  }

  /**
   * Removes hookbox containers and volumes whose deadline has passed, ours that are no longer in
   * use but could not be removed then (the engine was down), and with `orphans` those our owner's
   * earlier process left (after kill -9, say); returns how many containers.
   */
  reap(nowMs = Date.now(), opts: ReapOptions = {}): Promise<number> {
    return reapLeftovers(this.fleet, nowMs, opts);
  }

  /**
   * At shutdown: gives creations we gave up on (the engine did not answer in time) up to `maxMs`
   * to appear, removing each that does; returns how many never did.
   */
  async reapAbandoned(maxMs: number): Promise<number> {
    const end = Date.now() + maxMs;
    while (this.fleet.abandoned.size > 0 && Date.now() < end) {
      await this.reap().catch(() => 0);
      if (this.fleet.abandoned.size > 0) await new Promise((r) => setTimeout(r, 250));
    }
    return this.fleet.abandoned.size;
  }

  /** Start-up check: the reason writes to /workspace cannot be bounded here, or undefined. */
  scratchProblem(): Promise<string | undefined> {
    return scratchBoundProblem(this.options.scratchDir);
  }

  /** Removes the copy-on-write layers an earlier process left (its tmpfs mounts, then its folders). */
  clearScratch(): Promise<void> {
    return clearScratch(this.options.scratchDir);
  }

  private prestart(shape: Shape): Promise<WarmContainer> {
    return prestart(this.fleet, shape, { idleMs: this.options.pool?.idleMs ?? 0, maxTimeoutMs: this.options.maxTimeoutMs ?? 60_000 });
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
}

/** Everything that makes two pre-started containers interchangeable before they get their hook (and workspace). */
function shapeKey(shape: Shape): string {
  return JSON.stringify([shape.image, shape.runtime, shape.limits, [...shape.mounts].sort()]);
}
