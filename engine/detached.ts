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
