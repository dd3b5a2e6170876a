/**
 * @module The one seam to the Docker engine: the only dockerode import. Every call carries a
 * deadline — the engine timeout (`[sandbox] engine_timeout_ms`), and the caller's signal (a run's
 * deadline or its cancellation) when given — so a hung or paused engine holds nothing past it.
 */
import Docker from "dockerode";
import type { Duplex, Readable, Writable } from "node:stream";

export type ContainerSpec = Docker.ContainerCreateOptions;
export type MountSpec = Docker.MountSettings;
export type VolumeSpec = Docker.VolumeCreateOptions;

/** The engine did not answer a call in time. Its message is what /readyz and a run's error say. */
export class EngineTimeoutError extends Error {
  override readonly name = "EngineTimeoutError";
  constructor(readonly timeoutMs: number) {
    super(`container engine did not answer within ${timeoutMs} ms`);
  }
}

/** A container or volume hookbox's label found, as the reaper needs it. */
export interface Listed {
  id: string;
  labels: Record<string, string>;
  /** epoch seconds; 0 for volumes */
  created: number;
  /** the container's name, without the engine's leading "/"; a volume's name */
  name: string;
}

/** Whether one line of the engine's event stream says an out-of-memory kill of container `id`. */
function isOomOf(line: string, id: string): boolean {
  try {
    const event = JSON.parse(line) as { status?: unknown; Action?: unknown; id?: unknown; Actor?: { ID?: unknown } };
    return (event.status === "oom" || event.Action === "oom") && (event.id === id || event.Actor?.ID === id);
  } catch {
    return false;
  }
}

/** A container's exit code when its process was killed (128 + SIGKILL): how an out-of-memory kill ends one. */
const SIGKILL_EXIT = 137;

/** How long past its inspection a killed container's late "oom" event is waited for. */
export const LATE_OOM_WAIT_MS = 500;

/** @default engine timeout 5 s — `[sandbox] engine_timeout_ms` */
export const DEFAULT_ENGINE_TIMEOUT_MS = 5_000;

export class DockerClient {
  private readonly docker: Docker;

  constructor(readonly timeoutMs = DEFAULT_ENGINE_TIMEOUT_MS, docker?: Docker) {
    // Default: DOCKER_HOST or the local socket, as dockerode reads it.
    this.docker = docker ?? new Docker();
  }

  createVolume(spec: VolumeSpec, signal?: AbortSignal): Promise<unknown> {
    return this.call(signal, (abortSignal) => this.docker.createVolume({ ...spec, abortSignal }));
  }

  removeVolume(name: string, signal?: AbortSignal): Promise<unknown> {
    return this.call(signal, (abortSignal) => this.docker.getVolume(name).remove({ abortSignal }));
  }

  /** Creates a container; resolves its id. */
  async createContainer(spec: ContainerSpec, signal?: AbortSignal): Promise<string> {
    return (await this.call(signal, (abortSignal) => this.docker.createContainer({ ...spec, abortSignal }))).id;
  }

  /** The container's stdin, stdout and stderr, multiplexed (demux them with `demux`). */
  async attach(id: string, signal?: AbortSignal): Promise<Duplex> {
    const opts = { stream: true, stdin: true, stdout: true, stderr: true, hijack: true };
    return (await this.call(signal, (abortSignal) => this.docker.getContainer(id).attach({ ...opts, abortSignal }))) as unknown as Duplex;
  }

  start(id: string, signal?: AbortSignal): Promise<unknown> {
    return this.call(signal, (abortSignal) => this.docker.getContainer(id).start({ abortSignal }));
  }

  /** Resolves when the container ends: as long as the hook may run, so only `signal` bounds it. */
  async wait(id: string, signal: AbortSignal): Promise<{ exitCode: number }> {
    const waited = (await this.call(signal, (abortSignal) => this.docker.getContainer(id).wait({ abortSignal }), null)) as { StatusCode: number };
    return { exitCode: waited.StatusCode };
  }

  /** SIGKILL to the container: its whole process tree, init included. Never throws. */
  kill(id: string): Promise<void> {
    return this.call(undefined, (abortSignal) => this.docker.getContainer(id).kill({ signal: "SIGKILL", abortSignal })).then(() => undefined, () => undefined);
  }

