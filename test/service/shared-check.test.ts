/** `/readyz`'s engine check: kept for its TTL, and one check under way shared by every caller. */
import { describe, expect, it } from "vitest";
import { sharedCheck } from "../../service/shared-check.js";

describe("sharedCheck", () => {
  it("makes one call for a thousand callers at once, and one more after the TTL", async () => {
    let calls = 0;
    let release!: () => void;
    const check = sharedCheck(() => {
      calls++;
      return new Promise<number>((r) => (release = () => r(calls)));
    }, 50);
    const waiting = Array.from({ length: 1000 }, () => check());
    release();
    expect(new Set(await Promise.all(waiting))).toEqual(new Set([1]));
    expect(await check()).toBe(1); // within the TTL: kept
    await new Promise((r) => setTimeout(r, 60));
    const again = check();
    release();
    expect(await again).toBe(2);
    expect(calls).toBe(2);
  });

  it("lets a failed check be tried again by the next caller", async () => {
    let calls = 0;
    const check = sharedCheck(() => (++calls === 1 ? Promise.reject(new Error("engine down")) : Promise.resolve("ok")), 1_000);
    await expect(check()).rejects.toThrow("engine down");
    expect(await check()).toBe("ok");
  });
});
