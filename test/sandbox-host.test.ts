/**
 * The host runner (policy hooks): the same attacks, through `sh -c` on the host. The deadline
 * kills the whole process group, output is capped, the server's environment stays out.
 */
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HOST_KILL_GRACE_MS, HostRunner } from "../engine/run/host-runner.js";
import { HostSpawner } from "../engine/run/host-spawner.js";
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

/** Live processes whose command line mentions `text`. */
function processesWith(text: string): string[] {
  return readdirSync("/proc").filter((p) => /^\d+$/.test(p) && alive(Number(p))).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(text);
    } catch {
      return false;
    }
  });
}

describe("host runner", () => {
  it("hands the event over stdin and captures stdout, stderr and the exit code", async () => {
    expect(await run("cat; echo; echo oops >&2; exit 2")).toMatchObject({ outcome: "exited", exitCode: 2, stdout: '{"toolName":"bash"}\n', stderr: "oops\n" });
  });

  // In a PID namespace the hook sees its own pids, not the host's: its processes are found by a
  // marker in their command line (a no-op after the sleep keeps each shell, and so the marker, alive).
  it("kills the whole process tree at the deadline, grandchildren included", async () => {
    const marker = mkdtempSync(join(tmpdir(), "hookbox-host-"));
    const t0 = performance.now();
    const result = await run(`sh -c 'sh -c "sleep 600; : ${marker}" & wait; : ${marker}' & sleep 600`, { timeoutMs: 1_000 });
    expect(result.outcome).toBe("timed_out");
    expect(performance.now() - t0).toBeLessThan(2_000);
    await new Promise((r) => setTimeout(r, 100));
    expect(processesWith(marker)).toEqual([]);
  });

  it("judges a hook that ended within its timeout by that end, however late the loop that serves everyone reads it: a block given in time is never a timeout", async () => {
    const started = join(mkdtempSync(join(tmpdir(), "hookbox-host-")), "started");
    const running = run(`touch ${started}; cat >/dev/null; sleep 0.3; echo '{"decision":"block"}'; exit 2`, { timeoutMs: 1_000 });
    // once the hook runs (its timeout armed before), the loop is held past that timeout — by another
    // tenant's heavy request, say — while the hook ends, 0.3 s in
    while (!existsSync(started)) await new Promise((r) => setTimeout(r, 5));
    // (held where a request's work runs — past the timers' phase, as an I/O callback or an immediate)
    await new Promise((r) => setImmediate(r));
    const until = performance.now() + 1_500;
    while (performance.now() < until) {
      // held
    }
    expect(await running).toMatchObject({ outcome: "exited", exitCode: 2, stdout: '{"decision":"block"}\n' });
  });

  it("judges a hook that ended past its timeout by that end, however late the loop that serves everyone got to its timer: an answer given too late is a timeout", async () => {
    const started = join(mkdtempSync(join(tmpdir(), "hookbox-host-")), "started");
    const running = run(`touch ${started}; cat >/dev/null; sleep 0.3; echo '{"decision":"allow"}'`, { timeoutMs: 150 });
    while (!existsSync(started)) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setImmediate(r));
    const until = performance.now() + 1_000;
    while (performance.now() < until) {
      // held while the hook runs past its 150 ms and ends
    }
    expect(await running).toMatchObject({ outcome: "timed_out" });
  });

  it("starts a hook that names no cwd in a folder of the service's own, its HOME too: never the shared /tmp any user may write to", async () => {
    const result = await run('pwd; echo "$HOME"; stat -c "%a %u" .');
    expect(result.outcome, result.stderr).toBe("exited");
    const [cwd, home, modeOwner] = result.stdout.trim().split("\n");
    expect(home).toBe(cwd);
    expect(cwd).not.toBe(tmpdir());
    expect(cwd!.startsWith(join(tmpdir(), "hookbox-policy-"))).toBe(true);
    expect(modeOwner).toBe(`700 ${process.getuid!()}`);
    // one folder for the process's runs, not one left per run
    expect((await run("pwd")).stdout.trim()).toBe(cwd);
    // removed (by a cleaner of /tmp, say) and made again by another, open to all: no longer the hook's
    rmSync(cwd!, { recursive: true, force: true });
    mkdirSync(cwd!);
    chmodSync(cwd!, 0o777);
    const again = await run('pwd; stat -c "%a" .');
    expect(again.outcome, again.stderr).toBe("exited");
    const [cwd2, mode2] = again.stdout.trim().split("\n");
    expect(cwd2).not.toBe(cwd);
    expect(mode2).toBe("700");
    rmSync(cwd!, { recursive: true, force: true });
  });

  it("ends a background process that outlives the hook command", async () => {
    const marker = mkdtempSync(join(tmpdir(), "hookbox-host-"));
    const result = await run(`sh -c 'sleep 300; : ${marker}' & sleep 0.2; echo started`);
    expect(result).toMatchObject({ outcome: "exited", exitCode: 0, stdout: "started\n" });
    await new Promise((r) => setTimeout(r, 100));
    expect(processesWith(marker)).toEqual([]);
  });

  it("ends what a hook started with setsid when its command ends, and at the deadline", async () => {
    expect(runner.isolation).toBe("pid-namespace");
    const marker = mkdtempSync(join(tmpdir(), "hookbox-setsid-"));
    const t0 = performance.now();
    // setsid leaves the process group, and the escaped shell holds stdout open; the no-op after
    // the sleep keeps the shell (and the marker in its command line) alive as long as it runs.
    const ended = await run(`setsid sh -c 'sleep 30; : ${marker}' & sleep 0.2; echo done`);
    expect(ended).toMatchObject({ outcome: "exited", exitCode: 0, stdout: "done\n" });
    expect(performance.now() - t0).toBeLessThan(2_000);
    const timedOut = await run(`setsid sh -c 'sleep 30; : ${marker}' & sleep 30`, { timeoutMs: 1_000 });
    expect(timedOut.outcome).toBe("timed_out");
    expect(performance.now() - t0).toBeLessThan(4_000);
    await new Promise((r) => setTimeout(r, 100));
    expect(processesWith(marker)).toEqual([]);
  });

  // A script's `die` often ends it with `kill $$`: in a PID namespace the hook's shell must not be
  // its init, which ignores signals it has no handler for — the script would go on to its allow.
  it.each([
    ["kill -s TERM $$", 143],
    ["kill -9 $$", 137],
    ["kill 0", 143],
  ])("ends a hook that ends itself (%s) as it ends outside: its exit status, never the allow after it", async (kill, status) => {
    const command = `input=$(cat); case "$input" in *bash*) echo "blocked" >&2; ${kill};; esac; echo '{"permissionDecision":"allow"}'`;
    for (const r of [runner, new HostRunner(process.env, { isolation: "process-group" })]) {
      const result = await r.run({ command, stdin: Buffer.from('{"toolName":"bash"}'), env: {}, timeoutMs: 5_000, limits: DEFAULT_LIMITS });
      expect(result, r.isolation).toMatchObject({ outcome: "exited", exitCode: status, stdout: "", stderr: "blocked\n" });
    }
  });

  it("keeps a process group where no PID namespace is allowed (and says so through `isolation`)", async () => {
    const groupOnly = new HostRunner(process.env, { isolation: "process-group" });
    expect(groupOnly.isolation).toBe("process-group");
    const result = await groupOnly.run({ command: "sleep 300 & echo $!", stdin: new Uint8Array(), env: {}, timeoutMs: 5_000, limits: DEFAULT_LIMITS });
    expect(result).toMatchObject({ outcome: "exited", exitCode: 0 });
    await new Promise((r) => setTimeout(r, 100));
    expect(alive(Number(result.stdout.trim()))).toBe(false);
  });

  it("in a process group only, a setsid child holding the pipes does not hold the run: its block is read, and a timeout is a timeout", async () => {
    const groupOnly = new HostRunner(process.env, { isolation: "process-group" });
    const marker = mkdtempSync(join(tmpdir(), "hookbox-setsid-group-"));
    const t0 = performance.now();
    const ended = await groupOnly.run({ command: `setsid sh -c 'sleep 30; : ${marker}' & echo '{"decision":"block"}'`, stdin: new Uint8Array(), env: {}, timeoutMs: 5_000, limits: DEFAULT_LIMITS });
    expect(ended).toMatchObject({ outcome: "exited", exitCode: 0, stdout: '{"decision":"block"}\n' });
    expect(performance.now() - t0).toBeLessThan(2_000);
    const t1 = performance.now();
    const timedOut = await groupOnly.run({ command: `setsid sh -c 'sleep 30; : ${marker}' & sleep 30`, stdin: new Uint8Array(), env: {}, timeoutMs: 1_000, limits: DEFAULT_LIMITS });
    expect(timedOut.outcome).toBe("timed_out");
    expect(performance.now() - t1).toBeLessThan(3_000);
    // What escaped the group outlives the hook here (SECURITY.md says so); the test cleans it up.
    for (const pid of processesWith(marker)) process.kill(Number(pid), "SIGKILL");
  });

  it.each(["stdout", "stderr"] as const)("cuts 100 MB on %s at the byte cap", async (stream) => {
    const rssBefore = process.memoryUsage().rss;
    const redirect = stream === "stderr" ? ">&2" : "";
    const result = await run(`head -c 100000000 /dev/zero | tr '\\0' x ${redirect}`, { limits: { ...DEFAULT_LIMITS, maxOutputBytes: 64 * 1024 } });
    expect(result).toMatchObject({ outcome: "output_truncated", stream });
    expect(result[stream].length).toBe(64 * 1024);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(64 * 1024 * 1024);
  });

  it("takes a working directory that is a file, or is not there, as a failed start: never the waiter's exit as the hook's own", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hookbox-host-cwd-"));
    writeFileSync(join(dir, "file"), "x");
    for (const [cwd, why] of [[join(dir, "file"), /not a folder/], [join(dir, "gone"), /cannot be entered \(ENOENT\)/]] as const) {
      const result = await run("echo ran", { cwd });
      expect(result, cwd).toMatchObject({ outcome: "failed_to_start", stdout: "" });
      expect(result.outcome === "failed_to_start" && result.error).toMatch(why);
      // It reaches the tenant's records: the folder's last part, never the host's path to it.
      expect(result.outcome === "failed_to_start" && result.error).not.toContain(dir);
    }
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

  it("gives a hook no descriptor the service was started with beyond its stdio (a supervisor's pipe at fd 33)", () => {
    // A service process started with fd 33 open and inheritable (past the run of fds Node marks
    // close-on-exec at its start): what its policy hook sees of its own descriptors.
    const script = [
      `const { HostRunner } = await import(${JSON.stringify(join(process.cwd(), "dist/engine/run/host-runner.js"))});`,
      `const { DEFAULT_LIMITS } = await import(${JSON.stringify(join(process.cwd(), "dist/engine/names.js"))});`,
      `const r = await new HostRunner({}).run({ command: "ls /proc/self/fd", stdin: Buffer.from("{}"), env: {}, timeoutMs: 5000, limits: DEFAULT_LIMITS });`,
      "process.stdout.write(r.stdout); process.exit(0);",
    ].join("\n");
    const stdio = ["pipe", "pipe", "inherit", ...Array.from({ length: 30 }, () => "ignore"), "pipe"] as ("pipe" | "inherit" | "ignore")[];
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { stdio, encoding: "utf8", timeout: 30_000 });
    const fds = r.stdout!.trim().split(/\s+/).map(Number).sort((a, b) => a - b);
    // 0–2, and the descriptor ls opened to list them
    expect(fds).toEqual([0, 1, 2, 3]);
  });

  it("never starts a run whose signal aborted before it came", async () => {
    const marker = join(mkdtempSync(join(tmpdir(), "hookbox-gone-")), "started");
    const result = await runner.run({ command: `touch ${marker}`, stdin: new Uint8Array(), env: {}, timeoutMs: 5_000, limits: DEFAULT_LIMITS, signal: AbortSignal.abort() });
    expect(result.outcome).toBe("cancelled");
    await new Promise((r) => setTimeout(r, 300));
    expect(existsSync(marker)).toBe(false);
  });

  it("cancels a run when its signal aborts", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    expect((await run("sleep 600", { signal: controller.signal })).outcome).toBe("cancelled");
  });
});

