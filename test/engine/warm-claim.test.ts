/**
 * A pre-started container's claim, driven through a stand-in for its engine handle: what is
 * written to the container, and when nothing may be. The container's own behaviour is proven
 * against the real engine in sandbox-container.test.ts.
 */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { MARKER_GRACE_MS } from "../../engine/run/handover.js";
import { WarmContainer } from "../../engine/run/warm-container.js";
import { DEFAULT_LIMITS } from "../../engine/names.js";
import type { ContainerHandle } from "../../engine/run/container-parts.js";

function standIn(opts: { ends?: Promise<void>; onKill?: () => void } = {}) {
  const stream = new PassThrough();
  const written: Buffer[] = [];
  stream.on("data", (c: Buffer) => written.push(c));
  let outErr: { err?: NodeJS.WritableStream } = {};
  let outOut: { out?: NodeJS.WritableStream } = {};
  let cleaned = 0;
  const handle: ContainerHandle = {
    stream,
    streamDone: opts.ends ?? new Promise(() => undefined),
    demux: (out, err) => {
      outErr = { err };
      outOut = { out };
    },
    kill: async () => void opts.onKill?.(),
    state: async () => ({ running: false, oomKilled: false, exitCode: 0 }),
    cleanup: async () => void cleaned++,
  };
  return { handle, written, up: () => outErr.err!.write(Buffer.from("bash\n")), out: (text: string) => outOut.out!.write(Buffer.from(text)), err: (text: string) => outErr.err!.write(Buffer.from(text)), cleaned: () => cleaned };
}

describe("a claim whose run was cancelled before its hand-over", () => {
  it("writes nothing to the container, answers cancelled at once, and removes it unused", async () => {
    const s = standIn();
    const warm = new WarmContainer(s.handle, 1_000);
    s.up();
    await warm.up;
    const cancel = new AbortController();
    cancel.abort();
    const removals: Promise<unknown>[] = [];
    const result = await warm.claim({ command: "rm -rf /workspace", stdin: Buffer.from("{}"), env: {}, timeoutMs: 5_000, limits: DEFAULT_LIMITS, signal: cancel.signal }, (p) => removals.push(p));
    await Promise.all(removals);
    expect(result.outcome).toBe("cancelled");
    expect(Buffer.concat(s.written).length).toBe(0);
    expect(s.cleaned()).toBe(1);
  });
});

