/**
 * One service per data_dir, across containers too: a holder in another PID namespace and host
 * (another container on the same data folder) cannot be seen by pid, so its lock is its own while
 * it renews it.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { lockDataDir } from "../../service/data-dir-lock.js";

describe("the data_dir lock", () => {
  it("is refused to a second service in another container (its own pids and host name) while the first holds it", () => {
    const dir = mkdtempSync(join(tmpdir(), "hookbox-lock-"));
    const lock = lockDataDir(dir);
    expect(lock.ok).toBe(true);
    try {
      const module = join(process.cwd(), "dist/service/data-dir-lock.js");
      const second = execFileSync("unshare", ["--pid", "--fork", "--mount-proc", "--uts", "sh", "-c",
        `hostname other-container && ${JSON.stringify(process.execPath)} --input-type=module -e 'import(${JSON.stringify(module)}).then((m) => console.log(JSON.stringify(m.lockDataDir(${JSON.stringify(dir)}))))'`], { encoding: "utf8" });
      expect(JSON.parse(second)).toMatchObject({ ok: false, heldBy: process.pid });
    } finally {
      if (lock.ok) lock.release();
    }
  });
});
