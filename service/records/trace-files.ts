/**
 * @module Trace files written and removed by a thread of their own, a short window's at once. Each
 * file call handed to libuv's pool costs a hand-over to a pool thread and back; on a small VM that
 * is several times the call itself (a trace's open, write and close cost ~0.5 ms of CPU an event
 * that way, measured, against ~0.05 ms made directly) — CPU the thread that answers every request
 * shares. Here the calls of a window go over in one message, and the thread makes them directly.
 */
import { Worker } from "node:worker_threads";

/**
 * @default 20 ms — how long a trace waits for others to go with it. Until it is written it is
 * served from memory (TraceStore's pending traces), so the wait is seen by no reader.
 */
export const TRACE_WRITE_GATHER_MS = 20;
/** @default 64 — calls that go over at once without waiting for the window */
export const TRACE_WRITE_BATCH = 64;
/** @default 4 MiB — text that goes over at once without waiting for the window */
export const TRACE_WRITE_BATCH_BYTES = 4 * 1024 * 1024;
/**
 * @default 128 MiB — the thread's heap: what TraceStore has out to it at once (TRACE_WRITE_BYTES_AT_ONCE
 * and one trace past it) several times over; a thread past it dies alone and fails its batches.
 */
export const TRACE_WRITER_HEAP_MB = 128;

// The thread: for each call, a file written whole (readable by the service's user only; one a
// failed write leaves cut is removed) or removed (one already gone is no error). Errors go back as
// their message and code, one per call: one file's failure is never another's. Built-ins by
// process.getBuiltinModule: the source runs as eval'd CommonJS, or as a module where the process
// was started with --input-type=module (a worker inherits it).
const SOURCE = `
const { parentPort } = process.getBuiltinModule("node:worker_threads");
const fs = process.getBuiltinModule("node:fs");
const unlink = (file) => {
  try {
    fs.unlinkSync(file);
  } catch (err) {
    if (err.code !== "ENOENT") throw err;
  }
};
parentPort.on("message", ({ id, calls }) => {
  const failed = calls.map(({ file, text }) => {
    try {
      if (text === undefined) unlink(file);
      else {
        try {
          fs.writeFileSync(file, text, { mode: 0o600 });
        } catch (err) {
          try { unlink(file); } catch {}
          throw err;
        }
      }
      return null;
    } catch (err) {
      return { message: String(err && err.message), code: err && err.code };
    }
  });
  parentPort.postMessage({ id, failed });
});
`;

interface Call {
  file: string;
  /** undefined: remove the file */
  text?: string;
  /** a removal's sends so far (one its thread never answered is sent again: it is the same removal) */
  tries?: number;
}

type Settle = [resolve: () => void, reject: (err: Error) => void];

/**
 * @default 30 s — how long a thread may answer no batch while one is out: past it the thread is
 * given up (its batches failed, a fresh one started for the next) — a file call the disk never
 * answers (a hung network file system) holds it, and would hold every later trace and the stop.
 */
export const TRACE_WRITE_STALL_MS = 30_000;
/**
 * @default 2 — threads given up and not yet ended (each still in a call the disk has not
 * answered): past it a batch fails at once rather than start one more thread for the disk to hold.
 */
export const MAX_STALLED_TRACE_THREADS = 2;
/** @default 3 — sends of a removal whose thread ended or was given up before it answered */
export const TRACE_REMOVE_TRIES = 3;

interface Thread {
  worker: Worker;
  /** batches sent to it and not yet answered */
  out: number;
  /** runs while a batch is out: reset by each answer */
  stall?: NodeJS.Timeout;
  givenUp?: boolean;
}

interface Batch {
  thread: Thread;
  calls: Call[];
  /** one per call, then (close) one per waiter */
  settles: Settle[];
}

const startWriter = () => new Worker(SOURCE, { eval: true, resourceLimits: { maxOldGenerationSizeMb: TRACE_WRITER_HEAP_MB } });

/** Writes and removes trace files off the main thread, in batches; `close` ends its thread. */
export class TraceFiles {
  private current: Thread | undefined;
  /** threads given up whose end has not come yet */
  private stalled = 0;
  private nextId = 0;
  /** batches sent and not yet answered */
  private readonly sent = new Map<number, Batch>();
  private calls: Call[] = [];
  private settles: Settle[] = [];
  private bytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly stallMs: number;
  private readonly startThread: () => Worker;

  /** @param opts.startThread how a thread is started (a test's stand-in for one the system refuses) */
  constructor(private readonly gatherMs = TRACE_WRITE_GATHER_MS, opts: { stallMs?: number; startThread?: () => Worker } = {}) {
    this.stallMs = opts.stallMs ?? TRACE_WRITE_STALL_MS;
    this.startThread = opts.startThread ?? startWriter;
  }

  /** Writes the file whole, mode 0600; on a failure no part of it is left. */
  write(file: string, text: string): Promise<void> {
    return new Promise<void>((resolve, reject) => this.queue({ file, text }, [resolve, reject], text.length));
  }

