/**
 * What a run waits for before its hook starts — a workspace's archive being built — it waits for no
 * longer than the hook's time, nor past a cancellation; a build that has started goes on for the cache.
 */
import { describe, expect, it } from "vitest";
import { waitAtMost } from "../../engine/run/run-guard.js";

describe("waitAtMost", () => {
  const never = new Promise<string>(() => undefined);
  it("gives what comes in time", async () => {
    expect(await waitAtMost(Promise.resolve("tar"), 1_000, undefined)).toBe("tar");
  });
  it("gives null once the time is up, whatever is still to come", async () => {
    const t0 = performance.now();
    expect(await waitAtMost(never, 50, undefined)).toBeNull();
    expect(performance.now() - t0).toBeLessThan(5_000);
  });
  it("gives null at a cancellation, and at once for one already made", async () => {
    const cancel = new AbortController();
    const waiting = waitAtMost(never, 60_000, cancel.signal);
    cancel.abort();
    expect(await waiting).toBeNull();
    expect(await waitAtMost(never, 60_000, cancel.signal)).toBeNull();
  });
  it("waits with no time limit for Infinity (a wait bound by its signal alone)", async () => {
    const later = new Promise<string>((resolve) => setTimeout(() => resolve("tar"), 20));
    expect(await waitAtMost(later, Infinity, undefined)).toBe("tar");
  });
  it("gives null for a failure", async () => {
    expect(await waitAtMost(Promise.reject(new Error("EIO")), 1_000, undefined)).toBeNull();
  });
});
