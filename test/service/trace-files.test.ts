/**
 * The trace writer's thread: files written whole and private, removed when asked, each call's
 * failure its own, and nothing left behind by a stop.
 */
import { spawnSync } from "node:child_process";
import { closeSync, constants, existsSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { afterAll, describe, expect, it } from "vitest";
import { MAX_STALLED_TRACE_THREADS, TRACE_WRITE_BATCH, TraceFiles } from "../../service/records/trace-files.js";

const dir = mkdtempSync(join(tmpdir(), "hookbox-trace-files-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("TraceFiles", () => {
  it(`writes a window's files — more than TRACE_WRITE_BATCH (${TRACE_WRITE_BATCH}) of them — whole and readable by the service's user only`, async () => {
    const files = new TraceFiles();
    const names = Array.from({ length: TRACE_WRITE_BATCH * 2 + 3 }, (_, i) => join(dir, `w${i}.json`));
    await Promise.all(names.map((f, i) => files.write(f, JSON.stringify({ i }))));
    for (const [i, f] of names.entries()) {
      expect(JSON.parse(readFileSync(f, "utf8"))).toEqual({ i });
      expect(statSync(f).mode & 0o777).toBe(0o600);
    }
    await files.close();
  });

  it("fails a call alone: a file in a folder that is not there rejects with its code, the others of its window are written", async () => {
    const files = new TraceFiles();
    const bad = join(dir, "no-such-folder", "x.json");
    const [ok, failed, alsoOk] = await Promise.allSettled([files.write(join(dir, "a.json"), "{}"), files.write(bad, "{}"), files.write(join(dir, "b.json"), "{}")]);
    expect(ok.status).toBe("fulfilled");
    expect(alsoOk.status).toBe("fulfilled");
    expect(failed).toMatchObject({ status: "rejected", reason: { code: "ENOENT" } });
    expect(existsSync(bad)).toBe(false);
    await files.close();
  });

  it("removes a file, and one already gone is no error", async () => {
    const files = new TraceFiles();
    const f = join(dir, "gone.json");
    await files.write(f, "{}");
    await files.remove(f);
    expect(existsSync(f)).toBe(false);
    await expect(files.remove(f)).resolves.toBeUndefined();
    // A folder of that name is no file to remove: said.
    await expect(files.remove(dir)).rejects.toMatchObject({ code: expect.stringMatching(/^E(ISDIR|PERM)$/) });
    await files.close();
  });

  it("writes what is still waiting for its window when it is closed", async () => {
    const files = new TraceFiles(60_000);
    const f = join(dir, "late.json");
    const written = files.write(f, "{\"late\":true}");
    await files.close();
    await written;
    expect(readFileSync(f, "utf8")).toBe("{\"late\":true}");
  });

  it("fails the batches of a thread that dies, and starts a fresh one for the next call", async () => {
    const files = new TraceFiles();
    await files.write(join(dir, "before.json"), "{}");
    const names = Array.from({ length: TRACE_WRITE_BATCH }, (_, i) => join(dir, `dying${i}.json`));
    const calls = names.map((f) => files.write(f, "{}"));
    // A full batch goes at once; its thread is ended before it can answer.
    void (files as unknown as { current: { worker: { terminate(): Promise<number> } } }).current.worker.terminate();
    const settled = await Promise.allSettled(calls);
    const failed = settled.filter((r) => r.status === "rejected");
    expect(failed.length).toBeGreaterThan(0);
    for (const r of failed) expect(String((r as PromiseRejectedResult).reason)).toMatch(/thread ended/);
    await files.write(join(dir, "after.json"), "{\"after\":1}");
    expect(readFileSync(join(dir, "after.json"), "utf8")).toBe("{\"after\":1}");
    await files.close();
  });

  /** A FIFO no one reads: the thread's open of it waits until `release` opens it for reading — a disk that does not answer. */
  function stuckFile(name: string): { file: string; release(): void } {
    const file = join(dir, name);
    expect(spawnSync("mkfifo", [file]).status).toBe(0);
    return { file, release: () => void readEnds.push(openSync(file, constants.O_RDONLY | constants.O_NONBLOCK)) };
  }
  const readEnds: number[] = [];
  afterAll(() => readEnds.forEach((fd) => closeSync(fd)));

  it("fails the calls of a window when no thread can be started, with no exception out of its timer, and starts one for the next", async () => {
    let refused = 0;
    const files = new TraceFiles(5, {
      startThread: () => {
        if (refused++ === 0) throw Object.assign(new Error("EAGAIN"), { code: "ERR_WORKER_INIT_FAILED" });
        return new Worker("require('node:worker_threads').parentPort.on('message', ({ id, calls }) => { for (const c of calls) require('node:fs').writeFileSync(c.file, c.text); require('node:worker_threads').parentPort.postMessage({ id, failed: calls.map(() => null) }) })", { eval: true });
      },
    });
    await expect(files.write(join(dir, "refused.json"), "{}")).rejects.toMatchObject({ code: "ERR_WORKER_INIT_FAILED" });
    expect(existsSync(join(dir, "refused.json"))).toBe(false);
    await files.write(join(dir, "next.json"), "{\"next\":1}");
    expect(readFileSync(join(dir, "next.json"), "utf8")).toBe("{\"next\":1}");
    await files.close();
  });

  it(`gives up a thread the disk holds past its stall time: its write fails, its removal goes again on a fresh thread; past ${MAX_STALLED_TRACE_THREADS} held threads a batch fails at once`, async () => {
    const files = new TraceFiles(5, { stallMs: 300 });
    const held = Array.from({ length: MAX_STALLED_TRACE_THREADS }, (_, i) => stuckFile(`held${i}.fifo`));
    const kept = join(dir, "kept.json");
    writeFileSync(kept, "{}");
    // The first thread is held in the FIFO's open; the removal queued behind it on that thread.
    const stuck = files.write(held[0]!.file, "x");
    await new Promise((r) => setTimeout(r, 20));
    const removed = files.remove(kept);
    await expect(stuck).rejects.toThrow(/answered nothing for 300 ms/);
    await removed;
    expect(existsSync(kept)).toBe(false);
    // Hold the rest, then one more batch: no thread is started for it.
    for (const h of held.slice(1)) await expect(files.write(h.file, "x")).rejects.toThrow(/answered nothing/);
    await expect(files.write(join(dir, "refused-held.json"), "{}")).rejects.toThrow(/MAX_STALLED_TRACE_THREADS/);
    expect(existsSync(join(dir, "refused-held.json"))).toBe(false);
    // The disk answers again: the held threads end, and writes go through.
    for (const h of held) h.release();
    await expect.poll(async () => {
      try {
        await files.write(join(dir, "after-held.json"), "{}");
        return true;
      } catch {
        return false;
      }
    }, { timeout: 10_000, interval: 100 }).toBe(true);
    await files.close();
  });

  it("answers a backlog of batches out to a held thread without holding the event loop (no scan of every batch per answer)", async () => {
    const files = new TraceFiles(60_000, { stallMs: 120_000 });
    const held = stuckFile("backlog.fifo");
    const first = files.write(held.file, "x");
    const send = () => (files as unknown as { send(): void }).send();
    send();
    const removals: Promise<void>[] = [];
    for (let i = 0; i < 40_000; i++) {
      removals.push(files.remove(join(dir, `never-there-${i}.json`)));
      send(); // a batch each, as one event a window would send
    }
    // The longest the loop went without running a 5 ms ticker, from the release to the last answer.
    let last = performance.now();
    let longestMs = 0;
    const ticker = setInterval(() => {
      const now = performance.now();
      longestMs = Math.max(longestMs, now - last);
      last = now;
    }, 5);
    held.release();
    await first;
    await Promise.all(removals);
    await new Promise((r) => setTimeout(r, 30));
    clearInterval(ticker);
    // Answered one at a time with a scan of every batch out, 40 000 of them held the loop for seconds.
    expect(longestMs).toBeLessThan(1_000);
    await files.close();
  });
});
