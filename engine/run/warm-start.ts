/**
 * @module Pre-starting a container for the warm pool: made like a cold one (make-container.ts),
 * started, its wrapper (handover.ts) waiting on stdin for the one hook it will run. Every engine
 * call is under the engine timeout; a failure goes back to the pool, which backs off.
 */
import { randomUUID } from "node:crypto";
import { HOOK_HOME, REAP_GRACE_MS, WORKSPACE_PATH } from "../names.js";
import type { ContainerHandle } from "./container-parts.js";
import { hookEnv } from "./hook-env.js";
import { HANDOVER_SCRIPT } from "./handover.js";
import { labelsFor, makeContainer, type Fleet, type Made, type Shape } from "./make-container.js";
import { WarmContainer } from "./warm-container.js";

/** How long a started wrapper may take to say it is up (gVisor starts slowly on a busy machine). */
const WRAPPER_UP_MS = 10_000;
/** The pool looks for idle containers this often at most (warm-pool.ts `expire`). */
const POOL_EXPIRE_SLACK_MS = 5_000;

export interface PrestartTimes {
  /** a pooled container waits at most this long for its hook */
  idleMs: number;
  /** the longest hook it may be given */
  maxTimeoutMs: number;
}

/** A container of `shape`, started, its wrapper waiting on stdin for the one hook it will run. */
export async function prestart(fleet: Fleet, shape: Shape, times: PrestartTimes): Promise<WarmContainer> {
  const { client } = fleet;
  // Past this, nothing can still be using it: its own start (three engine calls and its wrapper's
  // coming up, each at most its time), idle, then claimed for the longest hook, then the engine's
  // time — counted from now, since the label is written before the start.
  const startMs = 3 * client.timeoutMs + WRAPPER_UP_MS;
  const deadline = Date.now() + startMs + times.idleMs + POOL_EXPIRE_SLACK_MS + times.maxTimeoutMs + client.timeoutMs + REAP_GRACE_MS;
  const env = hookEnv({ declared: {}, projectDir: WORKSPACE_PATH, runtime: "container", home: HOOK_HOME });
  const made = await makeContainer(fleet, shape, ["/bin/sh", "-c", HANDOVER_SCRIPT], env, undefined, labelsFor(fleet, randomUUID(), deadline));
  try {
    await client.start(made.id);
  } catch (err) {
    made.stream.destroy();
    fleet.track(made.cleanup());
    throw err;
  }
  const warm = new WarmContainer(handleOf(fleet, made), client.timeoutMs);
  let wake: NodeJS.Timeout | undefined;
  await Promise.race([warm.up, new Promise((r) => (wake = setTimeout(r, WRAPPER_UP_MS)))]);
  clearTimeout(wake);
  if (!warm.alive) {
    fleet.track(warm.discard());
    throw new Error("the pre-started container's wrapper did not come up");
  }
  return warm;
}

function handleOf(fleet: Fleet, made: Made): ContainerHandle {
  const { client } = fleet;
  return {
    stream: made.stream,
    streamDone: made.streamDone,
    cleanup: made.cleanup,
    demux: (stdout, stderr) => client.demux(made.stream, stdout, stderr),
    kill: () => client.kill(made.id),
    state: (signal) => client.state(made.id, signal),
  };
}
