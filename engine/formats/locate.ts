/**
 * @module Line numbers for config errors and bad request bodies: where a path
 * (`hooks.PreToolUse[1].timeout`) stands in a TOML or JSON text, and where a JSON text stops being
 * JSON. Linear time on hostile text (STYLE.md 13): every index is built once per text and holds at
 * most the text's own characters, a line and column come from a binary search over line starts,
 * and no regex runs over the text.
 */
import { parse as parseJsonc, printParseErrorCode, visit } from "jsonc-parser";

export type Path = readonly (string | number)[];

export interface Position {
  line: number;
  column: number;
}

export type Locator = (path: Path) => Position | undefined;

export function formatPath(path: Path): string {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`)).join("") || "(top level)";
}

/** Offset → line and column (1-based, UTF-16 units), from the line starts found once. */
export function lineIndex(text: string): (offset: number) => Position {
  const starts = [0];
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  return (offset) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - starts[lo]! + 1 };
  };
}

// ---------------------------------------------------------------- TOML

const unquote = (s: string) => s.trim().replace(/^["']|["']$/g, "");
const splitKey = (s: string) => s.split(".").map(unquote);
const DOTTED_OR_QUOTED = /[."']/;
const isKeyChar = (c: number) =>
  (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f || c === 0x2e || c === 0x22 || c === 0x27 || c === 0x20 || c === 0x2d;
const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0b || c === 0x0c || c === 0x0d || c === 0xa0 || c === 0xfeff;

/** `key = …` at the start of a trimmed line: the key, else undefined (a hand-written scan: no backtracking). */
function keyOf(line: string): string | undefined {
  let end = 0;
  while (end < line.length && isKeyChar(line.charCodeAt(end))) end++;
  let i = end;
  while (i < line.length && isSpace(line.charCodeAt(i))) i++;
  return end > 0 && line[i] === "=" ? line.slice(0, end) : undefined;
}

/** `[[name]]` or `[name]` at the start of a trimmed line. */
function headerOf(line: string): { name: string; array: boolean } | undefined {
  if (line[0] !== "[") return undefined;
  if (line[1] === "[") {
    const close = line.indexOf("]", 2);
    if (close > 2 && line[close + 1] === "]") return { name: line.slice(2, close), array: true };
  }
  const close = line.indexOf("]", 1);
  return close > 1 ? { name: line.slice(1, close), array: false } : undefined;
}

/**
 * @default 256 — longest header or key name (as written) whose line is remembered; a longer one
 * (and every key under a longer header) is not indexed, so the index holds at most the text's own
 * characters and a lookup hashes at most this many per candidate.
 */
export const MAX_TOML_NAME_CHARS = 256;
/** @default 32 — deepest path prefix a lookup considers; hook-file paths are a few steps deep */
export const MAX_TOML_LOOKUP_STEPS = 32;
/** the longest table or key name the index can hold: an array element's table adds '.' and its index */
const LONGEST_INDEXED = MAX_TOML_NAME_CHARS + 16;

interface TomlTable {
  /** the line of the table's header (of an array's first element for `[[name]]`), if any */
  line?: number;
  /** key (dotted, as normalised) → its line; made on the first key */
  keys?: Map<string, number>;
}

/**
 * The line of every header and key of a TOML text, one pass: table name → its header line and
 * its keys' lines. Each header's name is kept once, each key line keeps only its key — never the
 * table's name joined to every key, which made a long header times many keys quadratic. Lines
 * inside a value that spans lines (a multi-line string, an open array) and comments are passed over
 * (scanValues): a `[` that opens a line of a command's text is no table header.
 */
function tomlLines(text: string, keep?: ReadonlySet<string>): Tables {
  const tables = new Map<string, TomlTable>([["", {}]]);
  // Each header's name as written → as normalised, worked out once however often it is repeated.
  const names = new Map<string, string>();
  const normal = (raw: string) => {
    let name = names.get(raw);
    if (name === undefined) names.set(raw, (name = splitKey(raw).join(".")));
    return name;
  };
  const tableOf = (name: string): TomlTable => {
    let t = tables.get(name);
    if (!t) tables.set(name, (t = {}));
    return t;
  };
  // The elements of each array of tables, in order, as a tree of the array's name's parts (an
  // element's index a part too): `name.N` is looked up here, never made a string per element, and a
  // header is resolved part by part, each looked up alone, no further than an array's name can go.
  const arrayTree: ArrayNode = {};
  /** The node of a resolved name (made on the way with `make`). */
  const nodeOf = (name: string, make: boolean): ArrayNode | undefined => {
    let node: ArrayNode | undefined = arrayTree;
    for (const part of name.split(".")) {
      let next: ArrayNode | undefined = node.children?.get(part);
      if (!next && make) (node.children ??= new Map()).set(part, (next = {}));
      if (!next) return undefined;
      node = next;
    }
    return node;
  };
  // `[a.b]` after `[[a]]` is a table of `a`'s latest element: `a.<i>.b`, as a path names it (at
  // most MAX_TOML_LOOKUP_STEPS parts looked at, each a lookup of that part alone: linear in the name).
  const within = (name: string): string => {
    if (arrayTree.children === undefined) return name;
    const resolved: string[] = [];
    let node: ArrayNode | undefined = arrayTree;
    let from = 0;
    for (let step = 0; step < MAX_TOML_LOOKUP_STEPS && node; step++) {
      const dot = name.indexOf(".", from);
      if (dot === -1) break;
      const part = name.slice(from, dot);
      resolved.push(part);
      node = node.children?.get(part);
      if (node?.elements) {
        const index: string = String(node.elements.length - 1);
        resolved.push(index);
        node = node.children?.get(index);
      }
      from = dot + 1;
    }
    return from === 0 ? name : `${resolved.join(".")}.${name.slice(from)}`;
  };
  // `keep`: only these top-level tables are indexed (the rest is read by no one who asks for a line):
  // a name's first part, as splitKey makes it, found without splitting the whole name.
  const kept = (raw: string) => keep === undefined || keep.has(tomlTopName(raw));
  // undefined: under a header too long to index, or not kept, whose keys are not indexed either
  const root = tables.get("")!;
  let table: TomlTable | undefined = root;
  // Headers and keys indexed, as the JSON locator keeps places: at most MAX_LOCATED_VALUES in all —
  // past them the rest of the text is not read, and what stands there is located by its nearest
  // table indexed — and MAX_LOCATED_CHILDREN keys of one table (the rest at its header). A megabyte
  // of keys under [hooks] cost the main thread 80–320 ms to index, for one line of an error.
  let indexed = 0;
  forEachTomlLine(text, ({ n, text: line, header, continues }) => {
    if (continues) return;
    if (indexed >= MAX_LOCATED_VALUES) return false;
    // (a header of a table not kept is passed over as its keys are: none of them counts)
    if (header && (header.name.length > MAX_TOML_NAME_CHARS || !kept(header.name))) {
      table = undefined;
      return;
    }
    if (header) indexed++;
    if (header?.array) {
      const name = within(normal(header.name));
      const elements = (nodeOf(name, true)!.elements ??= []);
      const base = tableOf(name);
      base.line ??= n + 1;
      table = { line: n + 1 };
      elements.push(table);
    } else if (header) {
      table = tableOf(within(normal(header.name)));
      table.line = n + 1;
    } else if (table) {
      const key = table.keys !== undefined && table.keys.size >= MAX_LOCATED_CHILDREN ? undefined : keyOf(line);
      // (a bare key — no dot, no quote — is its own normal form, but for the spaces around it)
      if (key !== undefined && key.length <= MAX_TOML_NAME_CHARS && (table !== root || kept(key))) {
        (table.keys ??= new Map()).set(DOTTED_OR_QUOTED.test(key) ? splitKey(key).join(".") : key.trim(), n + 1);
        indexed++;
      }
    }
  });
  return {
    get(name) {
      const found = tables.get(name);
      if (found) return found;
      // `hooks.PreToolUse.3`: the fourth element of the array of tables `hooks.PreToolUse` (an
      // element's own sub-tables are named in `tables`, after it)
      const dot = name.lastIndexOf(".");
      const index = name.slice(dot + 1);
      return dot !== -1 && /^[0-9]{1,9}$/.test(index) ? nodeOf(name.slice(0, dot), false)?.elements?.[Number(index)] : undefined;
    },
  };
}

/** Where a TOML text's reading stands at a line's end: inside a multi-line string (its closing quotes), and how many arrays and inline tables are open. */
interface ValueScan {
  string: '"""' | "'''" | undefined;
  depth: number;
}

const QUOTE = 0x22;
const APOSTROPHE = 0x27;
const BACKSLASH = 0x5c;

/** A header's or a key's top-level name, as written (`hooks` of `hooks.PreToolUse`, of `"hooks".x`). */
export function tomlTopName(raw: string): string {
  const dot = raw.indexOf(".");
  return unquote(dot === -1 ? raw : raw.slice(0, dot));
}

/** One line of a TOML text, as forEachTomlLine reads it. */
export interface TomlLine {
  /** its number from 0, and where it starts and ends in the text (its end: before its "\n") */
  n: number;
  start: number;
  end: number;
  /** the line, trimmed; "" for one that continues a value */
  text: string;
  /** the table header it is, if it is one */
  header?: { name: string; array: boolean };
  /**
   * it starts inside a value begun on an earlier line — a multi-line string, an array or inline table
   * not yet closed: no header and no key, whatever it opens with (`[ -f .env ] && exit 2`)
   */
  continues: boolean;
  /** where a comment on it begins (a `#` outside every string); its end when it holds none */
  comment: number;
}

/**
 * Each line of a (valid) TOML text, in order, as what it is: a header, a line that continues a value,
 * else a key's line or a blank or comment one (`text`). One pass over the text (scanValues): linear
 * whatever it holds.
 */
export function forEachTomlLine(text: string, fn: (line: TomlLine) => void | false): void {
  const reading: ValueScan = { string: undefined, depth: 0 };
  for (let start = 0, n = 0; start <= text.length; n++) {
    const nl = text.indexOf("\n", start);
    const end = nl === -1 ? text.length : nl;
    const continues = reading.string !== undefined || reading.depth > 0;
    const line = continues ? "" : text.slice(start, end).trim();
    const header = continues ? undefined : headerOf(line);
    // (a header's brackets open and close on its line: the reading stands where it stood)
    const comment = scanValues(text, start, end, reading);
    // (false: no further line is wanted)
    if (fn({ n, start, end, text: line, ...(header ? { header } : {}), continues, comment }) === false) return;
    start = end + 1;
  }
}

/**
 * Reads `text[from, to)` — one line — from where `at` stands, and leaves `at` where the line's end
 * stands: a multi-line string (`"""…"""`, `'''…'''`) opened and not closed, arrays and inline tables
 * open; a comment (`#` outside a string) ends the line, a one-line string is passed over whole. One
 * pass, each character looked at once, nothing searched past the line: linear in the text whatever
 * it holds. Its answer: where the line's comment begins, or `to`.
 */
function scanValues(text: string, from: number, to: number, at: ValueScan): number {
  let i = from;
  // Closing quotes of a multi-line string, with up to two more of its quote just inside them (`""""`).
  const close = (q: number) => {
    i += 3;
    for (let more = 0; more < 2 && text.charCodeAt(i) === q; more++) i++;
    at.string = undefined;
  };
  const triple = (q: number) => text.charCodeAt(i) === q && text.charCodeAt(i + 1) === q && text.charCodeAt(i + 2) === q;
  while (i < to) {
    const c = text.charCodeAt(i);
    if (at.string === '"""') {
      if (c === BACKSLASH) i += 2;
      else if (triple(QUOTE)) close(QUOTE);
      else i++;
    } else if (at.string === "'''") {
      if (triple(APOSTROPHE)) close(APOSTROPHE);
      else i++;
    } else if (c === 0x23) {
      return i; // `#`: a comment, to the line's end
    } else if (c === QUOTE || c === APOSTROPHE) {
      if (triple(c)) {
        at.string = c === QUOTE ? '"""' : "'''";
        i += 3;
        continue;
      }
      // a one-line string: to its closing quote (a basic string's `\"` is no close), or the line's end
      for (i++; i < to && text.charCodeAt(i) !== c; i++) if (c === QUOTE && text.charCodeAt(i) === BACKSLASH) i++;
      i++;
    } else {
      if (c === 0x5b || c === 0x7b) at.depth++;
      else if ((c === 0x5d || c === 0x7d) && at.depth > 0) at.depth--;
      i++;
    }
  }
  return to;
}

/** An array of tables' name, part by part: the array whose name ends here, the parts that go on from here. */
interface ArrayNode {
  elements?: TomlTable[];
  children?: Map<string, ArrayNode>;
}

/** A TOML text's tables by their dotted names (`hooks.PreToolUse.3` for an element of an array of tables). */
interface Tables {
  get(name: string): TomlTable | undefined;
}

/**
 * The line of `parts` as a header or as a key: the table named by the parts before some split
 * point and the key named by the rest. The latest line wins where several match, as a later
 * definition does in the text.
 */
function lineOf(tables: Tables, prefixes: readonly string[], parts: readonly string[], n: number): number | undefined {
  const whole = prefixes[n];
  let best = whole === undefined ? undefined : tables.get(whole)?.line;
  let key = "";
  for (let j = n - 1; j >= 0; j--) {
    key = j === n - 1 ? parts[j]! : `${parts[j]!}.${key}`;
    if (key.length > LONGEST_INDEXED) break;
    const name = prefixes[j];
    if (name === undefined) continue;
    const line = tables.get(name)?.keys?.get(key);
    if (line !== undefined && (best === undefined || line > best)) best = line;
  }
  return best;
}

/**
 * Finds the line of the deepest prefix of a path among a TOML text's headers and keys; indexes the
 * text once, on first use. `keep`: only paths under these top-level names are located (the tables a
 * loader reads): the others' headers and keys are passed over.
 */
export function tomlLocator(text: string, keep?: readonly string[]): Locator {
  let tables: Tables | undefined;
  return (path) => {
    tables ??= tomlLines(text, keep && new Set(keep));
    const parts = path.slice(0, MAX_TOML_LOOKUP_STEPS).map(String);
    // prefixes[j]: the first j parts joined, while short enough to name a table
    const prefixes: string[] = [""];
    for (let j = 1; j <= parts.length; j++) {
      const joined = j === 1 ? parts[0]! : `${prefixes[j - 1]!}.${parts[j - 1]!}`;
      if (joined.length > LONGEST_INDEXED) break;
      prefixes.push(joined);
    }
    for (let n = parts.length; n > 0; n--) {
      const line = lineOf(tables, prefixes, parts, n);
      if (line !== undefined) return { line, column: 1 };
    }
    return undefined;
  };
}

// ---------------------------------------------------------------- JSON

const STRICT = { disallowComments: true, allowTrailingComma: false } as const;
/** JSON with comments and trailing commas, as Gemini CLI reads its settings.json */
const LENIENT = { disallowComments: false, allowTrailingComma: true, allowEmptyContent: false } as const;

/** What each of jsonc-parser's error codes means, said the way hookbox's messages say it. */
const JSON_ERRORS: Record<ReturnType<typeof printParseErrorCode>, string> = {
  InvalidSymbol: "expected a value",
  InvalidNumberFormat: "invalid number",
  PropertyNameExpected: "expected a string",
  ValueExpected: "expected a value",
  ColonExpected: "expected ':' after a key",
  CommaExpected: "expected ','",
  CloseBraceExpected: "expected ',' or '}'",
  CloseBracketExpected: "expected ',' or ']'",
  EndOfFileExpected: "unexpected text after the JSON value",
  InvalidCommentToken: "comments are not JSON",
  UnexpectedEndOfComment: "unterminated comment",
  UnexpectedEndOfString: "unterminated string",
  UnexpectedEndOfNumber: "incomplete number",
  InvalidUnicode: "invalid \\u escape",
  InvalidEscapeCharacter: "invalid escape",
  InvalidCharacter: "control character in a string",
  "<unknown ParseErrorCode>": "not JSON",
};

/** @default 4096 — spaces and tabs in a row that jsonc-parser is shown as one comment (visitText) */
export const BLANK_RUN_CHARS = 4096;
/** jsonc-parser's ParseErrorCode.InvalidCommentToken (a const enum: not importable one by one) */
const INVALID_COMMENT_TOKEN = 10;

/**
 * Where the string or comment that starts at `i` ends — the index of its last character, the text's
 * end past it — as jsonc-parser's scanner reads them, or -1 when none starts there: a string at its
 * unescaped closing quote (a backslash escapes the next character) or, with `comments`, at a line break
 * as well; with `comments`, a `//` comment before its line break and a block comment at its close.
 */
function opaqueEnd(text: string, i: number, comments: boolean): number {
  const n = text.length;
  const c = text.charCodeAt(i);
  if (c === 0x22) {
    for (i++; i < n; i++) {
      const d = text.charCodeAt(i);
      if (d === 0x22 || (comments && (d === 0x0a || d === 0x0d))) return i;
      if (d === 0x5c) i++;
    }
    return n;
  }
  if (!comments || c !== 0x2f) return -1;
  const next = text.charCodeAt(i + 1);
  if (next === 0x2f) {
    for (i += 2; i < n && text.charCodeAt(i) !== 0x0a && text.charCodeAt(i) !== 0x0d; i++);
    return i;
  }
  if (next !== 0x2a) return -1;
  const end = text.indexOf("*/", i + 2);
  return end === -1 ? n : end + 1;
}

/**
 * `text` as jsonc-parser is shown it: each run of BLANK_RUN_CHARS or more spaces and tabs between
 * its tokens written as a block comment of the same length (`at`: where each starts). The parser's
 * scanner builds a run of blanks one character at a time, at a cost that grows faster than the
 * run — one run of a mebibyte about 130 ms, where a mebibyte of runs of 64 Ki costs 8 — and passes
 * over a comment in one piece. Offsets stay the text's, and a run holds no line break. Strings and
 * comments are passed over as the scanner reads them (`opaqueEnd`).
 */
export function blanksAsComments(text: string): { shown: string; at: Set<number> } {
  // (one pass, no regex: a pattern of a counted run tried at each blank of a run a little shorter costs the run's square)
  const at = new Set<number>();
  let shown = "";
  let from = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 || c === 0x2f) {
      // (jsonc-parser's scanner reads comments in JSON too: the strict parser reports them, and reads on)
      const end = opaqueEnd(text, i, true);
      if (end !== -1) i = end;
    } else if (c === 0x20 || c === 0x09) {
      // (after a "/", one blank is left: "/" and the comment would read as "//")
      const start = text.charCodeAt(i - 1) === 0x2f ? i + 1 : i;
      let j = i + 1;
      while (j < n && (text.charCodeAt(j) === 0x20 || text.charCodeAt(j) === 0x09)) j++;
      if (j - start >= BLANK_RUN_CHARS) {
        shown += `${text.slice(from, start)}/*${" ".repeat(j - start - 4)}*/`;
        from = j;
        at.add(start);
      }
      i = j - 1;
    }
  }
  return { shown: at.size === 0 ? text : shown + text.slice(from), at };
}

