/**
 * The sandbox, attacked for real: each hook below tries to break out or exhaust the machine through
 * the container runner against the real Docker engine, under runc and under gVisor's runsc. Each test
 * asserts the attack was stopped, reported with the right outcome, and left no container behind.
 */
import { spawnSync } from "node:child_process";
import { createServer, type Server } from "node:net";
import type { Duplex } from "node:stream";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { HostSpawner } from "../engine/run/host-spawner.js";
import { ContainerRunner } from "../engine/run/container-runner.js";
import { DockerClient } from "../engine/run/docker-client.js";
import { DEFAULT_IMAGE, DEFAULT_LIMITS, LABEL_MANAGED, type Runtime } from "../engine/names.js";
import type { RunRequest } from "../engine/run/types.js";
import { docker, leftovers, makeWorkspace } from "./helpers/engine.js";

const POOL = { size: 1, maxTotal: 4, idleMs: 60_000, maxStarting: 2 };
const SCRATCH = "/tmp/hookbox-test-scratch";

describe.each<[Runtime, "cold" | "warm"]>([
  ["runc", "cold"],
  ["runc", "warm"],
  ["runsc", "cold"],
  ["runsc", "warm"],
])("container sandbox under %s, %s", (runtime, mode) => {
  let runner: ContainerRunner;
  beforeEach(() => {
    runner = new ContainerRunner({ scratchDir: SCRATCH, ...(mode === "warm" ? { pool: POOL } : {}) });
  });
  /**
   * Runs the hook — in warm mode in a container the pool started before the hook was known — and
   * times the run alone (not the wait for a ready container).
   */
  const timed = async (command: string, extra: Partial<RunRequest> = {}) => {
    const request: RunRequest = { command, stdin: Buffer.from('{"hook_event_name":"PreToolUse"}'), env: {}, timeoutMs: 10_000, limits: DEFAULT_LIMITS, runtime, ...extra };
    if (mode === "warm") expect(await runner.warmFor(request)).toBe(true);
    const t0 = performance.now();
    const result = await runner.run(request);
    const wallMs = performance.now() - t0;
    expect(result.warm).toBe(mode === "warm");
    return { result, wallMs };
  };
  const run = async (command: string, extra: Partial<RunRequest> = {}) => (await timed(command, extra)).result;

  afterEach(async () => {
    await runner.drain({ close: true });
    expect(await leftovers()).toEqual({ containers: [], volumes: [] });
  });

  it("hands the event over stdin and captures stdout, stderr and the exit code", async () => {
    const result = await run("cat; echo; echo oops >&2; exit 3");
    expect(result).toMatchObject({ outcome: "exited", exitCode: 3, stdout: '{"hook_event_name":"PreToolUse"}\n', stderr: "oops\n" });
    // A cold container is removed before the answer; a pre-started one after it.
    if (mode === "cold") expect(result.removeMs).toBeGreaterThan(0);
    else expect(result.removeMs).toBeUndefined();
  });

  it("runs as a non-root user with no capabilities and no-new-privileges", async () => {
    const result = await run("id -u; grep -E '^(CapEff|NoNewPrivs)' /proc/self/status");
    expect(result.outcome).toBe("exited");
    const [uid, ...status] = result.stdout.trim().split("\n");
    expect(uid).not.toBe("0");
    expect(uid).toBe("1000");
    expect(status).toContain("CapEff:\t0000000000000000");
    // gVisor's /proc does not list NoNewPrivs; the flag is still passed to the runtime.
    if (runtime === "runc") expect(status).toContain("NoNewPrivs:\t1");
  });

  it("stops a fork bomb at the PID limit and kills it at the deadline", async () => {
    const { result, wallMs } = await timed("bomb() { bomb | bomb & }; bomb; sleep 30", { timeoutMs: 3_000 });
    // Warm, the PID limit may keep the wrapper from writing its end marks: then hookbox could not
    // read the hook's answer (failed_to_start), never a pass.
    expect(["timed_out", "exited", ...(mode === "warm" ? ["failed_to_start"] : [])], JSON.stringify(result)).toContain(result.outcome);
    expect(wallMs).toBeLessThan(3_000 + 1_000 + result.startMs);
    // The machine is still usable afterwards.
    expect((await run("echo alive")).stdout).toBe("alive\n");
  });

  it("reports a memory hog as oom_killed", async () => {
    const result = await run("python3 -c 'x = bytearray(1024 * 1024 * 1024); print(len(x))'", { timeoutMs: 20_000 });
    expect(result.outcome, JSON.stringify(result)).toBe("oom_killed");
    expect(result.stdout).toBe("");
  });

  it("reads a hook killed by a signal (137) as its exit, not an out-of-memory kill", async () => {
    // A child killed, its exit code passed on: a container that ends 137 by itself on every runtime.
    const result = await run("echo before; sh -c 'kill -9 $$'; exit $?");
    expect(result, JSON.stringify(result)).toMatchObject({ outcome: "exited", exitCode: 137, stdout: "before\n" });
  });

  it.each([
    ["a CPU spin", "while :; do :; done"],
    ["sleep 600", "sleep 600"],
  ])("kills %s at the deadline (timed_out within deadline + 1 s)", async (_name, command) => {
    const { result, wallMs } = await timed(command, { timeoutMs: 1_500 });
    expect(result.outcome).toBe("timed_out");
    expect(result.durationMs).toBeLessThan(1_500 + 1_000);
    expect(wallMs - result.startMs).toBeLessThan(1_500 + 1_000);
  });

  it.each(["stdout", "stderr"] as const)("cuts 100 MB on %s at the byte cap (output_truncated), memory bounded", async (stream) => {
    const rssBefore = process.memoryUsage().rss;
    const redirect = stream === "stderr" ? ">&2" : "";
    const result = await run(`head -c 100000000 /dev/zero | tr '\\0' x ${redirect}`, { limits: { ...DEFAULT_LIMITS, maxOutputBytes: 64 * 1024 } });
    expect(result).toMatchObject({ outcome: "output_truncated", stream });
    expect(result[stream].length).toBe(64 * 1024);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(64 * 1024 * 1024);
  });

  it("counts the cap in bytes, not characters: 64 KiB of two-byte characters pass whole, 30 bytes more are output_truncated", async () => {
    const print = (chars: number) => `python3 -c 'import sys; sys.stdout.buffer.write(("\u00e9" * ${chars}).encode())'`;
    const limits = { ...DEFAULT_LIMITS, maxOutputBytes: 64 * 1024 };
    const whole = await run(print(32 * 1024), { limits });
    expect(whole.outcome).toBe("exited");
    expect(whole.stdout).toBe("\u00e9".repeat(32 * 1024));
    const over = await run(print(32 * 1024 + 15), { limits });
    expect(over).toMatchObject({ outcome: "output_truncated", stream: "stdout" });
    expect(Buffer.byteLength(over.stdout)).toBeLessThanOrEqual(64 * 1024);
    // The same, and then a hang past the timeout: still output_truncated, as a cold run stops it at the cap.
    const hung = await run(`${print(32 * 1024 + 15).replace(".encode())", ".encode()); sys.stdout.buffer.flush(); __import__(\"time\").sleep(30)")}`, { limits, timeoutMs: 1_500 });
    expect(hung).toMatchObject({ outcome: "output_truncated", stream: "stdout" });
  });

  describe("network", () => {
    let server: Server;
    let port = 0;
    let connections = 0;
    beforeAll(async () => {
      server = createServer((socket) => { connections++; socket.destroy(); });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      port = (server.address() as { port: number }).port;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it("fails a TCP connect, to the host's loopback or to any address", async () => {
      const py = (host: string) =>
        `python3 -c "import socket; socket.create_connection(('${host}', ${port}), timeout=2)" 2>&1 && echo CONNECTED || echo FAILED`;
      const loopback = await run(py("127.0.0.1"));
      const outside = await run(py("192.0.2.1")); // TEST-NET-1: documentation address, never routed
      expect(loopback.stdout).toMatch(/FAILED/);
      expect(outside.stdout).toMatch(/FAILED/);
      expect(outside.stdout).toMatch(/unreachable|no route to host/i);
      expect(connections).toBe(0);
    });

    it("fails a DNS lookup", async () => {
      const result = await run(`python3 -c "import socket; print(socket.getaddrinfo('example.com', 443))" 2>&1 && echo RESOLVED || echo FAILED`);
      expect(result.stdout).toMatch(/FAILED/);
      expect(result.stdout).toMatch(/gaierror|Temporary failure|not known/);
    });
  });

  it.each(["/", "/etc", "/usr/bin"])("refuses a write to %s (read-only root)", async (dir) => {
    const result = await run(`echo pwned > ${dir}/hookbox-pwned && echo WROTE`);
    expect(result.outcome).toBe("exited");
    expect(result.exitCode).not.toBe(0);
    expect(result.stdout).not.toMatch(/WROTE/);
    expect(result.stderr).toMatch(/Read-only file system|Permission denied/);
  });

  it("stops a 1 GB write to /tmp at the tmpfs size", async () => {
    const result = await run("head -c 1073741824 /dev/zero > /tmp/big; s=$?; du -m /tmp/big | cut -f1; exit $s", { timeoutMs: 20_000 });
    expect(result.outcome).toBe("exited");
    expect(result.exitCode).not.toBe(0);
    // The tmpfs is full, or the file reached the fsize ulimit (= tmp_size) first: either bounds it.
    expect(result.stderr).toMatch(/No space left on device|File size limit exceeded/);
    expect(Number(result.stdout.trim())).toBeLessThanOrEqual(64);
  });

  it("bounds /dev/shm, all its files together, at tmp_size (the engine's own default is 64 MiB)", async () => {
    const limits = { ...DEFAULT_LIMITS, tmpBytes: 16 * 1024 * 1024 };
    // each file under the fsize ulimit (tmp_size): only the size of /dev/shm stops the third
    // (a deadline far past what the writes take: under gVisor on a loaded machine they are slow)
    const result = await run("for i in 1 2 3; do head -c 8388608 /dev/zero > /dev/shm/f$i || { echo stopped=$i; exit 1; }; done; echo all", { limits, timeoutMs: 45_000 });
    expect(result.stdout, JSON.stringify(result)).toMatch(/^stopped=[23]$/m);
    expect(result.stderr).toMatch(/No space left on device/);
  });

  it("holds each process to open_files descriptors (the nofile ulimit, soft and hard)", async () => {
    const limits = { ...DEFAULT_LIMITS, openFiles: 64 };
    const opener = "import os\nfs = []\ntry:\n    while len(fs) < 1000: fs.append(os.open('/dev/null', os.O_RDONLY))\nexcept OSError as e: print('errno', e.errno)\nprint('opened', len(fs))";
    const result = await run(`echo soft=$(ulimit -Sn) hard=$(ulimit -Hn); python3 -c "${opener}"`, { limits });
    expect(result.stdout, JSON.stringify(result)).toMatch(/^soft=64 hard=64$/m);
    // EMFILE before the 64th descriptor: stdin, stdout and stderr are three of them
    expect(result.stdout).toMatch(/^errno 24$/m);
    const opened = Number(/^opened (\d+)$/m.exec(result.stdout)?.[1]);
    expect(opened).toBeGreaterThan(40);
    expect(opened).toBeLessThanOrEqual(61);
  });

  it("stops a 400 MB write to /workspace at tmp_size, on a tmpfs of the run's own that goes with it", async () => {
    const dir = await makeWorkspace({ "README.md": "stored\n" });
    const before = existsSync(SCRATCH) ? readdirSync(SCRATCH) : [];
    const limits = { ...DEFAULT_LIMITS, tmpBytes: 16 * 1024 * 1024 };
    const result = await run("head -c 400000000 /dev/zero > big; s=$?; echo size=$(wc -c < big); echo fsize=$(ulimit -f); exit $s", { workspaceDir: dir, limits, timeoutMs: 20_000 });
    expect(result.outcome).toBe("exited");
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toMatch(/No space left on device|File size limit exceeded/);
    const size = Number(/^size=(\d+)$/m.exec(result.stdout)?.[1]);
    const fsizeBlocks = Number(/^fsize=(\d+)$/m.exec(result.stdout)?.[1]);
    expect(size, JSON.stringify(result)).toBeLessThanOrEqual(limits.tmpBytes);
    // The fsize ulimit is tmp_size too (the hook's sh is dash: `ulimit -f` counts 512-byte blocks).
    expect(fsizeBlocks * 512, JSON.stringify(result)).toBe(limits.tmpBytes);
    await runner.drain({ close: true });
    expect(readdirSync(SCRATCH).filter((e) => !before.includes(e))).toEqual([]);
    expect(readFileSync("/proc/self/mountinfo", "utf8")).not.toContain(SCRATCH);
  });

  it("lets a hook write to /workspace, but nothing reaches the stored workspace or the next run", async () => {
    const dir = await makeWorkspace({ "README.md": "stored\n", ".github/hooks/audit.json": "{}" });
    const first = await run("set -e; mkdir -p .github/logs; echo line >> .github/logs/tool-use.log; echo changed > README.md; cat .github/logs/tool-use.log README.md", { workspaceDir: dir });
    expect(first).toMatchObject({ outcome: "exited", exitCode: 0, stdout: "line\nchanged\n" });
    expect(existsSync(join(dir, ".github/logs"))).toBe(false);
    expect(await readFile(join(dir, "README.md"), "utf8")).toBe("stored\n");
    expect(readdirSync(join(dir, ".github"))).toEqual(["hooks"]);
    const second = await run("test ! -e .github/logs && cat README.md", { workspaceDir: dir });
    expect(second).toMatchObject({ outcome: "exited", exitCode: 0, stdout: "stored\n" });
  });

  it("serves a workspace uploaded after its container was warmed (one pool for every workspace)", async () => {
    const request: RunRequest = { command: "cat check.sh; sh check.sh; pwd", stdin: new Uint8Array(), env: {}, timeoutMs: 10_000, limits: DEFAULT_LIMITS, runtime };
    if (mode === "warm") expect(await runner.warmFor(request)).toBe(true);
    // Uploaded only now: the container waiting in the pool has never seen it.
    const dir = await makeWorkspace({ "hooks/check.sh": "echo checked\n" });
    const result = await runner.run({ ...request, workspaceDir: dir, cwd: "hooks" });
    expect(result).toMatchObject({ outcome: "exited", exitCode: 0, stdout: "echo checked\nchecked\n/workspace/hooks\n", warm: mode === "warm" });
  });

  it("runs a workspace of 3 000 one-byte files — 3 MB of tar, 12 MB of tmpfs pages — cold when the pages pass half of tmp_size", async () => {
    const files = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`f/${i}`, "x"]));
    const dir = await makeWorkspace(files);
    const limits = { ...DEFAULT_LIMITS, tmpBytes: 16 * 1024 * 1024 };
    // (files named, not listed: gVisor's overlay volumes fail to list a folder this large)
    const request: RunRequest = { command: "cat f/0 f/1500 f/2999; echo", stdin: new Uint8Array(), env: {}, timeoutMs: 20_000, limits, runtime };
    if (mode === "warm") expect(await runner.warmFor(request)).toBe(true);
    const result = await runner.run({ ...request, workspaceDir: dir });
    // warm it would fill its 16 MiB /workspace before the hook ran; cold it has the overlay
    expect(result).toMatchObject({ outcome: "exited", exitCode: 0, stdout: "xxx\n", warm: false });
  }, 60_000);

  it("takes a hand-over that fails before the hook runs (a working directory that is not there) to a cold run, never as the hook's exit code", async () => {
    const dir = await makeWorkspace({ "a.txt": "a" });
    const request: RunRequest = { command: "pwd", stdin: new Uint8Array(), env: {}, timeoutMs: 10_000, limits: DEFAULT_LIMITS, runtime };
    if (mode === "warm") expect(await runner.warmFor(request)).toBe(true);
    const result = await runner.run({ ...request, workspaceDir: dir, cwd: "no/such/dir" });
    expect(result.outcome === "exited" && result.exitCode === 96).toBe(false);
    expect(result.warm).toBe(false);
  });

  it("mounts and unmounts a cold run's write layer through the host spawner's helper, never by forking the service", async () => {
    const calls = vi.spyOn(HostSpawner.prototype, "run");
    try {
      const dir = await makeWorkspace({ "a.txt": "a" });
      // a workspace too large for hand-over in warm mode too: every mode runs it on its overlay
      const result = await runner.run({ command: "cat a.txt", stdin: new Uint8Array(), env: {}, timeoutMs: 10_000, limits: DEFAULT_LIMITS, runtime, workspaceDir: dir, poolable: false });
      expect(result).toMatchObject({ outcome: "exited", stdout: "a" });
      await runner.drain();
      const files = calls.mock.calls.map(([req]) => req.file);
      expect(files).toContain("/usr/bin/mount");
      expect(files).toContain("/usr/bin/umount");
    } finally {
      calls.mockRestore();
    }
  });

  it("never shows one tenant's workspace, writes or leftovers to the next event of another", async () => {
    const a = await makeWorkspace({ "secret-a.txt": "tenant a\n", ".github/hooks/a.json": "{}" });
    const b = await makeWorkspace({ "b.txt": "tenant b\n" });
    const first = await run("echo wrote-a > written-by-a; echo a > /tmp/a-tmp; echo a > $HOME/a-home; ls -A", { workspaceDir: a });
    expect(first).toMatchObject({ outcome: "exited", exitCode: 0, stdout: ".github\nsecret-a.txt\nwritten-by-a\n" });
    // (gVisor 2022's `ls` of the absolute path /workspace fails with EINVAL: listed as the cwd)
    const second = await run("ls -A; ls -A /tmp; ls -A $HOME; cat /workspace/*", { workspaceDir: b });
    expect(second).toMatchObject({ outcome: "exited", exitCode: 0, stdout: "b.txt\ntenant b\n" });
    expect(existsSync(join(a, "written-by-a"))).toBe(false);
  });

  it("shows the hook none of the service's environment, only its own and the project dirs", async () => {
    process.env.HOOKBOX_TEST_SECRET = "s3cr3t-value";
    const result = await run("env", { env: { MY_SETTING: "on" } });
    expect(result.stdout).not.toMatch(/s3cr3t-value|HOOKBOX_TEST_SECRET/);
    expect(result.stdout).toMatch(/^MY_SETTING=on$/m);
    expect(result.stdout).toMatch(/^CLAUDE_PROJECT_DIR=\/workspace$/m);
    expect(result.stdout).toMatch(/^COSH_RUNTIME=/m);
    delete process.env.HOOKBOX_TEST_SECRET;
  });

  it("ends a background process that outlives the hook command with the container", async () => {
    const { result, wallMs } = await timed("sleep 300 & echo started");
    expect(result).toMatchObject({ outcome: "exited", exitCode: 0, stdout: "started\n" });
    expect(wallMs).toBeLessThan(5_000);
  });

  it("keeps the exit code of a hook whose background process writes on past its end, and none of what it writes after", async () => {
    // A tight writer on both streams: the wrapper's end marker arrives in the middle of its bytes.
    for (let i = 0; i < 3; i++) {
      const result = await run("( while :; do printf x; printf y >&2; done ) & sleep 0.1; printf end; exit 2");
      expect(result).toMatchObject({ outcome: "exited", exitCode: 2 });
      expect(result.stdout.replace(/x+/g, "x"), result.outcome).toMatch(/^x*(end)?x*$/);
      expect(result.stdout).toContain("end");
      expect(result.stderr.replace(/y+/g, "y")).toMatch(/^y*$/);
    }
  });

  it("mounts configured host folders read-only at their own path, and nothing else of the host", async () => {
    const dir = await makeWorkspace({ "guard.sh": "echo guarded" });
    const result = await run(`sh ${dir}/guard.sh; echo x > ${dir}/new 2>&1 || echo READONLY; test -e /root/.bashrc || echo NOHOST`, { mounts: [dir] });
    expect(result.stdout).toBe("guarded\nREADONLY\nNOHOST\n");
  });

  it("leaves the engine no log of a hook's output (log driver none: the attach stream, capped, is the only copy)", async () => {
    const running = run("echo out; sleep 2");
    let types: string[] = [];
    await expect.poll(async () => {
      const list = await docker.listContainers({ filters: JSON.stringify({ label: [`${LABEL_MANAGED}=true`] }) });
      types = await Promise.all(list.map(async (c) => (await docker.getContainer(c.Id).inspect()).HostConfig.LogConfig?.Type ?? "?"));
      return types.length;
    }, { timeout: 10_000 }).toBeGreaterThan(0);
    expect([...new Set(types)]).toEqual(["none"]);
    expect((await running).stdout).toBe("out\n");
  });

  it("reports a missing image as failed_to_start", async () => {
    // No container of a missing image can be pre-started: the run goes cold and fails to start.
    const result = await runner.run({ command: "true", stdin: new Uint8Array(), env: {}, timeoutMs: 5_000, limits: DEFAULT_LIMITS, runtime, image: "hookbox/does-not-exist:1" });
    expect(result.outcome).toBe("failed_to_start");
    expect(result.outcome === "failed_to_start" && result.error).toMatch(/does-not-exist/);
  });

  it.each([
    ["memory", { memoryBytes: 0 }],
    ["cpus", { cpus: 1e-10 }],
    ["pids", { pids: 0 }],
    ["tmp_size", { tmpBytes: 0 }],
  ])("refuses a %s limit Docker would read as none (failed_to_start, no container without the limit)", async (name, low) => {
    const result = await runner.run({ command: "true", stdin: new Uint8Array(), env: {}, timeoutMs: 5_000, limits: { ...DEFAULT_LIMITS, ...low }, runtime });
    expect(result.outcome).toBe("failed_to_start");
    expect(result.outcome === "failed_to_start" && result.error).toContain(`its ${name} limit is below`);
  });

  it("cancels a run when its signal aborts", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 1_000);
    const { result, wallMs } = await timed("sleep 600", { signal: controller.signal, timeoutMs: 30_000 });
    expect(result.outcome).toBe("cancelled");
    expect(wallMs).toBeLessThan(5_000);
  });
});

