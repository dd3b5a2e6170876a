/**
 * @module Admission: run slots and queue places, shared fairly between tenants — where 429s are
 * decided. `slots` events run hooks at once, a tenant at most `perTenantSlots` of them; each tenant
 * has its own queue of `queue` places; when a slot frees, the tenants that wait are served in
 * turn (round-robin), each in its own arrival order. So one tenant's flood fills only its own
 * queue and its own share of the slots: another tenant's event never gets a 429 for it, and waits
 * at most for one slot to free, never behind the flood.
 */
import { OverloadedError } from "./errors.js";

export interface Ticket {
  /** resolves when the event may run; rejects if its signal aborts while it waits */
  ready: Promise<void>;
  release(): void;
}

export interface AdmissionLimits {
  /** events running hooks at once, all tenants together (`[sandbox] max_concurrency`) */
  slots: number;
  /** events of one tenant running at once (`[sandbox] max_tenant_concurrency`) */
  perTenantSlots: number;
  /** events of one tenant waiting (`[sandbox] max_queue`) */
  queue: number;
}

interface Waiter {
  go: () => void;
}

interface TenantState {
  running: number;
  waiting: Waiter[];
}

export class Admission {
  private running = 0;
  private readonly tenants = new Map<string, TenantState>();
  /** tenants with waiting events, in the order they are served next */
  private readonly turn: string[] = [];

  constructor(readonly limits: AdmissionLimits) {}

  /** events waiting, all tenants together */
  get depth(): number {
    let n = 0;
    for (const t of this.tenants.values()) n += t.waiting.length;
    return n;
  }

  get active(): number {
    return this.running;
  }

  private state(tenant: string): TenantState {
    let t = this.tenants.get(tenant);
    if (!t) this.tenants.set(tenant, (t = { running: 0, waiting: [] }));
    return t;
  }

  private canRun(t: TenantState): boolean {
    return this.running < this.limits.slots && t.running < this.limits.perTenantSlots;
  }

  /** Takes a place now or throws OverloadedError (this tenant's queue is full). */
  enter(tenant: string, signal?: AbortSignal): Ticket {
    // Cancelled before it came (its client went while its workspace loaded, say): no place, no slot.
    if (signal?.aborted) {
      const ready = Promise.reject(signal.reason ?? new Error("aborted"));
      ready.catch(() => undefined);
      return { ready, release: () => undefined };
    }
    const t = this.state(tenant);
    let released = false;
    let started = false;
    const release = () => {
      if (released) return;
      released = true;
      if (!started) return;
      this.running--;
      t.running--;
      this.forget(tenant, t);
      this.dispatch();
    };
    if (t.waiting.length === 0 && this.canRun(t)) {
      this.running++;
      t.running++;
      started = true;
      return { ready: Promise.resolve(), release };
    }
    if (t.waiting.length >= this.limits.queue) throw new OverloadedError(1);
    const ready = new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        go: () => {
          signal?.removeEventListener("abort", onAbort);
          this.running++;
          t.running++;
          started = true;
          resolve();
        },
      };
      const onAbort = () => {
        const i = t.waiting.indexOf(waiter);
        if (i >= 0) t.waiting.splice(i, 1);
        released = true;
        this.forget(tenant, t);
        reject(signal?.reason ?? new Error("aborted"));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      t.waiting.push(waiter);
      if (!this.turn.includes(tenant)) this.turn.push(tenant);
    });
    ready.catch(() => undefined);
    return { ready, release };
  }

  /** Gives free slots to waiting tenants in turn, skipping those at their own share. */
  private dispatch(): void {
    let idle = 0;
    while (this.running < this.limits.slots && this.turn.length > 0 && idle < this.turn.length) {
      const name = this.turn.shift()!;
      const t = this.tenants.get(name);
      if (!t || t.waiting.length === 0) continue;
      if (t.running >= this.limits.perTenantSlots) {
        this.turn.push(name);
        idle++;
        continue;
      }
      idle = 0;
      t.waiting.shift()!.go();
      if (t.waiting.length > 0) this.turn.push(name);
    }
  }

  /** Drops a tenant's bookkeeping once it neither runs nor waits. */
  private forget(tenant: string, t: TenantState): void {
    if (t.running > 0 || t.waiting.length > 0) return;
    this.tenants.delete(tenant);
    const i = this.turn.indexOf(tenant);
    if (i >= 0) this.turn.splice(i, 1);
  }
}
