/**
 * @module Claude Code's `if` on a hook: a permission rule — `Tool` or `Tool(specifier)` — the tool
 * call must match for the hook to run (Claude Code hooks reference, "if"; permission-rule syntax in
 * its settings page). It is read on tool events only: on any other event a hook with `if` never
 * runs. The specifier is a glob with `*` (a trailing `:*` is the older prefix form), read against
 * the argument Claude Code names for the tool:
 * - Bash's `command`, as Claude Code reads it: each subcommand on its own (`a && b`, `a; b`, `a | b`,
 *   the commands inside `$( )` and backticks), leading `VAR=value` assignments left out, and the
 *   whole command too. A command whose quotes do not close cannot be read: the hook runs.
 * - the file tools' path: a specifier not starting with `//` is relative (to the project or the
 *   working directory), so it is found at any folder boundary of the path; `//` is absolute.
 * For other tools the specifier is not read and the hook runs. Every doubt resolves to running the
 * hook: a guard over-fires rather than never firing. Linear: one pass over the command, globs
 * compiled by RE2.
 */
import { posix } from "node:path";
import { RE2JS } from "re2js";
import { MAX_SUBJECT_CHARS, compileRegex, type Condition } from "../hooks.js";

/** Which argument a tool's specifier is read against. */
const SPECIFIER_FIELD: Record<string, string> = {
  Bash: "command",
  Read: "file_path",
  Edit: "file_path",
  MultiEdit: "file_path",
  Write: "file_path",
  NotebookEdit: "notebook_path",
};

const globBody = (spec: string) => spec.split("*").map((part) => RE2JS.quote(part)).join(".*");

/** A command glob with `*` as a linear-time test over the whole (sub)command; `*` crosses newlines. */
function commandGlob(spec: string): (text: string) => boolean {
  const prefix = spec.endsWith(":*");
  const pattern = globBody(prefix ? spec.slice(0, -2) : spec);
  return compileRegex(`(?s:${prefix ? `${pattern}.*` : pattern})`, { anchored: true });
}

/** A path glob: `//abs` from the root; anything else found at a folder boundary of the path. */
function pathGlob(spec: string): (text: string) => boolean {
  if (spec.startsWith("//")) return compileRegex(`(?s:${globBody(spec.slice(1))})`, { anchored: true });
  const rel = spec.replace(/^~\//, "").replace(/^\.\//, "").replace(/^\//, "");
  return compileRegex(`(?s:(?:.*/)?${globBody(rel)})`, { anchored: true });
}

/** @default 256 — subcommands read out of one command; past it the hook runs (no condition is tested that often). */
export const MAX_SUBCOMMANDS = 256;

/** Shell words that start a command without being it: `if x; then rm …`, `! rm`, `time rm`, `{ rm; }`. */
const PREFIX_WORDS = new Set(["if", "then", "else", "elif", "do", "while", "until", "!", "{", "}", "time", "exec", "command", "builtin", "nohup", "env"]);

/**
 * The subcommands of a shell command, each as written and as the shell would read its words (quotes
 * and backslashes taken out), or undefined when it cannot be read — quotes that do not close, a
 * heredoc, more than MAX_SUBCOMMANDS parts: then the hook runs. Splits outside quotes at `&&`,
 * `||`, `;`, `|`, `&`, newlines, `(`, `)`, `$(` and backticks (inside double quotes only at command
 * substitutions); skips comments; reads `$'…'` as ANSI-C quotes; drops each part's leading
 * assignments, redirections and prefix words. One pass.
 */
export function subcommands(command: string): string[] | undefined {
  const parts: string[] = [];
  let start = 0;
  let quote: "'" | '"' | "$'" | undefined;
  let tooMany = false;
  const cut = (end: number, next: number) => {
    const part = commandPart(command.slice(start, end));
    if (part) {
      if (parts.length >= 2 * MAX_SUBCOMMANDS) tooMany = true;
      else parts.push(...part);
    }
    start = next;
  };
  for (let i = 0; i < command.length && !tooMany; i++) {
    const c = command[i]!;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      continue;
    }
    if (quote === "$'") {
      if (c === "\\") i++;
      else if (c === "'") quote = undefined;
      continue;
    }
    if (c === "\\") {
      i++;
      continue;
    }
    if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === "`" || c === ")") cut(i, i + 1);
      else if (c === "$" && command[i + 1] === "(") cut(i, ++i + 1);
      continue;
    }
    if (c === "$" && command[i + 1] === "'") {
      quote = "$'";
      i++;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === "$" && command[i + 1] === "(") cut(i, ++i + 1);
    else if (c === "<" && command[i + 1] === "<") return undefined; // a heredoc: its body is not read here
    else if (c === "#" && (i === 0 || /[\s;&|()`]/.test(command[i - 1]!))) {
      // a comment, to the end of its line
      cut(i, i);
      const nl = command.indexOf("\n", i);
      i = nl === -1 ? command.length : nl - 1;
      start = i + 1;
    } else if (";|&\n()`".includes(c)) cut(i, i + 1);
  }
  if (quote || tooMany) return undefined;
  cut(command.length, command.length);
  return parts;
}

/**
 * One subcommand without its leading assignments (`A=1`, `B+=x`, `C[0]=y`), redirections (`>f`,
 * `2>&1`) and prefix words: as written, and with its quotes and backslashes taken out when it has any.
 */
function commandPart(text: string): string[] | undefined {
  let at = 0;
  for (;;) {
    while (at < text.length && /\s/.test(text[at]!)) at++;
    const end = wordEnd(text, at);
    if (end === at) break;
    const word = text.slice(at, end);
    if (end >= text.length && isAssignment(word)) break; // an assignment alone: kept as it is
    if (!(isAssignment(word) || /^[0-9]*[<>]/.test(word) || PREFIX_WORDS.has(word))) break;
    at = end;
  }
  const part = text.slice(at).trim();
  if (!part) return undefined;
  const bare = unquote(part);
  return bare === part ? [part] : [part, bare];
}

/** Where the shell word starting at `at` ends (quotes kept inside it). */
function wordEnd(text: string, at: number): number {
  let quote: string | undefined;
  let i = at;
  for (; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === "\\" && quote === '"') i++;
      else if (c === quote) quote = undefined;
    } else if (c === "\\") i++;
    else if (c === "'" || c === '"') quote = c;
    else if (/\s/.test(c)) break;
  }
  return Math.min(i, text.length);
}

