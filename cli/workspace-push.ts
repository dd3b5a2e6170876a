/**
 * @module `hookbox workspace push DIR`: uploads a repository's hook files (or, with --all, the whole
 * folder) as a tar.gz and prints the workspace id.
 */
import { createHash } from "node:crypto";
import { closeSync, constants, existsSync, fstatSync, lstatSync, openSync, readSync, readdirSync, readlinkSync, realpathSync, statSync, type Stats } from "node:fs";
import { basename, dirname, join, posix, relative, resolve, sep } from "node:path";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { createScanner, parse as parseJsonc, printParseErrorCode, type ParseError } from "jsonc-parser";
import { parse as parseToml, stringify as stringifyToml } from "smol-toml";
import { pack } from "tar-stream";
import { forEachTomlLine, tomlTopName } from "../engine/formats/locate.js";
import { MAX_CLIENT_ANSWER_BYTES, readText } from "./read-answer.js";
import { oneLine, sendableToken, shownUrl, TOKEN_NOT_SENDABLE, withoutUserinfo } from "./terminal.js";

/**
 * What a repository's hooks are declared in (the engine's format registry reads these), and the
 * folders their scripts usually sit in — never the rest of an agent's folder, which holds its other
 * settings and, often, keys (`.cursor/mcp.json`, `.codex/config.toml`).
 */
export const HOOK_PATHS = [
  ".github/hooks", ".copilot-shell/hooks", ".claude/hooks", ".cursor/hooks.json", ".cursor/hooks", ".codex/hooks.json", ".codex/hooks", ".gemini/hooks",
];
/**
 * Files that hold hooks among other settings (and, often, keys: a model's API key, an MCP server's
 * token, an `env`): of these only what the service reads of them is sent — the keys named here — as
 * a file of that name holding nothing else. A file with nothing else in it is sent as it is.
 */
export const HOOK_TABLES: Record<string, { syntax: "json" | "jsonc" | "toml"; keys: readonly string[] }> = {
  ".github/copilot/settings.json": { syntax: "json", keys: ["hooks", "disableAllHooks"] },
  ".github/copilot/settings.local.json": { syntax: "json", keys: ["hooks", "disableAllHooks"] },
  ".copilot-shell/config.toml": { syntax: "toml", keys: ["hooks"] },
  ".claude/settings.json": { syntax: "json", keys: ["hooks", "disableAllHooks"] },
  ".claude/settings.local.json": { syntax: "json", keys: ["hooks", "disableAllHooks"] },
  ".codex/config.toml": { syntax: "toml", keys: ["hooks", "features"] },
  // comments and trailing commas allowed, as Gemini CLI reads it
  ".gemini/settings.json": { syntax: "jsonc", keys: ["hooks", "hooksConfig"] },
};
/**
 * Whether the service reads hooks from the file of this name (each format's `repository` in
 * engine/formats; test/engine/formats.test.ts holds the two lists together): it refuses such a file
 * over `[server] max_hook_file_bytes`.
 */
export const isHookFile = (name: string): boolean =>
  Object.hasOwn(HOOK_TABLES, name) || name === ".cursor/hooks.json" || name === ".codex/hooks.json" || /^\.github\/hooks\/[^/]+\.json$/.test(name);
/**
 * The service's limits, as it has them by default (engine/config.ts: the CLI loads no engine), checked
 * here before a file is read: what passes one would be refused, and nothing is sent. A service
 * configured for less refuses by its own; one configured for more still gets no more from here.
 * @default 1 MiB — a hook file (isHookFile), as read and as sent: `[server] max_hook_file_bytes`
 */
export const MAX_HOOK_FILE_BYTES = 1024 * 1024;
/** @default 64 MiB — the archive, as sent: `[server] max_body_bytes` */
export const MAX_UPLOAD_BYTES = 64 * 1024 * 1024;
/** @default 256 MiB — the files sent, together: 4 × `[server] max_body_bytes`, the most an upload may unpack to (engine/workspace-unpack.ts) */
export const MAX_PUSH_BYTES = 4 * MAX_UPLOAD_BYTES;
/**
 * @default 15 min — the upload and its answer: longer than the service takes to answer one, the
 * slowest too (408 past `UPLOAD_MAX_MS`, 10 min), never for ever when it cannot.
 */
