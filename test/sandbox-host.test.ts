/**
 * The host runner (policy hooks): the same attacks, through `sh -c` on the host. The deadline
 * kills the whole process group, output is capped, the server's environment stays out.
 */
import { readFile } from "node:fs/promises";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HostRunner } from "../engine/run/host-runner.js";
import { DEFAULT_LIMITS } from "../engine/names.js";
import type { RunRequest } from "../engine/run/types.js";

const runner = new HostRunner(process.env);
const run = (command: string, extra: Partial<RunRequest> = {}) =>
  runner.run({ command, stdin: Buffer.from('{"toolName":"bash"}'), env: {}, timeoutMs: 5_000, limits: DEFAULT_LIMITS, ...extra });

/** Running, as opposed to gone or a zombie waiting for whoever adopted it to reap it. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return false;
  }
}

describe("host runner", () => {
  it("hands the event over stdin and captures stdout, stderr and the exit code", async () => {
    expect(await run("cat; echo; echo oops >&2; exit 2")).toMatchObject({ outcome: "exited", exitCode: 2, stdout: '{"toolName":"bash"}\n', stderr: "oops\n" });
  });

  it("kills the whole process group at the deadline, grandchildren included", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hookbox-host-"));
    const t0 = performance.now();
    const result = await run(`sh -c 'sleep 600 & echo $! > ${dir}/grandchild; wait' & sleep 600`, { timeoutMs: 1_000 });
    expect(result.outcome).toBe("timed_out");
    expect(performance.now() - t0).toBeLessThan(2_000);
    const pid = Number(await readFile(join(dir, "grandchild"), "utf8"));
    expect(pid).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 100));
    expect(alive(pid)).toBe(false);
  });

  it("ends a background process that outlives the hook command", async () => {
    const result = await run("sleep 300 & echo $!");
    expect(result).toMatchObject({ outcome: "exited", exitCode: 0 });
    await new Promise((r) => setTimeout(r, 100));
    expect(alive(Number(result.stdout.trim()))).toBe(false);
  });

  it.each(["stdout", "stderr"] as const)("cuts 100 MB on %s at the byte cap", async (stream) => {
    const rssBefore = process.memoryUsage().rss;
    const redirect = stream === "stderr" ? ">&2" : "";
    const result = await run(`head -c 100000000 /dev/zero | tr '\\0' x ${redirect}`, { limits: { ...DEFAULT_LIMITS, maxOutputBytes: 64 * 1024 } });
    expect(result).toMatchObject({ outcome: "output_truncated", stream });
    expect(result[stream].length).toBe(64 * 1024);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(64 * 1024 * 1024);
  });

  it("does not show the service's environment, only the allow-list and the hook's own", async () => {
    process.env.HOOKBOX_TEST_SECRET = "s3cr3t-value";
    const result = await new HostRunner(process.env).run({
      command: "env", stdin: new Uint8Array(), env: { MY_SETTING: "on" }, timeoutMs: 5_000, limits: DEFAULT_LIMITS,
    });
    delete process.env.HOOKBOX_TEST_SECRET;
    expect(result.stdout).not.toMatch(/s3cr3t-value|HOOKBOX_TEST_SECRET/);
    expect(result.stdout).toMatch(/^MY_SETTING=on$/m);
    expect(result.stdout).toMatch(/^COSH_RUNTIME=hookbox-host$/m);
  });

  it("cancels a run when its signal aborts", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    expect((await run("sleep 600", { signal: controller.signal })).outcome).toBe("cancelled");
  });
});
