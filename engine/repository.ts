/**
 * @module A repository's own hooks, from an uploaded workspace (SERVICE.md §2): `.github/hooks/*.json`
 * (Copilot), `.copilot-shell/config.toml` (cosh), `.claude/settings.json` (Claude Code). They always
 * run in containers. A workspace is hostile input: each file is read only as a regular file inside
 * it, never through a link, and at most `maxHookFileBytes` of it; the service's loader yields to
 * the event loop between files.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readSync, type Stats } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "./errors.js";
import { loadClaudeSettings } from "./formats/claude-settings.js";
import { loadCoshTable } from "./formats/cosh-toml.js";
import { loadCopilotFile } from "./formats/copilot-json.js";
import { readJson, readToml, type LoadContext } from "./formats/shared.js";
import { mergeHookSets, type HookSet } from "./hooks.js";

export interface RepositoryLimits {
  /** largest hook file read; @default 1 MiB ([server] max_hook_file_bytes) */
  maxHookFileBytes: number;
  /** most hooks all of a workspace's files may declare; @default 1000 ([server] max_repository_hooks) */
  maxHooks: number;
}

export const DEFAULT_REPOSITORY_LIMITS: RepositoryLimits = { maxHookFileBytes: 1024 * 1024, maxHooks: 1000 };

const COPILOT_DIR = ".github/hooks";
const COSH_FILE = ".copilot-shell/config.toml";
const CLAUDE_FILE = ".claude/settings.json";

/** For the service: one file at a time, the event loop served between files. */
export async function loadRepositoryHooks(dir: string, maxTimeoutMs: number, limits: RepositoryLimits = DEFAULT_REPOSITORY_LIMITS): Promise<HookSet> {
  const steps = loadSteps(dir, maxTimeoutMs, limits);
  for (let step = steps.next(); ; step = steps.next()) {
    if (step.done) return step.value;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** For the CLI (`hookbox check --workspace`): the same reads, at once. */
export function loadRepositoryHooksSync(dir: string, maxTimeoutMs: number, limits: RepositoryLimits = DEFAULT_REPOSITORY_LIMITS): HookSet {
  const steps = loadSteps(dir, maxTimeoutMs, limits);
  for (let step = steps.next(); ; step = steps.next()) if (step.done) return step.value;
}

/** Loads the hook files one by one, yielding after each. */
function* loadSteps(dir: string, maxTimeoutMs: number, limits: RepositoryLimits): Generator<void, HookSet, void> {
  const ctx: LoadContext = { source: "repository", maxTimeoutMs };
  const sets: HookSet[] = [];
  let hooks = 0;
  const add = (file: string, set: HookSet) => {
    hooks += set.hooks.length;
    if (hooks > limits.maxHooks) throw new ConfigError(file, `the repository declares more than ${limits.maxHooks} hooks (server.max_repository_hooks)`);
    sets.push(set);
  };
  try {
    for (const f of listDir(dir, COPILOT_DIR).filter((n) => n.endsWith(".json")).sort()) {
      const name = `${COPILOT_DIR}/${f}`;
      const text = readHookFile(dir, name, limits.maxHookFileBytes);
      if (text !== undefined) add(name, loadCopilotFile(readJson(name, text), ctx));
      yield;
    }
    const cosh = readHookFile(dir, COSH_FILE, limits.maxHookFileBytes);
    if (cosh !== undefined) {
      const parsed = readToml(COSH_FILE, cosh);
      // A cosh config holds more than hooks; only [hooks] matters here.
      const table = (parsed.value as Record<string, unknown>).hooks;
      add(COSH_FILE, loadCoshTable(parsed, ["hooks"], table, ctx, ["enabled", "parallel", "sequential"]));
      yield;
    }
    const claude = readHookFile(dir, CLAUDE_FILE, limits.maxHookFileBytes);
    if (claude !== undefined) add(CLAUDE_FILE, loadClaudeSettings(readJson(CLAUDE_FILE, claude), ctx));
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(".", `cannot read the repository's hook files: ${(err as Error).message}`);
  }
  return mergeHookSets(sets);
}

const lstatOrNot = (path: string): Stats | undefined => lstatSync(path, { throwIfNoEntry: false });

/**
 * Walks `rel` from the workspace root with lstat, one component at a time: undefined when it is not
 * there, a ConfigError when a component is a link (or the last one is not a regular file).
 */
function walk(root: string, rel: string, last: "file" | "directory"): string | undefined {
  const parts = rel.split("/");
  let at = root;
  for (const [i, part] of parts.entries()) {
    at = join(at, part);
    const st = lstatOrNot(at);
    if (!st) return undefined;
    const here = parts.slice(0, i + 1).join("/");
    if (st.isSymbolicLink()) throw new ConfigError(rel, `${here} is a symbolic link: repository hook files are read only as regular files, never through a link`);
    if (i < parts.length - 1 || last === "directory") {
      if (!st.isDirectory()) return undefined;
    } else if (!st.isFile()) {
      throw new ConfigError(rel, "is not a regular file");
    }
  }
  return at;
}

function listDir(root: string, rel: string): string[] {
  const at = walk(root, rel, "directory");
  return at === undefined ? [] : readdirSync(at);
}

/** A hook file's text: a regular file inside the workspace, opened without following a link, at most `maxBytes`. */
function readHookFile(root: string, rel: string, maxBytes: number): string | undefined {
  const path = walk(root, rel, "file");
  if (path === undefined) return undefined;
  const tooLarge = () => new ConfigError(rel, `the file is larger than ${maxBytes} bytes (server.max_hook_file_bytes)`);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    throw new ConfigError(rel, `cannot read: ${(err as Error).message}`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new ConfigError(rel, "is not a regular file");
    if (st.size > maxBytes) throw tooLarge();
    // One byte more than allowed: a file that grew since fstat is still caught.
    const buf = Buffer.alloc(Math.min(st.size, maxBytes) + 1);
    let n = 0;
    for (let got = 1; got > 0 && n < buf.length; n += got) got = readSync(fd, buf, n, buf.length - n, null);
    if (n > maxBytes) throw tooLarge();
    return buf.subarray(0, n).toString("utf8");
  } finally {
    closeSync(fd);
  }
}