export const PUSH_DEADLINE_MS = 15 * 60_000;
/**
 * @default 10 000 — entries sent, the files and the folders they lie in: `[server]
 * max_workspace_entries`, by default (an archive of more entries, the folders its names imply
 * counted too, is refused). The listing stops past it: a folder of a million empty files is never
 * read, packed and held in memory for an upload refused.
 */
export const MAX_PUSH_FILES = 10_000;
/** @default 1 MiB — of each `.json` and `.toml` sent, what is searched for the scripts its hooks name (unsentScripts) */
const MAX_SCANNED_BYTES = 1024 * 1024;
const SKIP = new Set([".git", "node_modules"]);
/** A name that is one of SKIP on a file system that ignores case (`.GIT` is `.git` on macOS and Windows). */
const isSkipped = (name: string) => SKIP.has(name.toLowerCase());

/** A file to send: its name in the archive and where its bytes are read from. */
interface Sent {
  name: string;
  from: string;
  /** a HOOK_TABLES file: only its hook settings are sent */
  hooksOnly?: boolean;
  /** the file `from` was when listed: what is read must be that one */
  listed: { dev: number; ino: number };
}

/** Whether `path` (already resolved through its links) lies inside the real folder `root`. */
const inside = (root: string, path: string) => path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);

/** Which resolved paths a link may lead to: only what would be sent anyway. */
type Allowed = (target: string) => boolean;

/**
 * Regular files under `at`; FIFOs, sockets and devices are skipped with a warning (reading a FIFO
 * would hang). A repository is hostile input on the developer's own machine: a link is followed
 * only to a regular file that would be sent anyway (`allowed`: under a hook path, or with --all
 * anywhere in the folder but `.git` and `node_modules`), and then sent as that file's bytes under
 * the link's name — never out of the folder (`~/.claude/settings.json`), never to what the upload
 * leaves out (`.claude/hooks/env -> ../../.env`, `-> ../../.git/config`). A link to a folder is skipped.
 */
function files(root: string, allowed: Allowed, at: string, out: Sent[], warnings: Warnings): void {
  if (out.length > MAX_PUSH_FILES) return; // refused whatever follows
  const name = relative(root, at);
  // A name that is not UTF-8 (read back with U+FFFD, it names nothing), a folder that cannot be
  // listed, an entry gone since its folder was: skipped, never the end of the push.
  let st: Stats;
  let entries: string[] = [];
  try {
    st = lstatSync(at);
    if (st.isDirectory()) entries = readdirSync(at).sort();
  } catch (err) {
    warnings.push(`warning: ${oneLine(name)} could not be read (${oneLine((err as NodeJS.ErrnoException).code ?? (err as Error).message)}): skipped\n`);
    return;
  }
  if (st.isDirectory()) {
    for (const entry of entries) if (!isSkipped(entry)) files(root, allowed, join(at, entry), out, warnings);
  } else if (st.isFile()) {
    // Another name of the same file, perhaps outside the folder (a clone makes none): not sent.
    if (st.nlink > 1) warnings.push(`warning: ${oneLine(name)} is a hard link (the file has ${st.nlink} names, which may lie outside ${oneLine(root)}): skipped\n`);
    else out.push({ name, from: at, listed: st });
  }
  else if (st.isSymbolicLink()) {
    let target: string | undefined;
    try {
      target = realpathSync(at);
    } catch {
      warnings.push(`warning: ${oneLine(name)} is a link to nothing: skipped\n`);
      return;
    }
    if (!inside(root, target)) warnings.push(`warning: ${oneLine(name)} is a link out of ${oneLine(root)}: skipped\n`);
    else if (!allowed(target)) warnings.push(`warning: ${oneLine(name)} is a link to ${oneLine(relative(root, target))}, which is not sent: skipped\n`);
    else {
      let to: Stats;
      try {
        to = statSync(target);
      } catch {
        warnings.push(`warning: ${oneLine(name)} is a link to nothing: skipped\n`);
        return;
      }
      if (!to.isFile()) warnings.push(`warning: ${oneLine(name)} is a link to a folder or a special file: skipped\n`);
      else if (to.nlink > 1) warnings.push(`warning: ${oneLine(name)} is a link to a hard link (the file has ${to.nlink} names, which may lie outside ${oneLine(root)}): skipped\n`);
      else out.push({ name, from: target, listed: to });
    }
  } else if (st.isFIFO() || st.isSocket() || st.isCharacterDevice() || st.isBlockDevice()) {
    const kind = st.isFIFO() ? "a FIFO" : st.isSocket() ? "a socket" : "a device";
    warnings.push(`warning: ${oneLine(name)} is ${kind}: skipped\n`);
  }
}

