/**
 * What a stop at an unlucky moment leaves of the stored workspaces, put right at the next start:
 * a workspace an upload was replacing is put back under its id, crash leftovers go.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, writeFileSync } from "node:fs";
import type * as FsPromises from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { MAX_WORKSPACE_LOADS_AT_ONCE, residentBytes, WorkspaceStore } from "../../engine/workspace-store.js";
import type { HookDef } from "../../engine/hooks.js";
import { rawMember, tarOf } from "../helpers/tar.js";

/** Every rename the store makes, in order (the file system's own rename, watched); `trashHeld`: unlinks in a removed workspace wait for it. */
const renames = vi.hoisted(() => [] as [string, string][]);
const removal = vi.hoisted(() => ({ held: undefined as Promise<void> | undefined, started: false }));
vi.mock("node:fs/promises", async (importOriginal) => {
  const fs = await importOriginal<typeof FsPromises>();
  return {
    ...fs,
    rename: async (from: string, to: string) => (renames.push([from, to]), fs.rename(from, to)),
    unlink: async (path: string) => {
      if (removal.held && path.includes("/.trash-")) {
        removal.started = true;
        await removal.held;
      }
      return fs.unlink(path);
    },
  };
});

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
    // the moment between the renames: the old tree moved aside (its id marked), the new one not yet in its place
    const swap = "00000000-0000-0000-0000-000000000000";
    writeFileSync(join(base, "_meta", `replacing-${swap}.json`), JSON.stringify({ id: "w" }));
    renameSync(join(base, "w"), join(base, `.replaced-${swap}`));
    mkdirSync(join(base, `.incoming-${swap}`));
    // the next start
    const second = new WorkspaceStore(root, options);
    await second.sweep();
    const back = await second.get("team-a", "w");
    expect(back?.hooks.hooks.map((h) => h.command)).toEqual(["guard.sh"]);
    expect(readdirSync(base).filter((n) => n.startsWith("."))).toEqual([]);
    expect(readdirSync(join(base, "_meta")).filter((n) => n.startsWith("replacing-"))).toEqual([]);
    expect(existsSync(join(base, "w", ".github/hooks/g.json"))).toBe(true);
  });

  it("removes a replaced copy whose id holds the new workspace", async () => {
    const root = mkdtempSync(join(tmpdir(), "hookbox-store-"));
    const first = new WorkspaceStore(root, options);
    await first.put("team-a", "w", chunks(await tarOf([{ name: "a.txt", content: "new" }])));
    const base = tenantDir(root, "team-a");
    const swap = "11111111-1111-1111-1111-111111111111";
    writeFileSync(join(base, "_meta", `replacing-${swap}.json`), JSON.stringify({ id: "w" }));
    mkdirSync(join(base, `.replaced-${swap}`));
    await new WorkspaceStore(root, options).sweep();
    expect(readdirSync(base).filter((n) => n.startsWith("."))).toEqual([]);
    expect((await new WorkspaceStore(root, options).get("team-a", "w"))?.info.files).toBe(1);
  });
});

describe("a swap marker a stop left empty or half-written", () => {
  it.each([
    ["empty", ""],
    ["half-written", '{"id":"w'],
  ])("is %s: read as no marker and removed; the tenant's uploads and deletes go on", async (_what, text) => {
    const root = mkdtempSync(join(tmpdir(), "hookbox-store-"));
    await new WorkspaceStore(root, options).put("team-a", "w", chunks(await tarOf([{ name: "a.txt", content: "a" }])));
    const base = tenantDir(root, "team-a");
    const swap = "22222222-2222-2222-2222-222222222222";
    writeFileSync(join(base, "_meta", `replacing-${swap}.json`), text);
    // a marker written to its temporary name and never renamed
    writeFileSync(join(base, "_meta", `replacing-${swap}.json.tmp`), text);
    // the next start
    const store = new WorkspaceStore(root, options);
    await store.sweep((_tenant, err) => expect.fail(String(err)));
    expect(readdirSync(join(base, "_meta")).filter((n) => n.startsWith("replacing-"))).toEqual([]);
    expect((await store.put("team-a", "w", chunks(await tarOf([{ name: "b.txt", content: "b" }])))).files).toBe(1);
    expect((await store.put("team-a", "v", chunks(await tarOf([{ name: "c.txt", content: "c" }])))).files).toBe(1);
    expect(await store.delete("team-a", "v")).toBe(true);
    expect(existsSync(join(base, "w", "b.txt"))).toBe(true);
  });

  it("is never left by an upload: the marker is written whole under a temporary name beside it, then renamed", async () => {
    const root = mkdtempSync(join(tmpdir(), "hookbox-store-"));
    renames.length = 0;
    await new WorkspaceStore(root, options).put("team-a", "w", chunks(await tarOf([{ name: "a.txt", content: "a" }])));
    const markers = renames.filter(([from]) => from.includes("replacing-"));
    expect(markers).toHaveLength(1);
    const [from, to] = markers[0]!;
    expect(from).toBe(`${to}.tmp`);
    expect(to).toMatch(/\/_meta\/replacing-[0-9a-f-]{36}\.json$/);
  });
});

