/**
 * What a hook's text may not hide from the one who reads it: Unicode's Default_Ignorable_Code_Point
 * set (but the emoji presentation selectors) escaped, in a line, a block and JSON for an agent.
 */
import { describe, expect, it } from "vitest";
import { block, oneLine } from "../../engine/visible-text.js";
import { safeJson } from "../../cli/terminal.js";

/** The set's ranges (DerivedCoreProperties.txt), ends included; U+FE0E and U+FE0F stay as they are. */
const IGNORABLE: [number, number][] = [
  [0x00ad, 0x00ad], [0x034f, 0x034f], [0x061c, 0x061c], [0x115f, 0x1160], [0x17b4, 0x17b5], [0x180b, 0x180f], [0x200b, 0x200f],
  [0x202a, 0x202e], [0x2060, 0x206f], [0x3164, 0x3164], [0xfe00, 0xfe0d], [0xfeff, 0xfeff], [0xffa0, 0xffa0], [0xfff0, 0xfff8],
  [0x1bca0, 0x1bca3], [0x1d173, 0x1d17a], [0xe0000, 0xe0fff],
];

describe("invisible characters in a hook's text", () => {
  const every = IGNORABLE.flatMap(([from, to]) => (to - from > 40 ? [from, from + 1, to - 1, to] : Array.from({ length: to - from + 1 }, (_, i) => from + i)));
  it.each(every.map((c) => [c.toString(16), c]))("U+%s is shown as an escape, in a line, a block and JSON", (_hex, c) => {
    const ch = String.fromCodePoint(c);
    const text = `a${ch}b`;
    expect(oneLine(text)).toBe(`a\\u${c.toString(16).padStart(4, "0")}b`);
    expect(block(text)).toBe(`a\\u${c.toString(16).padStart(4, "0")}b`);
    const json = safeJson({ m: text });
    expect(json).not.toContain(ch);
    expect(JSON.parse(json)).toEqual({ m: text });
  });

  it("keeps the emoji presentation selectors, and what is no control: ⚠️, 日本語, é", () => {
    for (const text of ["⚠\ufe0f", "✔\ufe0e", "日本語", "é", "😀"]) {
      expect(block(text)).toBe(text);
      expect(safeJson(text)).toBe(JSON.stringify(text));
    }
  });
});
