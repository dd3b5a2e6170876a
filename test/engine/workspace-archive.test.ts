/**
 * Workspace archives built for hand-over, against real folders: a few builds at a time for every
 * tenant together, waiting builds served tenant by tenant, a build nobody waits for any more never
 * started, and what builds running may grow to counted with the archives kept, room made from the
 * tenant holding the most.
 * Builds are watched, and held, where they start: the read of the workspace's top folder.
 */
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type * as FsPromises from "node:fs/promises";
import { describe, expect, it, vi } from "vitest";
import { buildArchive, TMPFS_PAGE_BYTES, WorkspaceArchives, type ArchiveOptions } from "../../engine/run/workspace-archive.js";
import { ContainerRunner } from "../../engine/run/container-runner.js";
import { STALE_WORKSPACE_ERROR } from "../../engine/run/types.js";
import { DEFAULT_LIMITS } from "../../engine/names.js";
import { WorkspaceStore } from "../../engine/workspace-store.js";
import { tarOf } from "../helpers/tar.js";

const probe = vi.hoisted(() => ({
  /** workspaces whose builds are watched */
  watched: new Set<string>(),
  /** each start of a watched workspace's build, in order */
  starts: [] as string[],
  /** watched workspaces whose build waits at its start until let go */
  holding: new Set<string>(),
  held: new Map<string, () => void>(),
  /** stat()s of watched workspaces done: an archive asked for is past them once it waits for its build */
  stats: 0,
}));

vi.mock("node:fs/promises", async (importOriginal) => {
  const fs = await importOriginal<typeof FsPromises>();
  const readdir = fs.readdir as (path: string, options?: unknown) => Promise<unknown>;
  return {
    ...fs,
    readdir: async (path: string, options?: unknown) => {
      if (probe.watched.has(path)) {
        probe.starts.push(path);
        if (probe.holding.has(path)) await new Promise<void>((go) => probe.held.set(path, go));
      }
      return readdir(path, options);
    },
    stat: async (path: string) => {
      const st = await fs.stat(path);
      if (probe.watched.has(path)) probe.stats++;
      return st;
    },
  };
});

/** Folders of one file each (`bytes` of it), watched; `hold`: their builds wait at their start. */
function workspaces(n: number, opts: { hold?: boolean; bytes?: number } = {}): string[] {
  const root = mkdtempSync(join(tmpdir(), "hookbox-archive-"));
  return Array.from({ length: n }, (_, i) => {
    const dir = join(root, `ws-${i}`);
    mkdirSync(dir);
    writeFileSync(join(dir, `f${i}.txt`), "x".repeat(opts.bytes ?? 100));
    probe.watched.add(dir);
    if (opts.hold) probe.holding.add(dir);
    return dir;
  });
}

const letGo = (dir: string) => {
  probe.holding.delete(dir);
  probe.held.get(dir)?.();
  probe.held.delete(dir);
};
/** Until `n` archives asked for are past their stat(): waiting for their build, or building. */
const asked = async (n: number) => {
  await expect.poll(() => probe.stats).toBeGreaterThanOrEqual(n);
  await new Promise((r) => setImmediate(r));
};
const startsOf = (dir: string) => probe.starts.filter((d) => d === dir).length;
const archives = (opts: ArchiveOptions) => new WorkspaceArchives(opts);

function reset(): void {
  for (const dir of [...probe.held.keys()]) letGo(dir);
  probe.watched.clear();
  probe.holding.clear();
  probe.starts.length = 0;
  probe.stats = 0;
}

