/**
 * A container killed (137) that the engine has not marked out of memory: its late "oom" event is
 * looked for, within LATE_OOM_WAIT_MS, in the engine's event stream (here a stand-in engine; the
 * sandbox suite runs real out-of-memory kills on both runtimes).
 */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import type Docker from "dockerode";
import { DockerClient, LATE_OOM_WAIT_MS } from "../../engine/run/docker-client.js";

const ID = "c0ffee".repeat(10) + "abcd";

/** An engine whose container ended as `state` says, and whose event stream `events` fills. */
function engine(state: { ExitCode: number; OOMKilled: boolean; StartedAt?: string }, events: (stream: PassThrough, asked: Record<string, unknown>) => void) {
  const calls: Record<string, unknown>[] = [];
  const docker = {
    getContainer: () => ({ inspect: async () => ({ State: { Running: false, Restarting: false, Paused: false, StartedAt: new Date(Date.now() - 2_000).toISOString(), ...state } }) }),
    getEvents: async (asked: Record<string, unknown>) => {
      calls.push(asked);
      const stream = new PassThrough();
      events(stream, asked);
      return stream;
    },
  } as unknown as Docker;
  return { client: new DockerClient(5_000, docker), calls };
}

const line = (o: object) => `${JSON.stringify(o)}\n`;

describe("a killed container's late out-of-memory mark", () => {
  it("is read from the engine's oom event of that container, which came after the exit", async () => {
    const { client, calls } = engine({ ExitCode: 137, OOMKilled: false }, (s) => setTimeout(() => s.write(line({ status: "oom", id: ID, Type: "container", Action: "oom", Actor: { ID: ID } })), 50));
    expect(await client.state(ID)).toEqual({ running: false, oomKilled: true, exitCode: 137 });
    expect(calls).toHaveLength(1);
    expect(JSON.parse(String(calls[0]!.filters))).toEqual({ container: [ID], event: ["oom"] });
    // seconds with a fraction, from before the start to LATE_OOM_WAIT_MS from now
    expect(Number(calls[0]!.until) * 1000).toBeGreaterThan(Date.now());
    expect(Number(calls[0]!.since) * 1000).toBeLessThan(Date.now() - 2_000);
  });

  it("is not taken from a line of another container or another action, nor from a broken line", async () => {
    const { client } = engine({ ExitCode: 137, OOMKilled: false }, (s) => {
      s.write(line({ status: "oom", id: "other", Action: "oom", Actor: { ID: "other" } }));
      s.write(line({ status: "die", id: ID, Action: "die", Actor: { ID: ID } }));
      s.write('{"status":"oom","id":"');
      s.end();
    });
    expect((await client.state(ID)).oomKilled).toBe(false);
  });

  it("is no: a stream that says nothing until the engine's clock ends it — and this one's, when the engine's never does", async () => {
    const silent = engine({ ExitCode: 137, OOMKilled: false }, (s) => setTimeout(() => s.end(), 100));
    expect((await silent.client.state(ID)).oomKilled).toBe(false);
    const endless = engine({ ExitCode: 137, OOMKilled: false }, () => undefined);
    const t0 = performance.now();
    expect((await endless.client.state(ID)).oomKilled).toBe(false);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(2 * LATE_OOM_WAIT_MS - 5);
  });

  it("ends with the caller's signal", async () => {
    const { client } = engine({ ExitCode: 137, OOMKilled: false }, () => undefined);
    const t0 = performance.now();
    const state = await client.state(ID, AbortSignal.timeout(100));
    expect(state.oomKilled).toBe(false);
    // at the signal, not at this client's own end of the wait
    expect(performance.now() - t0).toBeLessThan(2 * LATE_OOM_WAIT_MS);
  });

  it("is not looked for when the engine marked it, when it was no kill, or when it never started", async () => {
    for (const state of [{ ExitCode: 137, OOMKilled: true }, { ExitCode: 1, OOMKilled: false }, { ExitCode: 143, OOMKilled: false }, { ExitCode: 137, OOMKilled: false, StartedAt: "0001-01-01T00:00:00Z" }]) {
      const { client, calls } = engine(state, (s) => s.write(line({ status: "oom", id: ID, Action: "oom" })));
      expect((await client.state(ID)).oomKilled).toBe(state.OOMKilled);
      expect(calls).toEqual([]);
    }
  });
});
