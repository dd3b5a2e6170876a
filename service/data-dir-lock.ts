/**
 * @module One service per data_dir: a lock file naming the holder — its pid namespace, pid and
 * start time (pids are reused) — which the holder renews every LOCK_BEAT_MS (a new file renamed
 * over it: never empty, never half written). A second service on the same data_dir would remove the
 * first one's containers as its predecessor's leftovers; it refuses to start instead. A lock is
 * taken over only when its holder is provably gone: in this pid namespace, its process is not there
 * (after kill -9, say); from another (another container, whose pids this one cannot see), its
 * renewals have stopped — watched for LOCK_WATCH_MS on the file's own clock, never compared with
 * another host's. A holder that finds the lock no longer its own is told (`onLost`).
 */
import { randomUUID } from "node:crypto";
import { closeSync, openSync, readFileSync, readlinkSync, renameSync, statSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { DATA_DIR_LOCK, processAlive, processStartTicks } from "../engine/index.js";

/** How often the holder renews its lock. @default 5 s */
export const LOCK_BEAT_MS = 5_000;
/** How long a lock from another pid namespace is watched for a renewal before it counts as its holder's no more. @default 12.5 s */
export const LOCK_WATCH_MS = 2.5 * LOCK_BEAT_MS;

export type LockResult =
  | { ok: true; release(): void; tookOverFrom?: number }
  | { ok: false; heldBy: number; file: string };

interface Holder {
  pid: number;
  start?: string;
  /** the pid namespace the pid is of (Linux: /proc/self/ns/pid) */
  pidns?: string;
}

function readHolder(file: string): Holder | undefined {
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as Partial<Holder>;
    if (typeof parsed.pid !== "number") return undefined;
    return { pid: parsed.pid, start: typeof parsed.start === "string" ? parsed.start : undefined, pidns: typeof parsed.pidns === "string" ? parsed.pidns : undefined };
  } catch {
    return undefined;
  }
}

function ownPidNamespace(): string | undefined {
  try {
    return readlinkSync("/proc/self/ns/pid");
  } catch {
    return undefined;
  }
}

const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
const mtimeOf = (file: string) => statSync(file, { throwIfNoEntry: false })?.mtimeMs;

/**
 * Whether the holder of a lock may still be running. In our pid namespace its process says; from
 * another (or one that cannot be read) whether the lock is renewed while we watch it.
 */
function holderAlive(holder: Holder | undefined, file: string, me: Holder): boolean {
  // Our pid namespace — or an older hookbox's lock, which names none: judged as it always was.
  if (holder && (holder.pidns === undefined || holder.pidns === me.pidns)) return holder.pid !== process.pid && processAlive(holder.pid, holder.start);
  const before = mtimeOf(file);
  for (let waited = 0; waited < LOCK_WATCH_MS; waited += 250) {
    sleep(250);
    const now = mtimeOf(file);
    if (now === undefined) return false;
    if (now !== before) return true;
  }
  return false;
}

const sameHolder = (a: Holder | undefined, b: Holder | undefined) => a?.pid === b?.pid && a?.start === b?.start && a?.pidns === b?.pidns;

export function lockDataDir(dataDir: string, opts: { onLost?: (by: number | undefined) => void } = {}): LockResult {
  const file = join(dataDir, DATA_DIR_LOCK);
  const pidns = ownPidNamespace();
  const me: Holder = { pid: process.pid, start: processStartTicks(process.pid), ...(pidns !== undefined ? { pidns } : {}) };
  const mine = (h: Holder | undefined) => h?.pid === me.pid && h.start === me.start && h.pidns === me.pidns;
  const renew = () => {
    const next = `${file}.${process.pid}.next`;
    writeFileSync(next, JSON.stringify(me), { mode: 0o600 });
    renameSync(next, file);
  };
  let tookOverFrom: number | undefined;
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      // O_EXCL: of two services starting at once, one creates it.
      const fd = openSync(file, "wx", 0o600);
      writeSync(fd, JSON.stringify(me));
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
          renew();
        } catch { /* a full disk: the lock stays as it was; the next beat tries again */ }
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
    // A holder being written this instant reads as nothing yet: look again before judging it.
    if (!holder && attempt === 0) {
      sleep(50);
      continue;
    }
    if (!mine(holder) && holderAlive(holder, file, me)) {
      return { ok: false, heldBy: holder?.pid ?? 0, file };
    }
    // Stale (its process is gone) or ours from an earlier life (pid 1 in a restarted container): take
    // it over — only that lock: one another starter has taken over while it was judged (a lock from
    // another pid namespace is watched for seconds) is judged again, never removed unseen.
    if (!sameHolder(readHolder(file), holder)) continue;
    tookOverFrom = holder?.pid;
    try {
      unlinkSync(file);
    } catch { /* another starter took it first: try again */ }
  }
  return { ok: false, heldBy: readHolder(file)?.pid ?? 0, file };
}

/** The file naming a data_dir's own identity: a random id made at its first start. */
export const DATA_DIR_ID_FILE = "hookbox.id";
const DATA_DIR_ID = /^[0-9a-f-]{36}$/;

/**
 * This data_dir's identity, held while its lock is: a random id kept in it (made at its first start),
 * never its path alone. Two services whose data_dirs have one path on different filesystems (two
 * replicas in containers, each with its own volume at /var/lib/hookbox, on one engine) are two
 * owners: neither takes the other's containers for its predecessor's leftovers.
 */
export function dataDirIdentity(dataDir: string): string {
  const file = join(dataDir, DATA_DIR_ID_FILE);
  let id: string | undefined;
  try {
    id = readFileSync(file, "utf8").trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  if (id !== undefined && DATA_DIR_ID.test(id)) return `${dataDir}\n${id}`;
  // None yet, or not one (half written by a crash): a new one, written whole (renamed into place).
  id = randomUUID();
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${id}\n`, { mode: 0o644 });
  renameSync(temporary, file);
  return `${dataDir}\n${id}`;
}
