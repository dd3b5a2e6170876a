/**
 * @module A cold run: one straight function — create (labels, limits) → attach → start → wait with
 * deadline → remove. The whole run ends no later than the hook's timeout plus the engine timeout:
 * set-up calls are aborted at that deadline, the hook's own timer is what is left of it at most,
 * and when the engine does not answer the run ends without waiting for the kill or the removal
 * (those go on in the background, each under the engine timeout; the reaper catches the rest).
 */
import { randomUUID } from "node:crypto";
import { HOOK_HOME, REAP_GRACE_MS, WORKSPACE_PATH } from "../names.js";
import { hookEnv } from "./hook-env.js";
import { describeError, sink, stoppedEnd } from "./container-parts.js";
import { EngineTimeoutError } from "./docker-client.js";
import { labelsFor, makeContainer, type Fleet, type Made, type Shape } from "./make-container.js";
import { RunGuard } from "./run-guard.js";
import { shellOf, type RunEnd, type RunRequest, type RunResult } from "./types.js";

/** How long the attach stream may take to deliver the last output after the container ended. */
const STREAM_TAIL_MS = 1_000;
/**
 * @default 3 s, 1 s — of a cold run, how long its answer waits, once its container has ended, for
 * the look at its out-of-memory mark (`STATE_WAIT_MS`: an inspect, and for a kill the engine has not
 * marked, its late `oom` event, up to twice LATE_OOM_WAIT_MS), and then for its removal (`REMOVE_WAIT_MS`):
 * an engine that answers slowly or not at all never holds a decision already made — the early
 * answer at the agent's deadline counts finished hooks only. A removal that takes longer goes on
 * behind the answer, tracked (the service's stop waits for it; the reaper takes what it leaves).
 */
export const STATE_WAIT_MS = 3_000;
export const REMOVE_WAIT_MS = 1_000;

export async function runCold(fleet: Fleet, request: RunRequest, shape: Shape): Promise<RunResult> {
  const t0 = performance.now();
  const { client } = fleet;
  // One signal ends every engine call of this run and kills the container: the hook's timeout,
  // the run's deadline, the cancellation, the output cap — whichever comes first.
  const guard = new RunGuard({ timeoutMs: request.timeoutMs, engineTimeoutMs: client.timeoutMs, maxOutputBytes: request.limits.maxOutputBytes, cancel: request.signal });
  const { capture, signal } = guard;
  let made: Made | undefined;
  let started = false;
  /** the engine left a call unanswered: the answer does not wait for it again */
  let silent = false;
  let tStarted = t0;
  /** the attach stream was read to its end */
  let ended = false;
  const onStop = () => { if (made) void client.kill(made.id); };
  signal.addEventListener("abort", onStop, { once: true });
  let finished: RunResult | undefined;
  const result = (tail: RunEnd): RunResult =>
    (finished = { ...tail, stdout: capture.stdout.text(), stderr: capture.stderr.text(), startMs: tStarted - t0, durationMs: performance.now() - tStarted, warm: false } as RunResult);
  try {
    if (guard.stopped === "cancelled") return result({ outcome: "cancelled", exitCode: null });
    const env = hookEnv({ declared: request.env, projectDir: WORKSPACE_PATH, runtime: "container", home: HOOK_HOME });
    const labels = labelsFor(fleet, randomUUID(), Date.now() + guard.leftMs() + REAP_GRACE_MS, request.eventId);
    made = await makeContainer(fleet, shape, [shellOf(request), "-c", request.command], env, request.cwd, labels, signal);
    const { id, stream, streamDone } = made;
    stream.once("end", () => (ended = true));
    client.demux(stream, sink((c) => capture.stdout.push(c)), sink((c) => capture.stderr.push(c)));
    await client.start(id, signal);
    started = true;
    tStarted = performance.now();
    guard.hookStarted();
    stream.end(Buffer.from(request.stdin));
    const waited = await client.wait(id, signal);
    // How the run ended is judged when the engine says the container ended: what it takes after
    // that (the stream's tail, the look at its state) is no time of the hook's.
    const atExit = guard.stopped;
    // The engine closes the attach stream once the container is gone; read what is left.
    // Read to its end: a stream that closed without one (the engine's connection reset) may be cut too.
    let wake: NodeJS.Timeout | undefined;
    await Promise.race([streamDone, new Promise((r) => (wake = setTimeout(r, STREAM_TAIL_MS)))]);
    clearTimeout(wake);
    const tailRead = ended;
    const stopped = atExit ?? (guard.stopped === "output_truncated" ? "output_truncated" : null);
    if (stopped) return result(stoppedEnd(stopped, capture));
    // The stream had not ended (or broke off): what the engine passed on of the hook's output may be cut (a
    // guard's JSON read as text, no decision) — hookbox could not read its answer, never a pass
    // (as a pre-started container's run without its end marks).
    if (!tailRead) return result({ outcome: "failed_to_start", exitCode: null, error: `the engine had not passed on all of the hook's output ${STREAM_TAIL_MS} ms after its container ended: its answer may be cut` });
    // Its out-of-memory mark, within what is left of the run's deadline; without it, its exit code.
    const state = await client.state(id, AbortSignal.timeout(Math.max(1, Math.ceil(Math.min(guard.leftMs(), STATE_WAIT_MS))))).catch(() => undefined);
    if (state?.oomKilled) return result({ outcome: "oom_killed", exitCode: waited.exitCode });
    return result({ outcome: "exited", exitCode: waited.exitCode });
  } catch (err) {
    if (err instanceof EngineTimeoutError || guard.stopped === "deadline") silent = true;
    const reason = guard.stopped;
    if (reason && (started || reason !== "deadline")) return result(stoppedEnd(reason, capture));
    // The engine's connection went while the hook ran (the engine restarted, say): its answer can
    // no longer be read — hookbox could not run it, never the hook's own timeout.
    if (started) return result({ outcome: "failed_to_start", exitCode: null, error: `the connection to the engine was lost while the hook ran (${describeError(err)})` });
    return result({ outcome: "failed_to_start", exitCode: null, error: describeError(reason === "deadline" ? new EngineTimeoutError(client.timeoutMs) : err) });
  } finally {
    signal.removeEventListener("abort", onStop);
    made?.stream.destroy();
    if (made) {
      // The answer waits for the removal REMOVE_WAIT_MS at most, and never past the run's deadline.
      const tRemove = performance.now();
      let removed = false;
      const removal = made.cleanup().then(() => { removed = true; });
      fleet.track(removal);
      if (!silent) {
        let wake: NodeJS.Timeout | undefined;
        await Promise.race([removal, new Promise((r) => (wake = setTimeout(r, Math.min(guard.leftMs(), REMOVE_WAIT_MS))))]);
        clearTimeout(wake);
      }
      if (finished && removed) finished.removeMs = performance.now() - tRemove;
    }
    guard.dispose();
  }
}
