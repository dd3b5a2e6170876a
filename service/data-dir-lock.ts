/**
 * @module One service per data_dir: a lock file naming the holder — its host name, pid and start
 * time (pids are reused) — which the holder renews every LOCK_BEAT_MS. A second service on the same
 * data_dir would remove the first one's containers as its predecessor's leftovers; it refuses to
 * start instead. A lock is taken over only when its holder is provably gone: on this host its
 * process is not there (after kill -9, say); from another host (another container, whose pids this
 * one cannot see) it has not been renewed for LOCK_STALE_MS. A holder that finds the lock no longer
 * its own is told (`onLost`).
 */
import { closeSync, openSync, readFileSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { DATA_DIR_LOCK, processAlive, processStartTicks } from "../engine/index.js";

/** How often the holder renews its lock. @default 5 s */
export const LOCK_BEAT_MS = 5_000;
/** A lock from another host not renewed for this long is its holder's no more. @default 30 s */
export const LOCK_STALE_MS = 30_000;

export type LockResult =
  | { ok: true; release(): void; tookOverFrom?: number }
  | { ok: false; heldBy: number; file: string };

interface Holder {
  pid: number;
  start?: string;
  host?: string;
  /** when it was last renewed (epoch ms) */
  beat?: number;
}

function readHolder(file: string): Holder | undefined {
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as Partial<Holder>;
    if (typeof parsed.pid !== "number") return undefined;
    return { pid: parsed.pid, start: typeof parsed.start === "string" ? parsed.start : undefined, host: typeof parsed.host === "string" ? parsed.host : undefined, beat: typeof parsed.beat === "number" ? parsed.beat : undefined };
  } catch {
    return undefined;
  }
}

/** Whether the holder named in a lock file may still be running. */
function holderAlive(holder: Holder): boolean {
  // Another host (another container: its pids are not ours to look at): alive while it renews.
  if (holder.host !== undefined && holder.host !== hostname()) return holder.beat === undefined || Date.now() - holder.beat < LOCK_STALE_MS;
  // This host: ours from an earlier life (pid 1 in a restarted container), or a process that is gone.
  return holder.pid !== process.pid && processAlive(holder.pid, holder.start);
}

export function lockDataDir(dataDir: string, opts: { onLost?: (by: number | undefined) => void } = {}): LockResult {
  const file = join(dataDir, DATA_DIR_LOCK);
  const me: Holder = { pid: process.pid, start: processStartTicks(process.pid), host: hostname() };
  const mine = (h: Holder | undefined) => h?.pid === me.pid && h.start === me.start && h.host === me.host;
  let tookOverFrom: number | undefined;
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      // O_EXCL: of two services starting at once, one creates it.
      const fd = openSync(file, "wx", 0o600);
      writeSync(fd, JSON.stringify({ ...me, beat: Date.now() }));
      closeSync(fd);
      // Renewed while held; a lock found to be another's is lost, and said so once.
      const beat = setInterval(() => {
        const holder = readHolder(file);
        if (holder !== undefined && !mine(holder)) {
          clearInterval(beat);
          opts.onLost?.(holder.pid);
          return;
        }
        try {
          writeFileSync(file, JSON.stringify({ ...me, beat: Date.now() }), { mode: 0o600 });
        } catch { /* a full disk: the next beat tries again */ }
      }, LOCK_BEAT_MS);
      beat.unref();
      const release = () => {
        clearInterval(beat);
        if (mine(readHolder(file))) unlinkSync(file);
      };
      return { ok: true, release, ...(tookOverFrom !== undefined ? { tookOverFrom } : {}) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const holder = readHolder(file);
    // A holder being written this instant reads as nothing yet: look again before calling it stale.
    if (!holder && attempt === 0) {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
      continue;
    }
    if (holder && !mine(holder) && holderAlive(holder)) {
      return { ok: false, heldBy: holder.pid, file };
    }
    // Stale (its process is gone) or ours from an earlier life (pid 1 in a restarted container): take it over.
    tookOverFrom = holder?.pid;
    try {
      unlinkSync(file);
    } catch { /* another starter took it first: try again */ }
  }
  return { ok: false, heldBy: readHolder(file)?.pid ?? 0, file };
}