describe("a pre-started container whose connection closes while its hook runs", () => {
  it("is a run hookbox could not finish (failed_to_start), never the exit 0 the engine shows for a running container", async () => {
    const streams: Duplex[] = [];
    class CuttableClient extends DockerClient {
      override async attach(id: string, signal?: AbortSignal): Promise<Duplex> {
        const stream = await super.attach(id, signal);
        streams.push(stream);
        return stream;
      }
    }
    const runner = new ContainerRunner({ scratchDir: SCRATCH, pool: POOL, client: new CuttableClient() });
    try {
      const request: RunRequest = { command: "sleep 5; echo '{\"decision\":\"block\"}'", stdin: Buffer.from("{}"), env: {}, timeoutMs: 20_000, limits: DEFAULT_LIMITS, runtime: "runc" };
      expect(await runner.warmFor(request)).toBe(true);
      const running = runner.run(request);
      await new Promise((r) => setTimeout(r, 1_000));
      for (const s of streams) s.destroy();
      const result = await running;
      expect(result).toMatchObject({ outcome: "failed_to_start", warm: true });
      expect(result.outcome === "failed_to_start" && result.error).toMatch(/connection to the pre-started container closed while its hook ran/);
    } finally {
      await runner.drain({ close: true });
    }
    expect(await leftovers()).toEqual({ containers: [], volumes: [] });
  }, 60_000);
});

