/** Test helpers that look at the real Docker engine: what hookbox left behind. */
import Docker from "dockerode";
import { mkdtemp, chown, mkdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HOOK_GID, HOOK_UID, LABEL_MANAGED } from "../../engine/names.js";

export const docker = new Docker();

/** Containers and volumes carrying hookbox's label, running or not. */
export async function leftovers(): Promise<{ containers: string[]; volumes: string[] }> {
  const filters = JSON.stringify({ label: [`${LABEL_MANAGED}=true`] });
  const containers = (await docker.listContainers({ all: true, filters })).map((c) => c.Names.join(","));
  const volumes = ((await docker.listVolumes({ filters })).Volumes ?? []).map((v) => v.Name);
  return { containers, volumes };
}

/** A stored workspace as the service keeps it: files owned by the hooks' uid. */
export async function makeWorkspace(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "hookbox-ws-test-"));
  await chown(dir, HOOK_UID, HOOK_GID);
  for (const [name, content] of Object.entries(files)) {
    const path = join(dir, name);
    const parts = name.split("/").slice(0, -1);
    let at = dir;
    for (const part of parts) {
      at = join(at, part);
      await mkdir(at, { recursive: true });
      await chown(at, HOOK_UID, HOOK_GID);
    }
    await writeFile(path, content);
    await chown(path, HOOK_UID, HOOK_GID);
  }
  return dir;
}
