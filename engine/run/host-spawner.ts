/**
 * @module The host spawner: policy hooks are forked by a small helper process, never by the
 * service itself. Node's spawn is synchronous up to the child's exec, and a fork copies the page
 * tables of everything the parent has touched: from the service — whose memory grows with its
 * workspace-archive cache, traces and buffers, to hundreds of MiB — every policy hook would hold
 * the event loop that serves every tenant for milliseconds (≈ 6 ms per 100 MiB here). The helper
 * stays the size of a bare Node and forks in about a millisecond, off the service's loop.
 *
 * The helper is one function, `helperMain`, run by `node -e` with no import of the project (so the
 * same code runs from the build and from the sources under test). It speaks over the IPC channel:
 * `run` → `started` (the pid), then `close` with the output — at most the cap + 1 byte of each
 * stream: the helper kills the group as soon as a stream passes the cap — or `error`; `kill`
 * signals a run's whole process group. A run may ask for a process started ahead (`prestart`: a
 * policy hook's PID namespace, host-runner.ts): the helper keeps two of each such argv waiting,
 * replaced once a run is over. One message back per run on the answer's path. The helper
 * has a process group of its own (a signal to the service's group misses it). When the service
 * goes, the channel closes and the helper kills every group it started and exits; when the helper
 * goes, the service kills every group it was told of, ends those runs as errors, and the next run
 * starts a new helper.
 */
import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from "node:child_process";
import type * as childProcess from "node:child_process";
import type * as fs from "node:fs";

export interface SpawnRequest {
  file: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdin: Uint8Array;
  /** per stream: past it the helper kills the run, and returns one byte more than this, so the caller sees the overflow */
  maxOutputBytes: number;
  /**
   * Run in a process of `file` `args` started before the run asked for it (with no environment, in
   * `/`), two kept ready per such argv: its program reads `prefix` from stdin (what to run, where,
   * with which environment), then the run's stdin follows. `cwd` is checked to be there (the prefix
   * goes there); `env` is the run's only as the prefix says it.
   */
  prestart?: { prefix: Uint8Array };
}

export interface SpawnHandlers {
  /** the process could not be started, or the helper was lost while it ran */
  onError(message: string): void;
  /**
   * the process ended and its output streams closed: what it printed, capped; `afterExitMs`, how
   * long the streams stayed open after the process itself ended (a process it left holding them,
   * after setsid, is killed or let go): how a run ended is judged at its exit, not at the close
   */
  onClose(end: { code: number | null; signal: NodeJS.Signals | null; stdout: Buffer; stderr: Buffer; afterExitMs: number; exitedAtMonoMs?: number }): void;
}

export interface SpawnedRun {
  /** SIGKILL to the run's whole process group (nothing once it has closed) */
  kill(): void;
  /** Stops waiting for the run: its handlers are never called (a run that did not end when killed). */
  forget(): void;
}

type HelperMessage =
  | { type: "started"; id: number; pid: number }
  | { type: "close"; id: number; code: number | null; signal: NodeJS.Signals | null; stdout: Uint8Array; stderr: Uint8Array; afterExitMs: number; exitedAtMonoMs?: number }
  | { type: "error"; id: number; message: string };

interface Run {
  handlers: SpawnHandlers;
  /** the helper that runs it: when that one is lost, so is the run, whichever helper is current */
  helper: ChildProcess;
  pid?: number;
}

export class HostSpawner {
  private helper: ChildProcess | undefined;
  private readonly runs = new Map<number, Run>();
  private nextId = 1;

  /** Starts the helper now (it takes a Node start-up, ≈ 50–100 ms), so the first hook does not wait for it. */
  warm(): void {
    this.ensure();
  }

