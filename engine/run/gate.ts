/**
 * @module Bounded concurrency in front of the runners: `slots` events run at once, up to `queue`
 * wait; past that an event is refused at once (OverloadedError → 429 with Retry-After) rather
 * than slowing everyone down.
 */
import { OverloadedError } from "../errors.js";

export interface Ticket {
  /** resolves when the event may run; rejects if its signal aborts while it waits */
  ready: Promise<void>;
  release(): void;
}

export class Gate {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    readonly slots: number,
    readonly queue: number,
  ) {}

  get depth(): number {
    return this.waiting.length;
  }

  get active(): number {
    return this.running;
  }

  /** Takes a place now or throws OverloadedError; the run starts when `ready` resolves. */
  enter(signal?: AbortSignal): Ticket {
    let released = false;
    let started = false;
    const release = () => {
      if (released) return;
      released = true;
      if (!started) return;
      this.running--;
      this.waiting.shift()?.();
    };
    if (this.running < this.slots) {
      this.running++;
      started = true;
      return { ready: Promise.resolve(), release };
    }
    if (this.waiting.length >= this.queue) throw new OverloadedError(1);
    const ready = new Promise<void>((resolve, reject) => {
      const go = () => {
        signal?.removeEventListener("abort", onAbort);
        if (released) return this.waiting.shift()?.();
        this.running++;
        started = true;
        resolve();
      };
      const onAbort = () => {
        const i = this.waiting.indexOf(go);
        if (i >= 0) this.waiting.splice(i, 1);
        released = true;
        reject(signal?.reason ?? new Error("aborted"));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiting.push(go);
    });
    ready.catch(() => undefined);
    return { ready, release };
  }
}
