/**
 * A hook's output kept within its cap, whatever pieces it comes in: a mebibyte written a byte at a
 * time (each byte its own small slice of a larger read, as the engine's frames arrive) is held in
 * about a mebibyte, not a million buffers and their reads.
 */
import { describe, expect, it } from "vitest";
import { CappedBuffer } from "../../engine/run/output-capture.js";

describe("CappedBuffer", () => {
  it("keeps a mebibyte that came a byte at a time, each a slice of a 64 KiB read, in about a mebibyte", () => {
    const cap = 1024 * 1024;
    let overflows = 0;
    const kept = new CappedBuffer(cap, () => overflows++);
    globalThis.gc?.();
    const before = process.memoryUsage();
    // the reads the engine's frames came in (each piece a slice of one of them)
    const reads = Array.from({ length: 26 }, (_, i) => Buffer.alloc(64 * 1024, 97 + i));
    for (let i = 0; i < cap + 10; i++) kept.push(reads[i % 26]!.subarray(i % 1000, (i % 1000) + 1));
    globalThis.gc?.();
    const after = process.memoryUsage();
    const grew = after.heapUsed + after.external + after.arrayBuffers - (before.heapUsed + before.external + before.arrayBuffers);
    expect(grew).toBeLessThan(16 * 1024 * 1024);
    expect(overflows).toBe(1);
    const text = kept.text();
    expect(text.length).toBe(cap);
    expect(text.slice(0, 28)).toBe("abcdefghijklmnopqrstuvwxyzab");
  });

  it("cuts at the cap inside a piece, says so once, and takes nothing after", () => {
    let overflows = 0;
    const kept = new CappedBuffer(10, () => overflows++);
    kept.push(Buffer.from("hello "));
    kept.push(Buffer.from("world and more"));
    kept.push(Buffer.from("ignored"));
    expect(kept.text()).toBe("hello worl");
    expect(overflows).toBe(1);
    // a view of what was kept stays what it was
    const view = kept.bytes();
    expect(view.toString()).toBe("hello worl");
  });
});