/**
 * The hook paths present under `root`, each checked to be reached without passing through a link
 * (`.claude -> ~/.claude` would make `.claude/settings.json` the user's own file).
 */
function hookPaths(root: string, warnings: Warnings, paths: readonly string[] = HOOK_PATHS): string[] {
  const found: string[] = [];
  const links = new Set<string>();
  for (const p of paths) {
    const parts = p.split("/");
    let through: string | undefined;
    for (let i = 1; i < parts.length && through === undefined; i++) {
      const folder = parts.slice(0, i).join("/");
      try {
        if (lstatSync(join(root, folder)).isSymbolicLink()) through = folder;
      } catch {
        break; // not there: nothing to send under it
      }
    }
    if (through !== undefined) {
      if (!links.has(through)) warnings.push(`warning: ${oneLine(through)} is a link: nothing under it is sent\n`);
      links.add(through);
      continue;
    }
    if (lstatExists(join(root, p))) found.push(p);
  }
  return found;
}

/**
 * A script a hook command names by a path inside the repository (`./x.sh`, `$CLAUDE_PROJECT_DIR/.cursor/scripts/g.py`).
 * Tried only where a path can start — not after a letter, digit, `.` or `-`, nor after a `/` that
 * follows one —, which finds what trying at every character found: tried again inside a run such
 * as `a.a.a.…` (the repository's text), it cost the run's length squared.
 */
const SCRIPT_PATH = /(?:\$\{?CLAUDE_PROJECT_DIR\}?\/|(?<![\w.-]|[\w.-]\/)(?:\.\/)?)((?:[\w.-]+\/)*[\w.-]+\.(?:sh|bash|py|js|mjs|cjs|ts|rb|pl))\b/g;
/** The paths of scripts `text` names (SCRIPT_PATH), in order, as written: in time linear in its length. */
export const scriptsNamed = (text: string): string[] => Array.from(text.matchAll(SCRIPT_PATH), (m) => m[1]!);
/** @default 200 — warnings one push lists; the rest are counted in one last line */
export const MAX_PUSH_WARNINGS = 200;

/** A push's warnings: the first MAX_PUSH_WARNINGS kept, the rest counted — a folder of a million links lists (and holds) no million lines. */
class Warnings {
  private readonly kept: string[] = [];
  private more = 0;
  push(line: string): void {
    if (this.kept.length < MAX_PUSH_WARNINGS) this.kept.push(line);
    else this.more++;
  }
  text(): string {
    return this.kept.join("") + (this.more > 0 ? `warning: ${this.more} more not listed (MAX_PUSH_WARNINGS)\n` : "");
  }
}

/** @default 20 — warnings of scripts a hook names that are not sent */
const MAX_UNSENT_WARNINGS = 20;

/**
 * Warns of each script a sent hook file names that is in the folder but not sent (it lies outside
 * every hook path): the hook would fail to start on hookbox. Read from the hook files' text as the
 * archive read it (`configs`); a guess, never a refusal.
 */
