/**
 * @module A repository's own hooks, from an uploaded workspace (SERVICE.md §2): every file the
 * format registry lists (formats/registry.ts: `.github/hooks/*.json`, `.github/copilot/settings*.json`,
 * `.copilot-shell/config.toml`, `.claude/settings.json`, `.cursor/hooks.json`, `.codex/hooks.json`).
 * They always run in containers. The files are read tolerantly (SERVICE.md §8: an unknown key,
 * event or hook type is a warning; a file that cannot be read is skipped with a warning, the others
 * still load; only a bound on all of them together refuses the upload). A workspace is hostile input: each file is read only as a
 * regular file inside it, never through a link, and at most `maxHookFileBytes` of it; the service's
 * loader parses TOML in a worker thread (formats/toml-off-thread.ts) and yields to the event loop
 * between files.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readSync, type Stats } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "./errors.js";
import { REPOSITORY_SOURCES } from "./formats/registry.js";
import type { Format } from "./events.js";
import { clip, LOCATED_MEMBERS, readJson, SKIPPED_HOOKS_FACTOR, readToml, warn, withWarningBudget, WorkspaceLimitError, type LoadContext, type ParsedFile, type WarningBudget } from "./formats/shared.js";
import { MAX_TOML_VALUES, readTomlOffThread, tomlShapeError, wideTableError } from "./formats/parse-off-thread.js";
import { MAX_OBJECT_KEYS } from "./names.js";

/** A repository's TOML (cosh's and Codex's config.toml) is read for these tables only; the rest is never sent to the main thread. */
const TOML_KEPT = ["hooks", "features"] as const;
import { MAX_REPOSITORY_COMPILE_MS, MAX_REPOSITORY_MATCHER_PROGRAM, mergeHookSets, withCompileBudget, type HookSet } from "./hooks.js";
import { heavyTurns } from "./turns.js";

export interface RepositoryLimits {
  /** largest hook file read; @default 1 MiB ([server] max_hook_file_bytes) */
  maxHookFileBytes: number;
  /** most hooks all of a workspace's files may declare; @default 1000 ([server] max_repository_hooks) */
  maxHooks: number;
  /**
   * the time its matchers may take to compile; @default MAX_REPOSITORY_COMPILE_MS. A stored
   * workspace read again (after a restart, or its hook set given up for memory) was held to it
   * when it was uploaded: held to it again on a busy thread, it could be refused for what it is not.
   */
  maxCompileMs?: number;
}

export const DEFAULT_REPOSITORY_LIMITS: RepositoryLimits = { maxHookFileBytes: 1024 * 1024, maxHooks: 1000 };

/**
 * All of a workspace's hook files together, in multiples of `maxHookFileBytes` (4 MiB by default):
 * each file read costs the main thread time in proportion to its size (positions for messages),
 * and a workspace may hold hundreds of them.
 */
export const HOOK_FILES_TOTAL_FACTOR = 4;


/** A TOML text the loader needs parsed (the service parses it off the main thread), or a pause. */
type Need = { file: string; text: string } | undefined;

/**
 * For the service: one file at a time, each in a turn of its own (heavyTurns), TOML parsed in a
 * worker. `party`: whose upload it is (the tenant): its files and TOML parses take turns with other parties'.
 * `deadline`: once it aborts, the next file is not read; its reason is thrown.
 */
export async function loadRepositoryHooks(dir: string, maxTimeoutMs: number, limits: RepositoryLimits = DEFAULT_REPOSITORY_LIMITS, party = "", deadline?: AbortSignal): Promise<HookSet> {
  const steps = loadSteps(dir, maxTimeoutMs, limits);
  // Each file is read and parsed in a turn of its own: concurrent uploads take turns, file by file.
  await heavyTurns.take(party);
  for (let step = steps.next(); ; ) {
    if (step.done) return step.value;
    deadline?.throwIfAborted();
    if (step.value) {
      const { file, text } = step.value;
      // A repository's TOML (cosh's and Codex's config.toml) is read for its [hooks] table, and
      // Codex's [features] (its switch for every hook), only.
      const parsed = await readTomlOffThread(file, text, party, TOML_KEPT).then((p) => ({ p }), (err: unknown) => ({ err }));
      step = "err" in parsed ? steps.throw(parsed.err) : steps.next(parsed.p);
    } else {
      await heavyTurns.take(party);
      step = steps.next();
    }
  }
}

/** `readTomlOffThread`'s reading, on this thread (the CLI's `hookbox check`): the same tables kept, the same bounds. */
function readTomlHere(file: string, text: string, keep?: readonly string[]): ParsedFile {
  const parsed = readToml(file, text, keep);
  const all = parsed.value as Record<string, unknown>;
  const value = keep === undefined ? all : Object.fromEntries(keep.filter((k) => Object.hasOwn(all, k)).map((k) => [k, all[k]]));
  const past = tomlShapeError(value, MAX_TOML_VALUES, MAX_OBJECT_KEYS);
  if (past?.path) throw wideTableError(file, text, past.path, past.message);
  if (past) throw new ConfigError(file, `cannot parse: ${past.message}`);
  return { ...parsed, value };
}