  /** Removes the container and its anonymous volumes, running or not. */
  remove(id: string, signal?: AbortSignal): Promise<unknown> {
    return this.call(signal, (abortSignal) => this.docker.getContainer(id).remove({ force: true, v: true, abortSignal }));
  }

  /**
   * `exitCode` is 0 while the container runs: read it only when `running` is false. A container
   * killed (137) without the engine's out-of-memory mark may still have been: the engine marks it only
   * when the kernel's out-of-memory event reaches it before the exit, which under load it may not.
   * Then its "oom" event is looked for, LATE_OOM_WAIT_MS past now at most.
   */
  async state(id: string, signal?: AbortSignal): Promise<{ running: boolean; oomKilled: boolean; exitCode: number }> {
    const { State } = await this.call(signal, (abortSignal) => this.docker.getContainer(id).inspect({ abortSignal }));
    const running = State.Running || State.Restarting || State.Paused;
    const startedMs = Date.parse(State.StartedAt);
    // (A container never started says the zero time, year 1: nothing to look for.)
    const killed = !running && !State.OOMKilled && State.ExitCode === SIGKILL_EXIT && startedMs > 0;
    const oomKilled = State.OOMKilled || (killed && (await this.oomReported(id, startedMs, signal).catch(() => false)));
    return { running, oomKilled, exitCode: State.ExitCode };
  }