describe("an upload stopped by its deadline", () => {
  it("ends with the deadline's reason though its archive never ends, its staging folder removed and its place under max_workspaces given back", async () => {
    const root = mkdtempSync(join(tmpdir(), "hookbox-store-"));
    const store = new WorkspaceStore(root, { ...options, tenants: [{ name: "team-a", maxWorkspaces: 1, maxWorkspaceBytes: 1 << 20 }] });
    // a file's header and some of its data, then nothing, for ever
    async function* stalled() {
      yield rawMember("a.txt", "0", Buffer.alloc(1000)).subarray(0, 700);
      await new Promise(() => undefined);
    }
    const deadline = new AbortController();
    const put = store.put("team-a", "w", stalled(), deadline.signal);
    setTimeout(() => deadline.abort(new Error("past the upload's time")), 100);
    const ended = await Promise.race([put.then(() => "stored", (err: unknown) => (err as Error).message), new Promise((resolve) => setTimeout(resolve, 2_000, "pending"))]);
    expect(ended).toBe("past the upload's time");
    expect(readdirSync(tenantDir(root, "team-a")).filter((n) => n.startsWith("."))).toEqual([]);
    expect((await store.put("team-a", "v", chunks(await tarOf([{ name: "a.txt", content: "a" }])))).files).toBe(1);
  });
});

describe("re-uploading a workspace of the longest id and the deepest paths that fit", () => {
  it("leaves no copy behind and counts only the one stored: the replaced copy's name is no longer than the staging one", async () => {
    const root = mkdtempSync(join(tmpdir(), "hookbox-store-"));
    const id = "a".repeat(128);
    // a path that just fits under <tenant>/<128-character name>/ (PATH_MAX 4096)
    const room = 4095 - (root.length + 1 + 16 + 1 + 128 + 1);
    const part = "d".repeat(60);
    const dirs = Math.min(62, Math.floor((room - 10) / (part.length + 1)));
    const name = `${`${part}/`.repeat(dirs)}${"f".repeat(Math.max(1, room - dirs * (part.length + 1)))}`.slice(0, room);
    const store = new WorkspaceStore(root, options);
    for (let i = 0; i < 3; i++) await store.put("team-a", id, chunks(await tarOf([{ name, content: `v${i}` }])));
    const base = tenantDir(root, "team-a");
    expect(readdirSync(base).sort()).toEqual(["_meta", id]);
    await new WorkspaceStore(root, options).sweep();
    expect(readdirSync(base).sort()).toEqual(["_meta", id]);
    expect(await store.delete("team-a", id)).toBe(true);
  });
});