describe("a warm run whose workspace's archive takes long to build", () => {
  it("gives the hook what is left of its time and says what preparation took: a timeout then is hookbox's, never the hook's own", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 4_000; i++) files[`d${i % 40}/f${i}.txt`] = "x";
    const dir = await makeWorkspace(files);
    const runner = new ContainerRunner({ scratchDir: SCRATCH, pool: POOL });
    try {
      const request: RunRequest = { command: "sleep 30", stdin: Buffer.from("{}"), env: {}, timeoutMs: 4_000, limits: DEFAULT_LIMITS, runtime: "runc", workspaceDir: dir };
      expect(await runner.warmFor(request)).toBe(true);
      const first = await runner.run(request);
      expect(first.preparedMs, JSON.stringify(first)).toBeGreaterThan(100);
      expect(["timed_out", "failed_to_start"]).toContain(first.outcome);
      // The archive is kept: the next run takes nothing of the hook's time.
      expect(await runner.warmFor(request)).toBe(true);
      const second = await runner.run({ ...request, command: "true" });
      expect(second).toMatchObject({ outcome: "exited", exitCode: 0, warm: true });
      expect(second.preparedMs).toBeUndefined();
    } finally {
      await runner.drain({ close: true });
    }
    expect(await leftovers()).toEqual({ containers: [], volumes: [] });
  }, 60_000);
});

