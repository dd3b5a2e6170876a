/**
 * @module A pre-started container of the warm pool, driven through its ContainerHandle: its wrapper
 * (handover.ts) waits on stdin for the one hook it will run.
 */
import { randomBytes } from "node:crypto";
import { handover, MARKER_GRACE_MS, MARKER_SLACK_BYTES, MarkerWatch } from "./handover.js";
import { describeError, sink, stoppedEnd, type ContainerHandle } from "./container-parts.js";
import { RunGuard } from "./run-guard.js";
import type { RunEnd, RunRequest, RunResult } from "./types.js";

/** The handover wrapper's exits before the hook runs (handover.ts), and what each means. */
const WRAPPER_EXITS: Record<number, string> = {
  94: "the hook's image has no shell its agent runs it in (/bin/bash, for Gemini CLI's, Codex's, cosh's and Copilot's bash hooks)",
  95: "the workspace could not be unpacked into the pre-started container's /workspace",
  96: "the hook's working directory could not be entered in the pre-started container",
  97: "the pre-started container's wrapper did not get its hand-over",
  98: "the pre-started container's sh wrapper could not decode its hand-over (no base64 in the image?)",
};

/** A run's result; `beforeHook`: it failed in the hand-over, before its hook ran (a cold run may take it). */
export type ClaimResult = RunResult & { beforeHook?: true };

/**
 * A pre-started container: its wrapper reads the hook's command, environment and event from
 * stdin, runs the hook, then prints an end marker with a per-run nonce on both streams. The result
 * is returned as soon as both markers are read; the container is removed afterwards.
 */
export class WarmContainer {
  private sinkOut: (c: Buffer) => void = () => undefined;
  private sinkErr: (c: Buffer) => void;
  private ended = false;
  private claimed = false;
  /** the wrapper says which one it is (bash or sh) on stderr as it starts */
  private wrapper: "bash" | "sh" | undefined;
  /** resolves once the wrapper has said which it is (or the container went) */
  readonly up: Promise<void>;

  /** `engineTimeoutMs`: how far past its timeout a claimed run may go before it ends regardless */
  constructor(private readonly made: ContainerHandle, private readonly engineTimeoutMs: number) {
    let said = "";
    let up = () => undefined as void;
    this.up = new Promise<void>((resolve) => (up = resolve));
    this.sinkErr = (c) => {
      said += c.toString("latin1");
      const m = /^(bash|sh)\n/.exec(said);
      if (m) {
        this.wrapper = m[1] as "bash" | "sh";
        up();
      }
    };
    made.demux(sink((c) => this.sinkOut(c)), sink((c) => this.sinkErr(c)));
    void made.streamDone.then(() => {
      this.ended = true;
      up();
    });
  }

  /** The wrapper it runs: bash, or POSIX sh where the image has no bash (handover.ts); undefined before it is up. */
  get wrapperKind(): "bash" | "sh" | undefined {
    return this.wrapper;
  }

  /** Waiting for its hook: its wrapper is up, it is not claimed, its container is not gone. */
  get alive(): boolean {
    return this.wrapper !== undefined && !this.ended && !this.claimed;
  }

  async discard(): Promise<void> {
    this.claimed = true;
    this.made.stream.destroy();
    await this.made.cleanup();
  }