/** jsonc-parser's `visit` over `text` shown as blanksAsComments writes it; the comments written are none of the visitor's. */
function visitText(text: string, visitor: JsonVisitor, options: typeof STRICT | typeof LENIENT): void {
  const { shown, at } = blanksAsComments(text);
  if (at.size === 0) return void visit(text, visitor, options);
  const { onComment, onError } = visitor;
  visit(shown, {
    ...visitor,
    ...(onComment ? { onComment: (offset: number, ...rest: [number, number, number]) => (at.has(offset) ? undefined : onComment(offset, ...rest)) } : {}),
    ...(onError ? { onError: (code: number, offset: number, ...rest: [number, number, number]) => (code === INVALID_COMMENT_TOKEN && at.has(offset) ? undefined : onError(code, offset, ...rest)) } : {}),
  }, options);
}

/** Where jsonc-parser's walk stopped on a text: its error's name, offset, and whether it stood in an array. */
export interface JsonErrorFound {
  name: ReturnType<typeof printParseErrorCode>;
  offset: number;
  inArray: boolean;
}

/**
 * The first error jsonc-parser's walk finds in `text`, if any (none when it is more lenient than
 * JSON.parse about whitespace, or the nesting is too deep for it). parse-off-thread.ts walks the
 * same way in its worker, for a large text.
 */