describe("a pre-started container stopped from outside while its hook runs", () => {
  it("is a run hookbox could not finish (failed_to_start), never the hook's own exit 137", async () => {
    const runner = new ContainerRunner({ scratchDir: SCRATCH, pool: { ...POOL, size: 1 } });
    try {
      const request: RunRequest = { command: "sleep 5; echo '{}'", stdin: Buffer.from("{}"), env: {}, timeoutMs: 20_000, limits: DEFAULT_LIMITS, runtime: "runc" };
      expect(await runner.warmFor(request)).toBe(true);
      const running = runner.run(request);
      await new Promise((r) => setTimeout(r, 1_000));
      // what an engine that stops (a dind sidecar on SIGTERM) or an operator's `docker kill` does
      for (const c of await docker.listContainers({ filters: { label: [`${LABEL_MANAGED}=true`] } })) await docker.getContainer(c.Id).kill().catch(() => undefined);
      const result = await running;
      expect(result).toMatchObject({ outcome: "failed_to_start", warm: true });
      expect(result.outcome === "failed_to_start" && result.error).toMatch(/was stopped \(exit 137\) before its hook's end was read/);
    } finally {
      await runner.drain({ close: true });
    }
    expect(await leftovers()).toEqual({ containers: [], volumes: [] });
  }, 60_000);
});

describe("a pre-started container of an image without bash, given a workspace", () => {
  // The sh wrapper reads the workspace's archive with `head -c`, and a head that reads through
  // stdio (BusyBox's) takes more than it was asked for: the event behind the archive. Here a head
  // that does just that, in an image without bash.
  const IMAGE = "hookbox-test/no-bash:latest";
  beforeAll(() => {
    const dockerfile = [
      `FROM ${DEFAULT_IMAGE}`,
      "USER root",
      "RUN rm -f /bin/bash /usr/bin/bash && mv /usr/bin/head /usr/bin/head.real && printf '%s\\n' '#!/bin/sh' 'dd bs=65536 count=1 2>/dev/null | head.real \"$@\"' > /usr/bin/head && chmod 755 /usr/bin/head",
      "USER 1000:1000",
    ].join("\n");
    const built = spawnSync("docker", ["build", "-q", "-t", IMAGE, "-"], { input: dockerfile });
    expect(built.status, built.stderr.toString()).toBe(0);
  }, 120_000);

  it("runs it cold, the event whole on the hook's stdin; without a workspace it still runs warm", async () => {
    const runner = new ContainerRunner({ scratchDir: SCRATCH, pool: POOL });
    try {
      const dir = await makeWorkspace({ "a.txt": "from the workspace\n" });
      const request: RunRequest = { command: "cat a.txt; cat", stdin: Buffer.from('{"hook_event_name":"PreToolUse"}'), env: {}, timeoutMs: 20_000, limits: DEFAULT_LIMITS, runtime: "runc", image: IMAGE };
      expect(await runner.warmFor(request)).toBe(true);
      const result = await runner.run({ ...request, workspaceDir: dir });
      expect(result).toMatchObject({ outcome: "exited", exitCode: 0, stdout: 'from the workspace\n{"hook_event_name":"PreToolUse"}', warm: false });
      expect(await runner.warmFor(request)).toBe(true);
      const bare = await runner.run({ ...request, command: "cat" });
      expect(bare).toMatchObject({ outcome: "exited", exitCode: 0, stdout: '{"hook_event_name":"PreToolUse"}', warm: true });
    } finally {
      await runner.drain({ close: true });
    }
    expect(await leftovers()).toEqual({ containers: [], volumes: [] });
  }, 90_000);
});