function unsentScripts(dir: string, sent: Sent[], configs: Map<string, string>, warnings: Warnings): void {
  const names = new Set(sent.map((f) => f.name.split(sep).join("/")));
  const said = new Set<string>();
  for (const [file, text] of configs) {
    if (said.size >= MAX_UNSENT_WARNINGS) return;
    for (const named of scriptsNamed(text)) {
      const rel = posix.normalize(named);
      if (rel.startsWith("..") || names.has(rel) || said.has(rel) || !lstatExists(join(dir, rel))) continue;
      said.add(rel);
      warnings.push(`warning: ${oneLine(file)} names ${oneLine(rel)}, which is not sent (it is under no hook path: send the whole folder with --all, or keep hook scripts under .claude/hooks, .github/hooks, .copilot-shell/hooks, .cursor/hooks, .codex/hooks or .gemini/hooks)\n`);
      if (said.size >= MAX_UNSENT_WARNINGS) return;
    }
  }
}

function lstatExists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** A HOOK_TABLES file's text read in its syntax (JSONC with comments and trailing commas), or an Error (warned of, not sent: it may hold anything). */
function readSettings(text: string, syntax: (typeof HOOK_TABLES)[string]["syntax"]): unknown {
  try {
    if (syntax === "toml") return parseToml(text, { integersAsBigInt: "asNeeded" });
    if (syntax === "json") return JSON.parse(text);
    const errors: ParseError[] = [];
    const value: unknown = parseJsonc(text, errors, { allowTrailingComma: true, disallowComments: false });
    if (errors.length > 0) throw new Error(`${printParseErrorCode(errors[0]!.error)} at offset ${errors[0]!.offset}`);
    return value;
  } catch (err) {
    throw new Error(`not ${syntax === "toml" ? "TOML" : "JSON"}: ${(err as Error).message.split("\n")[0]}`);
  }
}

/** jsonc-parser's SyntaxKind (a const enum, which an isolated module cannot import): the tokens read here. */
const JSON_OPEN_BRACE = 1;
const JSON_CLOSE_BRACE = 2;
const JSON_OPEN_BRACKET = 3;
const JSON_CLOSE_BRACKET = 4;
const JSON_COMMA = 5;
const JSON_EOF = 17;

/** `text` with every character but line ends made a blank: what is left out keeps its lines. */
const blank = (text: string) => text.replace(/[^\r\n]/g, " ");

/**
 * Of a JSON (or JSONC) object's text, the members named `keys` alone, each where it stands: every
 * other member, every comment and the commas between them blanked, line ends kept — the copy's
 * lines and columns are the file's. One pass of the scanner over the text.
 */
function keepJsonMembers(text: string, keys: readonly string[]): string {
  const scanner = createScanner(text, true);
  let out = "";
  let at = 0;
  const put = (offset: number, length: number) => {
    out += blank(text.slice(at, offset)) + text.slice(offset, offset + length);
    at = offset + length;
  };
  let depth = 0;
  let kept = false;
  let atKey = false;
  let anyKept = false;
  let comma = -1;
  for (let token = scanner.scan(); token !== JSON_EOF; token = scanner.scan()) {
    const offset = scanner.getTokenOffset();
    const length = scanner.getTokenLength();
    const opens = token === JSON_OPEN_BRACE || token === JSON_OPEN_BRACKET;
    const closes = token === JSON_CLOSE_BRACE || token === JSON_CLOSE_BRACKET;
    if (depth === 0 || (depth === 1 && closes)) {
      // the root object's own braces
      put(offset, length);
      atKey = opens;
    } else if (depth === 1 && token === JSON_COMMA) {
      comma = offset;
      atKey = true;
    } else if (depth === 1 && atKey) {
      kept = keys.includes(scanner.getTokenValue());
      atKey = false;
      if (kept && anyKept) put(comma, 1);
      if (kept) put(offset, length);
      anyKept ||= kept;
    } else if (kept) {
      put(offset, length);
    }
    if (opens) depth++;
    else if (closes) depth--;
  }
  return out + blank(text.slice(at));
}

/**
 * Of a TOML text, the tables and root keys named `keys` alone, each line where it stands: every other
 * table and key, and every comment, blanked, line ends kept — the copy's lines are the file's.
 */
