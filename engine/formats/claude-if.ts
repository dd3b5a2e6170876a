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

/** A command glob with `*` as a linear-time test over the whole (sub)command. */
function commandGlob(spec: string): (text: string) => boolean {
  const prefix = spec.endsWith(":*");
  const pattern = globBody(prefix ? spec.slice(0, -2) : spec);
  return compileRegex(prefix ? `${pattern}.*` : pattern, { anchored: true });
}

/** A path glob: `//abs` from the root; anything else found at a folder boundary of the path. */
function pathGlob(spec: string): (text: string) => boolean {
  if (spec.startsWith("//")) return compileRegex(globBody(spec.slice(1)), { anchored: true });
  const rel = spec.replace(/^~\//, "").replace(/^\.\//, "").replace(/^\//, "");
  return compileRegex(`(?:.*/)?${globBody(rel)}`, { anchored: true });
}

/**
 * The subcommands of a shell command, or undefined when its quotes do not close. Splits outside
 * single quotes at `&&`, `||`, `;`, `|`, `&`, newlines, `(`, `)`, `$(` and backticks (inside double
 * quotes only at command substitutions), one pass, and drops each part's leading assignments.
 */
export function subcommands(command: string): string[] | undefined {
  const parts: string[] = [];
  let start = 0;
  let quote: "'" | '"' | undefined;
  const cut = (end: number, next: number) => {
    const part = withoutAssignments(command.slice(start, end));
    if (part) parts.push(part);
    start = next;
  };
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (quote === "'") {
      if (c === "'") quote = undefined;
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
    if (c === "'" || c === '"') quote = c;
    else if (c === "$" && command[i + 1] === "(") cut(i, ++i + 1);
    else if (";|&\n()`".includes(c)) cut(i, i + 1);
  }
  if (quote) return undefined;
  cut(command.length, command.length);
  return parts;
}

/** `A=1 B='x y' cmd args` → `cmd args`; trimmed. One pass. */
function withoutAssignments(text: string): string {
  let at = 0;
  for (;;) {
    while (at < text.length && /\s/.test(text[at]!)) at++;
    let i = at;
    if (i >= text.length || !/[A-Za-z_]/.test(text[i]!)) break;
    while (i < text.length && /\w/.test(text[i]!)) i++;
    if (text[i] !== "=") break;
    i++;
    // the value: quoted or bare, up to the next unquoted blank
    let quote: string | undefined;
    for (; i < text.length; i++) {
      const c = text[i]!;
      if (quote) {
        if (c === quote) quote = undefined;
      } else if (c === "'" || c === '"') quote = c;
      else if (/\s/.test(c)) break;
    }
    if (i >= text.length) break; // an assignment alone, no command: keep it as it is
    at = i;
  }
  return text.slice(at).trim();
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
      if (value.length > MAX_SUBJECT_CHARS || test(value)) return true;
      if (tool !== "Bash") return false;
      const parts = subcommands(value);
      return parts === undefined || parts.some(test);
    },
  };
}
