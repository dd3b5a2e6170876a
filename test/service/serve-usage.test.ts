/**
 * `hookbox serve` refuses what it cannot start with before it touches anything: a flag it does
 * not take or a bad --listen is a usage error (64, as for every command), a configuration error
 * names its file, line and key (78).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RESERVED_DESCRIPTORS } from "../../service/main.js";
import { startService } from "../helpers/service.js";

const serve = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, ["dist/service/main.js", ...args], { encoding: "utf8", timeout: 30_000, env: { PATH: process.env.PATH ?? "", ...env } });

describe("hookbox serve", () => {
  it("exits 64 on a flag it does not take, and on a --listen that is no HOST:PORT", () => {
    const bogus = serve(["--bogus"]);
    expect(bogus.status).toBe(64);
    expect(bogus.stderr).toMatch(/usage: hookbox serve/);
    const listen = serve(["--listen", ":8080"]);
    expect(listen.status).toBe(64);
    expect(listen.stderr).toMatch(/--listen wants HOST:PORT/);
  });

  it("exits 78 on a configuration error, naming the file, line and key", () => {
    const dir = mkdtempSync(join(tmpdir(), "hookbox-serve-"));
    const file = join(dir, "bad.toml");
    writeFileSync(file, "[server]\nlisten = \"127.0.0.1:0\"\nmax_body_bytes = -1\n");
    const bad = serve(["--config", file]);
    expect(bad.status).toBe(78);
    expect(bad.stderr).toMatch(new RegExp(`configuration error: ${file.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}:3:\\d+: server\\.max_body_bytes`));
    expect(serve(["--config", file], { HOOKBOX_LOG_LEVEL: "loud" }).status).toBe(78);
  });

  it("says a fatal error in a line, and its stack at HOOKBOX_LOG_LEVEL=debug, whichever way it is started", () => {
    const dir = mkdtempSync(join(tmpdir(), "hookbox-serve-"));
    writeFileSync(join(dir, "file"), "");
    const file = join(dir, "c.toml");
    writeFileSync(file, `[server]\nlisten = "127.0.0.1:0"\ndata_dir = "${join(dir, "file", "data")}"\n`);
    const cli = (env: Record<string, string>) =>
      spawnSync(process.execPath, ["dist/cli/hookbox.cjs", "serve", "--config", file], { encoding: "utf8", timeout: 30_000, env: { PATH: process.env.PATH ?? "", ...env } });
    for (const [how, run] of [["hookbox serve", cli], ["dist/service/main.js", (env: Record<string, string>) => serve(["--config", file], env)]] as const) {
      const plain = run({});
      expect(plain.status, how).not.toBe(0);
      expect(plain.stderr, how).toMatch(/ENOTDIR/);
      expect(plain.stderr, how).not.toMatch(/\n\s+at /);
      expect(run({ HOOKBOX_LOG_LEVEL: "debug" }).stderr, how).toMatch(/ENOTDIR[^\n]*\n\s+at /);
    }
  });

  // (no pre-started containers: each service is stopped as soon as it has been looked at)
  const NO_POOL = "[sandbox]\npool_size = 0\n";

  it(`warns at start when max_connections leaves fewer than RESERVED_DESCRIPTORS (${RESERVED_DESCRIPTORS}) of ulimit -n to the service's own files`, async () => {
    const openFiles = 2048;
    const startLog = async (maxConnections: number) => {
      const svc = await startService(NO_POOL, { server: `max_connections = ${maxConnections}\n`, wrap: ["prlimit", `--nofile=${openFiles}:${openFiles}`] });
      await svc.stop();
      return svc.logs();
    };
    const warning = `max_connections leaves fewer than ${RESERVED_DESCRIPTORS} of the process's file descriptors`;
    expect(await startLog(openFiles - RESERVED_DESCRIPTORS)).not.toContain(warning);
    const past = await startLog(openFiles - RESERVED_DESCRIPTORS + 1);
    expect(past).toContain(warning);
    expect(past).toContain(`"openFilesLimit":${openFiles}`);
  }, 60_000);

  it("writes a path a client sent with its C1 controls, bidi overrides and line separators escaped in its log: the log is read in terminals", async () => {
    const svc = await startService(NO_POOL);
    expect((await fetch(`${svc.url}/v1/%C2%9B31mRED%E2%80%AEtxt.exe%E2%80%A8%C2%85x%F3%A0%81%81`)).status).toBe(401);
    await svc.stop();
    const line = svc.logs().split("\n").find((l) => l.includes('"msg":"request"') && l.includes("RED"))!;
    expect(line).toContain("\\u009b31mRED\\u202etxt.exe\\u2028\\u0085x\\udb40\\udc41");
    expect(line).not.toMatch(/[\u0085\u009b\u202e\u2028]|\u{e0041}/u);
    expect((JSON.parse(line) as { req: { path: string } }).req.path).toBe("/v1/\u009b31mRED\u202etxt.exe\u2028\u0085x\u{e0041}");
  }, 60_000);
});