export function findJsonError(text: string, options: typeof STRICT | typeof LENIENT = STRICT): JsonErrorFound | undefined {
  const stop = new Error("first error found");
  const open: boolean[] = []; // true: an array
  let found: JsonErrorFound | undefined;
  // whether a whole value stands before the error: what follows it is text after the JSON, whatever token it is
  let whole = false;
  const ended = () => void (whole ||= open.length === 0);
  try {
    visitText(text, {
      onObjectBegin: () => void open.push(false),
      onObjectEnd: () => {
        open.pop();
        ended();
      },
      onArrayBegin: () => void open.push(true),
      onArrayEnd: () => {
        open.pop();
        ended();
      },
      onLiteralValue: ended,
      onError: (code, offset) => {
        found = { name: whole ? "EndOfFileExpected" : printParseErrorCode(code), offset, inArray: open[open.length - 1] === true };
        throw stop;
      },
    }, options);
  } catch (err) {
    if (err !== stop && !(err instanceof RangeError)) throw err;
  }
  return found;
}

/**
 * For a text JSON.parse refused: a SyntaxError saying what is wrong, with the line and column
 * where the text stops being JSON. `refused` is JSON.parse's own error, used when jsonc-parser
 * (more lenient about whitespace) finds nothing or the nesting is too deep for it.
 */
