/**
 * @module Text a hook controls, made visible: every C0 control (but newline and tab where the layout
 * wants them), DEL, C1 control and invisible format character shown as an escape (`\x1b`,
 * `\u202e`). A hook's text could otherwise move a terminal's cursor, erase lines, retitle the window,
 * start an escape sequence through the C1 controls (U+009B is a one-character CSI), or reorder and
 * hide what a user reads (bidi overrides, zero-width marks). Used for the CLI's output
 * (cli/terminal.ts), for what a repository hook says to the agent (execute.ts), and in the service's
 * log and audit lines (`visibleJson`). Pure.
 */

// C0 but \t and \n, DEL, C1 — and the invisible format characters that reorder or hide text on
// screen (bidi overrides and isolates, zero-width marks, line and paragraph separators, BOM):
// Unicode's Default_Ignorable_Code_Point set whole — the soft hyphen, the combining grapheme joiner,
// the Arabic letter mark, the Hangul fillers, the Khmer inherent vowels, the Mongolian free variation
// selectors and vowel separator, word joiners and invisible operators, variation selectors, the
// shorthand format controls, the musical symbol format controls, the tag characters and the
// supplementary variation selectors (U+E0000–E0FFF: text can be smuggled in them unseen) — but
// U+FE0E and U+FE0F, which choose text or emoji presentation ("⚠️"); and the interlinear annotation marks.
const HIDDEN = "\\u00ad\\u034f\\u061c\\u115f\\u1160\\u17b4\\u17b5\\u180b-\\u180f\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u206f\\u3164\\ufe00-\\ufe0d\\ufeff\\uffa0\\ufff0-\\ufffb\\u{1bca0}-\\u{1bca3}\\u{1d173}-\\u{1d17a}\\u{e0000}-\\u{e0fff}";
// eslint-disable-next-line no-misleading-character-class -- each mark is matched alone: escaping them is the point
const CONTROLS_KEEP_LAYOUT = new RegExp(`[\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f${HIDDEN}]`, "gu");
/** `block`'s pattern (flags `gu`), for code that runs elsewhere: the decisions page escapes with it too. */
export const BLOCK_PATTERN = CONTROLS_KEEP_LAYOUT.source;
// eslint-disable-next-line no-misleading-character-class -- as above
const CONTROLS = new RegExp(`[\\u0000-\\u001f\\u007f-\\u009f${HIDDEN}]`, "gu");

const escape = (c: string): string => {
  const code = c.codePointAt(0)!;
  if (c === "\n") return "\\n";
  if (c === "\t") return "\\t";
  return code < 0x80 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
};

/** For one line of output: every control character escaped, newlines and tabs too. */
export function oneLine(text: string): string {
  return text.replace(CONTROLS, escape);
}

// eslint-disable-next-line no-misleading-character-class -- as above
const HIDDEN_IN_JSON = new RegExp(`[\\u007f-\\u009f${HIDDEN}]`, "gu");

/**
 * JSON text (a log or audit line) with every DEL, C1 control and invisible format character inside
 * its strings written as a `\u` escape — JSON.stringify escapes only C0 — so whoever reads the file
 * in a terminal (`tail`, `less`, `jq -r`, `docker logs`) sees them, and the line parses to the same value.
 */
export function visibleJson(json: string): string {
  return json.replace(HIDDEN_IN_JSON, (c) => {
    let out = "";
    for (let i = 0; i < c.length; i++) out += `\\u${c.charCodeAt(i).toString(16).padStart(4, "0")}`;
    return out;
  });
}

/** For a block of output: newlines and tabs kept, every other control character escaped. */
export function block(text: string): string {
  return text.replace(CONTROLS_KEEP_LAYOUT, escape);
}