describe("workspace archive builds", () => {
  it("run two at a time (MAX_ARCHIVE_BUILDS_AT_ONCE) however many are asked for at once; the rest wait and are built in turn", async () => {
    reset();
    const dirs = workspaces(8, { hold: true });
    const cache = new WorkspaceArchives();
    const tars = dirs.map((d) => cache.get(d, Infinity, { party: "a" }));
    await asked(dirs.length);
    expect(probe.starts).toHaveLength(2);
    for (let done = 0; done < dirs.length; done++) {
      // one more starts only when one ends
      await expect.poll(() => probe.starts.length).toBe(Math.min(dirs.length, done + 2));
      expect(probe.held.size).toBeLessThanOrEqual(2);
      letGo(probe.starts[done]!);
    }
    for (const [i, tar] of (await Promise.all(tars)).entries()) expect(tar?.includes(`f${i}.txt`)).toBe(true);
    expect(probe.starts.toSorted()).toEqual(dirs.toSorted());
  });

  it("never starts a build whose every waiter gave up (its hook's time ran out, its event was cancelled) before its turn", async () => {
    reset();
    const [x, y, z, w] = workspaces(4, { hold: true }) as [string, string, string, string];
    const cache = new WorkspaceArchives();
    const running = [cache.get(x, Infinity, { party: "a" }), cache.get(y, Infinity, { party: "a" })];
    await asked(2);
    const cancel = new AbortController();
    const cancelled = cache.get(z, Infinity, { party: "a", signal: cancel.signal });
    const timedOut = cache.get(z, Infinity, { party: "a", waitMs: 1 });
    // one waiter of w gives up, the other still waits for it
    const leaving = new AbortController();
    const left = cache.get(w, Infinity, { party: "a", signal: leaving.signal });
    const stays = cache.get(w, Infinity, { party: "a" });
    await asked(6);
    expect(probe.starts.toSorted()).toEqual([x, y].toSorted());
    expect(await timedOut).toBeNull();
    cancel.abort();
    expect(await cancelled).toBeNull();
    leaving.abort();
    expect(await left).toBeNull();
    letGo(x);
    letGo(y);
    letGo(w);
    expect((await Promise.all(running)).every((t) => t !== null)).toBe(true);
    expect((await stays)?.includes("f3.txt")).toBe(true);
    // slots were free for z's turn, and it never came
    expect(probe.starts.toSorted()).toEqual([x, y, w].toSorted());
    // a later event of that workspace builds it
    letGo(z);
    expect((await cache.get(z, Infinity, { party: "a" }))?.includes("f2.txt")).toBe(true);
    expect(startsOf(z)).toBe(1);
  });

  it("serve waiting tenants in turn: one tenant's one build starts before another's twenty waiting", async () => {
    reset();
    const flood = workspaces(22, { hold: true });
    const [calm] = workspaces(1, { hold: true }) as [string];
    const cache = new WorkspaceArchives();
    const floods = flood.map((d) => cache.get(d, Infinity, { party: "a" }));
    await asked(flood.length);
    const calmTar = cache.get(calm, Infinity, { party: "b" });
    await asked(flood.length + 1);
    expect(probe.starts).toHaveLength(2);
    letGo(probe.starts[0]!);
    await expect.poll(() => probe.starts.length).toBe(3);
    expect(probe.starts[2]).toBe(calm);
    letGo(calm);
    expect((await calmTar)?.includes("f0.txt")).toBe(true);
    for (const d of flood) letGo(d);
    expect((await Promise.all(floods)).every((t) => t !== null)).toBe(true);
  });
});

