/**
 * @module Uploaded workspaces (SERVICE.md §3): a tar or tar.gz of (part of) a repository, unpacked
 * safely under `data_dir`, one folder per tenant. Refused with a clear error, nothing written
 * outside the workspace: absolute paths, `..`, links that point out, hard links, devices,
 * duplicate entries, too many entries, too many bytes. Files belong to the hooks' uid, so a hook
 * may write in its copy-on-write view; the stored copy is never written by a hook.
 */
import { createHash, randomUUID } from "node:crypto";
import { createWriteStream } from "node:fs";
import { chmod, chown, lchown, mkdir, readdir, readFile, realpath, rename, rm, stat, symlink, writeFile } from "node:fs/promises";
import { join, posix, relative, resolve, sep } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { extract, type Header } from "tar-stream";
import { BadRequestError, ConfigError, HookboxError } from "./errors.js";
import type { HookSet } from "./hooks.js";
import { HOOK_GID, HOOK_UID } from "./names.js";
import { loadRepositoryHooks } from "./repository.js";

export const WORKSPACE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export interface WorkspaceLimits {
  /** @default 10 000 */
  maxEntries: number;
  /** unpacked, all files together; @default 256 MiB */
  maxUnpackedBytes: number;
}

export interface WorkspaceInfo {
  id: string;
  digest: string;
  files: number;
  bytes: number;
  hooks: { name: string; event: string; format: string; origin: string }[];
  warnings: string[];
}

interface Stored {
  dir: string;
  hooks: HookSet;
  info: WorkspaceInfo;
}

export class WorkspaceStore {
  private readonly cache = new Map<string, Stored>();

  constructor(
    private readonly root: string,
    private readonly limits: WorkspaceLimits,
    private readonly maxTimeoutMs: number,
  ) {}

  private tenantDir(tenant: string): string {
    return join(this.root, createHash("sha256").update(tenant).digest("hex").slice(0, 16));
  }

  private checkId(id: string): void {
    if (!WORKSPACE_ID.test(id)) throw new BadRequestError("workspace id: 1–128 letters, digits, '.', '_' or '-', not starting with a symbol", "id", "bad_workspace_id");
  }

  /** Unpacks the archive into a new folder, loads its hooks, then swaps it in. */
  async put(tenant: string, id: string, body: AsyncIterable<Uint8Array>): Promise<WorkspaceInfo> {
    this.checkId(id);
    const base = this.tenantDir(tenant);
    await mkdir(base, { recursive: true });
    const incoming = join(base, `.incoming-${randomUUID()}`);
    await mkdir(incoming);
    try {
      const { digest, files, bytes } = await unpack(body, incoming, this.limits);
      await chown(incoming, HOOK_UID, HOOK_GID);
      await chmod(incoming, 0o755);
      let hooks: HookSet;
      try {
        hooks = loadRepositoryHooks(incoming, this.maxTimeoutMs);
      } catch (err) {
        if (err instanceof ConfigError) throw new BadRequestError(`repository hook file ${err.message}`, err.file, "workspace_hooks_invalid");
        throw err;
      }
      const final = join(base, id);
      const trash = join(base, `.trash-${randomUUID()}`);
      await rename(final, trash).catch(() => undefined);
      await rename(incoming, final);
      await rm(trash, { recursive: true, force: true });
      // Beside the workspace, not in it: hooks never see it.
      await writeFile(join(base, `${id}.digest`), digest);
      const info: WorkspaceInfo = { id, digest, files, bytes, hooks: summary(hooks), warnings: hooks.warnings };
      this.cache.set(`${base}/${id}`, { dir: final, hooks, info });
      return info;
    } catch (err) {
      await rm(incoming, { recursive: true, force: true });
      throw err;
    }
  }

  async get(tenant: string, id: string): Promise<Stored | undefined> {
    if (!WORKSPACE_ID.test(id)) return undefined;
    const base = this.tenantDir(tenant);
    const key = `${base}/${id}`;
    const hit = this.cache.get(key);
    if (hit) return hit;
    const dir = join(base, id);
    if (!(await stat(dir).catch(() => undefined))?.isDirectory()) return undefined;
    // After a restart: read the stored hook files again (they were valid when uploaded).
    const hooks = loadRepositoryHooks(dir, this.maxTimeoutMs);
    const counted = await count(dir);
    const digest = await readFile(join(base, `${id}.digest`), "utf8").catch(() => "");
    const stored = { dir, hooks, info: { id, digest, ...counted, hooks: summary(hooks), warnings: hooks.warnings } };
    this.cache.set(key, stored);
    return stored;
  }

  async delete(tenant: string, id: string): Promise<boolean> {
    const stored = await this.get(tenant, id);
    if (!stored) return false;
    this.cache.delete(`${this.tenantDir(tenant)}/${id}`);
    await rm(stored.dir, { recursive: true, force: true });
    await rm(join(this.tenantDir(tenant), `${id}.digest`), { force: true });
    return true;
  }
}

function summary(hooks: HookSet): WorkspaceInfo["hooks"] {
  return hooks.hooks.map((h) => ({ name: h.name, event: h.point, format: h.format, origin: h.origin }));
}

