/**
 * @module Removes hookbox containers that outlived their deadline (after a crash or kill -9, say):
 * once at start and then every `intervalMs`.
 */
export interface Reapable {
  reap(nowMs?: number): Promise<number>;
}

export interface Reaper {
  stop(): void;
}

/** @default intervalMs 30 s */
export function startReaper(target: Reapable, opts: { intervalMs?: number; onReaped?: (count: number) => void; onError?: (err: unknown) => void } = {}): Reaper {
  const sweep = () =>
    target.reap().then(
      (count) => { if (count > 0) opts.onReaped?.(count); },
      (err: unknown) => opts.onError?.(err),
    );
  void sweep();
  const timer = setInterval(sweep, opts.intervalMs ?? 30_000);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