export function jsonSyntaxError(text: string, refused: unknown, options: typeof STRICT | typeof LENIENT = STRICT): SyntaxError & Position {
  return describeJsonError(text, refused, findJsonError(text, options));
}

/** jsonSyntaxError's message and place, from what the walk found (`findJsonError`, here or in a worker). */
export function describeJsonError(text: string, refused: unknown, found: JsonErrorFound | undefined): SyntaxError & Position {
  let offset: number;
  let what: string | undefined;
  if (found) {
    offset = found.offset;
    what = found.name === "CommaExpected" ? (found.inArray ? "expected ',' or ']'" : "expected ',' or '}'") : JSON_ERRORS[found.name];
  } else {
    // V8 says "… in JSON at position N" for most errors, "Unexpected end of JSON input" at the end.
    const message = refused instanceof Error ? refused.message : "";
    const at = message.indexOf(" at position ");
    offset = Math.min(at === -1 ? text.length : Number.parseInt(message.slice(at + 13), 10) || 0, text.length);
  }
  // A byte-order mark shows as nothing: named, wherever it stands.
  const found_ = text.charCodeAt(offset) === 0xfeff ? "a byte-order mark (U+FEFF)" : JSON.stringify(text[offset]);
  const message = offset >= text.length ? `unexpected end of JSON${what ? `, ${what}` : ""}` : `${what ?? "unexpected character"}, found ${found_}`;
  return Object.assign(new SyntaxError(message), lineIndex(text)(offset));
}

