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
}

type Settle = [resolve: () => void, reject: (err: Error) => void];

/** Writes and removes trace files off the main thread, in batches; `close` ends its thread. */
export class TraceFiles {
  private worker: Worker | undefined;
  private nextId = 0;
  /** batches sent and not yet answered: the thread each went to, what each call's promise waits for */
  private readonly sent = new Map<number, { thread: Worker; settles: Settle[] }>();
  private calls: Call[] = [];
  private settles: Settle[] = [];
  private bytes = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly gatherMs = TRACE_WRITE_GATHER_MS) {}

  /** Writes the file whole, mode 0600; on a failure no part of it is left. */
  write(file: string, text: string): Promise<void> {
    return this.call({ file, text }, text.length);
  }

  /** Removes the file, if it is there. */
  remove(file: string): Promise<void> {
    return this.call({ file }, 0);
  }

  /** Sends what waits, waits for every call, and ends the thread. */
  async close(): Promise<void> {
    this.send();
    // One more settle per batch out, past its calls: its answer (or its thread's death) settles it too.
    await Promise.all([...this.sent.values()].map((s) => new Promise<void>((resolve) => s.settles.push([resolve, () => resolve()]))));
    const w = this.worker;
    this.worker = undefined;
    await w?.terminate();
  }

  private call(call: Call, bytes: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.calls.push(call);
      this.settles.push([resolve, reject]);
      this.bytes += bytes;
      if (this.calls.length >= TRACE_WRITE_BATCH || this.bytes >= TRACE_WRITE_BATCH_BYTES) this.send();
      else this.timer ??= setTimeout(() => this.send(), this.gatherMs);
    });
  }

  private send(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.calls.length === 0) return;
    const id = ++this.nextId;
    const calls = this.calls;
    const w = this.thread();
    this.sent.set(id, { thread: w, settles: this.settles });
    [this.calls, this.settles, this.bytes] = [[], [], 0];
    // The thread keeps the process up only while a batch is out (flush waits for the last write).
    w.ref();
    w.postMessage({ id, calls });
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(SOURCE, { eval: true, resourceLimits: { maxOldGenerationSizeMb: TRACE_WRITER_HEAP_MB } });
    w.on("message", ({ id, failed }: { id: number; failed: ({ message: string; code?: string } | null)[] }) => {
      const settles = this.sent.get(id)?.settles ?? [];
      this.sent.delete(id);
      settles.forEach(([resolve, reject], i) => {
        const f = failed[i];
        if (f) reject(Object.assign(new Error(f.message), f.code === undefined ? {} : { code: f.code }));
        else resolve();
      });
      if (![...this.sent.values()].some((b) => b.thread === w)) w.unref();
    });
    // A thread that dies (out of memory, say) fails the batches it had — some of their files may be
    // written: the store removes a trace it was told failed — and the next batch starts a fresh one.
    const fail = (err: Error) => {
      if (this.worker === w) this.worker = undefined;
      for (const [id, batch] of this.sent) {
        if (batch.thread !== w) continue;
        this.sent.delete(id);
        for (const [, reject] of batch.settles) reject(err);
      }
    };
    w.on("error", fail);
    w.on("exit", (code) => fail(new Error(`the trace writer's thread ended (exit ${code})`)));
    w.unref();
    this.worker = w;
    return w;
  }
}
