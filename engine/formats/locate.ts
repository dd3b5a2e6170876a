/**
 * @module Line numbers for config errors: where a path (`hooks.PreToolUse[1].timeout`) stands in
 * a TOML or JSON text, and where a JSON text stops being JSON.
 */

export type Path = readonly (string | number)[];

export interface Position {
  line: number;
  column: number;
}

export function formatPath(path: Path): string {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`)).join("") || "(top level)";
}

const unquote = (s: string) => s.trim().replace(/^["']|["']$/g, "");
const splitKey = (s: string) => s.split(".").map(unquote);

/** Line of the deepest prefix of `path` found among the TOML text's headers and keys. */
export function locateToml(text: string, path: Path): Position | undefined {
  const where = new Map<string, number>();
  const arrayCounts = new Map<string, number>();
  let table: string[] = [];
  text.split("\n").forEach((raw, i) => {
    const line = raw.trim();
    let m: RegExpMatchArray | null;
    if ((m = line.match(/^\[\[([^\]]+)\]\]/))) {
      const key = splitKey(m[1]!).join(".");
      const n = arrayCounts.get(key) ?? 0;
      arrayCounts.set(key, n + 1);
      table = [...splitKey(m[1]!), String(n)];
      where.set(table.join("."), i + 1);
      where.set(key, where.get(key) ?? i + 1);
    } else if ((m = line.match(/^\[([^\]]+)\]/))) {
      table = splitKey(m[1]!);
      where.set(table.join("."), i + 1);
    } else if ((m = line.match(/^([A-Za-z0-9_."' -]+?)\s*=/))) {
      where.set([...table, ...splitKey(m[1]!)].join("."), i + 1);
    }
  });
  for (let n = path.length; n > 0; n--) {
    const line = where.get(path.slice(0, n).map(String).join("."));
    if (line !== undefined) return { line, column: 1 };
  }
  return undefined;
}

/**
 * A strict JSON scanner that records where each value starts. Throws a SyntaxError carrying the
 * line and column where the text stops being JSON.
 */
export function scanJson(text: string): Map<string, Position> {
  const at = new Map<string, Position>();
  let i = 0;
  const pos = (k: number): Position => {
    const before = text.slice(0, k).split("\n");
    return { line: before.length, column: before[before.length - 1]!.length + 1 };
  };
  const fail = (what: string): never => {
    const p = pos(i);
    throw Object.assign(new SyntaxError(i >= text.length ? `unexpected end of JSON, ${what}` : `${what}, found ${JSON.stringify(text[i])}`), p);
  };
  const ws = () => { while (i < text.length && " \t\n\r".includes(text[i]!)) i++; };
  const str = (): string => {
    const start = i;
    if (text[i] !== '"') fail("expected a string");
    i++;
    while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
    if (i >= text.length) fail("unterminated string");
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (path: string[]): void => {
    ws();
    at.set(path.join("\u0000"), pos(i));
    const c = text[i];
    if (c === "{") {
      i++; ws();
      if (text[i] === "}") { i++; return; }
      for (;;) {
        ws();
        const key = str();
        ws();
        if (text[i] !== ":") fail("expected ':' after a key");
        i++;
        value([...path, key]);
        ws();
        if (text[i] === ",") { i++; continue; }
        if (text[i] === "}") { i++; return; }
        fail("expected ',' or '}'");
      }
    } else if (c === "[") {
      i++; ws();
      if (text[i] === "]") { i++; return; }
      for (let n = 0; ; n++) {
        value([...path, String(n)]);
        ws();
        if (text[i] === ",") { i++; continue; }
        if (text[i] === "]") { i++; return; }
        fail("expected ',' or ']'");
      }
    } else if (c === '"') str();
    else {
      const m = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(i));
      if (!m) fail("expected a value");
      i += m![0].length;
    }
  };
  value([]);
  ws();
  if (i < text.length) fail("unexpected text after the JSON value");
  return at;
}

/** Parses JSON; on a syntax error, throws one that says the line and column. */
export function parseJsonLocated(text: string): { value: unknown; locate: (path: Path) => Position | undefined } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    scanJson(text); // throws with a position
    throw new SyntaxError("invalid JSON");
  }
  let map: Map<string, Position> | undefined;
  return {
    value,
    locate: (path) => {
      map ??= scanJson(text);
      for (let n = path.length; n >= 0; n--) {
        const hit = map.get(path.slice(0, n).map(String).join("\u0000"));
        if (hit) return hit;
      }
      return undefined;
    },
  };
}