async function count(dir: string): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let bytes = 0;
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    files++;
    bytes += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return { files, bytes };
}

const refuse = (name: string, why: string) => new BadRequestError(`archive entry ${JSON.stringify(name)}: ${why}`, "body", "archive_refused");

/** A path inside the archive, normalised; refused when absolute or when it climbs out. */
function entryPath(name: string): string {
  if (name.includes("\0")) throw refuse(name, "NUL in the name");
  if (posix.isAbsolute(name) || /^[A-Za-z]:/.test(name)) throw refuse(name, "absolute paths are not accepted");
  if (name.split("/").includes("..")) throw refuse(name, "'..' is not accepted");
  const normal = posix.normalize(name).replace(/\/+$/, "");
  if (normal === "." || normal === "") return "";
  return normal.replace(/^\.\//, "");
}

function inside(root: string, path: string): boolean {
  return path === root || path.startsWith(root + sep);
}

async function unpack(body: AsyncIterable<Uint8Array>, dest: string, limits: WorkspaceLimits): Promise<{ digest: string; files: number; bytes: number }> {
  const hash = createHash("sha256");
  const rootReal = await realpath(dest);
  const seen = new Set<string>();
  let files = 0;
  let bytes = 0;
  let entries = 0;

  // gzip or plain tar, told apart by the first two bytes; every byte goes through the digest.
  const iter = body[Symbol.asyncIterator]();
  const first = await iter.next();
  const gzip = !first.done && first.value[0] === 0x1f && first.value[1] === 0x8b;
  const chunks = (async function* () {
    for (let n = first; !n.done; n = await iter.next()) {
      hash.update(n.value);
      yield n.value;
    }
  })();

  const ex = extract();
  ex.on("entry", (header: Header, stream, next) => {
    // A refused archive destroys the extractor, which errors the entry's stream: the error is ours, already reported.
    stream.on("error", () => undefined);
    void (async () => {
      entries++;
      if (entries > limits.maxEntries) throw new BadRequestError(`the archive has more than ${limits.maxEntries} entries`, "body", "archive_too_many_entries");
      const path = entryPath(header.name);
      if (path === "") return stream.resume();
      if (seen.has(path)) throw refuse(header.name, "duplicate entry");
      seen.add(path);
      const parent = await mkdirInside(rootReal, posix.dirname(path));
      const target = join(parent, posix.basename(path));
      switch (header.type) {
        case "directory":
          await mkdir(target, { recursive: true });
          await chown(target, HOOK_UID, HOOK_GID);
          await chmod(target, 0o755);
          return stream.resume();
        case "file":
        case "contiguous-file": {
          const size = header.size ?? 0;
          if (bytes + size > limits.maxUnpackedBytes) throw new BadRequestError(`the archive unpacks to more than ${limits.maxUnpackedBytes} bytes`, "body", "archive_too_large");
          bytes += size;
          files++;
          await pipeline(stream, createWriteStream(target, { flags: "wx", mode: 0o644 }));
          await chown(target, HOOK_UID, HOOK_GID);
          await chmod(target, (header.mode ?? 0o644) & 0o111 ? 0o755 : 0o644);
          return;
        }
        case "symlink": {
          const link = header.linkname ?? "";
          if (posix.isAbsolute(link)) throw refuse(header.name, `link to an absolute path (${link}) is not accepted`);
          if (!inside(rootReal, resolve(parent, link))) throw refuse(header.name, `link points outside the workspace (${link})`);
          await symlink(link, target);
          await lchown(target, HOOK_UID, HOOK_GID);
          return stream.resume();
        }
        case "link":
          throw refuse(header.name, "hard links are not accepted");
        default:
          throw refuse(header.name, `${header.type ?? "unknown"} entries are not accepted`);
      }
    })().then(
      () => next(),
      (err: unknown) => ex.destroy(err instanceof Error ? err : new Error(String(err))),
    );
  });

  try {
    if (gzip) await pipeline(Readable.from(chunks), createGunzip(), ex);
    else await pipeline(Readable.from(chunks), ex);
  } catch (err) {
    if (err instanceof HookboxError) throw err;
    throw new BadRequestError(`the body is not a tar or tar.gz archive: ${(err as Error).message}`, "body", "archive_invalid");
  }
  return { digest: `sha256:${hash.digest("hex")}`, files, bytes };
}

/** Creates `rel` under the root; refuses when, through links, it would land outside. */
async function mkdirInside(rootReal: string, rel: string): Promise<string> {
  let at = rootReal;
  if (rel === "." || rel === "") return at;
  for (const part of rel.split("/")) {
    const next = join(at, part);
    const st = await stat(next).catch(() => undefined);
    if (!st) {
      await mkdir(next);
      await chown(next, HOOK_UID, HOOK_GID);
      await chmod(next, 0o755);
    } else if (!st.isDirectory()) {
      throw refuse(rel, `${relative(rootReal, next)} is not a directory`);
    }
    at = await realpath(next);
    if (!inside(rootReal, at)) throw refuse(rel, "a link on its path points outside the workspace");
  }
  return at;
}

