/**
 * What a stop at an unlucky moment leaves of the stored workspaces, put right at the next start:
 * a workspace an upload was replacing is put back under its id, crash leftovers go.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { WorkspaceStore } from "../../engine/workspace-store.js";
import { tarOf } from "../helpers/tar.js";

const options = { maxEntries: 1000, maxUnpackedBytes: 1 << 24, maxUnpackRatio: 200, maxHookFileBytes: 1 << 20, maxHooks: 1000, maxTimeoutMs: 60_000, tenants: [] };
const tenantDir = (root: string, tenant: string) => join(root, createHash("sha256").update(tenant).digest("hex").slice(0, 16));
async function* chunks(b: Buffer) {
  yield b;
}

describe("a stop between an upload's two renames", () => {
  it("puts the workspace being replaced back under its id at the next start, and removes the leftovers", async () => {
    const root = mkdtempSync(join(tmpdir(), "hookbox-store-"));
    const first = new WorkspaceStore(root, options);
    await first.put("team-a", "w", chunks(await tarOf([{ name: ".github/hooks/g.json", content: JSON.stringify({ version: 1, hooks: { preToolUse: [{ type: "command", bash: "guard.sh" }] } }) }])));
    const base = tenantDir(root, "team-a");
    // the moment between the renames: the old tree moved aside, the new one not yet in its place
    renameSync(join(base, "w"), join(base, `.replaced-${"0".repeat(8)}-0000-0000-0000-${"0".repeat(12)}-w`));
    mkdirSync(join(base, ".incoming-00000000-0000-0000-0000-000000000000"));
    // the next start
    const second = new WorkspaceStore(root, options);
    await second.sweep();
    const back = await second.get("team-a", "w");
    expect(back?.hooks.hooks.map((h) => h.command)).toEqual(["guard.sh"]);
    expect(readdirSync(base).filter((n) => n.startsWith("."))).toEqual([]);
    expect(existsSync(join(base, "w", ".github/hooks/g.json"))).toBe(true);
  });

  it("removes a replaced copy whose id holds the new workspace", async () => {
    const root = mkdtempSync(join(tmpdir(), "hookbox-store-"));
    const first = new WorkspaceStore(root, options);
    await first.put("team-a", "w", chunks(await tarOf([{ name: "a.txt", content: "new" }])));
    const base = tenantDir(root, "team-a");
    mkdirSync(join(base, `.replaced-${"1".repeat(8)}-1111-1111-1111-${"1".repeat(12)}-w`));
    await new WorkspaceStore(root, options).sweep();
    expect(readdirSync(base).filter((n) => n.startsWith("."))).toEqual([]);
    expect((await new WorkspaceStore(root, options).get("team-a", "w"))?.info.files).toBe(1);
  });
});
