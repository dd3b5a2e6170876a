/**
 * @module A liveness probe for attack tests: calls `/healthz` every `everyMs` while an attack runs
 * and records the slowest answer (a stalled event loop shows here first), and any that failed.
 */
import { Worker } from "node:worker_threads";

export interface Probe {
  /** a first call answered (not counted): the probe is under way */
  ready: Promise<void>;
  /** stops probing; the worst latency seen, in ms, and how many calls failed */
  stop(): Promise<{ worstMs: number; failures: number; calls: number }>;
}

/**
 * The probe's loop, in a thread of its own: what it measures is the service's answer, not the test's
 * own thread, which builds and sends the attack (a mebibyte's JSON.stringify, a hundred responses
 * read) and would otherwise delay the probe's timers and reads by as much.
 */
const PROBE_LOOP = `
const { parentPort, workerData } = require("node:worker_threads");
let running = true;
parentPort.once("message", () => (running = false));
(async () => {
  // A first call before the attack, not counted: fetch's own loading in a new thread is no answer's time.
  await fetch(workerData.url + "/healthz").then((res) => res.arrayBuffer(), () => undefined);
  parentPort.postMessage("ready");
  let worstMs = 0, failures = 0, calls = 0;
  while (running) {
    const t0 = performance.now();
    try {
      const res = await fetch(workerData.url + "/healthz", { signal: AbortSignal.timeout(10000) });
      await res.arrayBuffer();
      if (!res.ok) failures++;
    } catch {
      failures++;
    }
    calls++;
    const ms = performance.now() - t0;
    worstMs = Math.max(worstMs, ms);
    await new Promise((r) => setTimeout(r, Math.max(0, workerData.everyMs - ms)));
  }
  parentPort.postMessage({ worstMs, failures, calls });
})();
`;

export function probeHealth(url: string, everyMs = 50): Probe {
  const worker = new Worker(PROBE_LOOP, { eval: true, workerData: { url, everyMs } });
  let ready!: () => void;
  const started = new Promise<void>((r) => (ready = r));
  const result = new Promise<{ worstMs: number; failures: number; calls: number }>((resolve, reject) => {
    worker.on("message", (m: "ready" | { worstMs: number; failures: number; calls: number }) => (m === "ready" ? ready() : resolve(m)));
    worker.once("error", reject);
  });
  return {
    // a probe that ends before its first call (an error) is under way as much as it will be
    ready: Promise.race([started, result.then(() => undefined, () => undefined)]),
    async stop() {
      worker.postMessage("stop");
      try {
        return await result;
      } finally {
        await worker.terminate();
      }
    },
  };
}

/** Runs `attack` while probing; returns the attack's value, its duration and what the probe saw. */
export async function underProbe<T>(url: string, attack: () => Promise<T>): Promise<{ value: T; ms: number; health: { worstMs: number; failures: number; calls: number } }> {
  const probe = probeHealth(url);
  await probe.ready;
  const t0 = performance.now();
  try {
    const value = await attack();
    const ms = performance.now() - t0;
    return { value, ms, health: await probe.stop() };
  } catch (err) {
    await probe.stop();
    throw err;
  }
}

/** The worst /healthz answer an attack may cause (issue: service boundary). */
export const WORST_HEALTH_MS = 300;