  run(request: SpawnRequest, handlers: SpawnHandlers): SpawnedRun {
    const id = this.nextId++;
    const helper = this.ensure();
    const run: Run = { handlers, helper };
    this.runs.set(id, run);
    const refuse = (message: string) => this.end(id)?.handlers.onError(`the host spawner did not take the run: ${message}`);
    if (typeof helper.send !== "function" || !helper.connected) {
      // The helper could not even be started (no file descriptors left, say): an error, after the caller is set up.
      queueMicrotask(() => refuse("its helper process did not start"));
    } else {
      helper.channel?.ref();
      helper.send({ type: "run", id, ...request }, (err) => {
        if (err) refuse(err.message);
      });
    }
    return {
      kill: () => {
        if (this.runs.get(id) === run && helper.connected) helper.send({ type: "kill", id }, () => undefined);
      },
      forget: () => {
        if (this.runs.get(id) === run) this.end(id);
      },
    };
  }

  private ensure(): ChildProcess {
    if (this.helper?.connected) return this.helper;
    const helper = spawn(process.execPath, ["-e", `(${helperMain.toString()})()`], {
      stdio: ["ignore", "ignore", "inherit", "ipc"],
      serialization: "advanced",
      // Nothing of the service's environment: hooks get theirs with each run.
      env: {},
      // A process group of its own: a Ctrl-C or a signal to the service's group does not reach it
      // (nor, through it, the hooks the service is draining); it goes when the service goes.
      detached: true,
    });
    helper.unref();
    helper.channel?.unref();
    helper.on("message", (m: HelperMessage) => this.onMessage(m));
    // Whichever comes first: a channel that closed, a process that ended, one that never started.
    const lost = () => this.lost(helper);
    helper.on("disconnect", lost);
    helper.on("exit", lost);
    helper.on("error", lost);
    this.helper = helper;
    return helper;
  }

  private onMessage(m: HelperMessage): void {
    const run = this.runs.get(m.id);
    if (!run) return;
    switch (m.type) {
      case "started":
        run.pid = m.pid;
        return;
      case "close":
        this.end(m.id)?.handlers.onClose({ code: m.code, signal: m.signal, stdout: asBuffer(m.stdout), stderr: asBuffer(m.stderr), afterExitMs: m.afterExitMs, ...(m.exitedAtMonoMs !== undefined ? { exitedAtMonoMs: m.exitedAtMonoMs } : {}) });
        return;
      case "error":
        this.end(m.id)?.handlers.onError(m.message);
        return;
      default: {
        const _exhaustive: never = m;
        return _exhaustive;
      }
    }
  }

  private end(id: number): Run | undefined {
    const run = this.runs.get(id);
    this.runs.delete(id);
    if (run && ![...this.runs.values()].some((r) => r.helper === run.helper)) run.helper.channel?.unref();
    return run;
  }

  /**
   * A helper is gone (its channel closed, it ended, or it never started): every run it held is
   * killed from here and ends as an error. Called once per way it can go; the first one does it.
   */
  private lost(helper: ChildProcess): void {
    if (this.helper === helper) this.helper = undefined;
    for (const [id, run] of [...this.runs]) {
      if (run.helper !== helper) continue;
      if (run.pid !== undefined) try { process.kill(-run.pid, "SIGKILL"); } catch { /* already gone */ }
      this.end(id);
      run.handlers.onError("the host spawner stopped while the hook ran");
    }
  }
}

const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

let shared: HostSpawner | undefined;
/** One helper per service process. */
export function sharedHostSpawner(): HostSpawner {
  return (shared ??= new HostSpawner());
}

/**
 * The helper's whole program, run by `node -e` (CommonJS, no project imports: it must read the
 * same from the build and from the sources). Kept to spawning, relaying and killing.
 */
