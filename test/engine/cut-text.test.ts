/**
 * A text cut before the trace redacts it (a hook's reason in its record, an error quoting its
 * output): the head of a word the cut goes through is dropped, so a key cut short — no longer one
 * the redactor knows — is never shown in part.
 */
import { describe, expect, it } from "vitest";
import { headOfWords, MAX_WORD_CUT_CHARS } from "../../engine/detached.js";
import { clip, clipWords } from "../../engine/formats/shared.js";

const KEY = "ghp_1234567890abcdefghijABCDEFGHIJ123456";

describe("a cut through a word", () => {
  it.each([
    ["a key", `use ${KEY} now`, 10, "use "],
    ["a bearer token", "Authorization: Bearer abcdefghijklmnop", 30, "Authorization: Bearer "],
    ["a URL with its password", "see postgres://u:hunter2@db/x", 22, "see "],
    ["an assignment", "ok API_KEY=abcdefgh", 14, "ok "],
    ["one word of the whole text", "x".repeat(50), 10, ""],
    ["a key glued to a long word, its last MAX_WORD_CUT_CHARS", `${"w".repeat(2000)}/${KEY}`, 2010, "w".repeat(2010 - MAX_WORD_CUT_CHARS)],
    ["a password in a URL, whatever its characters", `see https://u:hunter2!x@h/${"p".repeat(300)}`, 22, "see "],
    ["an element named like a secret", "ok <password>hunter2!secretpass</password>", 25, "ok "],
    ["a JSON member", '{"reason":"x","token":"abcdefgh"}', 30, ""],
  ])("drops the head of %s", (_what, text, max, kept) => {
    expect(headOfWords(text, max)).toBe(kept);
  });

  it.each([
    ["at a space", "abc def", 4, "abc "],
    ["right after a word, before a space", "abc def", 3, "abc"],
    ["after a newline", `say\n${KEY}`, 5, "say\n"],
    ["at a letter past the text's end", "abc", 5, "abc"],
  ])("keeps a cut %s", (_what, text, max, kept) => {
    expect(headOfWords(text, max)).toBe(kept);
  });

  it("never half a surrogate pair, and a pair is no word's letter", () => {
    expect(headOfWords(`ab \u{1F600}cd`, 4)).toBe("ab ");
    expect(headOfWords(`ab\u{1F600}cd`, 5)).toBe("");
    // the bound stops inside no pair
    expect(headOfWords(`${"x".repeat(10)}${"\u{1F600}".repeat(600)}abcd`, 10 + 1200 + 1)).toBe(`${"x".repeat(10)}${"\u{1F600}".repeat(88)}`);
  });

  it("clipWords marks the cut after the dropped head; clip, for what no hook printed, cuts where it is told", () => {
    expect(clip(`${"y".repeat(189)} ${KEY}`, 200)).toBe(`${"y".repeat(189)} ${KEY.slice(0, 10)}…`);
    expect(clipWords(`${"y".repeat(189)} ${KEY}`, 200)).toBe(`${"y".repeat(189)} …`);
    expect(clipWords("short", 200)).toBe("short");
  });

  it("drops no more than MAX_WORD_CUT_CHARS of a longer word (more than any key is long)", () => {
    const word = "a".repeat(1 << 20);
    expect(headOfWords(word, (1 << 20) - 1)).toBe("a".repeat((1 << 20) - 1 - MAX_WORD_CUT_CHARS));
    expect(headOfWords(word, MAX_WORD_CUT_CHARS + 1)).toBe("a");
  });
});
