/**
 * @module Claude Code's `if` on a hook: a permission rule — `Tool` or `Tool(specifier)` — the tool
 * call must match for the hook to run (Claude Code hooks reference, "if"; permission-rule syntax in
 * its settings page). The specifier is a glob with `*` (a trailing `:*` is the older prefix form),
 * read against the argument Claude Code names for the tool: Bash's `command`, the file tools'
 * `file_path`. For other tools the specifier is not read and the hook runs (a guard over-fires
 * rather than never firing). Linear: the glob is compiled by RE2.
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

/** A glob with `*` as a linear-time test over the whole text. */
function glob(spec: string): (text: string) => boolean {
  const prefix = spec.endsWith(":*");
  const body = prefix ? spec.slice(0, -2) : spec;
  const pattern = body.split("*").map((part) => RE2JS.quote(part)).join(".*");
  return compileRegex(prefix ? `${pattern}.*` : pattern, { anchored: true });
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
  const test = spec !== undefined && spec !== "*" && field !== undefined ? glob(spec) : undefined;
  return {
    source: rule,
    test(body) {
      const name = body.tool_name ?? body.toolName;
      if (typeof name !== "string") return true; // not a tool event: `if` does not apply
      if (name !== tool) return false;
      if (!test || !field) return true;
      const value = toolInput(body)[field];
      if (typeof value !== "string") return false;
      return value.length > MAX_SUBJECT_CHARS || test(value);
    },
  };
}