describe("a claim whose container ends without its wrapper's end marks", () => {
  it("is hookbox not reading the hook's answer (failed_to_start), never the exit code and what output came", async () => {
    let end!: () => void;
    const s = standIn({ ends: new Promise<void>((r) => (end = r)) });
    const warm = new WarmContainer(s.handle, 1_000);
    s.up();
    await warm.up;
    const claimed = warm.claim({ command: "guard", stdin: Buffer.from("{}"), env: {}, timeoutMs: 5_000, limits: DEFAULT_LIMITS }, () => undefined);
    // the engine passed on the start of a block, then the stream closed: exit 0, no marks
    await new Promise((r) => setTimeout(r, 20));
    s.out('{"decision":"bl');
    end();
    const result = await claimed;
    expect(result).toMatchObject({ outcome: "failed_to_start", error: expect.stringMatching(/ended \(exit 0\) without its wrapper's end marks/) });
  });
});

describe("a claim whose second end mark does not follow the first", () => {
  it(`is read as the first says within MARKER_GRACE_MS (${MARKER_GRACE_MS} ms), however much the hook writes past it — never held to its timeout`, async () => {
    const s = standIn();
    const warm = new WarmContainer(s.handle, 1_000);
    s.up();
    await warm.up;
    const t0 = performance.now();
    const removals: Promise<unknown>[] = [];
    const claimed = warm.claim({ command: "guard", stdin: Buffer.from("{}"), env: {}, timeoutMs: 20_000, limits: { ...DEFAULT_LIMITS, maxOutputBytes: 1024 } }, (p) => removals.push(p));
    await new Promise((r) => setImmediate(r));
    // The hook read the nonce (from the wrapper's memory) and prints a mark of its own on stdout, then floods it.
    const nonce = Buffer.concat(s.written).toString("latin1").split(" ")[0]!;
    s.out(`{"decision":"allow"}\n${nonce} 0 0\n`);
    const junk = "A".repeat(64 * 1024);
    const flood = setInterval(() => {
      for (let i = 0; i < 16; i++) s.out(junk);
    }, 1);
    const result = await claimed.finally(() => clearInterval(flood));
    expect(performance.now() - t0).toBeLessThan(MARKER_GRACE_MS + 5_000);
    expect(result).toMatchObject({ outcome: "exited", exitCode: 0, stdout: '{"decision":"allow"}\n' });
    await Promise.all(removals);
    expect(s.cleaned()).toBe(1); // and its container removed
  });
});

describe("a claim whose end mark comes on stderr, and stdout's never", () => {
  it(`is hookbox not reading the hook's answer whole (failed_to_start) after MARKER_GRACE_MS, never the exit code and the part of stdout that came`, async () => {
    const s = standIn();
    const warm = new WarmContainer(s.handle, 1_000);
    s.up();
    await warm.up;
    const t0 = performance.now();
    const claimed = warm.claim({ command: "guard", stdin: Buffer.from("{}"), env: {}, timeoutMs: 20_000, limits: DEFAULT_LIMITS }, () => undefined);
    await new Promise((r) => setImmediate(r));
    const nonce = Buffer.concat(s.written).toString("latin1").split(" ")[0]!;
    s.err(`${nonce} s\n`);
    // the engine passed on stderr's end, and of stdout only the first bytes of a block
    s.out('{"decision":"bl');
    s.err(`${nonce} 0 0\n`);
    const result = await claimed;
    expect(result).toMatchObject({ outcome: "failed_to_start", error: expect.stringMatching(/its stdout's end had not come \d+ ms later \(MARKER_GRACE_MS\)/) });
    expect(performance.now() - t0).toBeLessThan(MARKER_GRACE_MS + 2_000);
  });
});

describe("a claim whose workspace takes long to unpack", () => {
  const nonceOf = (s: ReturnType<typeof standIn>) => Buffer.concat(s.written).toString("latin1").split(" ")[0]!;
  it("counts the hook's timeout from its start as the wrapper says it, never the hand-over's time before (as a cold run's container start is not the hook's)", async () => {
    const s = standIn();
    const warm = new WarmContainer(s.handle, 5_000);
    s.up();
    await warm.up;
    const claimed = warm.claim({ command: "guard", stdin: Buffer.from("{}"), env: {}, timeoutMs: 100, limits: DEFAULT_LIMITS }, () => undefined);
    await new Promise((r) => setImmediate(r));
    const nonce = nonceOf(s);
    // the workspace unpacks for three times the hook's timeout, then the hook answers at once
    await new Promise((r) => setTimeout(r, 300));
    s.err(`${nonce} s\n`);
    s.out(`{"decision":"allow"}\n${nonce} 0 0\n`);
    s.err(`${nonce} 0 0\n`);
    const result = await claimed;
    expect(result).toMatchObject({ outcome: "exited", exitCode: 0, stdout: '{"decision":"allow"}\n', stderr: "" });
    expect(result.startMs).toBeGreaterThanOrEqual(290);
    expect(result.durationMs).toBeLessThan(100);
  });
  it("still times the hook out by its timeout once it has started", async () => {
    let end!: () => void;
    let killedAt: number | undefined;
    const s = standIn({ ends: new Promise<void>((r) => (end = r)), onKill: () => { killedAt = performance.now(); end(); } });
    const warm = new WarmContainer(s.handle, 5_000);
    s.up();
    await warm.up;
    const claimed = warm.claim({ command: "guard", stdin: Buffer.from("{}"), env: {}, timeoutMs: 100, limits: DEFAULT_LIMITS }, () => undefined);
    await new Promise((r) => setTimeout(r, 200));
    const startedAt = performance.now();
    s.err(`${nonceOf(s)} s\n`);
    // the hook never ends: its timeout kills the container, 100 ms after its start — not after the claim
    const result = await claimed;
    expect(result.outcome).toBe("timed_out");
    expect(killedAt! - startedAt).toBeGreaterThanOrEqual(95);
    expect(killedAt! - startedAt).toBeLessThan(2_000);
  });
  it("ends by the run's deadline (timeout + engine timeout) when the wrapper never says its hook started: hookbox did not run it (failed_to_start, the tenant's failure mode), no timeout of the hook's", async () => {
    const s = standIn();
    const warm = new WarmContainer(s.handle, 300);
    s.up();
    await warm.up;
    const t0 = performance.now();
    const result = await warm.claim({ command: "guard", stdin: Buffer.from("{}"), env: {}, timeoutMs: 100, limits: DEFAULT_LIMITS }, () => undefined);
    expect(result).toMatchObject({ outcome: "failed_to_start", error: expect.stringMatching(/did not say its hook started within the run's time/) });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(390);
    expect(performance.now() - t0).toBeLessThan(3_000);
  });
  it("says a timeout the hand-over cut short is hookbox's (preparedMs): its hook had less than its timeout left of the run's deadline", async () => {
    let end!: () => void;
    const s = standIn({ ends: new Promise<void>((r) => (end = r)), onKill: () => end() });
    const warm = new WarmContainer(s.handle, 300);
    s.up();
    await warm.up;
    const claimed = warm.claim({ command: "guard", stdin: Buffer.from("{}"), env: {}, timeoutMs: 500, limits: DEFAULT_LIMITS }, () => undefined);
    await new Promise((r) => setTimeout(r, 400));
    s.err(`${nonceOf(s)} s\n`);
    const result = await claimed;
    expect(result.outcome).toBe("timed_out");
    expect(result.preparedMs).toBeGreaterThanOrEqual(390);
    // a hook that had its whole timeout: its own timeout, no preparation
    const t = standIn({ ends: new Promise<void>((r) => (end = r)), onKill: () => end() });
    const whole = new WarmContainer(t.handle, 5_000);
    t.up();
    await whole.up;
    const again = whole.claim({ command: "guard", stdin: Buffer.from("{}"), env: {}, timeoutMs: 100, limits: DEFAULT_LIMITS }, () => undefined);
    await new Promise((r) => setImmediate(r));
    t.err(`${nonceOf(t)} s\n`);
    expect(await again).not.toHaveProperty("preparedMs");
  });
  it("runs a hook again cold only when its wrapper ended before the hook started (exit 95–98 with no start line): a started hook's own exit 96 is never run twice", async () => {
    for (const started of [false, true]) {
      let end!: () => void;
      const s = standIn({ ends: new Promise<void>((r) => (end = r)) });
      s.handle.state = async () => ({ running: false, oomKilled: false, exitCode: 96 });
      const warm = new WarmContainer(s.handle, 5_000);
      s.up();
      await warm.up;
      const claimed = warm.claim({ command: "guard", stdin: Buffer.from("{}"), env: {}, timeoutMs: 1_000, limits: DEFAULT_LIMITS }, () => undefined);
      await new Promise((r) => setImmediate(r));
      if (started) s.err(`${nonceOf(s)} s\n`);
      end();
      const result = await claimed;
      expect(result.outcome).toBe("failed_to_start");
      expect(result.beforeHook, `started: ${started}`).toBe(started ? undefined : true);
    }
  });
});
