/**
 * One service per data_dir, across containers too: a holder in another pid namespace (another
 * container on the same data folder) cannot be seen by pid, so its lock is its own while it renews
 * it — and taken over once it stops.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { lockDataDir } from "../../service/data-dir-lock.js";

describe("the data_dir lock", () => {
  const contend = async (dir: string) => {
    const module = join(process.cwd(), "dist/service/data-dir-lock.js");
    // another container: its own pid namespace (and, as with host networking, the same host name)
    const { stdout } = await promisify(execFile)("unshare", ["--pid", "--fork", "--mount-proc", process.execPath, "--input-type=module", "-e",
      `import(${JSON.stringify(module)}).then((m) => console.log(JSON.stringify(m.lockDataDir(${JSON.stringify(dir)}))))`], { encoding: "utf8" });
    return JSON.parse(stdout) as { ok: boolean; heldBy?: number; tookOverFrom?: number };
  };

  it("is refused to a second service in another container while the first renews it, and taken over once it stops", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hookbox-lock-"));
    const lock = lockDataDir(dir);
    expect(lock.ok).toBe(true);
    try {
      expect(await contend(dir)).toMatchObject({ ok: false, heldBy: process.pid });
    } finally {
      if (lock.ok) lock.release();
    }
    // A holder that is gone without a word (kill -9): its lock is renewed no more.
    writeFileSync(join(dir, "hookbox.lock"), JSON.stringify({ pid: 1, start: "1", pidns: "pid:[1]" }));
    expect(await contend(dir)).toMatchObject({ ok: true, tookOverFrom: 1 });
  }, 60_000);
});