describe("a stored workspace refused when read after a restart", () => {
  it("is judged once per REFUSAL_RETRY_MS for hook files past the workspace's bounds (they may heal); a link that leads out stays refused (test/attacks/workspace.test.ts)", async () => {
    const { REFUSAL_RETRY_MS } = await import("../../engine/workspace-store.js");
    const root = mkdtempSync(join(tmpdir(), "hookbox-store-"));
    const one = { ...options, maxHooks: 1 };
    await new WorkspaceStore(root, one).put("team-a", "w", chunks(await tarOf([{ name: ".github/hooks/g.json", content: JSON.stringify({ version: 1, hooks: { preToolUse: [{ type: "command", bash: "guard.sh" }] } }) }])));
    const file = join(tenantDir(root, "team-a"), "w", ".github/hooks/g.json");
    // more hooks than max_repository_hooks: a bound on the workspace, which refuses it (one file that
    // cannot be read is skipped alone: a guard beside it in the workspace still loads)
    writeFileSync(file, JSON.stringify({ version: 1, hooks: { preToolUse: [{ type: "command", bash: "guard.sh" }, { type: "command", bash: "more.sh" }] } }));
    const store = new WorkspaceStore(root, one);
    await expect(store.get("team-a", "w")).rejects.toMatchObject({ code: "workspace_hooks_invalid" });
    // healed on disk: still the kept refusal, until its time is up — then judged again, and served
    writeFileSync(file, JSON.stringify({ version: 1, hooks: { preToolUse: [{ type: "command", bash: "guard.sh" }] } }));
    await expect(store.get("team-a", "w")).rejects.toMatchObject({ code: "workspace_hooks_invalid" });
    const now = Date.now();
    const clock = vi.spyOn(Date, "now").mockReturnValue(now + REFUSAL_RETRY_MS + 1);
    try {
      expect((await store.get("team-a", "w"))?.hooks.hooks.map((h) => h.command)).toEqual(["guard.sh"]);
    } finally {
      clock.mockRestore();
    }
  });
});

describe("the hook sets of stored workspaces held in memory (MAX_RESIDENT_HOOK_BYTES)", () => {
  const hookFile = (n: number, tag: string) => JSON.stringify({ version: 1, hooks: { preToolUse: Array.from({ length: n }, (_, i) => ({ type: "command", bash: `${tag}-${i}-${"x".repeat(400)}` })) } });
  const upload = async (store: WorkspaceStore, tenant: string, id: string, n = 50) => store.put(tenant, id, chunks(await tarOf([{ name: ".github/hooks/h.json", content: hookFile(n, `${tenant}/${id}`) }])));

  it("keep within the budget: past it the heaviest tenant gives up its least recently used, read again — the same hooks, still current — when next named", async () => {
    const root = mkdtempSync(join(tmpdir(), "hookbox-store-"));
    // room for three and a half of these sets
    const sample = await (async () => {
      const s = new WorkspaceStore(mkdtempSync(join(tmpdir(), "hookbox-store-")), options);
      await upload(s, "t", "w0");
      return residentBytes((await s.get("t", "w0"))!.hooks);
    })();
    const store = new WorkspaceStore(root, options, Math.floor(sample * 3.5));
    for (const id of ["w0", "w1", "w2"]) await upload(store, "flood", id);
    const kept = (await store.get("flood", "w0"))!;
    await upload(store, "calm", "c0");
    await upload(store, "flood", "w3");
    // w1 was the flooding tenant's least recently used (w0 was named since): given up, then read again from disk
    expect(heldKeys(store)).not.toContain(`${tenantDir(root, "flood")}/w1`);
    expect(heldKeys(store)).toContain(`${tenantDir(root, "calm")}/c0`);
    const again = (await store.get("flood", "w1"))!;
    expect(again.hooks.hooks.map((h) => h.command.split("-").slice(0, 2).join("-"))).toEqual(Array.from({ length: 50 }, (_, i) => `flood/w1-${i}`));
    expect(again.info).toMatchObject({ id: "w1", files: 1 });
    expect(again.info.hooks).toHaveLength(50);
    // an event that read w0 before it was given up still finds it current: it was not replaced
    expect(kept.current()).toBe(true);
    expect(heldBytes(store)).toBeLessThanOrEqual(Math.floor(sample * 3.5));
    // the calm tenant's one set outlasts the flood
    for (const id of ["w4", "w5", "w6"]) await upload(store, "flood", id);
    expect(heldKeys(store)).toContain(`${tenantDir(root, "calm")}/c0`);
  });

  it("reckons a set by its hooks' strings and objects, each warning too", () => {
    const hook = { name: "n", origin: "o", command: "c".repeat(1000), env: {}, mounts: [] } as unknown as HookDef;
    expect(residentBytes({ hooks: [hook, hook], warnings: ["w".repeat(100)], disableAll: false })).toBe(4096 + 2 * (2048 + 2 * 1002) + 200);
    const dressed = { ...hook, env: { AB: "v".repeat(98) }, matcher: { source: "m".repeat(10), test: () => true }, condition: { source: "i".repeat(20), test: () => true }, cwd: "sub" } as HookDef;
    expect(residentBytes({ hooks: [dressed], warnings: [], disableAll: false })).toBe(4096 + 2048 + 2 * (1002 + 100 + 10 + 20 + 3));
  });

  it("counts the environment a repository file gives its hooks: 64 values of 4 KiB each are not held for free", async () => {
    const env = Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`V${i}`, "e".repeat(4096)]));
    const file = JSON.stringify({ version: 1, hooks: { preToolUse: Array.from({ length: 3 }, () => ({ type: "command", bash: "true", env })) } });
    const store = new WorkspaceStore(mkdtempSync(join(tmpdir(), "hookbox-store-")), options);
    await store.put("t", "w", chunks(await tarOf(["a", "b", "c", "d"].map((n) => ({ name: `.github/hooks/${n}.json`, content: file })))));
    const set = (await store.get("t", "w"))!.hooks;
    expect(set.hooks).toHaveLength(12);
    expect(residentBytes(set)).toBeGreaterThan(2 * 12 * 64 * 4096);
  });
});

