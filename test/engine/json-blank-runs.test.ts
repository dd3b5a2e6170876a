/**
 * Runs of blanks are shown to jsonc-parser as comments (its scanner builds a run one character at
 * a time): what it finds is the same — values, places, errors — wherever a run stands: between
 * tokens, in a string or key, after an escape, after a lone "/", in a comment.
 */
import { describe, expect, it } from "vitest";
import { BLANK_RUN_CHARS, blanksAsComments, jsonSyntaxError, parseJsoncLocated, parseJsonLocated } from "../../engine/formats/locate.js";
import { readJson } from "../../engine/formats/shared.js";
import { MAX_JSONC_COMMENTS } from "../../engine/names.js";

const run = " \t".repeat(BLANK_RUN_CHARS);
/** 1-based line and column of the first `mark` in `text` */
const placeOf = (text: string, mark: string) => {
  const at = text.indexOf(mark);
  const before = text.slice(0, at).split("\n");
  return { line: before.length, column: before[before.length - 1]!.length + 1 };
};

describe(`a run of BLANK_RUN_CHARS (${BLANK_RUN_CHARS}) or more blanks`, () => {
  it("is shown as a comment where it stands between tokens, and only there: never in a string, after an escaped quote, in a comment, or shorter", () => {
    const sp = " ".repeat(BLANK_RUN_CHARS + 4);
    const text = `{"k${sp}k": [${run}1], "s": "\\"${sp}\\\\"${run}, /*${run}*/ "t":${" ".repeat(BLANK_RUN_CHARS - 1)}2}`;
    const { shown, at } = blanksAsComments(text);
    const first = text.indexOf(run);
    const second = text.indexOf(run, text.indexOf("\\\\"));
    expect([...at]).toEqual([first, second]);
    expect(shown).toHaveLength(text.length);
    expect(shown.slice(first, first + run.length)).toBe(`/*${" ".repeat(run.length - 4)}*/`);
    // nothing at all to show otherwise: the text itself
    expect(blanksAsComments(text.replaceAll(run, " ")).shown).toBe(text.replaceAll(run, " "));
  });

  it("between tokens: every value located where it stands", () => {
    const text = `{${run}"a":${run}[${run}1,${run}{"b":${run}2}]${run}}`;
    const { value, locate } = parseJsonLocated(text);
    expect(value).toEqual({ a: [1, { b: 2 }] });
    expect(locate(["a", 0])).toEqual(placeOf(text, "1,"));
    expect(locate(["a", 1, "b"])).toEqual(placeOf(text, "2}"));
  });

  it("in keys and strings, after escapes: read as they are (a key whose blanks were taken would not be found)", () => {
    // (a string holds no tab: spaces)
    const sp = " ".repeat(BLANK_RUN_CHARS + 4);
    const text = `{"k${sp}k": {"z": 1}, "e\\\\": [${sp}2], "q\\"${sp}": {"y": 3}, "s": "\\"${sp}\\\\"}`;
    const { value, locate } = parseJsonLocated(text);
    expect(value).toEqual({ [`k${sp}k`]: { z: 1 }, "e\\": [2], [`q"${sp}`]: { y: 3 }, s: `"${sp}\\` });
    expect(locate([`k${sp}k`, "z"])).toEqual(placeOf(text, "1}"));
    expect(locate(["e\\", 0])).toEqual(placeOf(text, "2]"));
    expect(locate([`q"${sp}`, "y"])).toEqual(placeOf(text, "3}"));
  });

  it("in JSONC, beside comments that hold quotes and blanks: located, the comments blanked", () => {
    const text = `// a "quote\n/*${run}" */ {"hooks":${run}{"x": [1,${run}2,],},${run}}`;
    const { value, locate } = parseJsoncLocated(text);
    expect(value).toEqual({ hooks: { x: [1, 2] } });
    expect(locate(["hooks", "x", 1])).toEqual(placeOf(text, "2,]"));
  });

  it("before an error: the error said, and placed, as without the run", () => {
    const cases: [string, string][] = [
      [`{"a": 1,${run}}`, "}"],
      [`{"a": 1 /${run}}`, "/"],
      [`{"a": 1${run}"b": 2}`, '"b"'],
      [`{"a": 1}${run}x`, "x"],
    ];
    for (const [text, mark] of cases) {
      const short = text.replace(run, " ");
      const err = jsonSyntaxError(text, undefined);
      expect(err.message, text).toBe(jsonSyntaxError(short, undefined).message);
      expect({ line: err.line, column: err.column }, text).toEqual(placeOf(text, mark));
    }
  });
});

describe(`a JSON-with-comments hook file's comments, at most MAX_JSONC_COMMENTS (${MAX_JSONC_COMMENTS})`, () => {
  const hooks = '{"hooks":{"BeforeTool":[{"matcher":"x","hooks":[{"type":"command","command":"g.sh"}]}]},"notes":[';
  it.each([["//", "//\n"], ["/* */", "/* a */\n"]])("loads a file of exactly as many %s comments, and refuses one more at its line before any parser scans it", (_kind, comment) => {
    const loaded = readJson(".gemini/settings.json", `${hooks}\n${comment.repeat(MAX_JSONC_COMMENTS)}0]}`, true);
    expect(loaded.value).toMatchObject({ hooks: { BeforeTool: [{ matcher: "x" }] } });
    expect(() => readJson(".gemini/settings.json", `${hooks}\n${comment.repeat(MAX_JSONC_COMMENTS + 1)}0]}`, true))
      .toThrow(expect.objectContaining({ message: `.gemini/settings.json:${MAX_JSONC_COMMENTS + 2}:1: holds more than ${MAX_JSONC_COMMENTS} comments (MAX_JSONC_COMMENTS)` }));
  });
  it("counts no comment in a string, nor in a file read as plain JSON (where none is one)", () => {
    const text = `${hooks}"${"//".repeat(MAX_JSONC_COMMENTS + 1)}"]}`;
    expect(readJson(".gemini/settings.json", text, true).value).toMatchObject({ notes: ["//".repeat(MAX_JSONC_COMMENTS + 1)] });
    expect(() => readJson(".claude/settings.json", `${hooks}\n${"//\n".repeat(MAX_JSONC_COMMENTS + 1)}0]}`)).toThrow(/invalid JSON/);
  });
});