  /** Whether the engine reported an out-of-memory kill in the container between `sinceMs` and LATE_OOM_WAIT_MS from now. */
  private async oomReported(id: string, sinceMs: number, signal?: AbortSignal): Promise<boolean> {
    // Seconds with a fraction, as the engine takes them; from a second before the start (clocks round).
    const since = ((sinceMs - 1_000) / 1_000).toFixed(3);
    const until = ((Date.now() + LATE_OOM_WAIT_MS) / 1_000).toFixed(3);
    const filters = JSON.stringify({ container: [id], event: ["oom"] });
    const events = await this.call(signal, (abortSignal) => (this.docker.getEvents as (o: object) => Promise<Readable>)({ since, until, filters, abortSignal }));
    // The engine ends the stream at `until` by its own clock; this one's ends the wait too. Its
    // lines are read, not trusted to be what the filter asked for: an "oom" of this container.
    let text = "";
    return new Promise<boolean>((resolve) => {
      const done = (seen: boolean) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        events.destroy();
        resolve(seen);
      };
      const onAbort = () => done(false);
      const timer = setTimeout(() => done(false), 2 * LATE_OOM_WAIT_MS);
      signal?.addEventListener("abort", onAbort, { once: true });
      events.on("data", (chunk: Buffer) => {
        // At most a few lines of this container's: the bytes kept are bounded all the same.
        text = (text + chunk.toString("utf8")).slice(-64 * 1024);
        const lines = text.split("\n");
        text = lines.pop()!;
        if (lines.some((line) => isOomOf(line, id))) done(true);
      });
      events.once("end", () => done(false));
      events.once("error", () => done(false));
      events.once("close", () => done(false));
    });
  }

  /** The runtimes registered with the engine. */
  async runtimes(signal?: AbortSignal): Promise<string[]> {
    // dockerode 5 takes `abortSignal` here; its typings do not say so yet.
    const info = (await this.call(signal, (abortSignal) => (this.docker.info as (o: object) => Promise<unknown>)({ abortSignal }))) as { Runtimes?: Record<string, unknown> };
    return Object.keys(info.Runtimes ?? {});
  }

  /** Rejects when the image is missing (or the engine does not answer). */
  inspectImage(image: string, signal?: AbortSignal): Promise<unknown> {
    // dockerode's Image.inspect drops its options' abortSignal: the same request, dialled with it.
    return this.call(signal, (abortSignal) => new Promise((resolve, reject) => {
      const statusCodes = { 200: true, 404: "no such image", 500: "server error" };
      this.docker.modem.dial({ path: `/images/${image}/json`, method: "GET", abortSignal, statusCodes } as never, (err: unknown, data: unknown) => (err ? reject(err) : resolve(data)));
    }));
  }

  async listContainers(label: string, signal?: AbortSignal): Promise<Listed[]> {
    const filters = JSON.stringify({ label: [label] });
    const listed = await this.call(signal, (abortSignal) => this.docker.listContainers({ all: true, filters, abortSignal }));
    return listed.map((c) => ({ id: c.Id, labels: c.Labels ?? {}, created: c.Created, name: (c.Names?.[0] ?? "").replace(/^\//, "") }));
  }

  async listVolumes(label: string, signal?: AbortSignal): Promise<Listed[]> {
    const filters = JSON.stringify({ label: [label] });
    const { Volumes: volumes } = await this.call(signal, (abortSignal) => this.docker.listVolumes({ filters, abortSignal }));
    return (volumes ?? []).map((v) => ({ id: v.Name, labels: v.Labels ?? {}, created: 0, name: v.Name }));
  }

  /** Splits an attach stream into stdout and stderr (no engine call). */
  demux(stream: Duplex, stdout: Writable, stderr: Writable): void {
    demuxFrames(stream, stdout, stderr);
  }

  /**
   * Runs one engine call under a deadline: `timeoutMs` (null: none) and the caller's signal. It
   * settles at the deadline even if the call ignores its abort signal; an engine timeout rejects
   * with EngineTimeoutError, the caller's signal with its reason.
   */
  private call<T>(parent: AbortSignal | undefined, fn: (signal: AbortSignal) => Promise<T>, timeoutMs: number | null = this.timeoutMs): Promise<T> {
    const controller = new AbortController();
    const { signal } = controller;
    return new Promise<T>((resolve, reject) => {
      const timer = timeoutMs === null ? undefined : setTimeout(() => controller.abort(new EngineTimeoutError(timeoutMs)), timeoutMs);
      const onParent = () => controller.abort(parent?.reason ?? new Error("aborted"));
      const onAbort = () => settle(() => reject(signal.reason));
      let settled = false;
      const settle = (then: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        parent?.removeEventListener("abort", onParent);
        signal.removeEventListener("abort", onAbort);
        then();
      };
      signal.addEventListener("abort", onAbort, { once: true });
      if (parent?.aborted) onParent();
      else parent?.addEventListener("abort", onParent, { once: true });
      if (signal.aborted) return;
      fn(signal).then(
        (value) => settle(() => resolve(value)),
        (err: unknown) => settle(() => reject(signal.aborted ? signal.reason : err)),
      );
    });
  }
}

/**
 * Splits the engine's multiplexed attach stream (not a TTY): frames of an 8-byte header — the
 * stream at byte 0 (1 stdout, 2 stderr), the payload's length big-endian at bytes 4–7 — and the
 * payload. A hook decides how its output is framed (one frame a write: a hook writing a byte at a
 * time sends 9 bytes a byte), so one pass over each chunk, a header split across chunks kept in 8
 * bytes, and each stream's payloads of a chunk written once — never a copy of what is left per frame,
 * nor a call per frame on the stack (docker-modem's demuxStream recurses once a frame: a 64 KiB read
 * of 1-byte frames overflows the stack of the thread that serves everyone).
 */
export function demuxFrames(stream: Readable, stdout: Writable, stderr: Writable): void {
  const header = Buffer.alloc(8);
  let headerFill = 0;
  /** payload bytes of the current frame not read yet; its stream */
  let left = 0;
  let kind = 0;
  /** a header that is none of the three streams: the rest is passed on as stdout, as the engine's own client does */
  let raw = false;
  stream.on("data", (chunk: Buffer) => {
    if (raw) {
      stdout.write(chunk);
      return;
    }
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let i = 0;
    while (i < chunk.length) {
      if (left === 0) {
        const n = Math.min(8 - headerFill, chunk.length - i);
        chunk.copy(header, headerFill, i, i + n);
        headerFill += n;
        i += n;
        if (headerFill < 8) break;
        headerFill = 0;
        kind = header[0]!;
        left = header.readUInt32BE(4);
        if (kind > 2) {
          raw = true;
          out.push(Buffer.from(header), chunk.subarray(i));
          break;
        }
        continue;
      }
      const n = Math.min(left, chunk.length - i);
      (kind === 1 ? out : err).push(chunk.subarray(i, i + n));
      left -= n;
      i += n;
    }
    if (out.length > 0) stdout.write(out.length === 1 ? out[0] : Buffer.concat(out));
    if (err.length > 0) stderr.write(err.length === 1 ? err[0] : Buffer.concat(err));
  });
}
