/**
 * @module Host side of the copy-on-write /workspace: per run, an overlay upper dir (owned by the
 * hooks' uid, so they may write) and its work dir. The stored workspace is the lower layer and is
 * never written; both dirs go when the run ends.
 */
import { chown, mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { HOOK_GID, HOOK_UID } from "../names.js";

export interface CowDirs {
  upper: string;
  work: string;
  remove(): Promise<void>;
}

export async function cowDirs(scratchDir: string, runId: string): Promise<CowDirs> {
  const root = join(scratchDir, runId);
  const upper = join(root, "upper");
  const work = join(root, "work");
  await mkdir(upper, { recursive: true });
  await mkdir(work, { recursive: true });
  await chown(upper, HOOK_UID, HOOK_GID);
  return { upper, work, remove: () => rm(root, { recursive: true, force: true }) };
}
