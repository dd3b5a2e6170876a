/**
 * @module Leftovers: hookbox containers and volumes that outlived their deadline (after a crash or
 * kill -9, say), ours the engine did not let us remove, and — at start-up only, once this process
 * holds the data_dir lock — those an earlier process of the same data_dir left. Swept once at
 * start and then every `intervalMs`, one sweep at a time, each engine call under the engine timeout.
 */
import { LABEL_DEADLINE, LABEL_INSTANCE, LABEL_MANAGED, LABEL_OWNER, LABEL_PROCESS } from "../names.js";
import type { Listed } from "./docker-client.js";
import type { Fleet } from "./make-container.js";
import { labelledProcessAlive } from "./process-info.js";

/** A creation under way has no id yet: ours younger than this (or the engine timeout, if longer) are left for the next sweep. */
const CREATING_GRACE_MS = 5_000;

export interface ReapOptions {
  /**
   * Also remove containers of our owner (data_dir) made by another process — only safe while this
   * process holds the data_dir lock, so at start-up; never one whose process is seen alive.
   */
  orphans?: boolean;
}

/** Removes what is left; returns how many containers. */
export async function reapLeftovers(fleet: Fleet, nowMs: number, opts: ReapOptions = {}): Promise<number> {
  const { client } = fleet;
  const label = `${LABEL_MANAGED}=true`;
  const listed = await client.listContainers(label);
  const orphan = (labels: Record<string, string>) =>
    opts.orphans === true && fleet.owner !== undefined && labels[LABEL_OWNER] === fleet.owner &&
    labels[LABEL_INSTANCE] !== fleet.instance && labelledProcessAlive(labels[LABEL_PROCESS]) !== true;
  // While a creation is under way its container is not in `live` yet: then only those older than
  // the longest a creation may take (the engine timeout) count. `created` is in whole seconds.
  const creatingGraceMs = Math.max(CREATING_GRACE_MS, client.timeoutMs + 2_000);
  const ours = (c: Listed) => c.labels[LABEL_INSTANCE] === fleet.instance;
  const dropped = (c: Listed) => ours(c) && !fleet.live.has(c.id) && (fleet.creating === 0 || c.created * 1000 < nowMs - creatingGraceMs);
  // One of ours this process still uses is never past its deadline: its run's own timeout ends it
  // (a pre-started container that waited long and then took a long hook may outlive its label).
  const past = (c: { labels: Record<string, string>; id?: string }) => Number(c.labels[LABEL_DEADLINE] ?? 0) < nowMs && !(c.id !== undefined && fleet.live.has(c.id));
  // A creation we gave up on that the engine made after all: never in use, whatever its age.
  const abandoned = (c: Listed) => fleet.abandoned.has(c.name);
  const stale = listed.filter((c) => past(c) || orphan(c.labels) || dropped(c) || abandoned(c));
  await Promise.all(stale.map((c) => client.remove(c.id).then(() => fleet.abandoned.delete(c.name), () => undefined)));
  // One that has not appeared by its deadline is the deadline rule's from then on.
  for (const [name, deadline] of fleet.abandoned) if (deadline < nowMs) fleet.abandoned.delete(name);
  const volumes = await client.listVolumes(label);
  // A volume of ours not in use is removed with its container; one the engine kept goes at its deadline.
  await Promise.all(volumes.filter((v) => past({ labels: v.labels }) || orphan(v.labels)).map((v) => client.removeVolume(v.id).catch(() => undefined)));
  return stale.length;
}

export interface Reapable {
  reap(nowMs?: number): Promise<number>;
}

export interface Reaper {
  stop(): void;
}

/** @default 10 s — how often leftover hook containers (past their deadline, their service gone) are looked for and removed */
export const REAP_INTERVAL_MS = 10_000;

/** Sweeps `target` every `intervalMs` (REAP_INTERVAL_MS). */
export function startReaper(target: Reapable, opts: { intervalMs?: number; onReaped?: (count: number) => void; onError?: (err: unknown) => void } = {}): Reaper {
  // One sweep at a time: on a hung engine, ticks do not pile calls up behind the one waiting.
  let sweeping = false;
  const sweep = () => {
    if (sweeping) return;
    sweeping = true;
    void target.reap().then(
      (count) => { if (count > 0) opts.onReaped?.(count); },
      (err: unknown) => opts.onError?.(err),
    ).finally(() => { sweeping = false; });
  };
  sweep();
  const timer = setInterval(sweep, opts.intervalMs ?? REAP_INTERVAL_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
