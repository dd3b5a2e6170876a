/**
 * Admission, pure: slots and queue places shared fairly between tenants. One tenant's flood fills
 * its own queue and its own share of the slots; the others run at once and are served in turn.
 */
import { describe, expect, it } from "vitest";
import { Admission, type Ticket } from "../../engine/admission.js";
import { OverloadedError } from "../../engine/errors.js";

const settled = async (t: Ticket) => {
  let done = false;
  void t.ready.then(() => (done = true), () => undefined);
  await new Promise((r) => setTimeout(r, 0));
  return done;
};

describe("Admission", () => {
  it("runs a tenant up to its share, queues it up to its own places, then refuses only it", async () => {
    const a = new Admission({ slots: 4, perTenantSlots: 2, queue: 3 });
    const flood = Array.from({ length: 5 }, () => a.enter("a"));
    expect(await Promise.all(flood.map(settled))).toEqual([true, true, false, false, false]);
    expect(() => a.enter("a")).toThrow(OverloadedError);
    // The other tenant runs at once: the flood holds only half the slots.
    const b = a.enter("b");
    expect(await settled(b)).toBe(true);
    expect(a.active).toBe(3);
    expect(a.depth).toBe(3);
  });

  it("gives an event cancelled before it came neither a slot nor a place", async () => {
    const a = new Admission({ slots: 1, perTenantSlots: 1, queue: 1 });
    const gone = AbortSignal.abort(new Error("client went"));
    await expect(a.enter("a", gone).ready).rejects.toThrow("client went");
    expect(a.active).toBe(0);
    const running = a.enter("a");
    await expect(a.enter("a", gone).ready).rejects.toThrow("client went");
    expect(a.depth).toBe(0);
    const waiting = a.enter("a"); // the one place is still free
    running.release();
    expect(await settled(waiting)).toBe(true);
  });

  it("serves waiting tenants in turn when slots free", async () => {
    const a = new Admission({ slots: 2, perTenantSlots: 2, queue: 10 });
    const order: string[] = [];
    const first = [a.enter("a"), a.enter("a")];
    const waiting = ["a", "a", "a", "b", "b", "c"].map((name) => {
      const t = a.enter(name);
      void t.ready.then(() => order.push(name));
      return t;
    });
    for (const t of first) t.release();
    await new Promise((r) => setTimeout(r, 0));
    expect(order).toEqual(["a", "b"]);
    // Each release lets the next tenant in turn run: c before a's third.
    for (const t of waiting) {
      if (await settled(t)) t.release();
      await new Promise((r) => setTimeout(r, 0));
    }
    for (const t of waiting) t.release();
    await new Promise((r) => setTimeout(r, 0));
    expect(order.slice(0, 4)).toEqual(["a", "b", "c", "a"]);
    expect(order).toHaveLength(6);
    expect(a.active).toBe(0);
    expect(a.depth).toBe(0);
  });

  it("gives a waiting place back when its signal aborts", async () => {
    const a = new Admission({ slots: 1, perTenantSlots: 1, queue: 1 });
    const running = a.enter("a");
    const ac = new AbortController();
    const waiting = a.enter("a", ac.signal);
    expect(() => a.enter("a")).toThrow(OverloadedError);
    ac.abort();
    await expect(waiting.ready).rejects.toBeDefined();
    expect(a.depth).toBe(0);
    const next = a.enter("a");
    running.release();
    expect(await settled(next)).toBe(true);
  });
});
