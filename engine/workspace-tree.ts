/**
 * @module What an unpacked workspace physically holds, read back from disk without following a
 * link: its files and bytes, and a verdict on each symbolic link. A link is refused when its target
 * passes through another link (a chain of links that each look harmless can reach any host path)
 * or resolves outside the workspace. Decided once the whole archive is unpacked — its entries may
 * come in any order — and again when a stored workspace is loaded after a restart.
 */
import { lstat, readdir, readlink, rmdir, unlink } from "node:fs/promises";
import { join } from "node:path";
import { BadRequestError } from "./errors.js";
import { afterIO } from "./turns.js";

/** what a folder or a link costs against the tenant's quota: one filesystem block, as `du` would count it */
export const FOLDER_BYTES = 4096;
/**
 * What a file costs against the tenant's quota: its bytes in whole blocks, and at least one (a
 * thousand one-byte files take a thousand blocks and inodes, not a thousand bytes).
 */
export const blocksOf = (bytes: number): number => Math.max(1, Math.ceil(bytes / FOLDER_BYTES)) * FOLDER_BYTES;

interface Dir {
  kind: "dir";
  name: string;
  parent: Dir | undefined;
  /** levels below the workspace root */
  depth: number;
  children: Map<string, Node>;
}
/** A link as read: its target is read again when it is judged, one at a time (a tree of 10,000 links of 4 KiB targets would hold 40 MB). */
interface Link {
  kind: "link";
  name: string;
  parent: Dir;
}
type Node = Dir | Link | { kind: "file" | "other"; name: string; parent: Dir };

export interface Tree {
  files: number;
  /** regular files' bytes together */
  bytes: number;
  /** what it counts against the tenant's quota, as an upload charges it: files in whole blocks, a block for each folder and link */
  charged: number;
  links: Link[];
}

/**
 * Entries removeTree unlinks at once: a few of libuv's four threads, which the audit log, the
 * traces and every upload share.
 */
export const REMOVE_AT_ONCE = 4;

const gone = (err: unknown) => {
  if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
};

/**
 * Removes the tree at `root` (nothing when it is not there), never following a link, at most
 * REMOVE_AT_ONCE entries at a time. Node's recursive `rm` starts an unlink for every entry of a
 * folder at once: a stored workspace of ten thousand files fills libuv's threads, and their ten
 * thousand completions then hold the loop that serves every tenant for a tenth of a second.
 */
export async function removeTree(root: string): Promise<void> {
  const st = await lstat(root).catch(gone);
  if (!st) return;
  if (!st.isDirectory()) return unlink(root).catch(gone);
  const folders: string[] = [];
  const pending = [root];
  for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
    const entries = await readdir(dir, { withFileTypes: true }).catch(gone);
    if (!entries) continue;
    folders.push(dir);
    const files: string[] = [];
    for (const entry of entries) (entry.isDirectory() ? pending : files).push(join(dir, entry.name));
    for (let i = 0; i < files.length; i += REMOVE_AT_ONCE) await Promise.all(files.slice(i, i + REMOVE_AT_ONCE).map((f) => unlink(f).catch(gone)));
  }
  // the deepest first: each is empty by then
  for (const dir of folders.reverse()) await rmdir(dir).catch(gone);
}

/** Links checked between two turns of the event loop */
const LINKS_PER_TURN = 256;

/** Reads the tree under `root` with readdir and lstat: no link is followed. */
export async function readTree(root: string): Promise<Tree> {
  const tree: Tree = { files: 0, bytes: 0, charged: 0, links: [] };
  const top: Dir = { kind: "dir", name: "", parent: undefined, depth: 0, children: new Map() };
  const pending: [Dir, string][] = [[top, root]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [dir, path] = next;
    for (const entry of await readdir(path, { withFileTypes: true })) {
      const at = join(path, entry.name);
      let node: Node;
      if (entry.isDirectory()) {
        node = { kind: "dir", name: entry.name, parent: dir, depth: dir.depth + 1, children: new Map() };
        tree.charged += FOLDER_BYTES;
        pending.push([node, at]);
      } else if (entry.isSymbolicLink()) {
        node = { kind: "link", name: entry.name, parent: dir };
        tree.charged += FOLDER_BYTES;
        tree.links.push(node);
      } else if (entry.isFile()) {
        node = { kind: "file", name: entry.name, parent: dir };
        tree.files++;
        const size = (await lstat(at)).size;
        tree.bytes += size;
        tree.charged += blocksOf(size);
      } else {
        node = { kind: "other", name: entry.name, parent: dir };
      }
      dir.children.set(entry.name, node);
    }
  }
  return tree;
}

/** Refuses (400 archive_refused, naming the link) the first link of the tree read from `root` that chains or leads out. */
export async function checkLinks(tree: Tree, root: string): Promise<void> {
  for (const [i, link] of tree.links.entries()) {
    const why = judge(link, await readlink(join(root, pathOf(link))));
    if (why) throw new BadRequestError(`archive entry ${JSON.stringify(pathOf(link))}: ${why}`, "body", "archive_refused");
    if (i % LINKS_PER_TURN === LINKS_PER_TURN - 1) await afterIO();
  }
}

/** Resolves the target one component at a time over the tree read from disk; the reason to refuse, if any. */
function judge(link: Link, target: string): string | undefined {
  if (target.startsWith("/")) return `link to an absolute path (${target}) is not accepted`;
  // `at` leaves the known tree at a missing name or a file: from there the kernel would fail to
  // resolve it, and only the depth is followed, to refuse a target that climbs out all the same.
  let at: Dir | undefined = link.parent;
  let depth = link.parent.depth;
  for (const part of target.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (depth === 0) return `link points outside the workspace (${target})`;
      depth--;
      at = at?.parent;
      continue;
    }
    depth++;
    const child: Node | undefined = at?.children.get(part);
    if (child?.kind === "link") return `link passes through another link (${pathOf(child)}): a link may point only at a file or folder that is not a link (${target})`;
    at = child?.kind === "dir" ? child : undefined;
  }
  return undefined;
}

function pathOf(node: Node): string {
  const parts: string[] = [];
  for (let n: Node | undefined = node; n && n.parent; n = n.parent) parts.push(n.name);
  return parts.reverse().join("/");
}