const isAssignment = (word: string) => /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/.test(word);

/** The words as the shell reads them: quotes and backslashes out (`'rm' -rf` → `rm -rf`, `r\m` → `rm`). */
function unquote(text: string): string {
  let out = "";
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === "\\" && quote === '"' && i + 1 < text.length) out += text[++i];
      else out += c;
    } else if (c === "\\" && i + 1 < text.length) out += text[++i];
    else if (c === "'" || c === '"') quote = c;
    else out += c;
  }
  return out;
}

/** A command's subcommands, read once however many conditions test it (the last few commands kept). */
const readCommands = new Map<string, string[] | undefined>();
function partsOf(command: string): string[] | undefined {
  if (readCommands.has(command)) return readCommands.get(command);
  const parts = subcommands(command);
  if (readCommands.size >= 16) readCommands.delete(readCommands.keys().next().value!);
  readCommands.set(command, parts);
  return parts;
}

/** Parsed once per event body, however many hooks carry a condition. */
const inputs = new WeakMap<object, Record<string, unknown>>();

/** The tool's arguments, from a snake_case body (`tool_input`) or a camelCase one (`toolArgs`, a JSON string). */
function toolInput(body: Record<string, unknown>): Record<string, unknown> {
  let input = inputs.get(body);
  if (!input) inputs.set(body, (input = readInput(body)));
  return input;
}

function readInput(body: Record<string, unknown>): Record<string, unknown> {
  let input = body.tool_input ?? body.toolArgs;
  if (typeof input === "string") {
    try {
      input = JSON.parse(input);
    } catch {
      return {};
    }
  }
  return typeof input === "object" && input !== null ? (input as Record<string, unknown>) : {};
}

export function claudeCondition(rule: string): Condition {
  const text = rule.trim();
  const open = text.indexOf("(");
  const tool = open === -1 ? text : text.slice(0, open);
  if (open !== -1 && !text.endsWith(")")) throw new Error(`expected Tool or Tool(specifier), got ${JSON.stringify(text.slice(0, 80))}`);
  const spec = open === -1 ? undefined : text.slice(open + 1, -1);
  const field = SPECIFIER_FIELD[tool];
  const test = spec !== undefined && spec !== "*" && field !== undefined ? (tool === "Bash" ? commandGlob(spec) : pathGlob(spec)) : undefined;
  return {
    source: rule,
    test(body) {
      const name = body.tool_name ?? body.toolName;
      // Claude Code: "On other events, a hook with `if` set never runs."
      if (typeof name !== "string") return false;
      if (name !== tool) return false;
      if (!test || !field) return true;
      const value = toolInput(body)[field];
      if (typeof value !== "string") return false;
      if (value.length > MAX_SUBJECT_CHARS) return true;
      if (tool !== "Bash") return test(posix.normalize(value)) || test(value);
      if (test(value)) return true;
      const parts = partsOf(value);
      return parts === undefined || parts.some(test);
    },
  };
}