/** For the CLI (`hookbox check --workspace`): the same reads, at once. */
export function loadRepositoryHooksSync(dir: string, maxTimeoutMs: number, limits: RepositoryLimits = DEFAULT_REPOSITORY_LIMITS): HookSet {
  const steps = loadSteps(dir, maxTimeoutMs, limits);
  for (let step = steps.next(); ; ) {
    if (step.done) return step.value;
    if (!step.value) {
      step = steps.next();
      continue;
    }
    // A file that does not parse is the loader's to judge (it skips that file), as in the service's.
    let parsed: ParsedFile;
    try {
      parsed = readTomlHere(step.value.file, step.value.text, TOML_KEPT);
    } catch (err) {
      step = steps.throw(err);
      continue;
    }
    step = steps.next(parsed);
  }
}

/** Loads the hook files one by one, pausing after each and asking its driver to parse TOML. */
function* loadSteps(dir: string, maxTimeoutMs: number, limits: RepositoryLimits): Generator<Need, HookSet, ParsedFile | undefined> {
  const ctx: LoadContext = { source: "repository", maxTimeoutMs, tolerant: true, hooksLeft: { left: limits.maxHooks, limit: limits.maxHooks }, skippedLeft: { left: SKIPPED_HOOKS_FACTOR * limits.maxHooks, limit: SKIPPED_HOOKS_FACTOR * limits.maxHooks } };
  const sets: HookSet[] = [];
  /** Each agent's own switch (`disableAllHooks`, cosh `enabled = false`) turns off that agent's hooks only: the file that said so. */
  const switchedOff = new Map<Format, string>();
  // Every matcher and condition compiled counts, before the hooks it belongs to are counted.
  const compileBudget = { left: limits.maxHooks, limit: limits.maxHooks, instructions: MAX_REPOSITORY_MATCHER_PROGRAM, ms: 0, maxMs: limits.maxCompileMs ?? MAX_REPOSITORY_COMPILE_MS, seen: new Set<string>() };
  // Warnings past what the answer lists are counted, not written: each costs a line's look-up and a suggestion.
  const warningBudget: WarningBudget = { left: MAX_WORKSPACE_WARNINGS, skipped: 0 };
  let hooks = 0;
  let bytes = 0;
  let files = 0;
  const add = (file: string, format: Format, set: HookSet) => {
    hooks += set.hooks.length;
    if (hooks > limits.maxHooks) throw new WorkspaceLimitError(file, `the repository declares more than ${limits.maxHooks} hooks (server.max_repository_hooks)`);
    sets.push(set);
    // Claude Code merges disableAllHooks across its files, the later (more local) one deciding;
    // every other agent's switch is off once any of its files says so.
    if (format === "claude" && set.disableAllSaid !== undefined) {
      if (set.disableAllSaid) switchedOff.set(format, file);
      else switchedOff.delete(format);
    } else if (set.disableAll && !switchedOff.has(format)) switchedOff.set(format, file);
  };
  const countFile = (name: string) => {
    if (++files > MAX_REPOSITORY_HOOK_FILES) throw new WorkspaceLimitError(name, `the repository has more than ${MAX_REPOSITORY_HOOK_FILES} hook files (MAX_REPOSITORY_HOOK_FILES)`);
  };
  /**
   * A file (or folder of them) that cannot be read — a link, past max_hook_file_bytes, not JSON, a
   * shape its agent refuses: skipped whole with a warning naming file, line and why, as Claude Code
   * skips a settings file with errors; the workspace's other files still load. Only a bound on the
   * workspace's files together (WorkspaceLimitError) refuses the upload.
   */
  const skipFile = (err: unknown, what = "the file is skipped: none of its hooks are read") => {
    if (!(err instanceof ConfigError) || err instanceof WorkspaceLimitError) throw err;
    const skipped: string[] = [];
    withWarningBudget(warningBudget, () => warn(skipped, () => `${err.message}; ${what}`));
    sets.push({ hooks: [], warnings: skipped, disableAll: false });
  };
  function* load(source: (typeof REPOSITORY_SOURCES)[number], name: string): Generator<Need, void, ParsedFile | undefined> {
    // What a file that is skipped counted of the repository's hooks, and of its skipped entries, is
    // given back: none of them runs, and no other file pays for them.
    const hooksLeft = ctx.hooksLeft!.left;
    const skippedLeft = ctx.skippedLeft!.left;
    try {
      let read: ReturnType<typeof readHookFile>;
      try {
        read = readHookFile(dir, name, limits.maxHookFileBytes);
      } catch (err) {
        if (err instanceof ConfigError) countFile(name);
        throw err;
      }
      if (read === undefined) return;
      countFile(name);
      bytes += read.bytes;
      const total = HOOK_FILES_TOTAL_FACTOR * limits.maxHookFileBytes;
      if (bytes > total) throw new WorkspaceLimitError(name, `the repository's hook files together are larger than ${total} bytes (${HOOK_FILES_TOTAL_FACTOR} × server.max_hook_file_bytes)`);
      // A UTF-8 byte-order mark opening a JSON file is read past (RFC 8259 §8.1 lets a parser ignore
      // one; Claude Code's CLI reads such a settings file), as a blank: every line and column stays.
      const text = source.syntax !== "toml" && read.text.startsWith("\uFEFF") ? ` ${read.text.slice(1)}` : read.text;
      const parsed = source.syntax === "toml" ? yield { file: name, text } : readJson(name, text, source.syntax === "jsonc", LOCATED_MEMBERS);
      add(name, source.format, withWarningBudget(warningBudget, () => withCompileBudget(compileBudget, () => source.load(parsed!, ctx))));
    } catch (err) {
      ctx.hooksLeft!.left = hooksLeft;
      ctx.skippedLeft!.left = skippedLeft;
      skipFile(err);
    }
  }
  try {
    for (const source of REPOSITORY_SOURCES) {
      if (source.suffix === undefined) {
        yield* load(source, source.path);
        yield;
        continue;
      }
      let names: string[] = [];
      try {
        names = listDir(dir, source.path).filter((n) => n.endsWith(source.suffix!)).sort();
      } catch (err) {
        skipFile(err, "the folder is skipped: none of its hook files are read");
      }
      for (const f of names) {
        yield* load(source, `${source.path}/${f}`);
        yield;
      }
    }
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(".", `cannot read the repository's hook files (${(err as NodeJS.ErrnoException).code ?? (err as Error).message.replaceAll(dir, "…")})`);
  }
  const merged = mergeHookSets(sets);
  const off = [...switchedOff].map(([format, file]) => `${file}: switches off this repository's ${format} hooks (${format === "cosh" ? "[hooks] enabled = false" : format === "codex" && file.endsWith(".toml") ? "[features] hooks = false, or codex_hooks" : "disableAllHooks"}); its other agents' hooks still run`);
  return { hooks: merged.hooks.filter((h) => !switchedOff.has(h.format)), warnings: capWarnings([...off, ...merged.warnings], warningBudget.skipped), disableAll: false };
}

