/**
 * @module Turns on the one thread that serves everyone. Work that holds it for a while — parsing a
 * large event body, reading a repository's hook file — waits for a turn first: one turn a loop
 * iteration (the loop answers what else arrived in between, `/healthz` and other tenants' events),
 * handed out round-robin between parties (tenants), so one tenant's sixteen bodies cost another's
 * one body a turn, not sixteen. A turn is the synchronous work done right after `take` resolves:
 * the taker must not await before it has done the heavy part.
 */

/**
 * Resolves once the loop has polled for I/O again. One `setImmediate` does not always wait for that:
 * queued from an I/O callback (the poll phase) it runs in the same iteration's check phase, before
 * anything else that arrived is read — two pieces of heavy work then run back to back, and a
 * `/healthz` that came during the first waits for both. The second, queued from the check phase,
 * runs only after the next poll.
 */
export function afterIO(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}

export class Turns {
  /** per party, its waiters in arrival order; the Map's order is the round-robin's */
  private readonly queues = new Map<string, Array<() => void>>();
  private scheduled = false;

  /** Resolves when it is `party`'s turn. */
  take(party: string): Promise<void> {
    return new Promise((resolve) => {
      let queue = this.queues.get(party);
      if (!queue) this.queues.set(party, (queue = []));
      queue.push(resolve);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // The next turn comes after the loop has polled for I/O again.
    void afterIO().then(() => {
      this.scheduled = false;
      const next = this.queues.entries().next();
      if (next.done) return;
      const [party, queue] = next.value;
      const resolve = queue.shift()!;
      // To the back of the round: the next turn is another party's, when one waits.
      this.queues.delete(party);
      if (queue.length > 0) this.queues.set(party, queue);
      if (this.queues.size > 0) this.schedule();
      resolve();
    });
  }
}

/** The service's one scheduler of heavy turns (one thread, one queue of turns). */
export const heavyTurns = new Turns();

/**
 * @default 16 KiB — an event body this large or larger waits for a turn before it is weighed and
 * parsed (a mebibyte of invalid JSON costs its located 400 over a hundred milliseconds); smaller
 * ones, nearly every event, parse at once — as many as AT_ONCE_BODIES allows in one loop iteration.
 */
export const TURN_BODY_BYTES = 16 * 1024;

/**
 * @default 8 bodies, 64 KiB — what of the bodies under TURN_BODY_BYTES is parsed at once in one
 * iteration of the loop: a tenant's hundreds of small bodies completed together (each just under
 * the turn's size, in flight at once) would be parsed, located and answered back to back — half a
 * second of the shared thread — before `/healthz` or another tenant's event is read. Past either,
 * the rest of that iteration's wait for turns, round-robin between tenants, as large ones do.
 */
export const AT_ONCE_BODIES = { count: 8, bytes: 64 * 1024 };

let atOnce = { count: 0, bytes: 0 };
let resetting = false;

/** Whether a body of `bytes` may be parsed now, without a turn (TURN_BODY_BYTES, AT_ONCE_BODIES); counts it if so. */
export function parseAtOnce(bytes: number): boolean {
  if (bytes >= TURN_BODY_BYTES || atOnce.count + 1 > AT_ONCE_BODIES.count || atOnce.bytes + bytes > AT_ONCE_BODIES.bytes) return false;
  atOnce = { count: atOnce.count + 1, bytes: atOnce.bytes + bytes };
  if (!resetting) {
    resetting = true;
    // after this iteration's I/O callbacks: the bodies that completed together are this one's
    setImmediate(() => {
      atOnce = { count: 0, bytes: 0 };
      resetting = false;
    });
  }
  return true;
}
