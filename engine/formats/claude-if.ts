/**
 * @module Claude Code's `if` on a hook: a permission rule — `Tool` or `Tool(specifier)` — the tool
 * call must match for the hook to run (Claude Code hooks reference, "if"; permission-rule syntax in
 * its settings page). It is read on tool events only: on any other event a hook with `if` never
 * runs. The specifier is a glob with `*` (a trailing `:*` is the older prefix form), read against
 * the argument Claude Code names for the tool:
 * - Bash's `command`, as Claude Code reads it: each subcommand on its own (`a && b`, `a; b`, `a | b`,
 *   the commands inside `$( )` and backticks), leading `VAR=value` assignments left out, and the
 *   whole command too. A command whose quotes do not close cannot be read: the hook runs; and a
 *   rule that names more than the command (`git push *`) runs it on any `$( )`, backtick or `$VAR`.
 * - the file tools' path: a specifier not starting with `//` is relative (to the project or the
 *   working directory), so it is found at any folder boundary of the path; `//` is absolute.
 * For other tools the specifier is not read and the hook runs. Every doubt resolves to running the
 * hook: a guard over-fires rather than never firing. Linear: one pass over the command, globs
 * compiled by RE2.
 */
import { posix } from "node:path";
import { RE2JS } from "re2js";
import { MAX_SUBJECT_CHARS, compileRegex, type Condition } from "../hooks.js";
import { toolArgumentsOf } from "../payload.js";

/** Which argument a tool's specifier is read against. */
const SPECIFIER_FIELD: Record<string, string> = {
  Bash: "command",
  Read: "file_path",
  Edit: "file_path",
  MultiEdit: "file_path",
  Write: "file_path",
  NotebookEdit: "notebook_path",
  Grep: "path",
  Glob: "path",
};

/**
 * Claude Code's permission rules: an `Edit` rule covers every tool that edits files, a `Read` rule
 * every tool that reads them; each is tested against its own path argument.
 */
const RULE_TOOLS: Record<string, readonly string[]> = {
  Edit: ["Edit", "MultiEdit", "Write", "NotebookEdit"],
  Read: ["Read", "Grep", "Glob"],
};

/** Whether a rule's tool names the called tool: itself, its family, or an MCP server (`mcp__github`, `mcp__github__*`) for each of its tools. */
function namesTool(rule: string, name: string): boolean {
  // Own keys only: a rule or a tool named "constructor" is no family of tools.
  if (rule === name || (Object.hasOwn(RULE_TOOLS, rule) && RULE_TOOLS[rule]!.includes(name))) return true;
  if (!rule.startsWith("mcp__")) return false;
  const server = rule.endsWith("__*") ? rule.slice(0, -3) : rule.split("__").length === 2 ? rule : undefined;
  return server !== undefined && name.startsWith(`${server}__`);
}

/** Whether a command rule holds a wildcard: a `*` no backslash escapes (`\\*` is a backslash, then one). */
function hasWildcard(spec: string): boolean {
  for (let i = 0; i < spec.length; i++) {
    if (spec[i] === "\\" && (spec[i + 1] === "*" || spec[i + 1] === "\\")) i++;
    else if (spec[i] === "*") return true;
  }
  return false;
}

/** A wildcard rule's body: `*` any text, `\*` a star and `\\` a backslash (as Claude Code reads a rule's wildcards), the rest as written. */
function globBody(spec: string): string {
  let body = "";
  let literal = "";
  for (let i = 0; i < spec.length; i++) {
    const c = spec[i]!;
    const next = spec[i + 1];
    if (c === "\\" && (next === "*" || next === "\\")) {
      literal += next;
      i++;
    } else if (c === "*") {
      body += `${RE2JS.quote(literal)}.*`;
      literal = "";
    } else literal += c;
  }
  return body + RE2JS.quote(literal);
}

/**
 * A command glob with `*` as a linear-time test over the whole (sub)command; `*` crosses newlines.
 * A trailing ` *` also takes the bare command (`git push *` fires for `git push`), as Claude Code
 * reads it; a trailing `:*` is any text after the prefix.
 */
function commandGlob(spec: string): (text: string) => boolean {
  // A rule with no wildcard is the command exactly as written, its backslashes too.
  if (!hasWildcard(spec)) return compileRegex(`(?s:${RE2JS.quote(spec)})`, { anchored: true });
  if (spec.endsWith(":*")) return compileRegex(`(?s:${globBody(spec.slice(0, -2))}.*)`, { anchored: true });
  if (spec.endsWith(" *")) return compileRegex(`(?s:${globBody(spec.slice(0, -2))}(?: .*)?)`, { anchored: true });
  return compileRegex(`(?s:${globBody(spec)})`, { anchored: true });
}

