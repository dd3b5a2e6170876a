/**
 * @module Host runner for administrators' policy hooks (copilot-hooks.md: "policy hooks, which
 * always run on the host"): `sh -c`, started by the host spawner's helper (never forked from the
 * service: host-spawner.ts), in a PID namespace of its own where the machine allows one, else
 * in its own process group; either is killed whole at the deadline and when the command ends
 * (nothing it started outlives it — in a PID namespace not even what called `setsid`, since the
 * kernel kills everything in it when its first process ends), output capped, allow-listed environment.
 */
import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, mkdtempSync, rmSync } from "node:fs";
import { constants, tmpdir } from "node:os";
import { join } from "node:path";
import { stoppedEnd } from "./container-parts.js";
import { exportLines } from "./handover.js";
import { hookEnv } from "./hook-env.js";
import { sharedHostSpawner, type HostSpawner } from "./host-spawner.js";
import { RunGuard } from "./run-guard.js";
import { shellOf, type RunEnd, type RunRequest, type RunResult, type Runner } from "./types.js";

/**
 * How a policy hook's processes are held together: `pid-namespace` (util-linux unshare: a shell
 * waits as the namespace's init for the hook's, its child; when it ends, the kernel kills the rest)
 * or `process-group` (a process that calls setsid leaves the group and outlives the hook).
 */
export type HostIsolation = "pid-namespace" | "process-group";

const UNSHARE = ["/usr/bin/unshare", "/bin/unshare"].find((p) => existsSync(p));
/** --kill-child: the namespace's init dies with unshare, so a kill of the group reaches it all. */
const UNSHARE_ARGS = ["--pid", "--fork", "--kill-child", "--"];
const BASH = existsSync("/bin/bash") ? "/bin/bash" : undefined;

/**
 * The hook's shell run as a child of the namespace's init, its exit status init's (quoted: an `IFS`
 * the hook declares cannot split it). The shell's own word on a child a signal ended ("Killed",
 * "Terminated") goes nowhere: the hook's stderr is its own (the hook's, on fd 4 while it runs,
 * closed for it). A subshell that execs the hook's shell: no `_` in its environment, `SHLVL=0`.
 */
const CHILD_OF_INIT_RUN = 'exec 4>&2 2>/dev/null; (SHLVL=0 exec "$2" -c "$1") 2>&4 4>&-; exit "$?"';

/**
 * The namespace's first process while it waits for its hook (bash, builtins only; `--norc`: its
 * stdin is a socket, which bash would otherwise take for a remote shell's and read ~/.bashrc). It
 * forks the hook's process at once, ahead of the run, and waits for it as init: the child reads on
 * stdin the lengths, then the working directory, the command and the hook's environment (`export
 * NAME='value'` lines), goes there, and execs `sh -c <command>` with the rest of stdin (the event)
 * as the hook's stdin — never as the namespace's init: init ignores every signal it has no handler
 * for, so a hook that ends itself (`kill $$`, the usual way a script's `die` stops it) would go on
 * past it, to the allow its last line prints. Init's exit status is the hook's; its own word on a
 * child a signal ended ("Killed", "Terminated") goes nowhere: the hook's stderr is its own (on fd 4
 * while it runs, closed for it). Started ahead (host-spawner.ts), so that making the namespace —
 * unshare and two forks, ≈ 4 ms here — is not on the hook's path: only the exec of its shell is.
 * Positional parameters hold the command and the environment, so a variable the hook declares
 * (`c`, `e`) cannot change what runs.
 */
const WAITER = [
  "exec 4>&2 2>/dev/null",
  "(",
  "IFS=' ' read -r ld lc le ls || exit 97",
  "d=; c=; e=",
  "if [ \"$ld\" -gt 0 ]; then IFS= read -r -N \"$ld\" d; fi",
  "IFS= read -r -N \"$lc\" c",
  "if [ \"$le\" -gt 0 ]; then IFS= read -r -N \"$le\" e; fi",
  "cd -- \"$d\" || exit 96",
  "set -- \"$c\" \"$e\" \"/bin/$ls\"",
  "unset ld lc le ls d c e",
  "eval \"$2\"",
  "SHLVL=0 exec \"$3\" -c \"$1\"",
  ") 2>&4 4>&-",
  "exit \"$?\"",
].join("\n");