  /**
   * Hands the hook over — with `archive`, the workspace it unpacks into its /workspace — and reads
   * its result. Ends no later than its timeout plus the engine timeout, even if neither the end
   * marker nor the end of the stream ever comes (a paused engine forwards nothing): then it is
   * `timed_out`, and the removal goes on in the background.
   */
  async claim(request: RunRequest, track: (removal: Promise<unknown>) => void, archive?: Uint8Array): Promise<ClaimResult> {
    this.claimed = true;
    const t0 = performance.now();
    const { stream, streamDone } = this.made;
    const nonce = randomBytes(16).toString("hex");
    const cap = request.limits.maxOutputBytes;
    // One signal: the hook's timeout, the run's deadline, the cancellation, the output cap (with
    // room for the end marker). Any of them kills the container; a cancelled run answers at once.
    const guard = new RunGuard({ timeoutMs: request.timeoutMs, engineTimeoutMs: this.engineTimeoutMs, maxOutputBytes: cap + MARKER_SLACK_BYTES, cancel: request.signal });
    const { capture, signal } = guard;
    const onStop = () => void this.made.kill();
    signal.addEventListener("abort", onStop, { once: true });
    // The hook's timeout runs from its start, as the wrapper says it (after the hand-over and the
    // unpacking of its workspace, which a cold run does before its container starts); the run's
    // deadline, from the claim.
    let hookAt: number | undefined;
    /** the hand-over took so long that the hook's timeout was cut to what was left of the run's deadline */
    let shortened = false;
    let over = false;
    const watch = new MarkerWatch(nonce, () => {
      if (over) return;
      hookAt = performance.now();
      shortened = guard.leftMs() < request.timeoutMs;
      guard.hookStarted();
    });
    let graceTimer: NodeJS.Timeout | undefined;
    const bothMarkers = new Promise<void>((resolve) => {
      // What a background process of the hook's writes after the marker is not the hook's output.
      const sink = (stream: "stdout" | "stderr") => (c: Buffer) => {
        const own = watch.take(stream, c);
        if (own.length > 0) capture[stream].push(own);
        if (watch.done) resolve();
        // One marker read: the other follows at once, or the run is read as this one says (MARKER_GRACE_MS).
        else if (watch.exitCode !== undefined) graceTimer ??= setTimeout(resolve, MARKER_GRACE_MS);
      };
      this.sinkOut = sink("stdout");
      this.sinkErr = sink("stderr");
    });
    // Past the run's deadline or on cancellation nothing more is waited for; a timeout or the
    // output cap still waits for the container's end (the kill), within the deadline.
    // Its own timer: once a timeout or the cap has stopped the guard, the guard's deadline can no
    // longer abort its signal.
    let deadlineTimer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<"gave_up">((resolve) => {
      // Whichever of this timer and the guard's own fires first, the run ends as its deadline says.
      deadlineTimer = setTimeout(() => {
        guard.stop("deadline");
        resolve("gave_up");
      }, guard.leftMs());
      const check = () => { if (guard.stopped === "deadline" || guard.stopped === "cancelled") resolve("gave_up"); };
      signal.addEventListener("abort", check, { once: true });
      check();
    });
    // The cap counts bytes, as a cold run's capture does: a hook's text is cut at `cap` bytes.
    const streamBytes = (stream: "stdout" | "stderr") => watch.strip(stream, capture[stream].bytes());
    const result = (tail: RunEnd): RunResult => {
      const [out, err] = [streamBytes("stdout"), streamBytes("stderr")];
      const from = hookAt ?? t0;
      // A timeout of a hook whose time the hand-over cut short is hookbox's doing (`preparedMs`), not the hook's.
      const prepared = shortened && tail.outcome === "timed_out" ? { preparedMs: Math.round(from - t0) } : {};
      return { ...tail, stdout: out.subarray(0, cap).toString("utf8"), stderr: err.subarray(0, cap).toString("utf8"), startMs: from - t0, durationMs: performance.now() - from, warm: true, ...prepared } as RunResult;
    };
    try {
      // Cancelled before its hand-over: the hook never starts (the container is removed unused).
      if (request.signal?.aborted) return result({ outcome: "cancelled", exitCode: null });
      for (const chunk of handover(nonce, request, this.wrapper ?? "sh", archive)) if (chunk.length > 0) stream.write(chunk);
      stream.end();
      const ended = await Promise.race([bothMarkers, streamDone, gaveUp]);
      // Output past the cap, even within the marker's slack (which trips nothing), is
      // output_truncated, as in a cold run, whose capture stops the hook there before anything else.
      const overflow = (["stdout", "stderr"] as const).find((st) => streamBytes(st).length > cap);
      const reason = guard.stopped;
      if (overflow && reason !== "cancelled") return result({ outcome: "output_truncated", exitCode: null, stream: overflow });
      // The run's time ran out before its wrapper said the hook started (its workspace's hand-over
      // took it all, or the engine stopped passing its output on): no timeout of the hook's, which
      // its format would read as no decision — hookbox did not run it, as a cold run's engine that
      // does not answer did not.
      if (reason === "deadline" && !watch.started) return result({ outcome: "failed_to_start", exitCode: null, error: "the pre-started container did not say its hook started within the run's time (timeout + engine_timeout_ms): its workspace's hand-over took it all, or the container engine stopped passing on its output" });
      if (reason) return result(stoppedEnd(reason, capture));
      const code = watch.exitCode;
      if (code === undefined) {
        // The container went before the hook's end: look at how it ended, within what is left.
        const state = await this.made.state(AbortSignal.timeout(Math.max(1, Math.ceil(guard.leftMs())))).catch(() => undefined);
        // Not to be read: past the run's deadline the hook's time ran out (a hung engine); a stream
        // that closed early with the engine gone is hookbox not running it.
        if (!state) return ended === "gave_up" || guard.stopped
          ? result({ outcome: "timed_out", exitCode: null })
          : result({ outcome: "failed_to_start", exitCode: null, error: "the connection to the pre-started container closed while its hook ran, and the engine did not say how it ended" });
        // The stream went while the hook still runs (the engine's connection closed): its answer
        // can no longer be read — hookbox could not run it, whatever its exit code will be.
        if (state.running) return result({ outcome: "failed_to_start", exitCode: null, error: "the connection to the pre-started container closed while its hook ran: its answer could not be read" });
        // The wrapper's own exits before the hook ran (it never said the hook started) — looked at
        // before an out-of-memory mark, which the engine sets on any kill in the container: an unpack
        // that ran out of memory is no crash of the hook's. Run again cold. A started hook's own
        // 95–98 whose markers were both lost is read below: never run twice, never taken as a pass.
        const setup = state.exitCode === null || watch.started ? undefined : WRAPPER_EXITS[state.exitCode];
        if (setup) return { ...result({ outcome: "failed_to_start", exitCode: null, error: setup }), beforeHook: true };
        if (state.oomKilled) return result({ outcome: "oom_killed", exitCode: state.exitCode });
        // Killed by a signal before its wrapper said how the hook ended (the engine stopped it, or
        // something in it killed the wrapper): the hook's answer is not known — hookbox's failure,
        // never the hook's crash judged by its agent's rules.
        if (state.exitCode > 128) return result({ outcome: "failed_to_start", exitCode: null, error: `the pre-started container was stopped (exit ${state.exitCode}) before its hook's end was read` });
        // Ended without its wrapper's end marks, which are its last writes: what the engine passed on
        // of the hook's output may be cut (a guard's JSON lost, read as no decision) — hookbox could
        // not read its answer, never a pass.
        return result({ outcome: "failed_to_start", exitCode: null, error: `the pre-started container ended (exit ${state.exitCode}) without its wrapper's end marks: its hook's answer may be cut` });
      }
      // The end read on stderr alone: the wrapper writes stdout's mark first, and the engine passes
      // the two streams on apart — what the hook wrote on stdout, its answer, may not all be in.
      // hookbox could not read it whole: never a pass made of a cut answer.
      if (!watch.seenOn("stdout")) return result({ outcome: "failed_to_start", exitCode: null, error: `the hook's end was read on stderr, but its stdout's end had not come ${MARKER_GRACE_MS} ms later (MARKER_GRACE_MS): its answer may be cut` });
      if (watch.oomKills > 0) return result({ outcome: "oom_killed", exitCode: code });
      return result({ outcome: "exited", exitCode: code });
    } catch (err) {
      return result({ outcome: "failed_to_start", exitCode: null, error: describeError(err) });
    } finally {
      // A start line that comes after the claim is over (cancelled while its workspace unpacked) arms nothing.
      over = true;
      // Nor does a late chunk: it is read by nothing (no marker grace timer started after the claim).
      this.sinkOut = this.sinkErr = () => undefined;
      signal.removeEventListener("abort", onStop);
      clearTimeout(deadlineTimer);
      clearTimeout(graceTimer);
      guard.dispose();
      // The answer does not wait for the removal.
      track(this.discard());
    }
  }
}
