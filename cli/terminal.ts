/**
 * @module Hook-controlled text made safe for a terminal. A hook's output, reason or rule could
 * otherwise move the cursor, erase lines, retitle the window or start an escape sequence through
 * the C1 controls (U+009B is a one-character CSI). Every C0 control, DEL and C1 control is shown
 * as an escape (`\x1b`, `\u009b`) instead; newline and tab only where the layout wants them
 * (engine/visible-text.ts).
 */
import { oneLine } from "../engine/visible-text.js";

export { block, oneLine } from "../engine/visible-text.js";

/** Why a token is refused before anything is sent (every command, forward.sh alike). */
export const TOKEN_NOT_SENDABLE = "the token holds a character no header can carry (a space, a control character, a line break, a non-ASCII letter): check HOOKBOX_TOKEN (or --token)";

/**
 * A token a header can carry: printable ASCII, no blank. Another is never handed to fetch, whose
 * error repeats the header's value — the token, with its line break escaped past a CI log's masking.
 */
export const sendableToken = (token: string): boolean => /^[\x21-\x7e]+$/.test(token);

/**
 * A URL as it may be shown: without the user name and password in it — through the last `@` before
 * the path, as a URL parser splits it (`http://a:p@ss@host` is the host `host`) — on one line.
 */
export function shownUrl(url: string): string {
  return oneLine(withoutUserinfo(url));
}

/**
 * Text with every URL in it shown without its user name and password (an error message that
 * repeats the URL it was given, as fetch's does). Each `…@` part holds no `@`: one pass. The scheme
 * is read as at most 64 characters before `://` (RFC 3986 schemes are short): a long run of letters
 * costs each start position at most that much, never the rest of the run — linear in the text.
 */
export function withoutUserinfo(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]{0,63}:\/\/)(?:[^\s/?#\\@]*@)+/gi, "$1");
}

/**
 * JSON for a terminal or an agent: JSON.stringify already escapes C0; DEL and C1 (legal raw in JSON
 * strings, and only found inside them) become `\u007f`…`\u009f`. Still the same JSON value.
 */
export function safeJson(value: unknown, space?: number): string {
  // Code unit by code unit: a tag character becomes its surrogate pair, still valid JSON.
  return JSON.stringify(value, null, space).replace(JSON_HIDDEN, (m) => Array.from({ length: m.length }, (_, i) => `\\u${m.charCodeAt(i).toString(16).padStart(4, "0")}`).join(""));
}

// eslint-disable-next-line no-misleading-character-class -- each mark is matched alone: escaping them is the point
const JSON_HIDDEN = /[\u007f-\u009f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0d\ufeff\uffa0\ufff0-\ufffb]|\ud82f[\udca0-\udca3]|\ud834[\udd73-\udd7a]|[\udb40-\udb43][\udc00-\udfff]/g;