/** @default 2048 — children of one object or array whose places are kept: more than any file has hooks (a hostile one's rest is located by its parent) */
export const MAX_LOCATED_CHILDREN = 2048;
/**
 * @default 20 000 — places kept for one JSON text: room for a dozen of every hook's fields at
 * max_repository_hooks (1000); past it a value is located by its nearest kept parent, and an object
 * or array not kept is passed over by the parser (a megabyte of numbers under `hooks` costs the scan).
 */
export const MAX_LOCATED_VALUES = 20_000;

type JsonVisitor = Parameters<typeof visit>[1];

/**
 * Where a value starts: a number for a string, number, true, false or null; for an object, its kept
 * members by key; for an array, its kept elements in order.
 */
type Place = number | ObjectPlace | ArrayPlace;
interface ObjectPlace {
  offset: number;
  members?: Map<string, Place>;
}
interface ArrayPlace {
  offset: number;
  elements: Place[];
}
const offsetOf = (place: Place) => (typeof place === "number" ? place : place.offset);

/**
 * Keeps where each value of a JSON text starts, as a tree of places built from the parser's visitor
 * in one pass — a number for each value that holds none, an object for each that does, the key held
 * once (a tree of jsonc-parser's nodes for a megabyte of `0,` takes ten times as long and as much
 * memory as the text). At most MAX_LOCATED_CHILDREN children of each object or array and
 * MAX_LOCATED_VALUES in all; the last of duplicate keys wins, as in JSON.parse. `also`: callbacks of
 * the same pass.
 */