describe("workspace archives in memory", () => {
  /** one archive's bytes, and a build's most: a file of 6000 bytes and a build that may grow past two of them */
  const sizes = async () => {
    const [dir] = workspaces(1, { bytes: 6000 }) as [string];
    const archive = (await new WorkspaceArchives().get(dir))!.length;
    return { archive, build: 2 * archive + 1024 };
  };

  it("count a running build as the bytes it may grow to: the least recently used archive kept goes when it starts", async () => {
    reset();
    const { archive, build } = await sizes();
    const [w1, w2, w3] = workspaces(3, { bytes: 6000 }) as [string, string, string];
    // room for two archives, or one and a build
    const cache = archives({ maxArchiveBytes: build, maxCacheBytes: build + archive });
    await cache.get(w1, Infinity, { party: "a" });
    await cache.get(w2, Infinity, { party: "a" });
    probe.holding.add(w3);
    const third = cache.get(w3, Infinity, { party: "a" });
    await expect.poll(() => startsOf(w3)).toBe(1);
    // while w3 builds, w2 is still kept, w1 is built again
    expect((await cache.get(w2, Infinity, { party: "a" }))?.includes("f1.txt")).toBe(true);
    expect(startsOf(w2)).toBe(1);
    expect((await cache.get(w1, Infinity, { party: "a" }))?.includes("f0.txt")).toBe(true);
    expect(startsOf(w1)).toBe(2);
    letGo(w3);
    expect((await third)?.includes("f2.txt")).toBe(true);
  });

  it("make room from the tenant holding the most: one cycling through its workspaces pushes out its own archives, never another's that holds less", async () => {
    reset();
    const { archive, build } = await sizes();
    const [calm] = workspaces(1, { bytes: 6000 }) as [string];
    const flood = workspaces(12, { bytes: 6000 });
    // room for ten archives: the flood's twelve and its builds do not fit
    const cache = archives({ maxArchiveBytes: build, maxCacheBytes: 10 * archive });
    await cache.get(calm, Infinity, { party: "b" });
    for (const d of flood) await cache.get(d, Infinity, { party: "a" });
    expect(await cache.get(calm, Infinity, { party: "b" })).not.toBeNull();
    expect(startsOf(calm)).toBe(1);
    // the flood's own oldest went
    expect(await cache.get(flood[0]!, Infinity, { party: "a" })).not.toBeNull();
    expect(startsOf(flood[0]!)).toBe(2);
  });

  it("make room in entries from the tenant keeping the most: one cycling through more workspaces than ARCHIVE_CACHE_ENTRIES pushes out its own, never another's", async () => {
    reset();
    const [calm] = workspaces(1) as [string];
    const flood = workspaces(6);
    // room for four entries, whatever their bytes
    const cache = archives({ maxCacheEntries: 4 });
    await cache.get(calm, Infinity, { party: "b" });
    for (const d of flood) await cache.get(d, Infinity, { party: "a" });
    expect(await cache.get(calm, Infinity, { party: "b" })).not.toBeNull();
    expect(startsOf(calm)).toBe(1);
    // the flood's own oldest went; its newest three stayed
    expect(await cache.get(flood[5]!, Infinity, { party: "a" })).not.toBeNull();
    expect(startsOf(flood[5]!)).toBe(1);
    expect(await cache.get(flood[0]!, Infinity, { party: "a" })).not.toBeNull();
    expect(startsOf(flood[0]!)).toBe(2);
  });
});

