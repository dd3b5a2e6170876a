/**
 * @module Uploaded workspaces (SERVICE.md §3): a tar or tar.gz of (part of) a repository, unpacked
 * safely under `data_dir`, one folder per tenant, within the tenant's quota. Files belong to the
 * hooks' uid, so a hook may write in its copy-on-write view; the stored copy is never written by a
 * hook. Beside the workspaces, in `_meta/` (a name no workspace id can take), each one's digest and
 * size, so the quota survives a restart.
 */
import { createHash, randomUUID } from "node:crypto";
import { chmod, chown, lstat, mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { BadRequestError, ConfigError, HookboxError, OverloadedError } from "./errors.js";
import { MAX_REPOSITORY_COMPILE_MS, type HookSet } from "./hooks.js";
import { HOOK_GID, HOOK_UID } from "./names.js";
import { loadRepositoryHooks, withinJson, type RepositoryLimits } from "./repository.js";
import { TenantUsage, type Quota } from "./workspace-quota.js";
import { checkLinks, readTree, removeTree } from "./workspace-tree.js";
import { FairSlots } from "./fair-slots.js";
import { storageFailure, unpack, type UnpackLimits } from "./workspace-unpack.js";

/**
 * @default 4 — how many times MAX_REPOSITORY_COMPILE_MS a stored workspace read again (after a
 * restart, or its hook set given up for memory) may take to compile its matchers: it met the budget
 * when uploaded, and a busier thread must not refuse it — but the thread that serves everyone is
 * still bounded (400 ms).
 */
export const STORED_COMPILE_FACTOR = 4;

/** @default 60 s — how long a stored workspace refused for anything but its links is refused before it is judged again */
export const REFUSAL_RETRY_MS = 60_000;

/**
 * @default 64 MiB — what the hook sets of stored workspaces may hold in memory, all tenants together,
 * as `residentBytes` reckons it. Past it, the tenant holding the most gives up its least recently
 * used, which is read again from its stored files when next named. (A tenant's hundred workspaces
 * of 4 MiB of hook files each would otherwise hold half a gigabyte for good.)
 */
export const MAX_RESIDENT_HOOK_BYTES = 64 * 1024 * 1024;

/**
 * @default 2 — stored workspaces read from disk at once (after a restart, or a hook set given up to
 * MAX_RESIDENT_HOOK_BYTES), all tenants together, tenants in turn (fair-slots.ts): each walks a tree
 * of up to `max_workspace_entries` names and parses up to 4 MiB of hook files.
 */
export const MAX_WORKSPACE_LOADS_AT_ONCE = 2;

/**
 * @default 256 — a tenant's requests (events, workspace reads) waiting at once for stored workspaces
 * to be read from disk; past it, 429. Each waiting request holds its connection and what it has
 * read, outside the run queue (an event answered by its deadline while it waits is still run once
 * its workspace is in): without a bound, a tenant would park them by the hundred thousand.
 */
export const TENANT_WORKSPACE_WAITERS = 256;

/**
 * What a hook set holds in memory, reckoned from what it is made of: each hook's strings twice (as
 * read and as kept) — its command, name, origin, environment (names and values), matcher and
 * condition as written, working folder, event name, image and mounts — and 2 KiB for its objects,
 * compiled matcher and summary line; each warning twice.
 */
export function residentBytes(hooks: HookSet): number {
  let bytes = 4096;
  for (const h of hooks.hooks) {
    let chars = h.command.length + h.name.length + h.origin.length + (h.matcher?.source.length ?? 0) + (h.condition?.source.length ?? 0);
    chars += (h.cwd?.length ?? 0) + (h.eventName?.length ?? 0) + (h.image?.length ?? 0) + (h.batch?.length ?? 0);
    for (const [k, v] of Object.entries(h.env)) chars += k.length + v.length;
    for (const m of h.mounts) chars += m.length;
    bytes += 2048 + 2 * chars;
  }
  for (const w of hooks.warnings) bytes += 2 * w.length;
  return bytes;
}

/** the longest workspace id */
const MAX_WORKSPACE_ID_CHARS = 128;
export const WORKSPACE_ID = new RegExp(`^[A-Za-z0-9][A-Za-z0-9._-]{0,${MAX_WORKSPACE_ID_CHARS - 1}}$`);

/** 400 `bad_workspace_id`, naming `field` (the path's id, the `workspace` query, the Hookbox-Workspace header), for an id no workspace can have. */
export function checkWorkspaceId(id: string, field: string): void {
  if (!WORKSPACE_ID.test(id)) throw new BadRequestError(`${field}: a workspace id is 1–128 letters, digits, '.', '_' or '-', not starting with a symbol`, field, "bad_workspace_id");
}

export interface WorkspaceStoreOptions extends UnpackLimits, RepositoryLimits {
  maxTimeoutMs: number;
  /** each tenant's quota; a tenant not listed has none */
  tenants: readonly (Quota & { name: string })[];
}

export interface WorkspaceInfo {
  id: string;
  digest: string;
  files: number;
  bytes: number;
  hooks: { name: string; event: string; format: string; origin: string }[];
  /** hooks loaded but not listed (past MAX_SUMMARY_HOOKS_JSON_CHARS) */
  hooks_unlisted?: number;
  warnings: string[];
}

interface Stored {
  dir: string;
  hooks: HookSet;
  info: WorkspaceInfo;
  /**
   * `info` as the JSON `GET /v1/workspaces/{id}` answers, made at the first such request and kept
   * while the workspace is held (counted with it): a summary of hundreds of KiB, written anew for
   * every request, held the thread that serves everyone. Events never make it.
   */
  infoJson: () => Uint8Array<ArrayBuffer>;
  /** whether this is still the stored workspace of its id (not replaced by an upload, nor deleted since) */
  current: () => boolean;
  /** this upload's own name (this load's, after a restart): what its files' cached archive is known by — a path, an inode and a ctime can all come back */
  version: string;
}

/** A stored workspace as the store keeps it: its hook set only while resident (MAX_RESIDENT_HOOK_BYTES). */
interface Entry {
  tenant: string;
  dir: string;
  about: Omit<WorkspaceInfo, "hooks" | "hooks_unlisted" | "warnings">;
  resident?: { hooks: HookSet; info: WorkspaceInfo; infoJson: () => Uint8Array<ArrayBuffer>; bytes: number };
  current: () => boolean;
  version: string;
}

const META_DIR = "_meta";
/** `charged`: what the workspace counts against the tenant's quota — its files in whole blocks, a block for each folder and link (workspace-unpack.ts). */
const MetaSchema = z.object({ digest: z.string(), files: z.number().int().nonnegative(), bytes: z.number().int().nonnegative(), charged: z.number().int().nonnegative().optional() });
type Meta = z.infer<typeof MetaSchema>;
const NO_QUOTA: Quota = { maxWorkspaceBytes: Number.POSITIVE_INFINITY, maxWorkspaces: Number.POSITIVE_INFINITY };

export class WorkspaceStore {
  /** every workspace read since the start, by key; its hook set while resident */
  private readonly cache = new Map<string, Entry>();
  /** the entries whose hook sets are held, least recently used first */
  private readonly resident = new Map<string, Entry>();
  private residentTotal = 0;
  private readonly loads = new FairSlots(MAX_WORKSPACE_LOADS_AT_ONCE);
  /** Per stored id: the tail of the swaps, deletes and loads of it, which run one at a time. */
  private readonly turns = new Map<string, Promise<unknown>>();
  /** Per stored id: the reading of it from disk under way, shared by every event that waits for it. */
  private readonly loading = new Map<string, Promise<Stored | undefined>>();
  /** Per tenant: its requests waiting for a reading (TENANT_WORKSPACE_WAITERS). */
  private readonly waiters = new Map<string, number>();
  private readonly usage = new Map<string, Promise<TenantUsage>>();
  /**
   * Per stored id: why it was refused when read from disk (after a restart), until an upload
   * replaces it or a delete removes it — every event naming it would otherwise walk and judge the
   * whole tree again, on the thread that serves everyone.
   */
  private readonly refused = new Map<string, { err: BadRequestError; until: number }>();

  constructor(
    private readonly root: string,
    private readonly options: WorkspaceStoreOptions,
    private readonly maxResidentBytes = MAX_RESIDENT_HOOK_BYTES,
    private readonly maxWaiters = TENANT_WORKSPACE_WAITERS,
  ) {}

  private tenantDir(tenant: string): string {
    return join(this.root, createHash("sha256").update(tenant).digest("hex").slice(0, 16));
  }

  private checkId(id: string): void {
    checkWorkspaceId(id, "id");
  }

  /** The tenant's usage, counted from `_meta/` at first use (after a restart). */
  private usageOf(base: string): Promise<TenantUsage> {
    let usage = this.usage.get(base);
    if (!usage) {
      usage = loadUsage(base);
      this.usage.set(base, usage);
      usage.catch(() => this.usage.delete(base));
    }
    return usage;
  }

  /** The repository's hooks; its TOML files wait their tenant's turn behind other tenants' (toml-off-thread.ts). */
  private async loadHooks(tenant: string, dir: string, deadline?: AbortSignal, stored = false): Promise<HookSet> {
    try {
      // A stored workspace met the compile time budget when it was uploaded: read again on a thread
      // busier than then, it has STORED_COMPILE_FACTOR times that — still a bound on the thread.
      const limits = stored ? { ...this.options, maxCompileMs: STORED_COMPILE_FACTOR * MAX_REPOSITORY_COMPILE_MS } : this.options;
      return await loadRepositoryHooks(dir, this.options.maxTimeoutMs, limits, tenant, deadline);
    } catch (err) {
      if (err instanceof ConfigError) throw new BadRequestError(`repository hook file ${err.message}`, err.file, "workspace_hooks_invalid");
      throw err;
    }
  }

  /**
   * Unpacks the archive into a new folder, checks its links, loads its hooks, then swaps it in.
   * `deadline`: once it aborts, before the swap, the upload ends with its reason — its staging folder
   * removed, what it reserved of the quota given back — however the archive or its hook files hold it.
   */
  async put(tenant: string, id: string, body: AsyncIterable<Uint8Array>, deadline?: AbortSignal): Promise<WorkspaceInfo> {
    this.checkId(id);
    const base = this.tenantDir(tenant);
    await mkdir(base, { recursive: true });
    const usage = await this.usageOf(base);
    const quota = this.options.tenants.find((t) => t.name === tenant) ?? NO_QUOTA;
    const upload = usage.begin(id, quota);
    // Unpacked under a name at least as long as any workspace id: a tree whose paths fit there fit
    // under its final name too (an entry name within the length limit here, past PATH_MAX there,
    // would make the stored tree impossible to walk or delete).
    const incoming = join(base, `.incoming-${randomUUID()}`.padEnd(MAX_WORKSPACE_ID_CHARS, "0"));
    try {
      await mkdir(incoming);
      const { digest, files, bytes, charged } = await unpack(body, incoming, this.options, (size) => usage.reserve(upload, size, quota), deadline);
      await chown(incoming, HOOK_UID, HOOK_GID);
      await chmod(incoming, 0o755);
      const hooks = await this.loadHooks(tenant, incoming, deadline);
      // The last moment the deadline ends it: a swap, once begun, is finished.
      deadline?.throwIfAborted();
      const final = join(base, id);
      // Marked with its id (`_meta/`): should the service end between the two renames below, the
      // next start puts it back (loadUsage) rather than lose the workspace. The folder's own name is
      // short: every path of the tree fits under it as under the staging name.
      const swap = randomUUID();
      const trash = join(base, `${REPLACED}${swap}`);
      const marker = join(base, META_DIR, `${REPLACING}${swap}.json`);
      // One swap of an id at a time: two uploads of one id (or an upload and a delete) interleaved
      // here could leave one tree on disk and the other's size counted against the quota.
      const info = await this.exclusive(`${base}/${id}`, async () => {
        // No meta while the folder changes: after a crash here, the size is counted again from disk.
        await rm(metaFile(base, id), { force: true });
        await writeAtomically(marker, JSON.stringify({ id }));
        const replaced = await rename(final, trash).then(() => true, () => false);
        try {
          await rename(incoming, final);
        } catch (err) {
          // The old tree goes back where it was: a failed upload changes nothing.
          if (replaced) await rename(trash, final).catch(() => undefined);
          throw err;
        } finally {
          await rm(marker, { force: true }).catch(() => undefined);
        }
        usage.commit(upload, bytes);
        const stored: WorkspaceInfo = { id, digest, files, bytes, ...summary(hooks), warnings: hooks.warnings };
        this.remember(tenant, `${base}/${id}`, final, hooks, stored);
        // The tree is in place and counted: a meta file that cannot be written (a full disk) is
        // counted again from the tree at the next start, never a tree and a count that disagree.
        await writeFile(metaFile(base, id), JSON.stringify({ digest, files, bytes, charged } satisfies Meta)).catch(() => undefined);
        return stored;
      });
      // Stored already: a clean-up that fails leaves a leftover the next start removes, not a failed upload.
      await removeTree(trash).catch(() => undefined);
      return info;
    } catch (err) {
      usage.abort(upload);
      await removeTree(incoming);
      // the staging folder's own making, handing over and swap: the data folder's trouble, said as unpacking says it
      throw (err instanceof HookboxError ? undefined : storageFailure(err as NodeJS.ErrnoException)) ?? err;
    }
  }

  /**
   * Every tenant's folder put right after a restart — leftovers of a crash removed, a workspace
   * being replaced put back — without waiting for that tenant's next upload.
   */
  async sweep(onError: (tenantFolder: string, err: unknown) => void = () => undefined): Promise<void> {
    const names = await readdir(this.root).catch(() => [] as string[]);
    for (const name of names) if (/^[0-9a-f]{16}$/.test(name)) await this.usageOf(join(this.root, name)).catch((err: unknown) => onError(name, err));
  }

  /** Runs `fn` after every earlier one of `key` has ended (however it ended). */
  private async exclusive<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const run = (this.turns.get(key) ?? Promise.resolve()).then(fn);
    const tail = run.catch(() => undefined);
    this.turns.set(key, tail);
    try {
      return await run;
    } finally {
      if (this.turns.get(key) === tail) this.turns.delete(key);
    }
  }

  async get(tenant: string, id: string): Promise<Stored | undefined> {
    this.checkId(id);
    const base = this.tenantDir(tenant);
    const key = `${base}/${id}`;
    const hit = this.held(key);
    if (hit) return hit;
    const refused = this.refused.get(key);
    if (refused && refused.until > Date.now()) throw refused.err;
    const waiting = this.waiters.get(tenant) ?? 0;
    if (waiting >= this.maxWaiters) throw new OverloadedError(5, `this tenant already has ${waiting} requests waiting for their workspaces to be read from disk (TENANT_WORKSPACE_WAITERS: ${this.maxWaiters}); retry when they are in`);
    // Events naming one stored workspace after a restart share one reading of it, which waits for
    // one of the few slots every tenant's readings share.
    let loading = this.loading.get(key);
    if (!loading) {
      loading = this.exclusive(key, () => this.inSlot(tenant, () => this.load(tenant, base, id, key))).finally(() => this.loading.delete(key));
      this.loading.set(key, loading);
    }
    this.waiters.set(tenant, waiting + 1);
    try {
      return await loading;
    } finally {
      const left = (this.waiters.get(tenant) ?? 1) - 1;
      if (left > 0) this.waiters.set(tenant, left);
      else this.waiters.delete(tenant);
    }
  }

  /** Whether `get` has the workspace at hand (its hook set held): no reading from disk to wait for. */
  holds(tenant: string, id: string): boolean {
    return this.cache.get(`${this.tenantDir(tenant)}/${id}`)?.resident !== undefined;
  }

  /** What the hook sets held in memory take, as `residentBytes` reckons them (at most MAX_RESIDENT_HOOK_BYTES, but for the one just read). */
  get heldBytes(): number {
    return this.residentTotal;
  }

  /** `fn` in one of MAX_WORKSPACE_LOADS_AT_ONCE slots, tenants in turn. */
  private inSlot<T>(tenant: string, fn: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => void this.loads.enter(tenant, () => fn().then(resolve, reject)));
  }

  /** The stored workspace of `key` with its hook set, when that is held; the most recently used then. */
  private held(key: string): Stored | undefined {
    const entry = this.cache.get(key);
    if (!entry?.resident) return undefined;
    this.resident.delete(key);
    this.resident.set(key, entry);
    return { dir: entry.dir, hooks: entry.resident.hooks, info: entry.resident.info, infoJson: entry.resident.infoJson, current: entry.current, version: entry.version };
  }

  private async load(tenant: string, base: string, id: string, key: string): Promise<Stored | undefined> {
    const hit = this.held(key);
    if (hit) return hit;
    try {
      // Judged when it was stored, or read since the start: only its hook files are read again.
      const known = this.cache.get(key);
      if (known) {
        const hooks = await this.loadHooks(tenant, known.dir, undefined, true);
        return this.keep(key, known, hooks, { ...known.about, ...summary(hooks), warnings: hooks.warnings });
      }
      return await this.judge(tenant, base, id, key);
    } catch (err) {
      // Judged and refused: a link that leads out stays refused until the workspace is replaced or
      // removed; any other refusal (a hook file that could not be read — the disk, the file table —
      // as much as one that does not parse) is judged again after REFUSAL_RETRY_MS.
      if (err instanceof BadRequestError) this.refused.set(key, { err, until: err.code === "archive_refused" ? Infinity : Date.now() + REFUSAL_RETRY_MS });
      throw err;
    }
  }

  private async judge(tenant: string, base: string, id: string, key: string): Promise<Stored | undefined> {
    // The tenant's folder as the last run left it, put right first (a workspace being replaced when it ended is put back).
    await this.usageOf(base).catch(() => undefined);
    const dir = join(base, id);
    if (!(await lstat(dir).catch(() => undefined))?.isDirectory()) return undefined;
    // After a restart: the stored tree and hook files are judged again, as an upload is.
    const tree = await readTree(dir);
    await checkLinks(tree, dir);
    const hooks = await this.loadHooks(tenant, dir, undefined, true);
    const digest = (await readMeta(base, id))?.digest ?? (await readFile(join(base, `${id}.digest`), "utf8").catch(() => ""));
    return this.remember(tenant, key, dir, hooks, { id, digest, files: tree.files, bytes: tree.bytes, ...summary(hooks), warnings: hooks.warnings });
  }

  /** The workspace of `key` as stored now; it stays current until an upload replaces it or a delete removes it. */
  private remember(tenant: string, key: string, dir: string, hooks: HookSet, info: WorkspaceInfo): Stored {
    this.forget(key);
    const { hooks: _summary, hooks_unlisted: _unlisted, warnings: _warnings, ...about } = info;
    const entry: Entry = { tenant, dir, about, current: () => this.cache.get(key) === entry, version: randomUUID() };
    this.cache.set(key, entry);
    this.refused.delete(key);
    return this.keep(key, entry, hooks, info);
  }

  /** Holds `entry`'s hook set, then gives up the least recently used of the tenant holding the most while past the budget. */
  private keep(key: string, entry: Entry, hooks: HookSet, info: WorkspaceInfo): Stored {
    let json: Uint8Array<ArrayBuffer> | undefined;
    const infoJson = () => {
      if (json) return json;
      json = new TextEncoder().encode(JSON.stringify(info));
      // counted with the hook set it belongs to, while that is held
      if (entry.resident?.infoJson === infoJson) {
        entry.resident.bytes += json.byteLength;
        this.residentTotal += json.byteLength;
      }
      return json;
    };
    const stored: Stored = { dir: entry.dir, hooks, info, infoJson, current: entry.current, version: entry.version };
    // Replaced or removed while its hooks were read: the event that asked runs it as it was, unheld.
    if (this.cache.get(key) !== entry) return stored;
    this.release(key);
    const bytes = residentBytes(hooks);
    entry.resident = { hooks, info, infoJson, bytes };
    this.resident.set(key, entry);
    this.residentTotal += bytes;
    while (this.residentTotal > this.maxResidentBytes) {
      const victim = this.victim(key);
      if (victim === undefined) break;
      this.release(victim);
    }
    return stored;
  }

  /**
   * Whose hook set goes when the held ones are past the budget: the least recently used of the
   * tenant holding the most (counting the one just read, which itself stays: it is being used).
   */
  private victim(keep: string): string | undefined {
    const held = new Map<string, number>();
    for (const e of this.resident.values()) held.set(e.tenant, (held.get(e.tenant) ?? 0) + e.resident!.bytes);
    for (const [tenant] of [...held].sort((a, b) => b[1] - a[1])) {
      for (const [k, e] of this.resident) if (k !== keep && e.tenant === tenant) return k;
    }
    return undefined;
  }

  /** Gives up `key`'s hook set, if held (the entry stays: its next event reads the hook files again). */
  private release(key: string): void {
    const entry = this.resident.get(key);
    if (!entry?.resident) return;
    this.resident.delete(key);
    this.residentTotal -= entry.resident.bytes;
    delete entry.resident;
  }

  /** `key` no longer stored as it was (replaced or removed). */
  private forget(key: string): void {
    this.release(key);
    this.cache.delete(key);
  }

  async delete(tenant: string, id: string): Promise<boolean> {
    this.checkId(id);
    const base = this.tenantDir(tenant);
    const dir = join(base, id);
    const usage = await this.usageOf(base);
    // Looked at inside its turn only: between an upload's two renames the folder is briefly absent.
    const trash = await this.exclusive(`${base}/${id}`, async () => {
      if (!(await lstat(dir).catch(() => undefined))?.isDirectory()) return undefined;
      this.forget(`${base}/${id}`);
      this.refused.delete(`${base}/${id}`);
      // Out of the way at once, then removed: a crash half-way leaves a `.trash-` folder (removed
      // when the tenant's workspaces are next counted), never a partial workspace under its id.
      const moved = join(base, `.trash-${randomUUID()}`);
      await rename(dir, moved);
      await rm(metaFile(base, id), { force: true });
      usage.remove(id);
      // An older hookbox's digest file; only a file of that name (workspace "x.digest" is a folder).
      const legacy = join(base, `${id}.digest`);
      if ((await lstat(legacy).catch(() => undefined))?.isFile()) await rm(legacy, { force: true });
      return moved;
    });
    if (trash === undefined) return false;
    // Removed outside the id's turn: an upload of the same id waits for the rename, not for the tree's removal.
    await removeTree(trash);
    return true;
  }
}