function jsonPlaces(text: string, options: typeof STRICT | typeof LENIENT, also: JsonVisitor = {}, within?: ReadonlySet<string>): Place | undefined {
  let root: Place | undefined;
  let kept = 0;
  // the open objects and arrays, innermost last: the place kept for each (if any), its children so far, the key of its next member
  const open: { place: ObjectPlace | ArrayPlace | undefined; count: number; key: string }[] = [];
  // `within`: of a root object's members, only these are walked into — the others' places are kept,
  // their insides passed over by the parser without a callback (a megabyte of values beside the hooks
  // costs the scan only). Returned by a begin callback: false passes over what it opens.
  const walkedInto = () => within === undefined || open.length !== 1 || (open[0]!.place !== undefined && "elements" in open[0]!.place) || within.has(open[0]!.key);
  // An object or array whose place is not kept keeps none of its children either: the parser passes
  // over its insides without a callback — unless a callback of the same pass (an error's) needs them.
  const passOverUnkept = Object.keys(also).length === 0;
  /** Keeps `place` as the next child of the innermost open object or array, if there is room: false if not. */
  const keep = (place: Place): boolean => {
    const parent = open[open.length - 1];
    if (!parent) {
      root = place;
      return true;
    }
    const n = parent.count++;
    if (!parent.place || n >= MAX_LOCATED_CHILDREN || kept >= MAX_LOCATED_VALUES) return false;
    if ("elements" in parent.place) parent.place.elements.push(place);
    else (parent.place.members ??= new Map()).set(parent.key, place);
    kept++;
    return true;
  };
  const begin = (offset: number, container: "object" | "array") => {
    const walked = walkedInto();
    const made: ObjectPlace | ArrayPlace = container === "array" ? { offset, elements: [] } : { offset };
    const place = keep(made) ? made : undefined;
    open.push({ place, count: 0, key: "" });
    return walked && (place !== undefined || !passOverUnkept);
  };
  visitText(text, {
    ...also,
    onObjectBegin: (offset) => begin(offset, "object"),
    onArrayBegin: (offset) => begin(offset, "array"),
    onObjectProperty: (property) => {
      open[open.length - 1]!.key = property;
    },
    onObjectEnd: () => void open.pop(),
    onArrayEnd: () => void open.pop(),
    onLiteralValue: (_v, offset) => void keep(offset),
  }, options);
  return root;
}

