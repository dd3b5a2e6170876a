/**
 * @module Host runner for administrators' policy hooks (copilot-hooks.md: "policy hooks, which
 * always run on the host"): `sh -c` in its own process group, killed whole at the deadline and
 * when the command ends (nothing it started outlives it), output capped, allow-listed environment.
 */
import { spawn } from "node:child_process";
import { constants, tmpdir } from "node:os";
import { OutputCapture } from "./output-capture.js";
import { hookEnv } from "./hook-env.js";
import type { RunEnd, RunRequest, RunResult, Runner } from "./types.js";

export class HostRunner implements Runner {
  readonly kind = "host";

  constructor(private readonly inheritEnv: NodeJS.ProcessEnv = {}) {}

  run(request: RunRequest): Promise<RunResult> {
    const t0 = performance.now();
    const cwd = request.cwd ?? tmpdir();
    const env = hookEnv({ declared: request.env, projectDir: cwd, runtime: "host", home: cwd, inherit: this.inheritEnv });
    return new Promise<RunResult>((resolve) => {
      let ended: "timed_out" | "output_truncated" | "cancelled" | null = null;
      const child = spawn("/bin/sh", ["-c", request.command], { cwd, env, detached: true, stdio: ["pipe", "pipe", "pipe"] });
      const tStarted = performance.now();
      const killGroup = () => {
        // A negative pid signals the whole process group: grandchildren included.
        if (child.pid !== undefined) try { process.kill(-child.pid, "SIGKILL"); } catch { /* already gone */ }
      };
      const stop = (why: "timed_out" | "output_truncated" | "cancelled") => {
        ended ??= why;
        killGroup();
      };
      const capture = new OutputCapture(request.limits.maxOutputBytes, () => stop("output_truncated"));
      const timer = setTimeout(() => stop("timed_out"), request.timeoutMs);
      const onAbort = () => stop("cancelled");
      request.signal?.addEventListener("abort", onAbort, { once: true });
      if (request.signal?.aborted) onAbort();

      child.stdout.on("data", (c: Buffer) => capture.stdout.push(c));
      child.stderr.on("data", (c: Buffer) => capture.stderr.push(c));
      child.stdin.on("error", () => { /* the hook need not read its stdin */ });
      child.stdin.end(request.stdin);
      // The command is done: whatever it left running in its group goes too, so its pipes close.
      child.on("exit", killGroup);
      child.on("error", (err) => finish({ outcome: "failed_to_start", exitCode: null, error: err.message }));
      child.on("close", (code, signal) => {
        if (ended === "timed_out") return finish({ outcome: "timed_out", exitCode: null });
        if (ended === "cancelled") return finish({ outcome: "cancelled", exitCode: null });
        if (ended === "output_truncated")
          return finish({ outcome: "output_truncated", exitCode: null, stream: capture.overflowedStream ?? "stdout" });
        finish({ outcome: "exited", exitCode: code ?? 128 + signalNumber(signal) });
      });

      let done = false;
      function finish(tail: RunEnd): void {
        if (done) return;
        done = true;
        clearTimeout(timer);
        request.signal?.removeEventListener("abort", onAbort);
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