function helperMain(): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { spawn: spawnChild } = require("node:child_process") as typeof childProcess;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { accessSync, closeSync, constants: fsConstants, readdirSync, readFileSync, statSync } = require("node:fs") as typeof fs;
  // What the service itself was started with beyond its stdio — a supervisor's pipe, a socket
  // handed down — is no hook's: every descriptor past the IPC one (3) that would outlive an exec
  // (no O_CLOEXEC: Node opens all of its own with it) is closed before any hook is spawned.
  let fds: string[] = [];
  try {
    fds = readdirSync("/proc/self/fd");
  } catch {
    // no /proc: nothing known to close
  }
  for (const name of fds) {
    const fd = Number(name);
    if (!(fd > 3)) continue;
    try {
      const flags = /^flags:\s*([0-7]+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, "latin1"));
      if (flags && (parseInt(flags[1]!, 8) & 0o2000000) === 0) closeSync(fd);
    } catch {
      // gone meanwhile (the listing's own descriptor)
    }
  }
  /** Why a working directory cannot be entered, or undefined: checked here, so a waiter's `cd` never fails as if it were the hook's exit. */
  const cwdProblem = (dir: string): string | undefined => {
    // Named by its last part only: the message reaches the tenant's records, the host's paths never.
    const shown = dir.split("/").filter(Boolean).pop() ?? "/";
    try {
      if (!statSync(dir).isDirectory()) return `the hook's working directory (…/${shown}) is not a folder (ENOTDIR)`;
      accessSync(dir, fsConstants.X_OK);
      return undefined;
    } catch (err) {
      return `the hook's working directory (…/${shown}) cannot be entered (${(err as NodeJS.ErrnoException).code ?? "error"})`;
    }
  };
  type Entry = { pid: number | undefined; closed: boolean; release?: () => void };
  const running = new Map<number, Entry>();
  /**
   * per argv: processes started ahead, waiting on their stdin for a run — two, so that the next run
   * finds one whose start (a few ms) is over even when it comes right after the last
   */
  const ready = new Map<string, ChildProcessWithoutNullStreams[]>();
  const AHEAD = 2;
  /** A process of `file` `args` for a run not known yet: in `/`, with no environment (its prefix says both). */
  const spawnAhead = (file: string, args: string[]) => spawnChild(file, args, { cwd: "/", env: {}, detached: true, stdio: ["pipe", "pipe", "pipe"] });
  const startAhead = (file: string, args: string[]): ChildProcessWithoutNullStreams | undefined => {
    try {
      const c = spawnAhead(file, args);
      // ended before it was used (killed from outside, say): not used; a failed start is no run's error
      c.on("error", () => undefined);
      return c.pid === undefined ? undefined : c;
    } catch {
      return undefined;
    }
  };
  /** A ready process of this argv that is still waiting, if there is one. */
  const takeAhead = (file: string, args: string[]): ChildProcessWithoutNullStreams | undefined => {
    const waiting = ready.get(JSON.stringify([file, args])) ?? [];
    for (let c = waiting.shift(); c; c = waiting.shift()) {
      if (c.exitCode === null && c.signalCode === null) return c;
      if (c.pid !== undefined) try { process.kill(-c.pid, "SIGKILL"); } catch { /* already gone */ }
    }
    return undefined;
  };
  /** AHEAD ready for the next runs of this argv — started once a run is over, not beside it. */
  const refill = (file: string, args: string[]) => {
    const key = JSON.stringify([file, args]);
    const waiting = ready.get(key) ?? [];
    ready.set(key, waiting);
    while (waiting.length < AHEAD) {
      const next = startAhead(file, args);
      if (!next) return;
      waiting.push(next);
    }
  };
  const send = (m: unknown) => {
    if (process.connected) process.send?.(m);
  };
  const killGroup = (entry: Entry) => {
    if (entry.pid !== undefined && !entry.closed) try { process.kill(-entry.pid, "SIGKILL"); } catch { /* already gone */ }
    // A process that left the group (setsid) may hold the pipes open: a moment later they are closed
    // from this end, so the run ends whatever it left behind.
    entry.release?.();
  };
  /** after its command exited or was killed: how long what it left running may keep its pipes */
  const RELEASE_MS = 500;
  type Message = { type: "kill"; id: number } | ({ type: "run"; id: number } & SpawnRequest);
  process.on("message", (m: Message) => {
    // Nothing one run does may take the others down with the helper.
    try {
      handle(m);
    } catch (err) {
      const entry = running.get(m.id);
      if (entry) killGroup(entry);
      running.delete(m.id);
      send({ type: "error", id: m.id, message: `the host spawner failed: ${(err as Error).message}` });
    }
  });
  function handle(m: Message): void {
    if (m.type === "kill") {
      const entry = running.get(m.id);
      if (entry) killGroup(entry);
      return;
    }
    const { id } = m;
    let child: ChildProcessWithoutNullStreams;
    // A process started ahead was started in `/`: a working directory that is not there, not a
    // folder or not to be entered is refused here as a spawn into it would be, never left to the
    // waiter's own exit.
    const problem = m.prestart ? cwdProblem(m.cwd) : undefined;
    if (problem) {
      send({ type: "error", id, message: problem });
      return;
    }
    try {
      const ahead = m.prestart ? takeAhead(m.file, m.args) : undefined;
      child = ahead ?? (m.prestart ? spawnAhead(m.file, m.args) : spawnChild(m.file, m.args, { cwd: m.cwd, env: m.env, detached: true, stdio: ["pipe", "pipe", "pipe"] }));
    } catch (err) {
      // Refused before any process existed (a NUL byte in an argument, say).
      send({ type: "error", id, message: (err as Error).message });
      return;
    }
    const entry: Entry = { pid: child.pid, closed: false };
    running.set(id, entry);
    child.on("error", (err) => {
      entry.closed = true;
      running.delete(id);
      send({ type: "error", id, message: err.message });
    });
    // Refused after the call (no file descriptors left, say): no streams; the error above reports it.
    if (!child.stdout || !child.stderr || !child.stdin) return;
    if (child.pid !== undefined) send({ type: "started", id, pid: child.pid });
    const kept: Buffer[][] = [[], []];
    const bytes = [0, 0];
    const keep = (i: 0 | 1) => (chunk: Buffer) => {
      const room = m.maxOutputBytes + 1 - bytes[i]!;
      if (room <= 0) return;
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      kept[i]!.push(part);
      bytes[i]! += part.length;
      if (bytes[i]! > m.maxOutputBytes) killGroup(entry); // past the cap: the run is over
    };
    let releasing: NodeJS.Timeout | undefined;
    entry.release = () => {
      releasing ??= setTimeout(() => {
        if (entry.closed) return;
        child.stdout.destroy();
        child.stderr.destroy();
      }, RELEASE_MS);
    };
    child.stdout.on("data", keep(0));
    child.stderr.on("data", keep(1));
    child.stdin.on("error", () => undefined); // the hook need not read its stdin
    child.stdin.end(m.prestart ? Buffer.concat([Buffer.from(m.prestart.prefix), Buffer.from(m.stdin)]) : Buffer.from(m.stdin));
    // The command is done: whatever it left running in its group goes too, so its pipes close.
    let exitedAt: number | undefined;
    // (and on the machine's monotonic clock, which the service reads too: when it ended, not when the service got to it)
    let exitedAtMonoMs: number | undefined;
    child.on("exit", () => {
      exitedAt = performance.now();
      exitedAtMonoMs = Number(process.hrtime.bigint()) / 1e6;
      killGroup(entry);
    });
    child.on("close", (code, signal) => {
      if (entry.closed) return;
      entry.closed = true;
      clearTimeout(releasing);
      running.delete(id);
      send({ type: "close", id, code, signal, stdout: Buffer.concat(kept[0]!), stderr: Buffer.concat(kept[1]!), afterExitMs: exitedAt === undefined ? 0 : performance.now() - exitedAt, exitedAtMonoMs });
      // After the answer is on its way (a spawn holds this loop for a few ms): the run's answer never waits for its replacement.
      if (m.prestart) setTimeout(() => refill(m.file, m.args), 0);
    });
  }
  // The service is gone: nothing it started may outlive it.
  process.on("disconnect", () => {
    for (const entry of running.values()) killGroup(entry);
    for (const c of [...ready.values()].flat()) if (c.pid !== undefined) try { process.kill(-c.pid, "SIGKILL"); } catch { /* already gone */ }
    process.exit(0);
  });
}