describe("host spawner (the helper that forks policy hooks)", () => {
  const hostRun = (r: HostRunner, command: string, extra: Partial<RunRequest> = {}) =>
    r.run({ command, stdin: new Uint8Array(), env: {}, timeoutMs: 5_000, limits: DEFAULT_LIMITS, ...extra });

  it("forks hooks from a helper process, never from the service", async () => {
    const r = new HostRunner(process.env, { isolation: "process-group" });
    const parent = Number((await hostRun(r, "echo $PPID")).stdout.trim());
    expect(parent).not.toBe(process.pid);
    expect(readFileSync(`/proc/${parent}/cmdline`, "utf8").split("\0")).toContain("-e");
    const stat = (pid: number | string) => readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "").split(" ");
    // state, ppid, pgrp: the service's child, in a process group of its own (a Ctrl-C to the service's group misses it)
    expect(stat(parent)[1]).toBe(String(process.pid));
    expect(stat(parent)[2]).not.toBe(stat("self")[2]);
  });

  it("refuses a command it cannot start as a failed start, and goes on serving", async () => {
    const refused = await hostRun(runner, "echo a\0b");
    expect(refused).toMatchObject({ outcome: "failed_to_start" });
    expect(await hostRun(runner, "echo ok")).toMatchObject({ outcome: "exited", exitCode: 0, stdout: "ok\n" });
  });

  it("kills what a lost helper was running, ends those runs as errors, and starts a new helper", async () => {
    const spawner = new HostSpawner();
    const r = new HostRunner(process.env, { isolation: "process-group", spawner });
    const marker = mkdtempSync(join(tmpdir(), "hookbox-lost-"));
    const parent = Number((await hostRun(r, "echo $PPID")).stdout.trim());
    const running = hostRun(r, `sleep 300; : ${marker}`);
    await new Promise((res) => setTimeout(res, 300));
    expect(processesWith(marker).length).toBeGreaterThan(0);
    process.kill(parent, "SIGKILL");
    // Started before the service has heard that its helper is gone: it ends too.
    const late = hostRun(r, `sleep 300; : ${marker}`);
    expect(await running).toMatchObject({ outcome: "failed_to_start", error: "the host spawner stopped while the hook ran" });
    expect(await late).toMatchObject({ outcome: "failed_to_start" });
    await new Promise((res) => setTimeout(res, 100));
    expect(processesWith(marker)).toEqual([]);
    const next = await hostRun(r, "echo $PPID");
    expect(next).toMatchObject({ outcome: "exited", exitCode: 0 });
    expect(Number(next.stdout.trim())).not.toBe(parent);
  });

  it("ends a run by its timeout + HOST_KILL_GRACE_MS when its helper stops answering (SIGSTOP), and serves again once it answers", async () => {
    const spawner = new HostSpawner();
    const r = new HostRunner(process.env, { isolation: "process-group", spawner });
    const helper = Number((await hostRun(r, "echo $PPID")).stdout.trim());
    process.kill(helper, "SIGSTOP");
    try {
      const t0 = performance.now();
      const stuck = await r.run({ command: "echo never", stdin: new Uint8Array(), env: {}, timeoutMs: 500, limits: DEFAULT_LIMITS });
      expect(stuck).toMatchObject({ outcome: "timed_out", exitCode: null });
      expect(performance.now() - t0).toBeLessThan(500 + HOST_KILL_GRACE_MS + 1_000);
    } finally {
      process.kill(helper, "SIGCONT");
    }
    expect(await hostRun(r, "echo again")).toMatchObject({ outcome: "exited", exitCode: 0, stdout: "again\n" });
  });

  it("survives running out of file descriptors: the runs it cannot start fail, the others finish, the next one runs", () => {
    // A stand-in service with 64 descriptors, asking for 40 hooks at once.
    const script = `
      const { HostRunner } = await import(${JSON.stringify(new URL("../dist/engine/run/host-runner.js", import.meta.url).href)});
      const { DEFAULT_LIMITS } = await import(${JSON.stringify(new URL("../dist/engine/names.js", import.meta.url).href)});
      const r = new HostRunner({}, { isolation: "process-group" });
      const run = () => r.run({ command: "sleep 0.3; echo ok", stdin: new Uint8Array(), env: {}, timeoutMs: 10000, limits: DEFAULT_LIMITS });
      const all = await Promise.all(Array.from({ length: 40 }, run));
      const after = await run();
      console.log(JSON.stringify({ outcomes: all.map((x) => x.outcome), after: after.outcome }));
      process.exit(0);`;
    const out = spawnSync("/bin/sh", ["-c", `ulimit -n 64; exec "${process.execPath}" --input-type=module -e "$0"`, script], { encoding: "utf8", timeout: 30_000 });
    const { outcomes, after } = JSON.parse(out.stdout) as { outcomes: string[]; after: string };
    expect(outcomes.length).toBe(40);
    expect(outcomes.every((o) => o === "exited" || o === "failed_to_start")).toBe(true);
    expect(outcomes).toContain("failed_to_start");
    expect(outcomes).toContain("exited");
    expect(after).toBe("exited");
  });

  it("kills every hook it started, and exits, when the service dies without a word", async () => {
    const marker = mkdtempSync(join(tmpdir(), "hookbox-orphan-"));
    // A service stand-in that starts a long hook and is then killed outright.
    const script = `
      const { HostRunner } = await import(${JSON.stringify(new URL("../dist/engine/run/host-runner.js", import.meta.url).href)});
      const { DEFAULT_LIMITS } = await import(${JSON.stringify(new URL("../dist/engine/names.js", import.meta.url).href)});
      void new HostRunner({}).run({ command: "sleep 300; : ${marker}", stdin: new Uint8Array(), env: {}, timeoutMs: 600000, limits: DEFAULT_LIMITS });
      setInterval(() => {}, 1000);`;
    const service = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: "ignore" });
    try {
      // The stand-in's own command line holds the marker too: the hook's are the others.
      const hooks = () => processesWith(marker).filter((p) => p !== String(service.pid));
      // Node's start, the helper's and the hook's: seconds on a machine busy with other work.
      await expect.poll(() => hooks().length, { timeout: 30_000, interval: 50 }).toBeGreaterThan(0);
      const helpers = () => readdirSync("/proc").filter((p) => /^\d+$/.test(p) && alive(Number(p))).filter((p) => {
        try { return readFileSync(`/proc/${p}/stat`, "utf8").replace(/^.*\) /, "").split(" ")[1] === String(service.pid); } catch { return false; }
      });
      const [helper] = helpers();
      expect(helper).toBeDefined();
      service.kill("SIGKILL");
      // Its end is the helper's own, at once: only a busy machine's slowness is allowed for.
      await expect.poll(() => hooks(), { timeout: 10_000, interval: 50 }).toEqual([]);
      await expect.poll(() => alive(Number(helper)), { timeout: 10_000, interval: 50 }).toBe(false);
    } finally {
      service.kill("SIGKILL"); // whatever failed above, the stand-in does not outlive the test
    }
  }, 120_000);
});