function keepTomlTables(text: string, keys: readonly string[]): string {
  let out = "";
  let underHeader = false;
  let kept = false;
  forEachTomlLine(text, ({ start, end, text: line, header, continues, comment }) => {
    // A header decides for itself and the keys under it; a root key (before any header) for itself;
    // a line that continues a value, as the line that began it did.
    if (header) {
      underHeader = true;
      kept = keys.includes(tomlTopName(header.name));
    } else if (!continues && !underHeader) {
      const eq = line.indexOf("=");
      kept = eq > 0 && keys.includes(tomlTopName(line.slice(0, eq)));
    }
    out += (kept ? text.slice(start, comment) + blank(text.slice(comment, end)) : blank(text.slice(start, end))) + (end < text.length ? "\n" : "");
  });
  return out;
}

/**
 * A HOOK_TABLES file's hook settings alone (`keys`), in its own syntax; undefined when it holds none;
 * a JSON file's own bytes when it holds nothing else. What it holds besides (other settings, comments)
 * is blanked where it stands, so that the copy sent has the file's own lines: the service's warnings
 * name the user's lines (its answer read back, and checked to be the hook settings alone; where it is
 * not, they are written again, and the lines are the copy's). A file that cannot be read in its syntax is an Error.
 */
function hookSettingsText(body: Buffer, table: (typeof HOOK_TABLES)[string]): { text: Buffer; cut: boolean; ownLines: boolean } | undefined {
  // A byte-order mark opening a JSON file is read as a blank, as the service reads it: lines and columns stay.
  const raw = body.toString("utf8");
  const text = table.syntax !== "toml" && raw.startsWith("\uFEFF") ? ` ${raw.slice(1)}` : raw;
  const value = readSettings(text, table.syntax);
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error(`not a ${table.syntax === "toml" ? "TOML table" : "JSON object"}`);
  const all = Object.keys(value);
  const kept = Object.fromEntries(Object.entries(value).filter(([k]) => table.keys.includes(k)));
  if (Object.keys(kept).length === 0) return undefined;
  // A JSON file holding nothing else goes as it is (JSON has no comments); TOML and JSONC always go
  // blanked: their comments (a key commented out, say) stay here.
  if (Object.keys(kept).length === all.length && table.syntax === "json") return { text: body, cut: false, ownLines: true };
  const copy = table.syntax === "toml" ? keepTomlTables(text, table.keys) : keepJsonMembers(text, table.keys);
  // The copy, read back, must be the hook settings alone, as parsed from the file.
  const same = (): boolean => {
    try {
      const read = readSettings(copy, table.syntax);
      return table.syntax === "toml" ? stringifyToml(read as Record<string, unknown>) === stringifyToml(kept) : JSON.stringify(read) === JSON.stringify(kept);
    } catch {
      return false;
    }
  };
  if (same()) return { text: Buffer.from(copy), cut: true, ownLines: true };
  const out = table.syntax === "toml"
    ? `# This repository's hook settings, as \`hookbox workspace push\` sends them: no other setting.\n${stringifyToml(kept)}`
    : `${JSON.stringify(kept, null, 2)}\n`;
  return { text: Buffer.from(out), cut: true, ownLines: false };
}

/**
 * Whether the file open at `fd` (`st`, its fstat) is the one listed at `from`, reached there without a
 * link: the same file (device and inode), by the kernel's own name for the open file where it gives
 * one (Linux's /proc/self/fd), else by where `from` leads now. O_NOFOLLOW guards only a path's last
 * part: a folder on the way swapped for a link (by anything that can write the checkout, between the
 * listing and the read, or between a folder's lstat and its readdir) would lead anywhere.
 */
function isListed(fd: number, st: Stats, from: string, listed: Sent["listed"]): boolean {
  if (st.dev !== listed.dev || st.ino !== listed.ino) return false;
  let real: string;
  try {
    real = readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    try {
      real = realpathSync(from);
    } catch {
      return false;
    }
  }
  return real === from;
}

