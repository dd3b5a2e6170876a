/**
 * @module The warm pool: pre-started single-use containers, per shape (image, runtime, limits,
 * mounts — never the workspace: it reaches the container at hand-over). A container is taken for
 * one hook and never comes back; the pool refills in the background, a few starts at a time (what
 * the engine sustains), never past `maxTotal`, and lets a shape's containers go when it has not
 * been asked for in `idleMs`. How many a shape keeps follows its arrivals (Little's law): `size`,
 * and once an event of the last DEMAND_WINDOW_MS found none ready, also as many as arrive while
 * one container starts — its arrival rate over that window times how long its starts take. A
 * pool that keeps up starts no more at once than it did (each start competes with the runs for
 * the CPU); one that falls behind grows to the rate it is asked for, within `maxTotal`.
 */

/** The arrival rate of a shape is counted over this window. */
export const DEMAND_WINDOW_MS = 2_000;
/** Arrivals counted per window at most (a rate of 2 000/s). */
const MAX_ASKED = 4_096;
/** How long a start is taken to last until one was measured. */
const FIRST_START_MS = 300;
/** A party (a tenant) that asked for a shape this recently still counts for its share of it. */
export const PARTY_ACTIVE_MS = 30_000;

export interface PoolOptions {
  /** ready containers kept at least per shape in use; 0 turns the pool off. @default 2 */
  size: number;
  /** all pools together, ready and starting. @default 16 */
  maxTotal: number;
  /** a shape not asked for this long loses its containers; no container waits longer. @default 300 000 */
  idleMs: number;
  /** container starts at once. @default 4 */
  maxStarting: number;
}

export const DEFAULT_POOL: PoolOptions = { size: 2, maxTotal: 16, idleMs: 300_000, maxStarting: 4 };

export interface Pooled {
  readonly alive: boolean;
  discard(): Promise<void>;
}

interface Slot<T> {
  key: string;
  make: () => Promise<T>;
  ready: { item: T; at: number }[];
  starting: number;
  wantedAt: number;
  failures: number;
  retryAt: number;
  /** when containers were asked for (taken or missed) in the last DEMAND_WINDOW_MS, oldest first */
  asked: number[];
  /** how long a start of this shape takes (moving average) */
  startMs: number;
  /** when an event last found no container ready */
  missedAt: number;
  /** per party: when it last asked, and when it took in the last DEMAND_WINDOW_MS */
  parties: Map<string, { askedAt: number; took: number[] }>;
}

