/**
 * @module Text kept after a request is a copy of its own. V8 keeps the whole of a string alive for
 * as long as any slice of it lives: 256 characters cut from a 1 MiB session id, kept for the
 * sessions list or a trace summary, would otherwise hold the whole 1 MiB.
 */

/** A copy of `text` that refers to no other string (lossless: lone surrogates survive). */
export function detached(text: string): string {
  return text.length === 0 ? "" : Buffer.from(text, "utf16le").toString("utf16le");
}

/**
 * The first `max` characters (UTF-16 units) of `text`, detached when cut (a text short enough is
 * already its own), never half a surrogate pair: a lone one is no text to a JSON parser (Codex's
 * refuses the whole answer).
 */
export function head(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = max > 0 && (text.charCodeAt(max - 1) & 0xfc00) === 0xd800 ? max - 1 : max;
  return detached(text.slice(0, end));
}

/**
 * @default 1024 — the most a cut inside a word drops (headOfWords): more than any key the redactor
 * knows is long but a JWT of large claims (an OpenAI project key is about 170), so a key cut short
 * is dropped whole; a longer word keeps all of itself but its last 1024 characters
 */
export const MAX_WORD_CUT_CHARS = 1024;

/** A character that ends a word: ASCII blanks and controls (a secret, a URL with its password, a JSON member — each is one word). */
const endsWord = (code: number) => code <= 0x20 || code === 0x7f;

/** Whether a cut of `text` at `at` goes through a word (the characters on both sides of it are no blank). */
export const cutsWord = (text: string, at: number): boolean => at > 0 && at < text.length && !endsWord(text.charCodeAt(at)) && !endsWord(text.charCodeAt(at - 1));

/**
 * `head`, but a cut inside a word drops what it kept of that word (at most MAX_WORD_CUT_CHARS): a
 * key cut short is no longer one the redactor knows (`ghp_` and 36 characters, a URL's password
 * without its `@`, `<password>` without its end tag …), and its head would be shown as it is. A
 * text cut where it is kept redacts afterwards; this is for a text cut before redaction (a hook's
 * reason, an error quoting its output). One scan back, of at most MAX_WORD_CUT_CHARS.
 */
export function headOfWords(text: string, max: number): string {
  const kept = head(text, max);
  if (kept.length === text.length || endsWord(text.charCodeAt(kept.length))) return kept;
  return withoutCutWord(kept);
}

/** A text cut at its end (`headOfWords`, or a stream cut where it was captured), without the word the cut went through. */
export function withoutCutWord(kept: string): string {
  const stop = Math.max(0, kept.length - MAX_WORD_CUT_CHARS);
  let end = kept.length;
  while (end > stop && !endsWord(kept.charCodeAt(end - 1))) end--;
  // never half a surrogate pair, where the bound stopped the scan inside one
  if (end > 0 && (kept.charCodeAt(end - 1) & 0xfc00) === 0xd800) end--;
  return end === kept.length ? kept : kept.slice(0, end);
}

/** The first `maxBytes` of `text`'s UTF-8, cut before a character, never inside one. */
export function headBytes(text: string, maxBytes: number): string {
  if (text.length * 3 <= maxBytes) return text;
  const head = text.slice(0, maxBytes); // characters: each is at least one byte
  const buf = Buffer.from(head);
  if (buf.length <= maxBytes) return head;
  let end = maxBytes;
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--; // a continuation byte: back to the character's start
  return buf.subarray(0, end).toString("utf8");
}