  /** Removes the file, if it is there. */
  remove(file: string): Promise<void> {
    return new Promise<void>((resolve, reject) => this.queue({ file }, [resolve, reject], 0));
  }

  /** Sends what waits, waits for every call (removals sent again included), and ends the thread. */
  async close(): Promise<void> {
    for (;;) {
      this.send();
      if (this.sent.size === 0) break;
      // One more settle per batch out, past its calls: its answer, its thread's end or its give-up settles it too.
      await Promise.all([...this.sent.values()].map((b) => new Promise<void>((resolve) => b.settles.push([resolve, () => resolve()]))));
    }
    const t = this.current;
    this.current = undefined;
    if (t) {
      clearTimeout(t.stall);
      await t.worker.terminate();
    }
  }

  private queue(call: Call, settle: Settle, bytes: number): void {
    this.calls.push(call);
    this.settles.push(settle);
    this.bytes += bytes;
    if (this.calls.length >= TRACE_WRITE_BATCH || this.bytes >= TRACE_WRITE_BATCH_BYTES) this.send();
    else this.timer ??= setTimeout(() => this.send(), this.gatherMs);
  }

  private send(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.calls.length === 0) return;
    const { calls, settles } = this;
    [this.calls, this.settles, this.bytes] = [[], [], 0];
    let t: Thread;
    try {
      t = this.thread();
    } catch (err) {
      // No thread to be had (the system refuses one, or the disk holds too many): these calls
      // fail, the next batch tries again — never an exception out of the window's timer.
      const failure = err instanceof Error ? err : new Error(String(err));
      for (const [, reject] of settles) reject(failure);
      return;
    }
    const id = ++this.nextId;
    this.sent.set(id, { thread: t, calls, settles });
    t.out++;
    // The thread keeps the process up only while a batch is out (flush waits for the last write).
    t.worker.ref();
    t.stall ??= this.watch(t);
    t.worker.postMessage({ id, calls: calls.map(({ file, text }) => ({ file, text })) });
  }

  /** The give-up clock of a thread with batches out. */
  private watch(t: Thread): NodeJS.Timeout {
    const timer = setTimeout(() => this.giveUp(t), this.stallMs);
    timer.unref();
    return timer;
  }

  private thread(): Thread {
    if (this.current) return this.current;
    if (this.stalled >= MAX_STALLED_TRACE_THREADS) {
      throw new Error(`the disk has not answered the trace writer's last ${this.stalled} threads within ${this.stallMs} ms (MAX_STALLED_TRACE_THREADS, TRACE_WRITE_STALL_MS)`);
    }
    const t: Thread = { worker: this.startThread(), out: 0 };
    t.worker.on("message", ({ id, failed }: { id: number; failed: ({ message: string; code?: string } | null)[] }) => {
      const batch = this.sent.get(id);
      if (!batch) return; // failed already: its thread was given up
      this.sent.delete(id);
      t.out--;
      clearTimeout(t.stall);
      t.stall = t.out > 0 ? this.watch(t) : undefined;
      batch.settles.forEach(([resolve, reject], i) => {
        const f = failed[i];
        if (f) reject(Object.assign(new Error(f.message), f.code === undefined ? {} : { code: f.code }));
        else resolve();
      });
      if (t.out === 0) t.worker.unref();
    });
    // A thread that dies (out of memory, say) fails the batches it had — some of their files may be
    // written: the store removes a trace it was told failed — and the next batch starts a fresh one.
    t.worker.on("error", (err) => this.end(t, err));
    t.worker.on("exit", (code) => {
      if (t.givenUp) this.stalled--;
      this.end(t, new Error(`the trace writer's thread ended (exit ${code})`));
    });
    t.worker.unref();
    this.current = t;
    return t;
  }

  /** A thread that answered nothing for stallMs: its batches failed, a fresh one for the next; it ends when the disk lets it. */
  private giveUp(t: Thread): void {
    if (t.givenUp || t.out === 0) return;
    t.givenUp = true;
    this.stalled++;
    this.end(t, new Error(`the trace writer's thread answered nothing for ${this.stallMs} ms (TRACE_WRITE_STALL_MS): given up`));
    t.worker.unref();
    void t.worker.terminate().catch(() => undefined);
  }

  /**
   * The thread is through (ended, or given up): its batches fail — but for their removals, sent
   * again (up to TRACE_REMOVE_TRIES): a file left unremoved would stay on disk uncounted.
   */
  private end(t: Thread, err: Error): void {
    if (this.current === t) this.current = undefined;
    clearTimeout(t.stall);
    t.stall = undefined;
    for (const [id, batch] of this.sent) {
      if (batch.thread !== t) continue;
      this.sent.delete(id);
      t.out--;
      batch.settles.forEach((settle, i) => {
        const call = batch.calls[i];
        const tries = (call?.tries ?? 0) + 1;
        if (call?.text === undefined && call !== undefined && tries < TRACE_REMOVE_TRIES) this.queue({ file: call.file, tries }, settle, 0);
        else settle[1](err);
      });
    }
  }
}
