/**
 * Log lines wait for stdout in a bounded buffer: a stdout that never drains (a stalled log shipper)
 * costs the lines past LOG_BUFFER_BYTES, each said by a "drop" event, never the service's memory.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, openSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { LOG_BUFFER_BYTES, logDestination } from "../../service/main.js";

it(`drops lines past the buffer (LOG_BUFFER_BYTES, ${LOG_BUFFER_BYTES / 2 ** 20} MiB by default) when stdout does not drain, and says so`, async () => {
  const fifo = join(mkdtempSync(join(tmpdir(), "hookbox-log-")), "stdout");
  expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
  // A reader that holds the pipe open and never reads: the kernel's pipe buffer fills, then ours.
  // `exec`: the process killed at the end is the one holding the pipe, no sleep left behind.
  const reader = spawn("sh", ["-c", `exec 3<"${fifo}"; exec sleep 30`], { stdio: "ignore" });
  const out = logDestination(64 * 1024, openSync(fifo, "w"));
  // The reader goes at the end: what was still waiting then fails to be written, as it may.
  out.on("error", () => undefined);
  let dropped = 0;
  out.on("drop", () => dropped++);
  try {
    const line = `${"x".repeat(1023)}\n`;
    for (let i = 0; i < 1024; i++) out.write(line); // 1 MiB against 64 KiB of pipe and 64 KiB of buffer
    expect(dropped).toBeGreaterThan(800);
  } finally {
    reader.kill("SIGKILL");
    // The destination owns the descriptor: it closes it, once what it was writing has failed.
    const closed = new Promise((resolve) => out.once("close", resolve));
    out.destroy();
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 2_000))]);
  }
});