/**
 * @default 512 — hook files one workspace may hold (`.github/hooks/*.json` is a folder of them):
 * each is read, parsed and reported on, on the thread that serves everyone; past it, the upload is
 * refused naming the limit.
 */
export const MAX_REPOSITORY_HOOK_FILES = 512;

/**
 * @default 500 — warnings a workspace's answer (and its stored summary) lists, each at most
 * MAX_WARNING_CHARS; one more line counts the rest.
 */
export const MAX_WORKSPACE_WARNINGS = 500;
export const MAX_WARNING_CHARS = 1024;

/**
 * @default 64 Ki — characters the listed warnings come to together, as JSON writes them (a control
 * character is six): each one 1 Ki characters of them would be megabytes in every answer that lists them.
 */
export const MAX_WARNINGS_JSON_CHARS = 64 * 1024;

/**
 * The first of `items`, as `shown` writes each, that come to at most `maxChars` of JSON together
 * (each counted as JSON.stringify writes it) and number at most `maxItems`.
 */
export function withinJson<T, S>(items: readonly T[], maxChars: number, shown: (item: T) => S, maxItems = Infinity): S[] {
  const kept: S[] = [];
  let total = 0;
  for (const item of items) {
    if (kept.length === maxItems) break;
    const s = shown(item);
    total += JSON.stringify(s).length;
    if (total > maxChars) break;
    kept.push(s);
  }
  return kept;
}

/** `unwritten`: warnings past the workspace's budget, counted while loading. */
function capWarnings(warnings: string[], unwritten: number): string[] {
  // never half a surrogate pair (a path's emoji at the cut): a strict JSON reader refuses the lone half
  const kept = withinJson(warnings, MAX_WARNINGS_JSON_CHARS, (w) => clip(w, MAX_WARNING_CHARS), MAX_WORKSPACE_WARNINGS);
  const more = warnings.length - kept.length + unwritten;
  if (more > 0) kept.push(`… ${more} more warnings left out (at most ${MAX_WORKSPACE_WARNINGS}, of ${MAX_WARNINGS_JSON_CHARS / 1024} Ki characters of JSON together, are listed per workspace)`);
  return kept;
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
  // A folder named like a hook file (`archive.json/`) is not one: left out. A link is kept, and refused when read.
  return at === undefined ? [] : readdirSync(at, { withFileTypes: true }).filter((e) => !e.isDirectory()).map((e) => e.name);
}

/** A hook file's text and its size in bytes: a regular file inside the workspace, opened without following a link, at most `maxBytes`. */
function readHookFile(root: string, rel: string, maxBytes: number): { text: string; bytes: number } | undefined {
  const path = walk(root, rel, "file");
  if (path === undefined) return undefined;
  const tooLarge = () => new ConfigError(rel, `the file is larger than ${maxBytes} bytes (server.max_hook_file_bytes)`);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    // Its code only: the message names the host path under data_dir.
    throw new ConfigError(rel, `cannot read (${(err as NodeJS.ErrnoException).code ?? "error"})`);
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
    return { text: buf.subarray(0, n).toString("utf8"), bytes: n };
  } finally {
    closeSync(fd);
  }
}