/** A limit of the service's (MAX_HOOK_FILE_BYTES, MAX_PUSH_BYTES, MAX_UPLOAD_BYTES) the upload would pass: nothing is sent. */
class OverLimit extends Error {}

/**
 * What the file open at `fd` holds (`size` bytes by its fstat), read to its end; undefined once
 * that is more than `max` bytes — never more than one byte past it read, a file that grew since
 * its fstat too.
 */
function readAtMost(fd: number, size: number, max: number): Buffer | undefined {
  const chunks: Buffer[] = [];
  let total = 0;
  for (let want = Math.min(size, max) + 1; ; want = Math.min(64 * 1024, max - total + 1)) {
    const chunk = Buffer.allocUnsafe(want);
    const n = readSync(fd, chunk, 0, want, null);
    if (n === 0) return Buffer.concat(chunks, total);
    chunks.push(chunk.subarray(0, n));
    total += n;
    if (total > max) return undefined;
  }
}

/**
 * The archive of `sent`, and the text of each hook file in it (`.json`, `.toml`: at most
 * MAX_SCANNED_BYTES each), as read for it. Each file's size is judged before it is read: OverLimit
 * past a limit of the service's.
 */
async function tarGz(sent: Sent[], warnings: Warnings): Promise<{ archive: Buffer; packed: string[]; configs: Map<string, string> }> {
  const configs = new Map<string, string>();
  const p = pack();
  const chunks: Buffer[] = [];
  p.on("data", (c: unknown) => chunks.push(c as Buffer));
  const ended = new Promise<void>((r) => p.on("end", () => r()));
  const packed: string[] = [];
  let total = 0;
  for (const { name, from, hooksOnly, listed } of sent) {
    const hookFile = isHookFile(name.split(sep).join("/"));
    const room = MAX_PUSH_BYTES - total;
    const over = (bytes: number) => new OverLimit(hookFile && bytes > MAX_HOOK_FILE_BYTES
      ? `${oneLine(name)}: the file is larger than ${MAX_HOOK_FILE_BYTES} bytes, the most the service reads of a hook file (server.max_hook_file_bytes, by default)`
      : `${oneLine(name)}: with it the files sent come to more than ${MAX_PUSH_BYTES} bytes, the most an upload may unpack to (4 × server.max_body_bytes, by default)`);
    // Opened without following a link and without waiting on a FIFO, then checked on the open
    // file: what was listed may have been swapped since.
    let fd: number | undefined;
    try {
      fd = openSync(from, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
      const st = fstatSync(fd);
      if (!st.isFile()) throw new Error("not a regular file");
      if (!isListed(fd, st, from, listed)) throw new Error("it changed since it was listed, or a folder on its way is now a link");
      // A settings file whose hook settings alone are sent is read whole to find them: at most a hook file's limit.
      const max = hooksOnly ? MAX_HOOK_FILE_BYTES : hookFile ? Math.min(MAX_HOOK_FILE_BYTES, room) : room;
      if (st.size > max) throw over(st.size);
      let body = readAtMost(fd, st.size, max);
      if (body === undefined) throw over(max + 1);
      if (hooksOnly) {
        const table = HOOK_TABLES[name.split(sep).join("/")]!;
        const settings = hookSettingsText(body, table);
        if (settings === undefined) continue; // no hook settings in it: nothing of it is sent
        body = settings.text;
        if (body.length > Math.min(MAX_HOOK_FILE_BYTES, room)) throw over(body.length);
        if (settings.cut) warnings.push(`warning: ${oneLine(name)}: only its hook settings (${table.keys.join(", ")}) are sent — none of its other settings or comments${settings.ownLines ? ", blanked where they stand: line numbers the service gives for it are the file's own" : ", written again: line numbers the service gives for it are those of the copy sent"}\n`);
      }
      total += body.length;
      if (/\.(json|toml)$/.test(name)) configs.set(name, body.subarray(0, MAX_SCANNED_BYTES).toString("utf8"));
      await new Promise<void>((res, rej) => p.entry({ name, mode: st.mode & 0o777 }, body, (e) => (e ? rej(e) : res())));
      packed.push(name);
    } catch (err) {
      if (err instanceof OverLimit) throw err;
      warnings.push(`warning: ${oneLine(name)} could not be read (${oneLine((err as Error).message)}): skipped\n`);
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }
  p.finalize();
  await ended;
  const archive = gzipSync(Buffer.concat(chunks));
  if (archive.length > MAX_UPLOAD_BYTES) throw new OverLimit(`the archive is over ${MAX_UPLOAD_BYTES} bytes, the most the service takes (server.max_body_bytes, by default)`);
  return { archive, packed, configs };
}

/** The folders `names` lie in (each counted once), as the service counts them: an entry each. */
function foldersOf(names: string[]): number {
  const folders = new Set<string>();
  for (const name of names) {
    // from the file's own folder up, stopping at one already counted (its parents are too)
    for (let at = dirname(name); at !== "." && !folders.has(at); at = dirname(at)) folders.add(at);
  }
  return folders.size;
}

export async function workspacePush(argv: string[], env: NodeJS.ProcessEnv, deadlineMs = PUSH_DEADLINE_MS): Promise<{ stdout: string; stderr: string; code: number }> {
  const { values, positionals } = parseArgs({
    args: argv, allowPositionals: true,
    options: { url: { type: "string", default: env.HOOKBOX_URL ?? "http://127.0.0.1:8080" }, token: { type: "string" }, id: { type: "string" }, all: { type: "boolean", default: false } },
  });
  const token = values.token ?? env.HOOKBOX_TOKEN;
  // never handed to fetch, whose error would repeat it
  if (token && !sendableToken(token)) return { stdout: "", stderr: `hookbox: ${TOKEN_NOT_SENDABLE}\n`, code: 64 };
  const given = resolve(positionals[0] ?? ".");
  if (!existsSync(given)) return { stdout: "", stderr: `hookbox: no folder ${oneLine(given)}\n`, code: 66 };
  // The folder as it really is: names and link targets are judged against it.
  const dir = realpathSync(given);
  if (!statSync(dir).isDirectory()) return { stdout: "", stderr: `hookbox: ${oneLine(given)} is no folder (give the repository's folder)\n`, code: 66 };
  const sent: Sent[] = [];
  const skipped = new Warnings();
  if (values.all) {
    const allowed: Allowed = (target) => !relative(dir, target).split(sep).some(isSkipped);
    files(dir, allowed, dir, sent, skipped);
  } else {
    const paths = hookPaths(dir, skipped);
    // Only a hook path that is itself a folder or file (not a link) is a place a link may lead to.
    const roots = paths.map((p) => join(dir, p)).filter((at) => lstatSync(at, { throwIfNoEntry: false })?.isSymbolicLink() === false);
    // …and never into a .git or node_modules folder, wherever it lies (a hook folder's own too).
    const allowed: Allowed = (target) => roots.some((root) => inside(root, target)) && !relative(dir, target).split(sep).some(isSkipped);
    for (const p of paths) files(dir, allowed, join(dir, p), sent, skipped);
    // A hooks table is read from the file itself, never through a link (which could lead anywhere).
    for (const p of hookPaths(dir, skipped, Object.keys(HOOK_TABLES))) {
      const st = lstatSync(join(dir, p), { throwIfNoEntry: false });
      if (st?.isFile() && st.nlink === 1) sent.push({ name: p, from: join(dir, p), hooksOnly: true, listed: st });
      else if (st?.isFile()) skipped.push(`warning: ${oneLine(p)} is a hard link (the file has ${st.nlink} names): skipped\n`);
      else skipped.push(`warning: ${oneLine(p)} is not a regular file: skipped\n`);
    }
  }
  if (sent.length > MAX_PUSH_FILES) return { stdout: "", stderr: `${skipped.text()}hookbox: more than ${MAX_PUSH_FILES} files to send, the most entries the service takes in one upload (server.max_workspace_entries, by default): nothing sent\n`, code: 65 };
  if (sent.length === 0) return { stdout: "", stderr: `${skipped.text()}hookbox: no hook files in ${oneLine(dir)} (looked for ${[...HOOK_PATHS, ...Object.keys(HOOK_TABLES)].join(", ")}; --all sends the whole folder)\n`, code: 65 };
  const packed = await tarGz(sent, skipped).catch((err: unknown) => {
    if (err instanceof OverLimit) return err;
    throw err;
  });
  if (packed instanceof OverLimit) return { stdout: "", stderr: `${skipped.text()}hookbox: ${packed.message}: nothing sent\n`, code: 65 };
  // Every file skipped (a settings file with no hook settings, files that could not be read): an
  // archive of nothing, which the service refuses — said here as what it is.
  if (packed.packed.length === 0) return { stdout: "", stderr: `${skipped.text()}hookbox: no hook settings in ${oneLine(dir)} (the files found hold none, or could not be read): nothing sent\n`, code: 65 };
  const { archive, configs } = packed;
  const count = packed.packed.length;
  // the files packed and the folders they lie in: the service counts each folder a name implies
  const folders = foldersOf(packed.packed);
  if (count + folders > MAX_PUSH_FILES) {
    return { stdout: "", stderr: `${skipped.text()}hookbox: ${count} files in ${folders} folders to send, more than ${MAX_PUSH_FILES} entries together — the service counts each folder a name implies —, the most it takes in one upload (server.max_workspace_entries, by default): nothing sent\n`, code: 65 };
  }
  if (!values.all) unsentScripts(dir, sent, configs, skipped);
  const id = values.id ?? `${basename(given).replace(/[^A-Za-z0-9._-]/g, "-").replace(/^[^A-Za-z0-9]+/, "") || "ws"}-${createHash("sha256").update(archive).digest("hex").slice(0, 12)}`;
  let res: Response;
  let answer: unknown;
  try {
    res = await fetch(`${values.url.replace(/\/+$/, "")}/v1/workspaces/${encodeURIComponent(id)}`, {
      // Hookbox-Workspace too: a proxy that routes by workspace (deploy/kubernetes/ingress.yaml) sends
      // the upload to the replica its events will go to. A redirect is no answer (its status is said).
      method: "PUT", body: archive, redirect: "manual", signal: AbortSignal.timeout(deadlineMs),
      headers: { "content-type": "application/gzip", "hookbox-workspace": id, ...(token ? { authorization: `Bearer ${token}` } : {}) },
    });
    // At most MAX_CLIENT_ANSWER_BYTES of the answer, by the same deadline: one that is larger, not
    // JSON or cut off says only its status.
    answer = await readText(res, MAX_CLIENT_ANSWER_BYTES).then((text) => JSON.parse(text) as unknown).catch(() => undefined);
  } catch (err) {
    const e = err as Error;
    const why = e.name === "TimeoutError" ? `no answer within ${deadlineMs} ms` : withoutUserinfo(e.message);
    return { stdout: "", stderr: `${skipped.text()}hookbox: cannot reach ${shownUrl(values.url)}: ${oneLine(why)}\n`, code: 69 };
  }
  const body = (typeof answer === "object" && answer !== null ? answer : {}) as { hooks?: unknown; hooks_unlisted?: unknown; warnings?: unknown; error?: { message?: unknown } };
  if (!res.ok) return { stdout: "", stderr: `${skipped.text()}hookbox: upload refused (${res.status}): ${oneLine(String(body.error?.message ?? `${res.statusText}`))}\n`, code: 65 };
  // What the service skipped in the hook files (unknown keys, events, hook types), with file and
  // line: the repository's own text, escaped for the terminal.
  const served = (Array.isArray(body.warnings) ? body.warnings : []).map((w) => `warning: ${oneLine(String(w))}\n`).join("");
  return { stdout: `${id}\n`, stderr: `${skipped.text()}${served}uploaded ${count} files, ${(Array.isArray(body.hooks) ? body.hooks.length : 0) + (Number.isSafeInteger(body.hooks_unlisted) ? Number(body.hooks_unlisted) : 0)} repository hooks\n`, code: 0 };
}