/**
 * Finds where the deepest prefix of a path stands in a valid JSON text. The places are found once,
 * on first use (`jsonPlaces`); undefined when nesting is too deep to walk.
 */
export function jsonLocator(text: string, options: typeof STRICT | typeof LENIENT = STRICT, found?: Place, within?: ReadonlySet<string>): Locator {
  let root: Place | null | undefined = found;
  let position: ((offset: number) => Position) | undefined;
  return (path) => {
    if (root === undefined) {
      try {
        root = jsonPlaces(text, options, {}, within) ?? null;
      } catch (err) {
        if (!(err instanceof RangeError)) throw err;
        root = null;
      }
    }
    if (root === null) return undefined;
    position ??= lineIndex(text);
    let place = root;
    for (const step of path) {
      if (typeof place === "number") break;
      // an array's children by index only; an object's by name
      const next = "elements" in place ? (typeof step === "number" ? place.elements[step] : undefined) : place.members?.get(String(step));
      if (next === undefined) break;
      place = next;
    }
    return position(offsetOf(place));
  };
}

/**
 * Parses JSON with comments and trailing commas (Gemini CLI's settings.json); errors as
 * parseJsonLocated's. `within`: as parseJsonLocated's. A text jsonc-parser finds no error in is read
 * as the JSON it stands for (`jsonOfJsonc`) by JSON.parse; one with an error is refused from that
 * same scan; one JSON.parse still refuses, or too deep to walk, is read by jsonc-parser.
 */
export function parseJsoncLocated(text: string, within?: ReadonlySet<string>): { value: unknown; locate: Locator } {
  const json = jsonOfJsonc(text);
  if (json !== undefined) {
    try {
      return { value: JSON.parse(json), locate: jsonLocator(json, STRICT, undefined, within) };
    } catch {
      // read by jsonc-parser below
    }
  }
  let value: unknown;
  let places: Place | undefined;
  try {
    // A first pass that stops at the first error — the parser collects every error of a file before
    // it returns (a 1 MiB of commas holds two million of them, and over a hundred MiB) — and keeps
    // where each value stands, for the locator.
    places = jsonPlaces(text, LENIENT, { onError: () => { throw FIRST_ERROR; } });
    value = parseJsonc(blanksAsComments(text).shown, undefined, LENIENT);
    // The parser assigns each member: a "__proto__" member would become the object's prototype (its
    // fields then read as the object's own, `hooks` among them). As JSON.parse reads it, a field.
    if (text.includes("__proto__")) value = protoAsField(value);
  } catch (err) {
    if (err === FIRST_ERROR) throw jsonSyntaxError(text, undefined, LENIENT);
    if (!(err instanceof RangeError)) throw err;
    throw Object.assign(new SyntaxError("nested too deeply"), lineIndex(text)(0));
  }
  return { value, locate: places ? jsonLocator(text, LENIENT, places) : () => undefined };
}

/** JSON's blanks, the only ones a trailing comma may stand before in a text JSON.parse reads. */
const isJsonBlank = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

/**
 * A JSONC text as the JSON it stands for, offset for offset — its comments and trailing commas
 * blanked to spaces, line breaks kept, so every value stands where it stood; undefined when it
 * nests too deeply for the walk. One scan that reports only errors, comments and where each array
 * and object opens and closes (no call per value: a megabyte of values beside the hooks costs the
 * scan alone); a comma is trailing when only blanks and comments stand between it and a close. At
 * the first error the scan stops and it throws jsonSyntaxError's SyntaxError for it — found in this
 * same scan, never by walking the text again.
 */
