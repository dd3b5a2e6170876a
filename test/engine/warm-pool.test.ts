/**
 * The warm pool sizes itself from its arrivals (Little's law): `size` ready, plus — once it falls
 * behind — what arrives while a container starts, never more than `maxTotal` — one pool for every workspace, so a shape
 * is image, runtime, limits and mounts. Items here take 200 ms to start, like a container.
 */
import { describe, expect, it } from "vitest";
import { WarmPool, type PoolOptions } from "../../engine/run/warm-pool.js";

class Item {
  alive = true;
  discard(): Promise<void> {
    this.alive = false;
    return Promise.resolve();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const START_MS = 200;

describe("a warm pool sized from its arrivals", () => {
  const options: PoolOptions = { size: 1, maxTotal: 6, idleMs: 60_000, maxStarting: 8 };
  const make = () => new Promise<Item>((r) => setTimeout(() => r(new Item()), START_MS));
  const kept = (pool: WarmPool<Item>) => pool.stats().ready + pool.stats().starting;

  it("keeps `size` when nothing arrives", async () => {
    const pool = new WarmPool<Item>(options);
    pool.want("shape", make);
    await sleep(START_MS * 2);
    expect(pool.readyCount("shape")).toBe(1);
    await pool.close();
  });

  it("that keeps up starts no more than it did: `size` at 4/s with 2 ready", async () => {
    const pool = new WarmPool<Item>({ ...options, size: 2 });
    pool.want("shape", make);
    await sleep(START_MS * 2);
    let most = 0;
    let hits = 0;
    for (let i = 0; i < 6; i++) {
      if (pool.take("shape", make)) hits++;
      // The runner refills once its run is over.
      pool.refill();
      most = Math.max(most, kept(pool));
      await sleep(250);
    }
    expect(hits).toBe(6);
    expect(most).toBeLessThanOrEqual(2);
    await pool.close();
  });

  it.each([
    ["10/s", 100, 2, 3],
    ["50/s", 20, 4, 6],
  ])("at %s keeps more, never past pool_max", async (_rate, everyMs, atLeast, atMost) => {
    const pool = new WarmPool<Item>(options);
    pool.want("shape", make);
    await sleep(START_MS * 2);
    let most = 0;
    let hits = 0;
    for (let i = 0; i < 1_000 / everyMs; i++) {
      if (pool.take("shape", make)) hits++;
      pool.refill();
      most = Math.max(most, kept(pool));
      await sleep(everyMs);
    }
    expect(most).toBeGreaterThanOrEqual(atLeast);
    expect(most).toBeLessThanOrEqual(Math.min(atMost, options.maxTotal));
    expect(hits).toBeGreaterThan(0);
    await pool.close();
  });
});

describe("a warm pool shared between tenants", () => {
  const make = () => new Promise<Item>((r) => setTimeout(() => r(new Item()), START_MS));

  it("keeps the last ready containers for a tenant that asked lately while another takes all it can: the flood runs cold", async () => {
    const pool = new WarmPool<Item>({ size: 2, maxTotal: 4, idleMs: 60_000, maxStarting: 4 });
    pool.want("shape", make);
    await sleep(START_MS * 2);
    // the calm tenant asked once a while ago
    expect(pool.take("shape", make, "calm")).toBeDefined();
    pool.refill();
    await sleep(START_MS * 2);
    // the flood takes as fast as it can, for a second
    let floodHits = 0;
    let floodMisses = 0;
    const end = Date.now() + 1_000;
    while (Date.now() < end) {
      if (pool.take("shape", make, "flood")) floodHits++;
      else floodMisses++;
      pool.refill();
      await sleep(5);
    }
    expect(floodHits).toBeGreaterThan(0);
    expect(floodMisses).toBeGreaterThan(0);
    // …and the calm tenant still finds one ready
    expect(pool.take("shape", make, "calm")).toBeDefined();
    await pool.close();
  });

  it("gives a lone tenant every ready container", async () => {
    const pool = new WarmPool<Item>({ size: 2, maxTotal: 4, idleMs: 60_000, maxStarting: 4 });
    pool.want("shape", make);
    await sleep(START_MS * 2);
    expect(pool.take("shape", make, "only")).toBeDefined();
    expect(pool.take("shape", make, "only")).toBeDefined();
    await pool.close();
  });
});

describe("shapes share the pool's starts", () => {
  it("a shape flooded with misses takes one start in turn with another shape that misses once, not all of them", async () => {
    const pool = new WarmPool<Item>({ size: 1, maxTotal: 8, idleMs: 60_000, maxStarting: 2 });
    const make = () => new Promise<Item>((r) => setTimeout(() => r(new Item()), START_MS));
    // the flood: many misses on "busy" within one start's time, so its target rises to maxTotal
    for (let i = 0; i < 50; i++) pool.take("busy", make, "flooder");
    // both start slots went to "busy" while it was the only shape; now "quiet" misses once
    expect(pool.take("quiet", make, "other")).toBeUndefined();
    // as each start ends, the next start goes round the shapes: "quiet" gets the first free one
    await sleep(START_MS * 1.5);
    expect(pool.readyCount("quiet") + pool.stats().starting).toBeGreaterThan(0);
    await sleep(START_MS * 1.5);
    expect(pool.readyCount("quiet")).toBeGreaterThanOrEqual(1);
    await pool.close();
  });
});

describe("a warm pool's pool_idle_ms", () => {
  const IDLE_MS = 1_000;
  // (the pool looks every min(idleMs, 5 s): a container goes between idleMs and twice it)
  it("takes a shape's containers once it has not been asked for in pool_idle_ms, not before", async () => {
    const made: Item[] = [];
    const make = () => new Promise<Item>((r) => setTimeout(() => r(made[made.push(new Item()) - 1]!), START_MS));
    const pool = new WarmPool<Item>({ size: 1, maxTotal: 4, idleMs: IDLE_MS, maxStarting: 4 });
    pool.want("shape", make);
    await sleep(START_MS + 100);
    expect(pool.readyCount("shape")).toBe(1);
    await sleep(IDLE_MS / 2);
    expect(pool.readyCount("shape")).toBe(1);
    await sleep(IDLE_MS * 2);
    expect(pool.stats()).toEqual({ ready: 0, starting: 0 });
    expect(made.map((i) => i.alive)).toEqual([false]);
    await pool.close();
  });

  it("replaces a container that has waited pool_idle_ms while its shape is still asked for", async () => {
    const made: Item[] = [];
    const make = () => new Promise<Item>((r) => setTimeout(() => r(made[made.push(new Item()) - 1]!), START_MS));
    const pool = new WarmPool<Item>({ size: 1, maxTotal: 4, idleMs: IDLE_MS, maxStarting: 4 });
    for (let waited = 0; waited < IDLE_MS * 3; waited += IDLE_MS / 4) {
      pool.want("shape", make);
      await sleep(IDLE_MS / 4);
    }
    expect(made.length).toBeGreaterThanOrEqual(2);
    expect(made[0]!.alive).toBe(false);
    expect(pool.readyCount("shape")).toBe(1);
    await pool.close();
  });
});
