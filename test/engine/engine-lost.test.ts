/**
 * A hook that ended in time keeps its answer when the engine (or the host helper) is slow or gone
 * afterwards; a connection lost while it ran is hookbox not running it (`failed_to_start`, where
 * the tenant's on_failure applies), never the hook's own timeout (which most formats let pass).
 * Driven through stand-ins for the engine client and the spawner; the real engine's side is in
 * sandbox-container.test.ts, the real helper's below.
 */
import { Duplex } from "node:stream";
import { describe, expect, it } from "vitest";
import { REMOVE_WAIT_MS, runCold, STATE_WAIT_MS } from "../../engine/run/cold-run.js";
import { demuxFrames, type DockerClient } from "../../engine/run/docker-client.js";
import { HostRunner } from "../../engine/run/host-runner.js";
import { HostSpawner, type SpawnHandlers } from "../../engine/run/host-spawner.js";
import type { Fleet, Shape } from "../../engine/run/make-container.js";
import { WarmContainer } from "../../engine/run/warm-container.js";
import type { ContainerHandle } from "../../engine/run/container-parts.js";
import { DEFAULT_LIMITS } from "../../engine/names.js";
import type { RunRequest } from "../../engine/run/types.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const frame = (stream: 1 | 2, text: string) => {
  const body = Buffer.from(text);
  const head = Buffer.alloc(8);
  head[0] = stream;
  head.writeUInt32BE(body.length, 4);
  return Buffer.concat([head, body]);
};
const refused = () => Object.assign(new Error("connect ECONNREFUSED /var/run/docker.sock"), { code: "ECONNREFUSED" });
const request = (timeoutMs: number): RunRequest => ({ command: "exit 2", stdin: new Uint8Array(), env: {}, timeoutMs, limits: DEFAULT_LIMITS });

/** An engine whose container prints a block and exits 2 after `exitAfterMs`, then behaves as told. */
function engine(o: { exitAfterMs: number; stateDelayMs?: number; stateFails?: boolean; waitFails?: boolean; removeHangs?: boolean }): DockerClient {
  let stream: Duplex;
  const client = {
    timeoutMs: 5_000,
    createContainer: async () => "c1",
    attach: async () => (stream = new Duplex({ read() {}, write(_c, _e, cb) { cb(); }, final(cb) { cb(); } })),
    demux: (s: Duplex, out: NodeJS.WritableStream, err: NodeJS.WritableStream) => demuxFrames(s, out as never, err as never),
    start: async () => undefined,
    wait: (_id: string, signal: AbortSignal) =>
      new Promise<{ exitCode: number }>((resolve, reject) => {
        const t = setTimeout(() => {
          stream.push(frame(2, "blocked by policy\n"));
          stream.push(null);
          if (o.waitFails) reject(Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }));
          else resolve({ exitCode: 2 });
        }, o.exitAfterMs);
        signal.addEventListener("abort", () => { clearTimeout(t); reject(signal.reason as Error); }, { once: true });
      }),
    state: async (_id: string, signal?: AbortSignal) => {
      // as the real client: the call's signal ends its wait
      await Promise.race([sleep(o.stateDelayMs ?? 0), new Promise((r) => signal?.addEventListener("abort", r, { once: true }))]);
      if (signal?.aborted) throw signal.reason;
      if (o.stateFails) throw refused();
      return { running: false, oomKilled: false, exitCode: 2 };
    },
    kill: async () => undefined,
    remove: () => (o.removeHangs ? new Promise<undefined>(() => undefined) : Promise.resolve(undefined)),
    removeVolume: async () => undefined,
  };
  return client as unknown as DockerClient;
}
const fleet = (client: DockerClient): Fleet => ({ client, scratchDir: "/nonexistent", instance: "i", process: "p", owner: undefined, live: new Set(), creating: 0, abandoned: new Map(), track: () => undefined });
const shape: Shape = { image: "x", runtime: "runc", limits: DEFAULT_LIMITS, mounts: [] };

