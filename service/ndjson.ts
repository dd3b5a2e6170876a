/**
 * @module One NDJSON line. JSON leaves U+2028, U+2029 and U+0085 raw in strings, and readers that
 * split lines on every Unicode line break (Python's `splitlines`) would cut a line there: they are
 * escaped, the same JSON.
 */
export const ndjsonLine = (value: unknown): string =>
  `${JSON.stringify(value).replace(/[\u0085\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)}\n`;