export class WarmPool<T extends Pooled> {
  private readonly slots = new Map<string, Slot<T>>();
  private starting = 0;
  /** where the next round of starts begins among the shapes (fill) */
  private turn = 0;
  private closed = false;
  private readonly discarding = new Set<Promise<void>>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly options: PoolOptions) {
    this.timer = setInterval(() => this.expire(), Math.min(options.idleMs, 5_000));
    this.timer.unref();
  }

  /**
   * A ready container of this shape, or undefined (the caller runs cold and the pool starts
   * filling). After a hit the caller calls `refill()` once its run is over, so that the run does
   * not share the machine with the start of its replacement. `party` (the tenant) takes its share:
   * while as few are ready as other parties asked lately, the last of them go to whoever of those
   * took the fewest — one party's flood runs cold itself rather than empty the pool for the rest.
   */
  take(key: string, make: () => Promise<T>, party = ""): T | undefined {
    const slot = this.slot(key, make);
    const now = Date.now();
    slot.asked.push(now);
    // The window's list stays short whatever the rate: past this, the pool is at maxTotal anyway.
    if (slot.asked.length > MAX_ASKED) slot.asked.shift();
    const own = this.party(slot, party, now);
    if (!this.mayTake(slot, party, own.took.length, now)) {
      slot.missedAt = now;
      this.fill();
      return undefined;
    }
    let found: T | undefined;
    while (!found && slot.ready.length > 0) {
      const { item } = slot.ready.shift()!;
      if (item.alive) found = item;
      else this.discard(item);
    }
    if (!found) {
      slot.missedAt = now;
      this.fill();
    } else if (own.took.length < MAX_ASKED) own.took.push(now);
    return found;
  }

  /** The party's record in this shape, its takes older than the window dropped. */
  private party(slot: Slot<T>, name: string, now: number): { askedAt: number; took: number[] } {
    let p = slot.parties.get(name);
    if (!p) slot.parties.set(name, (p = { askedAt: now, took: [] }));
    p.askedAt = now;
    while (p.took.length > 0 && now - p.took[0]! > DEMAND_WINDOW_MS) p.took.shift();
    return p;
  }

  /**
   * Whether `party` may have one of the ready containers: yes while more are ready than other
   * parties asked lately (one kept for each); else only if it took no more of late than any of them.
   */
  private mayTake(slot: Slot<T>, party: string, took: number, now: number): boolean {
    let others = 0;
    let fewest = Infinity;
    for (const [name, p] of slot.parties) {
      if (name === party) continue;
      if (now - p.askedAt > PARTY_ACTIVE_MS) {
        slot.parties.delete(name);
        continue;
      }
      others++;
      while (p.took.length > 0 && now - p.took[0]! > DEMAND_WINDOW_MS) p.took.shift();
      fewest = Math.min(fewest, p.took.length);
    }
    return slot.ready.length > others || took <= fewest;
  }

  refill(): void {
    this.fill();
  }

  /** Keeps containers of this shape ready from now on. */
  want(key: string, make: () => Promise<T>): void {
    this.slot(key, make);
    this.fill();
  }

  private slot(key: string, make: () => Promise<T>): Slot<T> {
    let slot = this.slots.get(key);
    if (!slot) this.slots.set(key, (slot = { key, make, ready: [], starting: 0, wantedAt: 0, failures: 0, retryAt: 0, asked: [], startMs: FIRST_START_MS, missedAt: -Infinity, parties: new Map() }));
    slot.wantedAt = Date.now();
    return slot;
  }

  readyCount(key: string): number {
    return this.slots.get(key)?.ready.filter((r) => r.item.alive).length ?? 0;
  }

  stats(): { ready: number; starting: number } {
    let ready = 0;
    for (const slot of this.slots.values()) ready += slot.ready.length;
    return { ready, starting: this.starting };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    for (const slot of this.slots.values()) for (const r of slot.ready.splice(0)) this.discard(r.item);
    while (this.starting > 0) await new Promise((r) => setTimeout(r, 20));
    await Promise.allSettled([...this.discarding]);
  }

  private total(): number {
    return this.stats().ready + this.starting;
  }

  /**
   * Starts what the shapes lack, one start per shape in turn: a flooded shape never takes every
   * start (`maxStarting`) and every place (`maxTotal`) while another shape waits for one.
   */
  private fill(): void {
    if (this.closed) return;
    const now = Date.now();
    const wanting = [...this.slots.values()].map((slot) => ({ slot, target: this.target(slot, now) }));
    const n = wanting.length;
    // Each round goes through every shape once, from the one after the shape last started.
    for (let started = true; started; ) {
      started = false;
      const base = this.turn;
      for (let k = 0; k < n; k++) {
        if (this.total() >= this.options.maxTotal || this.starting >= this.options.maxStarting) return;
        const i = (base + k) % n;
        const { slot, target } = wanting[i]!;
        if (slot.ready.length + slot.starting < target && now >= slot.retryAt) {
          this.start(slot);
          this.turn = (i + 1) % n;
          started = true;
        }
      }
    }
  }

  /** What a shape keeps, ready and starting: `size`, plus its arrivals during one start while it falls behind; at most `maxTotal`. */
  private target(slot: Slot<T>, now: number): number {
    while (slot.asked.length > 0 && now - slot.asked[0]! > DEMAND_WINDOW_MS) slot.asked.shift();
    const behind = now - slot.missedAt <= DEMAND_WINDOW_MS;
    const inOneStart = behind ? Math.ceil((slot.asked.length / DEMAND_WINDOW_MS) * slot.startMs) : 0;
    return Math.min(this.options.maxTotal, this.options.size + inOneStart);
  }

  private start(slot: Slot<T>): void {
    slot.starting++;
    this.starting++;
    const t0 = Date.now();
    slot.make().then(
      (item) => {
        slot.starting--;
        this.starting--;
        slot.failures = 0;
        slot.startMs = 0.8 * slot.startMs + 0.2 * (Date.now() - t0);
        if (this.closed || this.slots.get(slot.key) !== slot) this.discard(item);
        else slot.ready.push({ item, at: Date.now() });
        this.fill();
      },
      () => {
        slot.starting--;
        this.starting--;
        // The engine is down or refuses: back off, up to 10 s between tries.
        slot.failures++;
        const wait = Math.min(10_000, 250 * 2 ** slot.failures);
        slot.retryAt = Date.now() + wait;
        setTimeout(() => this.fill(), wait).unref();
      },
    );
  }

  private discard(item: T): void {
    const p = item.discard().catch(() => undefined);
    this.discarding.add(p);
    void p.finally(() => this.discarding.delete(p));
  }

  /** Shapes not wanted lately lose their containers; containers idle too long are replaced. */
  private expire(): void {
    const now = Date.now();
    for (const [key, slot] of this.slots) {
      const old = slot.ready.filter((r) => now - r.at > this.options.idleMs || !r.item.alive);
      slot.ready = slot.ready.filter((r) => !old.includes(r));
      for (const r of old) this.discard(r.item);
      if (now - slot.wantedAt > this.options.idleMs) {
        for (const r of slot.ready.splice(0)) this.discard(r.item);
        if (slot.starting === 0) this.slots.delete(key);
      }
    }
    this.fill();
  }
}
