/**
 * @module What `hookbox trace`, `workspace push` and `doctor` read of an answer: at most a named
 * number of bytes (as decoded: fetch undoes a gzip, and a small gzip can stand for gigabytes), by
 * a deadline, redirects not followed — a broken server or proxy that answers without end, or never
 * answers, holds none of them, nor their memory.
 */

/**
 * @default 64 MiB — of a trace (`GET /v1/events/{id}`) or an upload's answer: a trace keeps about
 * 8 MiB of its hooks (MAX_TRACE_EVENT_BYTES), an upload's answer far less.
 */
export const MAX_CLIENT_ANSWER_BYTES = 64 * 1024 * 1024;
/** @default 30 s — `hookbox trace`: the request and its answer, read whole */
export const TRACE_DEADLINE_MS = 30_000;

/** An answer past its cap: no answer. */
export class AnswerTooLarge extends Error {
  constructor(maxBytes: number) {
    super(`the answer is larger than ${maxBytes} bytes, more than hookbox's ever are: not read`);
  }
}

/**
 * The answer's body as text (UTF-8), or AnswerTooLarge once it is past `maxBytes` — one that says
 * so in its Content-Length is not read at all; no more than one chunk past the cap is ever held.
 */
export async function readText(res: Response, maxBytes: number): Promise<string> {
  if (Number(res.headers.get("content-length") ?? 0) > maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    throw new AnswerTooLarge(maxBytes);
  }
  if (!res.body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    // leaving the loop cancels the stream: nothing more is read
    if (size > maxBytes) throw new AnswerTooLarge(maxBytes);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString("utf8");
}
