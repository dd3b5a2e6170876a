/**
 * A liveness probe for attack tests: calls `/healthz` every `everyMs` while an attack runs and
 * records the slowest answer (a stalled event loop shows here first), and any that failed.
 */
export interface Probe {
  /** stops probing; the worst latency seen, in ms, and how many calls failed */
  stop(): Promise<{ worstMs: number; failures: number; calls: number }>;
}

export function probeHealth(url: string, everyMs = 50): Probe {
  let worstMs = 0;
  let failures = 0;
  let calls = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const t0 = performance.now();
      try {
        const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(10_000) });
        await res.arrayBuffer();
        if (!res.ok) failures++;
      } catch {
        failures++;
      }
      calls++;
      const ms = performance.now() - t0;
      worstMs = Math.max(worstMs, ms);
      await new Promise((r) => setTimeout(r, Math.max(0, everyMs - ms)));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { worstMs, failures, calls };
    },
  };
}

/** Runs `attack` while probing; returns the attack's value, its duration and what the probe saw. */
export async function underProbe<T>(url: string, attack: () => Promise<T>): Promise<{ value: T; ms: number; health: { worstMs: number; failures: number; calls: number } }> {
  const probe = probeHealth(url);
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