function jsonOfJsonc(text: string): string | undefined {
  const closes: number[] = [];
  const comments: [number, number][] = [];
  const open: boolean[] = []; // true: an array
  let found: JsonErrorFound | undefined;
  try {
    visitText(text, {
      onError: (code, offset) => {
        found = { name: printParseErrorCode(code), offset, inArray: open[open.length - 1] === true };
        throw FIRST_ERROR;
      },
      onComment: (offset, length) => void comments.push([offset, length]),
      onObjectBegin: () => void open.push(false),
      onArrayBegin: () => void open.push(true),
      onObjectEnd: (offset) => {
        open.pop();
        closes.push(offset);
      },
      onArrayEnd: (offset) => {
        open.pop();
        closes.push(offset);
      },
    }, LENIENT);
  } catch (err) {
    if (err === FIRST_ERROR) throw describeJsonError(text, undefined, found);
    if (err instanceof RangeError) return undefined;
    throw err;
  }
  // What is blanked: each comment (its line breaks kept), then each trailing comma — a comma with
  // only blanks and comments between it and a close. The walk reports closes in the order they
  // stand in the text (a close is reported when the scan reaches it), so they are already sorted.
  const blank: [number, number][] = [...comments];
  let c = comments.length - 1;
  for (let k = closes.length - 1; k >= 0; k--) {
    let i = closes[k]! - 1;
    for (;;) {
      while (i >= 0 && isJsonBlank(text.charCodeAt(i))) i--;
      while (c >= 0 && comments[c]![0] > i) c--;
      // inside a comment: on from before it
      if (c >= 0 && comments[c]![0] + comments[c]![1] > i) i = comments[c]![0] - 1;
      else break;
    }
    if (text.charCodeAt(i) === 0x2c) blank.push([i, 1]);
  }
  if (blank.length === 0) return text;
  blank.sort((a, b) => a[0] - b[0]);
  let out = "";
  let from = 0;
  for (const [at, length] of blank) {
    out += text.slice(from, at) + text.slice(at, at + length).replace(/[^\r\n]/g, " ");
    from = at + length;
  }
  return out + text.slice(from);
}

/** A parsed value whose objects hold a "__proto__" member as a field, as JSON.parse makes them, never as their prototype. */
function protoAsField(value: unknown): unknown {
  const stack: unknown[] = [value];
  for (let v = stack.pop(); v !== undefined; v = stack.pop()) {
    if (typeof v !== "object" || v === null) continue;
    if (Array.isArray(v)) {
      for (const item of v) stack.push(item);
      continue;
    }
    const proto: unknown = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) {
      Object.setPrototypeOf(v, Object.prototype);
      Object.defineProperty(v, "__proto__", { value: proto, enumerable: true, writable: true, configurable: true });
    }
    for (const key of Object.keys(v)) stack.push((v as Record<string, unknown>)[key]);
  }
  return value;
}

/** Thrown out of a parser's error callback: the first error is enough. */
const FIRST_ERROR = new Error("first error");

/**
 * Where `text` first opens its `max + 1`-th level of `[`/`{` (`deep`), or its `maxContainers + 1`-th
 * (`many`), or an object its `maxKeys + 1`-th key (`wide`), or, with `comments`, starts its
 * `maxComments + 1`-th comment (`comments`) — strings skipped, and with `comments` `//` and `/* *\/`
 * comments too — or undefined. One pass: a file nested a hundred thousand deep is refused at its
 * line before any parser walks it.
 */
export function deeperThanAt(text: string, max: number, comments = false, maxContainers = Infinity, maxKeys = Infinity, maxComments = Infinity): { at: number; why: "deep" | "many" | "wide" | "comments" } | undefined {
  let depth = 0;
  let containers = 0;
  let commentsSeen = 0;
  // the keys of each object open (-1: an array)
  const open: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const opaque = c === 0x22 || c === 0x2f ? opaqueEnd(text, i, comments) : -1;
    if (opaque !== -1 && c === 0x2f && ++commentsSeen > maxComments) return { at: i, why: "comments" };
    if (opaque !== -1) i = opaque;
    else if (c === 0x5b || c === 0x7b) {
      if (++containers > maxContainers) return { at: i, why: "many" };
      if (++depth > max) return { at: i, why: "deep" };
      open.push(c === 0x7b ? 0 : -1);
    } else if ((c === 0x5d || c === 0x7d) && depth > 0) {
      depth--;
      open.pop();
    } else if (c === 0x3a && open.length > 0 && open[open.length - 1]! >= 0 && ++open[open.length - 1]! > maxKeys) return { at: i, why: "wide" };
  }
  return undefined;
}

/**
 * Parses JSON; on a syntax error, throws one that says the line and column. `within`: of a root
 * object, the members whose insides may be located (the rest are located as members only).
 */
export function parseJsonLocated(text: string, within?: ReadonlySet<string>): { value: unknown; locate: Locator } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw jsonSyntaxError(text, err);
  }
  return { value, locate: jsonLocator(text, STRICT, undefined, within) };
}
