/**
 * @module A check anyone may ask for (`/readyz` answers without a token) that costs a call to the
 * container engine: its answer is kept for `ttlMs`, and a check under way is shared by every caller
 * that comes meanwhile — a thousand requests make one engine call, not a thousand.
 */
export function sharedCheck<T>(check: () => Promise<T>, ttlMs: number): () => Promise<T> {
  let last: { atMs: number; value: T } | undefined;
  let running: Promise<T> | undefined;
  return () => {
    if (last && performance.now() - last.atMs < ttlMs) return Promise.resolve(last.value);
    running ??= check()
      .then((value) => (last = { atMs: performance.now(), value }).value)
      .finally(() => (running = undefined));
    return running;
  };
}