/** A path glob: `//abs` from the root; anything else found at a folder boundary of the path. */
function pathGlob(spec: string): (text: string) => boolean {
  // gitignore's `[…]` classes are not read here: a rule with one cannot be read (the hook runs).
  if (/[[\]]/.test(spec)) throw new Error(`a path pattern with [ ] is not read: ${JSON.stringify(spec.slice(0, 80))}`);
  if (spec.startsWith("//")) return compileRegex(`(?s:${pathBody(spec.slice(1))})`, { anchored: true });
  const rel = spec.replace(/^~\//, "").replace(/^\.\//, "").replace(/^\//, "");
  return compileRegex(`(?s:(?:.*/)?${pathBody(rel)})`, { anchored: true });
}

/** A path glob's body: `**\/` is any folders or none, `*` any text (wider than gitignore's, never narrower), `?` one character. */
function pathBody(spec: string): string {
  return spec.split("**/").map((part) => part.split("*").map((p) => p.split("?").map((q) => RE2JS.quote(q)).join(".")).join(".*")).join("(?:.*/)?");
}

/** @default 256 — subcommands read out of one command: 2 × this many forms (a subcommand is one or two); past them the hook runs (no condition is tested that often). */
export const MAX_SUBCOMMANDS = 256;

/** Shell words that start a command without being it: `if x; then rm …`, `! rm`, `{ rm; }`, zsh's `noglob rm`. */
const PREFIX_WORDS = new Set(["if", "then", "else", "elif", "do", "while", "until", "!", "{", "}", "coproc", "noglob", "nocorrect"]);

/** A command that runs the rest of its words as a command: what its options and leading operands are. */
interface Wrapper {
  /** options that take an argument: short letters (also at the end of a group, `-vs KILL`) and long names */
  arg?: string;
  long?: readonly string[];
  /** operands before the command it runs (`timeout 5 rm`, `flock FILE rm`, `chroot DIR rm`) */
  operands?: number;
  /** options that make it run a string as a shell command (`env -S`, `flock -c`): no rule reads that */
  opaque?: string;
  opaqueLong?: readonly string[];
}
const WRAPPERS: Record<string, Wrapper> = {
  time: {}, nohup: {}, builtin: {}, command: {}, setsid: {}, busybox: {}, caffeinate: {}, torsocks: {}, fakeroot: { arg: "lsi" },
  exec: { arg: "a" },
  env: { arg: "uC", long: ["--unset", "--chdir"], opaque: "S", opaqueLong: ["--split-string"] },
  nice: { arg: "n", long: ["--adjustment"] },
  ionice: { arg: "cnp", long: ["--class", "--classdata", "--pid"] },
  timeout: { arg: "sk", long: ["--signal", "--kill-after"], operands: 1 },
  stdbuf: { arg: "ioe" },
  chrt: { operands: 1 },
  taskset: { operands: 1 },
  chroot: { operands: 1 },
  flock: { arg: "wE", long: ["--timeout", "--wait", "--conflict-exit-code"], operands: 1, opaque: "c", opaqueLong: ["--command"] },
  unshare: {}, firejail: {}, proxychains: { arg: "f" }, proxychains4: { arg: "f" },
  strace: { arg: "abeEIoOpPsSuX" }, ltrace: { arg: "aAeEnoOpsuX" },
};
/** Commands whose own words hide the command they run: a rule cannot read them, so the hook runs. */
const OPAQUE = new Set([
  "eval", "sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "csh", "tcsh", "busybox-sh", "xargs", "sudo", "doas", "su", "pkexec", "runuser",
  "find", "parallel", "watch", "source", ".", "trap", "mapfile", "readarray", "script",
]);
const BLANK = (c: string | undefined) => c === " " || c === "\t";

/** A command substitution (or the outer command) being read: its text so far, and how it ends. */
interface Level {
  closer?: ")" | "`";
  /** `(` open inside it */
  depth: number;
  /** opened inside double quotes: they resume after it */
  inQuote: boolean;
  /** its current subcommand's text before `start`, a substitution in it read as the word `$_` */
  text: string;
}

/**
 * The subcommands of a shell command, each as written (from its command word on) and as the shell
 * reads its words (quotes, backslashes and redirections taken out, the command word's folder too),
 * or undefined when it cannot be read — quotes or a substitution that do not close, a heredoc, a
 * command word made by an expansion (`$x`, `$(…)`, `{a,b}`, a glob such as `/bin/r[m]`), a `case`
 * inside `$( )`, backticks nested in backticks, or a command word that runs its arguments (`eval`,
 * `sh -c`, `xargs`, `sudo`), more than 2 × MAX_SUBCOMMANDS forms: then the hook runs. Splits outside
 * quotes at `&&`, `||`, `;`, `|`, `&`, newlines, `(`, `)`; the command in a `$( )` or backticks —
 * also inside double quotes — is a subcommand of its own, and stands in its command as the word
 * part `$_`. Skips comments (a `#` that starts a word); reads `$'…'` as ANSI-C quotes. One pass.
 */
export function subcommands(command: string): string[] | undefined {
  const parts: string[] = [];
  const levels: Level[] = [{ depth: 0, inQuote: false, text: "" }];
  let start = 0;
  let quote: "'" | '"' | "$'" | undefined;
  let braces = 0; // `${ … }` open: no comment starts inside
  let escaped = -1; // the last character a backslash took
  let doubt = false;
  const level = () => levels[levels.length - 1]!;
  /** Ends the current level's subcommand at `end`; the next one starts at `next`. */
  const cut = (end: number, next: number) => {
    const lv = level();
    const part = commandPart(lv.text + command.slice(start, end));
    lv.text = "";
    if (part === null) doubt = true;
    else if (part) {
      if (parts.length >= 2 * MAX_SUBCOMMANDS) doubt = true;
      else parts.push(...part);
    }
    start = next;
  };
  /** A substitution opens at `i`: its command is read on its own, the outer one reads `$_` there. */
  const open = (i: number, length: number, closer: ")" | "`", inQuote: boolean) => {
    level().text += `${command.slice(start, i)}$_`;
    levels.push({ closer, depth: 0, inQuote, text: "" });
    start = i + length;
  };
  const close = (i: number) => {
    cut(i, i + 1);
    if (levels.pop()!.inQuote) quote = '"';
  };
  /** Whether the character at `i` starts a word: after a blank, an operator, `(` or `$(`, an opening backtick, or a line continuation after one of those. */
  const wordStart = (i: number) => {
    let j = i - 1;
    if (j >= 0 && escaped === j && command[j] === "\n") j -= 2; // `\<newline>` is gone before bash reads words
    if (j < 0) return true;
    if (escaped === j) return false;
    const c = command[j]!;
    return /[ \t\n;&|(]/.test(c) || (c === "`" && level().closer === "`" && start === j + 1);
  };
  for (let i = 0; i < command.length && !doubt; i++) {
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
      // Inside backticks, an escaped backtick opens a substitution nested in it: not read here.
      if (command[i + 1] === "`" && levels.some((lv) => lv.closer === "`")) doubt = true;
      escaped = ++i;
      continue;
    }
    const top = levels.length > 1 ? level() : undefined;
    if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === "`") {
        quote = undefined;
        open(i, 1, "`", true);
      } else if (c === "$" && command[i + 1] === "(") {
        quote = undefined;
        open(i, 2, ")", true);
        i++;
      }
      continue;
    }
    if (c === "$" && command[i + 1] === "'") {
      quote = "$'";
      i++;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === "$" && command[i + 1] === "{") {
      braces++;
      i++;
    } else if (c === "}" && braces > 0) braces--;
    else if (c === "$" && command[i + 1] === "(") {
      open(i, 2, ")", false);
      i++;
    } else if (c === "`") {
      if (top?.closer === "`") close(i);
      else open(i, 1, "`", false);
    } else if (c === "(") {
      if (top?.closer === ")") top.depth++;
      cut(i, i + 1);
    } else if (c === ")") {
      if (top?.closer === ")" && top.depth === 0) close(i);
      else {
        if (top?.closer === ")") top.depth--;
        cut(i, i + 1);
      }
    } else if (c === "<" && command[i + 1] === "<") return undefined; // a heredoc: its body is not read here
    else if ((c === "&" || c === "|") && (command[i - 1] === ">" || command[i - 1] === "<")) continue; // `>&2`, `>|f`
    else if (c === "#" && braces === 0 && wordStart(i)) {
      // A comment, to the end of its line — inside backticks, to the closing one if it comes first:
      // the shell finds the backticks' end before it reads the command in them.
      cut(i, i);
      const nl = command.indexOf("\n", i);
      const tick = top?.closer === "`" ? closingTick(command, i, nl === -1 ? command.length : nl) : -1;
      const end = tick !== -1 && (nl === -1 || tick < nl) ? tick : nl;
      i = end === -1 ? command.length : end - 1;
      start = i + 1;
    } else if (c === "c" && top?.closer === ")" && /^case[ \t\n]/.test(command.slice(i, i + 5)) && wordStart(i)) {
      // A `case` inside `$( )`: its patterns end with a `)` that does not close the substitution.
      doubt = true;
    } else if (";|&\n".includes(c)) cut(i, i + 1);
  }
  if (quote || doubt || levels.length > 1) return undefined;
  cut(command.length, command.length);
  return doubt ? undefined : parts;
}