describe("a cold run whose engine is slow or gone after the hook", () => {
  it("a hook that exited 2 in time is a block though the look at its state outlasts its timeout", async () => {
    const r = await runCold(fleet(engine({ exitAfterMs: 400, stateDelayMs: 300 })), request(500), shape);
    expect(r).toMatchObject({ outcome: "exited", exitCode: 2, stderr: "blocked by policy\n" });
  });
  it(`answers a hook that exited 2 within STATE_WAIT_MS (${STATE_WAIT_MS} ms) and REMOVE_WAIT_MS (${REMOVE_WAIT_MS} ms) of its exit though the engine never answers the look at its state nor the removal: the decision is never held for the run's whole deadline`, async () => {
    const t0 = performance.now();
    const r = await runCold(fleet(engine({ exitAfterMs: 50, stateDelayMs: 60_000, removeHangs: true })), request(30_000), shape);
    expect(r).toMatchObject({ outcome: "exited", exitCode: 2, stderr: "blocked by policy\n" });
    expect(performance.now() - t0).toBeLessThan(50 + STATE_WAIT_MS + REMOVE_WAIT_MS + 1_500);
  });
  it("a hook that exited 2 is a block though the engine refuses the look at its state", async () => {
    const r = await runCold(fleet(engine({ exitAfterMs: 50, stateFails: true })), request(1_000), shape);
    expect(r).toMatchObject({ outcome: "exited", exitCode: 2 });
  });
  it("the engine's connection lost while the hook ran is failed_to_start, not the hook's timeout", async () => {
    const r = await runCold(fleet(engine({ exitAfterMs: 50, waitFails: true })), request(1_000), shape);
    expect(r).toMatchObject({ outcome: "failed_to_start", error: expect.stringMatching(/connection to the engine was lost while the hook ran/) });
  });
});

describe("a warm run whose attach stream closes without the hook's end", () => {
  it("is failed_to_start when the engine cannot say how the hook ended", async () => {
    const stream = new Duplex({ read() {}, write(_c, _e, cb) { cb(); }, final(cb) { cb(); } });
    let done!: () => void;
    const streamDone = new Promise<void>((r) => (done = r));
    stream.on("end", done);
    stream.on("close", done);
    const handle: ContainerHandle = {
      stream,
      streamDone,
      demux: (out, err) => demuxFrames(stream, out as never, err as never),
      kill: async () => undefined,
      cleanup: async () => undefined,
      state: async () => { throw refused(); },
    };
    const warm = new WarmContainer(handle, 5_000);
    stream.push(frame(2, "bash\n"));
    await warm.up;
    setTimeout(() => { stream.push(frame(2, "blocked by policy\n")); stream.push(null); }, 50);
    const r = await warm.claim(request(5_000), () => undefined);
    expect(r.outcome).toBe("failed_to_start");
    expect(r.durationMs).toBeLessThan(4_000);
  });
});

describe("a policy hook whose output is held open after it exited", () => {
  it("the runner judges it when it exited: exit 2 in time is a block though the streams close after its timeout", async () => {
    // The hook exits at 300 ms; the helper's close comes 500 ms later (a setsid child held the pipes).
    const spawner = {
      warm: () => undefined,
      run: (_req: unknown, h: SpawnHandlers) => {
        setTimeout(() => h.onClose({ code: 2, signal: null, stdout: Buffer.alloc(0), stderr: Buffer.from("denied\n"), afterExitMs: 500 }), 800);
        return { kill: () => undefined, forget: () => undefined };
      },
    } as unknown as HostSpawner;
    const r = await new HostRunner({}, { isolation: "process-group", spawner }).run(request(500));
    expect(r).toMatchObject({ outcome: "exited", exitCode: 2, stderr: "denied\n" });
  });
  it("without an exit in time it is still timed_out", async () => {
    const spawner = {
      warm: () => undefined,
      run: (_req: unknown, h: SpawnHandlers) => {
        // exits at 700 ms, after its 500 ms timeout
        setTimeout(() => h.onClose({ code: 2, signal: null, stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), afterExitMs: 100 }), 800);
        return { kill: () => undefined, forget: () => undefined };
      },
    } as unknown as HostSpawner;
    const r = await new HostRunner({}, { isolation: "process-group", spawner }).run(request(500));
    expect(r.outcome).toBe("timed_out");
  });
  it("the real helper says how long after the process's exit a setsid child let its streams close", async () => {
    const spawner = new HostSpawner();
    const closed = new Promise<{ code: number | null; afterExitMs: number } | string>((resolve) => {
      spawner.run(
        // The shell exits only once its child is in a session of its own (it wrote the marker after
        // setsid): exiting before, its process group's end could take the child along.
        { file: "/bin/sh", args: ["-c", 'm=$(mktemp); setsid sh -c "echo up > $m; exec sleep 2" & while [ ! -s "$m" ]; do sleep 0.01; done; rm -f "$m"; exit 2'], cwd: "/", env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, stdin: new Uint8Array(), maxOutputBytes: 1024 },
        { onError: (m) => resolve(m), onClose: ({ code, afterExitMs }) => resolve({ code, afterExitMs }) },
      );
    });
    const end = await closed;
    // The close waited for the held streams (let go after 500 ms); the exit did not.
    expect(end).toMatchObject({ code: 2, afterExitMs: expect.any(Number) });
    expect((end as { afterExitMs: number }).afterExitMs).toBeGreaterThan(300);
  });
});