describe("a workspace replaced under its event", () => {
  const storeOptions = { maxEntries: 1000, maxUnpackedBytes: 1 << 24, maxUnpackRatio: 200, maxHookFileBytes: 1 << 20, maxHooks: 1000, maxTimeoutMs: 60_000, tenants: [] };
  async function* once(b: Buffer) {
    yield b;
  }
  const upload = (v: string) =>
    tarOf([
      { name: ".github/hooks/g.json", content: JSON.stringify({ version: 1, hooks: { preToolUse: [{ type: "command", bash: `guard-${v}` }] } }) },
      { name: "top.txt", content: `top-${v}` },
    ]);
  // An engine no call may reach: the run must end before any container is asked for.
  const noEngine = new Proxy({}, { get: () => () => Promise.reject(new Error("no engine call may be made")) }) as never;

  it("is never served the archive of the upload before, though its folder keeps its inode and ctime", async () => {
    reset();
    const [dir] = workspaces(1);
    writeFileSync(join(dir!, "f.txt"), "upload-one");
    const cache = archives({});
    expect((await cache.get(dir!, Infinity, { version: "one" }))!.toString("latin1")).toContain("upload-one");
    // the folder's inode and ctime stay (its entries do): only the upload's own name tells them apart
    writeFileSync(join(dir!, "f.txt"), "upload-two");
    expect((await cache.get(dir!, Infinity, { version: "one" }))!.toString("latin1")).toContain("upload-one");
    expect((await cache.get(dir!, Infinity, { version: "two" }))!.toString("latin1")).toContain("upload-two");
  });

  it("runs no repository hook whose workspace was replaced while its files were packed: neither the old files nor the new", async () => {
    reset();
    const store = new WorkspaceStore(mkdtempSync(join(tmpdir(), "hookbox-stale-")), storeOptions);
    await store.put("team-a", "w", once(await upload("v1")));
    const v1 = (await store.get("team-a", "w"))!;
    probe.watched.add(v1.dir);
    probe.holding.add(v1.dir);
    const runner = new ContainerRunner({ scratchDir: mkdtempSync(join(tmpdir(), "hookbox-scratch-")), pool: { size: 1, maxTotal: 2, idleMs: 60_000, maxStarting: 1 }, client: noEngine });
    const running = runner.run({ command: "cat top.txt", stdin: Buffer.from("{}"), env: {}, timeoutMs: 10_000, limits: DEFAULT_LIMITS, workspaceDir: v1.dir, workspaceVersion: v1.version, workspaceCurrent: v1.current, party: "team-a" });
    await expect.poll(() => probe.held.has(v1.dir)).toBe(true);
    await store.put("team-a", "w", once(await upload("v2")));
    expect(v1.current()).toBe(false);
    letGo(v1.dir);
    expect(await running).toMatchObject({ outcome: "failed_to_start", error: STALE_WORKSPACE_ERROR, stdout: "" });
    // the new upload is its own: known by another name, its archive built afresh
    const v2 = (await store.get("team-a", "w"))!;
    expect(v2.version).not.toBe(v1.version);
  });
});

describe("a workspace archive's tmpfs footprint", () => {
  const folder = (files: Record<string, number>, links: Record<string, string> = {}) => {
    const dir = mkdtempSync(join(tmpdir(), "hookbox-footprint-"));
    for (const [name, bytes] of Object.entries(files)) writeFileSync(join(dir, name), "x".repeat(bytes));
    for (const [name, target] of Object.entries(links)) symlinkSync(target, join(dir, name));
    return dir;
  };
  it(`counts each file in whole pages of TMPFS_PAGE_BYTES (${TMPFS_PAGE_BYTES}): a one-byte file takes a page, one a byte past a page two`, async () => {
    expect((await buildArchive(folder({ a: 1 }), 1 << 20))!.footprint).toBe(TMPFS_PAGE_BYTES);
    expect((await buildArchive(folder({ a: TMPFS_PAGE_BYTES }), 1 << 20))!.footprint).toBe(TMPFS_PAGE_BYTES);
    expect((await buildArchive(folder({ a: TMPFS_PAGE_BYTES + 1 }), 1 << 20))!.footprint).toBe(2 * TMPFS_PAGE_BYTES);
    // past the bound by the pages, not the bytes: four one-byte files in four pages' room fit, five do not
    const four = { a: 1, b: 1, c: 1, d: 1 };
    expect(await buildArchive(folder(four), 4 * TMPFS_PAGE_BYTES)).not.toBeNull();
    expect(await buildArchive(folder({ ...four, e: 1 }), 4 * TMPFS_PAGE_BYTES)).toBeNull();
  });
  it("counts a page for a link whose target is too long to sit in its inode, none for a short one", async () => {
    const short = "t".repeat(59);
    const long = "t".repeat(60);
    expect((await buildArchive(folder({}, { s: short }), 1 << 20))!.footprint).toBe(0);
    expect((await buildArchive(folder({}, { l: long }), 1 << 20))!.footprint).toBe(TMPFS_PAGE_BYTES);
  });
});