describe("a stored workspace read again (after a restart, or given up for memory)", () => {
  const settings = (pattern: string) => JSON.stringify({ hooks: { PreToolUse: [{ matcher: pattern, hooks: [{ type: "command", command: "guard.sh" }] }] } });
  /** A thread so busy that every reading of the clock is 150 ms on: any compile "takes" longer than MAX_REPOSITORY_COMPILE_MS. */
  const busy = <T>(fn: () => Promise<T>, stepMs = 150): Promise<T> => {
    let now = performance.now();
    const spy = vi.spyOn(performance, "now").mockImplementation(() => (now += stepMs));
    return fn().finally(() => spy.mockRestore());
  };

  it("has STORED_COMPILE_FACTOR times an upload's compile time, not more: a thread busier than at its upload does not refuse it, the thread is still bounded", async () => {
    const root = mkdtempSync(join(tmpdir(), "hookbox-store-"));
    const tag = `${process.pid}${Date.now()}`;
    await new WorkspaceStore(root, options).put("team-a", "w", chunks(await tarOf([{ name: ".claude/settings.json", content: settings(`Bash.*Write${tag}a`) }])));
    // an upload on the busy thread: refused by the time budget
    const uploaded = busy(async () => new WorkspaceStore(mkdtempSync(join(tmpdir(), "hookbox-store-")), options).put("team-a", "u", chunks(await tarOf([{ name: ".claude/settings.json", content: settings(`Bash.*Edit${tag}b`) }]))));
    await expect(uploaded).rejects.toThrow(/took more than 100 ms to compile \(MAX_REPOSITORY_COMPILE_MS\)/);
    // the stored one, its matcher compiled afresh (never seen by this process), read after a restart on the busy thread: kept
    writeFileSync(join(tenantDir(root, "team-a"), "w", ".claude/settings.json"), settings(`Bash.*Read${tag}c`));
    const back = await busy(() => new WorkspaceStore(root, options).get("team-a", "w"));
    expect(back?.hooks.hooks.map((h) => h.command)).toEqual(["guard.sh"]);
    // past 4 × 100 ms it is refused all the same
    writeFileSync(join(tenantDir(root, "team-a"), "w", ".claude/settings.json"), settings(`Bash.*Grep${tag}d`));
    await expect(busy(() => new WorkspaceStore(root, options).get("team-a", "w"), 500)).rejects.toThrow(/took more than 400 ms to compile/);
    // its weight still counts: a matcher past the weight limit skips its hooks when read again too
    writeFileSync(join(tenantDir(root, "team-a"), "w", ".claude/settings.json"), settings("\\pL{999}".repeat(50)));
    const heavy = (await new WorkspaceStore(root, options).get("team-a", "w"))!.hooks;
    expect(heavy.hooks).toEqual([]);
    expect(heavy.warnings).toEqual([expect.stringMatching(/matcher past hookbox's limits .*too complex/)]);
  });
});

const heldKeys = (store: WorkspaceStore) => [...(store as unknown as { resident: Map<string, unknown> }).resident.keys()];
const heldBytes = (store: WorkspaceStore) => (store as unknown as { residentTotal: number }).residentTotal;

describe("a workspace whose id starts as a swap marker's does (replacing-…)", () => {
  it.each(["replacing-00000000-0000-0000-0000-000000000000", "replacing-foo"])("keeps its meta file, and so its digest, across a restart: %s", async (id) => {
    const root = mkdtempSync(join(tmpdir(), "hookbox-store-"));
    const stored = await new WorkspaceStore(root, options).put("team-a", id, chunks(await tarOf([{ name: "a.txt", content: "a" }])));
    expect(stored.digest).toMatch(/^sha256:/);
    const next = new WorkspaceStore(root, options);
    await next.sweep();
    expect((await next.get("team-a", id))?.info.digest).toBe(stored.digest);
  });
});

describe("a workspace deleted while it is being removed from disk", () => {
  it("lets an upload of the same id through once it is moved aside: the id's turn is not held for the removal", async () => {
    const root = mkdtempSync(join(tmpdir(), "hookbox-store-"));
    const store = new WorkspaceStore(root, options);
    await store.put("team-a", "w", chunks(await tarOf(Array.from({ length: 20 }, (_, i) => ({ name: `f${i}.txt`, content: "old" })))));
    let letGo = () => undefined as void;
    removal.held = new Promise<void>((go) => (letGo = go));
    try {
      const deleted = store.delete("team-a", "w");
      await expect.poll(() => removal.started).toBe(true);
      // the removal is held; the new upload of the id goes through all the same
      const stored = await store.put("team-a", "w", chunks(await tarOf([{ name: "new.txt", content: "new" }])));
      expect(stored.files).toBe(1);
      letGo();
      expect(await deleted).toBe(true);
      expect((await store.get("team-a", "w"))?.info.files).toBe(1);
      expect(readdirSync(tenantDir(root, "team-a")).filter((n) => n.startsWith("."))).toEqual([]);
    } finally {
      removal.held = undefined;
      letGo();
    }
  });
});

describe("stored workspaces read after a restart", () => {
  it(`are read MAX_WORKSPACE_LOADS_AT_ONCE (${MAX_WORKSPACE_LOADS_AT_ONCE}) at a time for all tenants together, however many are asked for at once`, async () => {
    const root = mkdtempSync(join(tmpdir(), "hookbox-loads-"));
    const first = new WorkspaceStore(root, options);
    const tar = await tarOf([{ name: ".github/hooks/g.json", content: JSON.stringify({ version: 1, hooks: { preToolUse: [{ type: "command", bash: "guard.sh" }] } }) }]);
    const asked: [string, string][] = [];
    for (const tenant of ["team-a", "team-b"]) for (let i = 0; i < 4; i++) asked.push([tenant, `w${i}`]);
    for (const [tenant, id] of asked) await first.put(tenant, id, chunks(tar));
    // the next start: none held, each read from the disk, each read taking a while
    const second = new WorkspaceStore(root, options);
    await second.sweep();
    const inner = second as unknown as { load: (...args: unknown[]) => Promise<unknown> };
    const load = inner.load.bind(second);
    let running = 0;
    let most = 0;
    inner.load = async (...args) => {
      most = Math.max(most, ++running);
      try {
        await new Promise((r) => setTimeout(r, 50));
        return await load(...args);
      } finally {
        running--;
      }
    };
    const got = await Promise.all(asked.map(([tenant, id]) => second.get(tenant, id)));
    expect(got.map((w) => w?.hooks.hooks.map((h) => h.command))).toEqual(asked.map(() => ["guard.sh"]));
    expect(most).toBe(MAX_WORKSPACE_LOADS_AT_ONCE);
  });
});