/** The first backtick in `[i, end)` that a backslash does not escape, or -1: where backticks end. */
function closingTick(command: string, i: number, end: number): number {
  for (let j = i; j < end; j++) {
    if (command[j] === "\\") j++;
    else if (command[j] === "`") return j;
  }
  return -1;
}

/** A shell word that is a redirection: its operator, and whether its target is in the same word. */
function redirection(word: string): { alone: boolean } | undefined {
  const m = /^([0-9]+|\{[A-Za-z_][A-Za-z0-9_]*\})?(&>>|&>|>>|>\||>&|<&|<>|>|<)(.*)$/s.exec(word);
  return m ? { alone: m[3] === "" } : undefined;
}

/**
 * One subcommand from its command word on — without leading assignments (`A=1`, `B+=x`,
 * `C[0]=y`), redirections (`>f`, `2>&1`, `> f`), prefix words and wrappers with their options
 * (`time -p`, `env -i`, `timeout 5`, `nice -n 5`, `function f`) — as written, and as the shell reads
 * its words; null when the command word cannot be read by a rule (the hook must run).
 */
function commandPart(text: string): string[] | null | undefined {
  const words = splitWords(text);
  let k = 0;
  /** the first wrapper's word: a rule may name the wrapper itself (`Bash(chroot *)`) */
  let wrapperAt: number | undefined;
  while (k < words.length) {
    const { raw, at } = words[k]!;
    const word = unquote(raw);
    const wordBase = word.slice(word.lastIndexOf("/") + 1); // `/usr/bin/env` is env
    if (isAssignment(raw)) {
      if (k === words.length - 1) return [text.slice(at).trim()]; // an assignment alone: kept as it is
      k++;
    } else if (redirection(raw)) k += redirection(raw)!.alone ? 2 : 1;
    else if (word === "coproc" && unquote(words[k + 2]?.raw ?? "") === "{") k += 3; // `coproc NAME { …; }`
    else if (PREFIX_WORDS.has(word)) k++;
    else if (word === "function") k += 2;
    else if (Object.hasOwn(WRAPPERS, wordBase)) {
      wrapperAt ??= k;
      const w = WRAPPERS[wordBase]!;
      k = skipOptions(words, k + 1, w);
      // Options may follow the operands too (`flock FILE -c …`).
      if (k >= 0 && w.operands) k = skipOptions(words, k + w.operands, w);
      if (k < 0) return null;
    } else break;
  }
  // The wrapper as a command of its own, too.
  const wrapped = wrapperAt !== undefined ? forms(text, words, wrapperAt) : [];
  if (k >= words.length) return wrapped.length > 0 ? wrapped : undefined;
  const head = words[k]!;
  // The command word itself is an expansion, or runs its arguments as a command: no rule reads that.
  if (/[$`]/.test(head.raw) || braceExpansion(head.raw) || globWord(head.raw)) return null;
  if (OPAQUE.has(baseOf(unquote(head.raw)))) return null;
  return [...new Set([...forms(text, words, k), ...wrapped])];
}

const baseOf = (name: string) => name.slice(name.lastIndexOf("/") + 1);

/**
 * A command from its word `k` on, as written and as the shell reads its words (redirections out,
 * the command word's folder out); and without the `$_` a substitution left, so an exact rule still
 * sees `git push --force` in `git push --force$(true)`.
 */
function forms(text: string, words: { raw: string; at: number }[], k: number): string[] {
  const asWritten = text.slice(words[k]!.at).trim();
  const read = words.slice(k).filter((w, n, all) => {
    if (redirection(w.raw)) return false;
    const before = all[n - 1];
    return !(before && redirection(before.raw)?.alone);
  }).map((w, n) => (n === 0 ? baseOf(unquote(w.raw)) : unquote(w.raw))).join(" ");
  const out = [asWritten, read];
  if (read.includes("$_")) out.push(read.replaceAll("$_", "").replace(/ {2,}/g, " ").trim());
  return [...new Set(out)];
}

/** Past a wrapper's options from word `k`: the next word's index, or -1 when an option runs a string as a command. */
function skipOptions(words: { raw: string }[], k: number, w: Wrapper): number {
  while (k < words.length) {
    const opt = unquote(words[k]!.raw);
    if (opt === "--") return k + 1;
    if (!opt.startsWith("-") || opt === "-") return k;
    if (opt.startsWith("--")) {
      const name = opt.split("=")[0]!;
      if (w.opaqueLong?.includes(name)) return -1;
      k += w.long?.includes(name) && !opt.includes("=") ? 2 : 1;
      continue;
    }
    // A group of short options: the first that takes an argument takes the rest of the word, or the next word.
    k++;
    for (let j = 1; j < opt.length; j++) {
      if (w.opaque?.includes(opt[j]!)) return -1;
      if (w.arg?.includes(opt[j]!)) {
        if (j === opt.length - 1) k++;
        break;
      }
    }
  }
  return k;
}

/** The shell words of a text (blanks are spaces and tabs, as bash's), each raw with where it starts. */
function splitWords(text: string): { raw: string; at: number }[] {
  const words: { raw: string; at: number }[] = [];
  let i = 0;
  while (i < text.length) {
    // Blanks, newlines and line continuations (`\<newline>`) between words.
    while (i < text.length && (BLANK(text[i]) || text[i] === "\n" || (text[i] === "\\" && text[i + 1] === "\n"))) i += text[i] === "\\" ? 2 : 1;
    if (i >= text.length) break;
    const at = i;
    let quote: string | undefined;
    for (; i < text.length; i++) {
      const c = text[i]!;
      if (quote) {
        if (c === "\\" && quote !== "'") i++;
        else if (c === quote[quote.length - 1]) quote = undefined;
      } else if (c === "\\") {
        if (text[i + 1] === "\n") {
          i++; // a line continuation: the word goes on
          continue;
        }
        i++;
      } else if (c === "$" && text[i + 1] === "'") {
        quote = "$'";
        i++;
      } else if (c === "'" || c === '"') quote = c;
      else if (BLANK(c) || c === "\n") break;
      // `rm>/dev/null`: a redirection ends the word before it (`2>`, `{fd}>` belong to it)
      else if ((c === ">" || c === "<") && i > at && !/^([0-9]+|\{[A-Za-z_][A-Za-z0-9_]*\})$/.test(text.slice(at, i))) break;
    }
    words.push({ raw: text.slice(at, Math.min(i, text.length)), at });
  }
  return words;
}

/** Whether a word has a `{…,…}` the shell expands into words. One pass. */
function braceExpansion(word: string): boolean {
  let open = false;
  let comma = false;
  for (const c of word) {
    if (c === "{") [open, comma] = [true, false];
    else if (c === "," && open) comma = true;
    else if (c === "}" && open && comma) return true;
    else if (c === "}") open = false;
  }
  return false;
}

/**
 * Whether a word has a pattern the shell expands into file names (`/bin/r[m]`, `/usr/bin/e?v`,
 * `z*`): an unquoted `*` or `?`, or an unquoted `[` with a `]` after it. One pass.
 */
function globWord(word: string): boolean {
  let quote: string | undefined;
  let bracket = false;
  for (let i = 0; i < word.length; i++) {
    const c = word[i]!;
    if (quote) {
      if (c === "\\" && quote !== "'") i++;
      else if (c === quote) quote = undefined;
    } else if (c === "\\") i++;
    else if (c === "'" || c === '"') quote = c;
    else if (c === "*" || c === "?" || (c === "]" && bracket)) return true;
    else if (c === "[") bracket = true;
  }
  return false;
}

const isAssignment = (word: string) => /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/.test(word);

const ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", a: "\x07", b: "\b", e: "\x1b", E: "\x1b", f: "\f", v: "\v" };

/**
 * A word as the shell reads it: quotes and backslashes out (`'rm'` → `rm`, `r\m` → `rm`), a line
 * continuation gone, `$'…'` decoded (`$'\x72m'` → `rm`), `$"…"` as `"…"`.
 */
function unquote(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "\\") {
      if (text[i + 1] !== "\n" && i + 1 < text.length) out += text[i + 1];
      i++;
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      out += text.slice(i + 1, end === -1 ? text.length : end);
      i = end === -1 ? text.length : end;
    } else if (c === "$" && text[i + 1] === "'") {
      for (i += 2; i < text.length && text[i] !== "'"; i++) {
        if (text[i] !== "\\") {
          out += text[i];
          continue;
        }
        const e = text[++i] ?? "";
        const hex = e === "x" ? /^[0-9a-fA-F]{1,2}/.exec(text.slice(i + 1, i + 3)) : null;
        const oct = /^[0-7]{1,3}/.exec(text.slice(i, i + 3));
        if (hex) {
          out += String.fromCharCode(parseInt(hex[0], 16));
          i += hex[0].length;
        } else if (oct) {
          out += String.fromCharCode(parseInt(oct[0], 8));
          i += oct[0].length - 1;
        } else out += ESCAPES[e] ?? e;
      }
    } else if (c === '"' || (c === "$" && text[i + 1] === '"')) {
      if (c === "$") i++;
      for (i++; i < text.length && text[i] !== '"'; i++) {
        if (text[i] === "\\" && (text[i + 1] === '"' || text[i + 1] === "\\" || text[i + 1] === "$" || text[i + 1] === "`")) out += text[++i];
        else if (text[i] === "\\" && text[i + 1] === "\n") i++;
        else out += text[i];
      }
    } else out += c;
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

/** An expansion a rule cannot see through: `$( )`, backticks, `$VAR`, `${…}`, `$1`, `$@` … (`$'…'` is a quote, read as one). */
const EXPANSION = /\$[A-Za-z0-9_{(@*#?$!-]|`/;

/**
 * Whether a Bash specifier says more than the command's name (`git push *`, `npm test`; not
 * `git *` nor `git`): Claude Code runs such a rule's hook whenever the command holds `$( )`,
 * backticks or `$VAR` ("patterns that specify more than the command name run the hook anyway").
 */
const moreThanName = (spec: string) => /[ \t]/.test(spec.replace(/(?: \*|:\*|\*)$/, "").trim());

/**
 * A path as Claude Code compares it (`posix.normalize`), the last one kept: an event's thousand
 * `Read(…)` rules read one path, which is normalized once, not once a rule (Node's normalize of a
 * run of `../` costs a millisecond at 8 KiB).
 */
let lastNormalized: { path: string; normal: string } | undefined;
function normalized(path: string): string {
  if (lastNormalized?.path !== path) lastNormalized = { path, normal: posix.normalize(path) };
  return lastNormalized.normal;
}

export function claudeCondition(rule: string): Condition {
  const text = rule.trim();
  const open = text.indexOf("(");
  const tool = open === -1 ? text : text.slice(0, open);
  if (open !== -1 && !text.endsWith(")")) throw new Error(`expected Tool or Tool(specifier), got ${JSON.stringify(text.slice(0, 80))}`);
  // A tool name is one word: anything else is no rule (and must not quietly match nothing).
  if (!/^[A-Za-z0-9_.:*-]+$/.test(tool)) throw new Error(`expected Tool or Tool(specifier), got ${JSON.stringify(text.slice(0, 80))}`);
  // The specifier as Claude Code reads it: its blanks at either end are no part of it.
  const spec = open === -1 ? undefined : text.slice(open + 1, -1).trim();
  const specified = spec !== undefined && spec !== "*" && Object.hasOwn(SPECIFIER_FIELD, tool);
  const test = specified ? (tool === "Bash" ? commandGlob(spec) : pathGlob(spec)) : undefined;
  const runsOnExpansion = specified && tool === "Bash" && moreThanName(spec);
  return {
    source: rule,
    test(body) {
      const name = body.tool_name ?? body.toolName;
      // Claude Code: "On other events, a hook with `if` set never runs."
      if (typeof name !== "string") return false;
      if (!namesTool(tool, name)) return false;
      const field = Object.hasOwn(SPECIFIER_FIELD, name) ? SPECIFIER_FIELD[name] : undefined;
      if (!test || !field) return true;
      const value = toolArgumentsOf(body)[field];
      // A search without a path searches the working folder: the rule cannot tell, so the hook runs.
      if (value === undefined && (name === "Grep" || name === "Glob")) return true;
      if (typeof value !== "string") return false;
      if (value.length > MAX_SUBJECT_CHARS) return true;
      if (name !== "Bash") return test(normalized(value)) || test(value);
      if (runsOnExpansion && EXPANSION.test(value)) return true;
      if (test(value)) return true;
      const parts = partsOf(value);
      return parts === undefined || parts.some(test);
    },
  };
}
