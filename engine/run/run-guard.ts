/**
 * @module The run guard: a run's deadline, its cancellation and its output cap as one AbortSignal,
 * for every runner (host, cold, warm). The signal aborts at the first of: the hook's timeout (once
 * armed at the hook's start), the run's deadline (hook timeout + engine timeout, counted from the
 * run's start: set-up and clean-up are inside it), the request's cancellation, the output cap. Its
 * `stopped` says which, and the runner reports that outcome.
 */
import { OutputCapture } from "./output-capture.js";

/**
 * Why a run was stopped. `deadline`: the run's whole time (hook timeout + engine timeout) ran out
 * while the engine had not answered — reported as `timed_out`.
 */
export type StopReason = "timed_out" | "output_truncated" | "cancelled" | "deadline";

/** The abort reason of a guard's signal. */
export class RunStopped extends Error {
  override readonly name = "RunStopped";
  constructor(readonly why: StopReason) {
    super(`run stopped: ${why}`);
  }
}

export interface GuardOptions {
  timeoutMs: number;
  /** added to `timeoutMs` for the run's deadline: what the engine may take past the hook. @default 0 (host runs) */
  engineTimeoutMs?: number;
  /** per stream; past it the run stops as output_truncated */
  maxOutputBytes: number;
  /** the request's cancellation */
  cancel?: AbortSignal;
}

export class RunGuard {
  private readonly controller = new AbortController();
  readonly signal: AbortSignal = this.controller.signal;
  readonly capture: OutputCapture;
  /** performance.now() at which the run's deadline passes */
  readonly deadlineAt: number;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly onCancel = () => this.stop("cancelled");

  constructor(private readonly options: GuardOptions) {
    const runMs = options.timeoutMs + (options.engineTimeoutMs ?? 0);
    this.deadlineAt = performance.now() + runMs;
    this.capture = new OutputCapture(options.maxOutputBytes, () => this.stop("output_truncated"));
    if (options.engineTimeoutMs !== undefined) this.timers.push(setTimeout(() => this.stopAfterIo("deadline"), runMs));
    if (options.cancel?.aborted) this.stop("cancelled");
    else options.cancel?.addEventListener("abort", this.onCancel, { once: true });
  }

  /** The first reason the run was stopped, or null. */
  get stopped(): StopReason | null {
    return this.signal.aborted ? (this.signal.reason as RunStopped).why : null;
  }

  /** The hook has started: its own timeout runs from now, never past the run's deadline. */
  hookStarted(): void {
    this.timers.push(setTimeout(() => this.stopAfterIo("timed_out"), Math.max(0, Math.min(this.options.timeoutMs, this.deadlineAt - performance.now()))));
  }

  /** Milliseconds left to the run's deadline (0 when past). */
  leftMs(): number {
    return Math.max(0, this.deadlineAt - performance.now());
  }

  /** performance.now() at which the run was stopped (when `stopped` is set) */
  stoppedAtMs: number | undefined;

  /**
   * A timer's stop, once the I/O already waiting has been read (setImmediate runs after the loop's
   * poll phase): a timer fires late when the loop was held — by another tenant's heavy request, say
   * — and the hook's end, a block given in time, may be waiting unread behind it; that end is what
   * counts, not a timeout the hook did not run into. (The host runner judges besides by when the
   * hook ended, on the clock its helper reads at the exit — host-runner.ts —; the container runners
   * by this deferral alone: an end read only after the poll phase that follows it is a timeout.)
   */
  private stopAfterIo(why: StopReason): void {
    setImmediate(() => {
      if (!this.disposed) this.stop(why);
    });
  }
  private disposed = false;

  stop(why: StopReason): void {
    if (this.signal.aborted) return;
    this.stoppedAtMs = performance.now();
    this.controller.abort(new RunStopped(why));
  }

  /** Clears its timers and listeners; the outcome (`stopped`) stays. */
  dispose(): void {
    this.disposed = true;
    for (const t of this.timers) clearTimeout(t);
    this.options.cancel?.removeEventListener("abort", this.onCancel);
  }
}

/** What `p` resolves to, or null once `ms` pass (Infinity: never) or `signal` aborts first (`p` goes on, unwatched). */
export function waitAtMost<T>(p: Promise<T>, ms: number, signal: AbortSignal | undefined): Promise<T | null> {
  if (signal?.aborted) return Promise.resolve(null);
  return new Promise<T | null>((resolve) => {
    const done = (v: T | null) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      resolve(v);
    };
    const onAbort = () => done(null);
    const timer = Number.isFinite(ms) ? setTimeout(() => done(null), Math.max(0, ms)) : undefined;
    signal?.addEventListener("abort", onAbort, { once: true });
    void p.then(done, () => done(null));
  });
}
