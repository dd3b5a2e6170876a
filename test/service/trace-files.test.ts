/**
 * The trace writer's thread: files written whole and private, removed when asked, each call's
 * failure its own, and nothing left behind by a stop.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { TRACE_WRITE_BATCH, TraceFiles } from "../../service/records/trace-files.js";

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
    void (files as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
    const settled = await Promise.allSettled(calls);
    const failed = settled.filter((r) => r.status === "rejected");
    expect(failed.length).toBeGreaterThan(0);
    for (const r of failed) expect(String((r as PromiseRejectedResult).reason)).toMatch(/thread ended/);
    await files.write(join(dir, "after.json"), "{\"after\":1}");
    expect(readFileSync(join(dir, "after.json"), "utf8")).toBe("{\"after\":1}");
    await files.close();
  });
});