/**
 * @default 256 Ki — characters the hooks a workspace's summary lists come to, as JSON writes them (a
 * control character of a hook's name, or of its file's name, is six): a thousand hooks named by a
 * file name of them would be megabytes in every answer that lists them; past it, `hooks_unlisted`
 * counts the rest.
 */
export const MAX_SUMMARY_HOOKS_JSON_CHARS = 256 * 1024;

function summary(hooks: HookSet): Pick<WorkspaceInfo, "hooks" | "hooks_unlisted"> {
  const listed = withinJson(hooks.hooks, MAX_SUMMARY_HOOKS_JSON_CHARS, (h) => ({ name: h.name, event: h.point, format: h.format, origin: h.origin }));
  const unlisted = hooks.hooks.length - listed.length;
  return unlisted > 0 ? { hooks: listed, hooks_unlisted: unlisted } : { hooks: listed };
}

const metaFile = (base: string, id: string) => join(base, META_DIR, `${id}.json`);

async function readMeta(base: string, id: string): Promise<Meta | undefined> {
  const text = await readFile(metaFile(base, id), "utf8").catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    const parsed = MetaSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** A workspace an upload is replacing, while it does: `.replaced-<uuid>`, its id in `_meta/replacing-<uuid>.json`. */
const REPLACED = ".replaced-";
const REPLACING = "replacing-";
const SWAP_ID = /^[0-9a-f-]{36}$/;

/** Whether `text` is a workspace's meta file (a swap marker names an id instead). */
function isMeta(text: string): boolean {
  try {
    return MetaSchema.safeParse(JSON.parse(text)).success;
  } catch {
    return false;
  }
}

/** The id a swap marker names, or undefined when its text is not the JSON of one. */
function markedId(text: string): unknown {
  try {
    return (JSON.parse(text) as { id?: unknown } | null)?.id;
  } catch {
    return undefined;
  }
}

/** `text` written to `file` whole or not at all: to a temporary name beside it, then renamed over it. */
async function writeAtomically(file: string, text: string): Promise<void> {
  const temporary = `${file}.tmp`;
  try {
    await writeFile(temporary, text);
    await rename(temporary, file);
  } catch (err) {
    await rm(temporary, { force: true }).catch(() => undefined);
    throw err;
  }
}

/**
 * Each stored workspace's size, from `_meta/` or, where that is missing, from disk. Leftovers of a
 * crash are removed — but a workspace an upload was replacing when the service ended, whose id holds
 * nothing, is put back under it.
 */
async function loadUsage(base: string): Promise<TenantUsage> {
  await mkdir(join(base, META_DIR), { recursive: true });
  const stored: [string, number][] = [];
  // Swaps a stop cut short: the replaced workspace goes back under its id where that holds nothing.
  for (const name of await readdir(join(base, META_DIR))) {
    if (!name.startsWith(REPLACING)) continue;
    // A marker a stop left under its temporary name (writeAtomically) never named a swap under way.
    if (!name.endsWith(".json")) {
      await rm(join(base, META_DIR, name), { force: true });
      continue;
    }
    const swap = name.slice(REPLACING.length, -".json".length);
    const text = await readFile(join(base, META_DIR, name), "utf8").catch(() => undefined);
    // The meta of a workspace whose id starts as a swap's marker does (`replacing-…`): its own, kept.
    if (text !== undefined && isMeta(text) && WORKSPACE_ID.test(name.slice(0, -".json".length))) continue;
    // Nor a marker (those are named by a swap's uuid) nor a meta: a leftover, removed.
    if (!SWAP_ID.test(swap)) {
      await rm(join(base, META_DIR, name), { force: true });
      continue;
    }
    // One that does not read (empty or half-written, by an older hookbox) is no marker: removed, as a leftover is.
    const id = text === undefined ? undefined : markedId(text);
    const aside = join(base, `${REPLACED}${swap}`);
    if (typeof id === "string" && WORKSPACE_ID.test(id) && (await lstat(aside).catch(() => undefined))?.isDirectory() && !(await lstat(join(base, id)).catch(() => undefined)))
      await rename(aside, join(base, id));
    await rm(join(base, META_DIR, name), { force: true });
  }
  for (const entry of await readdir(base, { withFileTypes: true })) {
    if (entry.name.startsWith(".incoming-") || entry.name.startsWith(".trash-") || entry.name.startsWith(REPLACED)) {
      await removeTree(join(base, entry.name));
      continue;
    }
    if (!entry.isDirectory() || !WORKSPACE_ID.test(entry.name)) continue;
    let meta = await readMeta(base, entry.name);
    if (!meta) {
      const tree = await readTree(join(base, entry.name));
      const digest = await readFile(join(base, `${entry.name}.digest`), "utf8").catch(() => "");
      meta = { digest, files: tree.files, bytes: tree.bytes, charged: tree.charged };
      await writeFile(metaFile(base, entry.name), JSON.stringify(meta));
    }
    stored.push([entry.name, meta.charged ?? meta.bytes]);
  }
  return new TenantUsage(stored);
}