/** What the waiter reads before the event: `<lengths>\n<cwd><command><exports>`, lengths in bytes. */
function waiterPrefix(cwd: string, command: string, env: NodeJS.ProcessEnv, shell: string): Uint8Array {
  const [d, c, e] = [cwd, command, exportLines(env)].map((t) => Buffer.from(t));
  return Buffer.concat([Buffer.from(`${d!.length} ${c!.length} ${e!.length} ${shell.slice("/bin/".length)}\n`), d!, c!, e!]);
}

let detected: HostIsolation | undefined;
/** Whether this process may make PID namespaces (root, or a seccomp profile that allows it); tried once. */
export function detectHostIsolation(): HostIsolation {
  detected ??= UNSHARE !== undefined && spawnSync(UNSHARE, [...UNSHARE_ARGS, "/bin/sh", "-c", "exit 0"], { stdio: "ignore", timeout: 5_000 }).status === 0
    ? "pid-namespace"
    : "process-group";
  return detected;
}

/**
 * How long a killed policy hook has to end before its run ends without it, as `timed_out` (or
 * whatever stopped it): a process in an uninterruptible wait (a hung network file system) or a
 * helper that stopped answering never holds its event past its timeout + this. @default 2 s
 */
export const HOST_KILL_GRACE_MS = 2_000;

/**
 * The working folder and HOME of a policy hook that names no `cwd`: one folder of the service's own,
 * made once per process (mode 0700, under the system's temporary folder; made anew should it stop
 * being that) and removed at its exit —
 * never the shared /tmp itself, where any user of the machine could leave a `.gitconfig`, say, for
 * the hook's tools to read and run as the service's user.
 */
let ownFolderPath: string | undefined;
function ownFolder(): string {
  // Checked at each run: one a cleaner removed (and another user may have made again under its
  // name, which /tmp shows) is no longer ours — a new one is made.
  if (ownFolderPath !== undefined && !stillOurs(ownFolderPath)) ownFolderPath = undefined;
  if (ownFolderPath === undefined) {
    const made = mkdtempSync(join(tmpdir(), "hookbox-policy-"));
    ownFolderPath = made;
    process.once("exit", () => rmSync(made, { recursive: true, force: true }));
  }
  return ownFolderPath;
}

/** A real folder (no link), this process's user's, that no one else may enter or write to. */
function stillOurs(path: string): boolean {
  try {
    const st = lstatSync(path);
    return st.isDirectory() && st.uid === process.getuid?.() && (st.mode & 0o077) === 0;
  } catch {
    return false;
  }
}

export class HostRunner implements Runner {
  readonly kind = "host";

  readonly isolation: HostIsolation;

  private readonly spawner: HostSpawner;

  /**
   * @default isolation: a PID namespace where the machine allows one (detectHostIsolation)
   * @default spawner: the process's one helper (host-spawner.ts), started now
   */
  constructor(private readonly inheritEnv: NodeJS.ProcessEnv = {}, opts: { isolation?: HostIsolation; spawner?: HostSpawner } = {}) {
    this.isolation = opts.isolation ?? detectHostIsolation();
    this.spawner = opts.spawner ?? sharedHostSpawner();
    this.spawner.warm();
  }

