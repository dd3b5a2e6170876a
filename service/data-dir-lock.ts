/**
 * @module One service per data_dir: a lock file naming the holder's pid (and its start time, as
 * pids are reused). A second service on the same data_dir would remove the first one's containers
 * as its predecessor's leftovers; it refuses to start instead. A lock whose process is gone (after
 * kill -9, say) is taken over.
 */
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { DATA_DIR_LOCK, processAlive, processStartTicks } from "../engine/index.js";

export type LockResult =
  | { ok: true; release(): void; tookOverFrom?: number }
  | { ok: false; heldBy: number; file: string };

interface Holder {
  pid: number;
  start?: string;
}

function readHolder(file: string): Holder | undefined {
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as Partial<Holder>;
    return typeof parsed.pid === "number" ? { pid: parsed.pid, start: typeof parsed.start === "string" ? parsed.start : undefined } : undefined;
  } catch {
    return undefined;
  }
}

export function lockDataDir(dataDir: string): LockResult {
  const file = join(dataDir, DATA_DIR_LOCK);
  const me: Holder = { pid: process.pid, start: processStartTicks(process.pid) };
  let tookOverFrom: number | undefined;
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      // O_EXCL: of two services starting at once, one creates it.
      const fd = openSync(file, "wx", 0o600);
      writeSync(fd, JSON.stringify(me));
      closeSync(fd);
      const release = () => {
        const holder = readHolder(file);
        if (holder?.pid === me.pid && holder.start === me.start) unlinkSync(file);
      };
      return { ok: true, release, ...(tookOverFrom !== undefined ? { tookOverFrom } : {}) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const holder = readHolder(file);
    const itIsMe = holder?.pid === me.pid && holder.start === me.start;
    // A holder being written this instant reads as nothing yet: look again before calling it stale.
    if (!holder && attempt === 0) {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
      continue;
    }
    if (holder && !itIsMe && holder.pid !== process.pid && processAlive(holder.pid, holder.start)) {
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