  run(request: RunRequest): Promise<RunResult> {
    // Cancelled before it started: the hook is never given the event.
    if (request.signal?.aborted) return Promise.resolve({ outcome: "cancelled", exitCode: null, stdout: "", stderr: "", startMs: 0, durationMs: 0 });
    // A host without the shell the hook's agent runs it in: hookbox cannot run it (never its exit 127, a pass).
    if (request.shell === "bash" && BASH === undefined) return Promise.resolve({ outcome: "failed_to_start", exitCode: null, error: "this host has no /bin/bash, the shell this hook's agent runs it in", stdout: "", stderr: "", startMs: 0, durationMs: 0 });
    const t0 = performance.now();
    let cwd: string;
    try {
      cwd = request.cwd ?? ownFolder();
    } catch (err) {
      return Promise.resolve({ outcome: "failed_to_start", exitCode: null, error: `no folder of its own for the hook to start in: ${(err as Error).message}`, stdout: "", stderr: "", startMs: 0, durationMs: 0 });
    }
    const env = hookEnv({ declared: request.env, projectDir: cwd, runtime: "host", home: cwd, inherit: this.inheritEnv });
    return new Promise<RunResult>((resolve) => {
      // In a PID namespace: one made ahead, waiting (with bash; the helper refuses a working
      // directory that is not there, so the waiter's own exits never stand for the hook's). A NUL
      // anywhere is no command a process can be given: the spawn below refuses it, a failed start.
      const ahead = this.isolation === "pid-namespace" && UNSHARE && BASH && ![request.command, cwd, ...Object.values(env)].some((v) => v?.includes("\0"));
      const [file, args] = ahead
        ? [UNSHARE!, [...UNSHARE_ARGS, BASH!, "--norc", "--noprofile", "-c", WAITER]]
        : this.isolation === "pid-namespace" && UNSHARE
          ? [UNSHARE, [...UNSHARE_ARGS, "/bin/sh", "-c", CHILD_OF_INIT_RUN, "sh", request.command, shellOf(request)]]
          : [shellOf(request), ["-c", request.command]];
      // The hook's timeout, the cancellation and the output cap: one signal that kills the group.
      const guard = new RunGuard({ timeoutMs: request.timeoutMs, maxOutputBytes: request.limits.maxOutputBytes, cancel: request.signal });
      const { capture } = guard;
      // The helper starts it in a process group of its own (and, with unshare, a PID namespace) and
      // kills that group when the command ends; a kill from here reaches the same group.
      // when the hook is started, on the machine's monotonic clock (the helper reads the same at its exit)
      const hookStartMonoMs = Number(process.hrtime.bigint()) / 1e6;
      const spawned = this.spawner.run(
        { file, args, cwd, env, stdin: request.stdin, maxOutputBytes: request.limits.maxOutputBytes, ...(ahead ? { prestart: { prefix: waiterPrefix(cwd, request.command, env, shellOf(request)) } } : {}) },
        {
          onError: (message) => finish({ outcome: "failed_to_start", exitCode: null, error: message }),
          onClose: ({ code, signal, stdout, stderr, afterExitMs, exitedAtMonoMs }) => {
            // Past the cap the helper has killed it already; the capture says so to the guard.
            capture.stdout.push(stdout);
            capture.stderr.push(stderr);
            // Its timeout is judged by when it ended, on the clock the helper read at its exit — never
            // by when this loop, perhaps held by another request, got to its timer or its end: a
            // block given in time is no timeout, an answer given past its time is one.
            if (exitedAtMonoMs !== undefined && guard.stopped !== "output_truncated" && guard.stopped !== "cancelled") {
              if (exitedAtMonoMs > hookStartMonoMs + request.timeoutMs) return finish(stoppedEnd("timed_out", capture));
              return finish({ outcome: "exited", exitCode: code ?? 128 + signalNumber(signal) });
            }
            // The hook ended by itself if nothing had stopped it when it exited: a process it left
            // holding its output (after setsid) may keep the streams open past its timeout.
            const exitedAt = performance.now() - afterExitMs;
            const stopped = guard.stopped === "output_truncated" || (guard.stoppedAtMs ?? Infinity) <= exitedAt ? guard.stopped : null;
            if (stopped) return finish(stoppedEnd(stopped, capture));
            finish({ outcome: "exited", exitCode: code ?? 128 + signalNumber(signal) });
          },
        },
      );
      const tStarted = performance.now();
      guard.hookStarted();
      let giveUp: NodeJS.Timeout | undefined;
      const kill = () => {
        spawned.kill();
        giveUp ??= setTimeout(() => {
          spawned.forget();
          finish(stoppedEnd(guard.stopped ?? "deadline", capture));
        }, HOST_KILL_GRACE_MS);
      };
      guard.signal.addEventListener("abort", kill, { once: true });
      if (guard.signal.aborted) kill();

      let done = false;
      function finish(tail: RunEnd): void {
        if (done) return;
        done = true;
        clearTimeout(giveUp);
        guard.dispose();
        guard.signal.removeEventListener("abort", kill);
        resolve({
          ...tail,
          stdout: capture.stdout.text(),
          stderr: capture.stderr.text(),
          startMs: tStarted - t0,
          durationMs: performance.now() - tStarted,
        } as RunResult);
      }
    });
  }
}

function signalNumber(signal: NodeJS.Signals | null): number {
  return signal ? constants.signals[signal] : 0;
}
