/**
 * @module An event's body, read with a cap. Over the HTTP adapter it is read straight off the Node
 * request: no web `Request` or `ReadableStream` is built around it, which on the path of every
 * event costs more than the rest of an event that matches no hook. In-process (`app.request()`)
 * the web body is read, with the same cap.
 */
import type { IncomingMessage } from "node:http";
import type { Context } from "hono";
import { createScanner, type ScanError, type SyntaxKind } from "jsonc-parser";
import { BadRequestError, HookboxError, OverloadedError } from "../engine/index.js";
import type { Env } from "./context.js";

/**
 * Bytes of event bodies one tenant may have arriving at once: a body is held in memory until it is
 * whole, and a client that sends all but its last byte holds its part for as long as it likes — up
 * to `EVENT_BODY_READ_MS`. Past it, 429. A body that declares its length is charged that (at least
 * MIN_BODY_CHARGE_BYTES), one that does not the most a body may be. @default 16 MiB (sixteen bodies of the 1 MiB maximum)
 */
export const TENANT_BODY_BYTES_IN_FLIGHT = 16 * 1024 * 1024;
/**
 * The least a body arriving is charged, whatever length it declares: a request holds a socket and
 * its state (about 20 KiB) while its body arrives, so a thousand that declare one byte and send
 * nothing would hold 20 MB for a charge of 1 KB. @default 64 KiB (256 bodies arriving at once)
 */
export const MIN_BODY_CHARGE_BYTES = 64 * 1024;
/** How long an event's body may take to arrive once its headers are in; past it, 408. @default 10 s */
export const EVENT_BODY_READ_MS = 10_000;

/** A body declared too large is read and dropped before the 413 when it is at most this long. @default 64 MiB */
export const DISCARD_BYTES = 64 * 1024 * 1024;
/** …and for at most this long. @default 2 s */
export const DISCARD_MS = 2_000;

/** The budget of events being handled, per tenant (`TENANT_EVENT_MEMORY_BYTES`). */
export const eventMemoryBudget = (perTenant = TENANT_EVENT_MEMORY_BYTES) =>
  new BodyBudget(perTenant, (now, limit) => `this tenant's events being handled already hold about ${now} bytes (TENANT_EVENT_MEMORY_BYTES: ${limit}); retry when some are answered`);

/** The first HEAD_BYTES of a web body (in-process, `app.request()`), into `head`, as far as they come within `ms`; the rest not read. */
async function readHead(body: ReadableStream<Uint8Array> | null, head: Uint8Array[], ms: number): Promise<void> {
  const reader = body?.getReader();
  if (!reader) return;
  let kept = 0;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<{ done: true; value?: undefined }>((resolve) => (timer = setTimeout(resolve, ms, { done: true })));
  try {
    while (kept < HEAD_BYTES) {
      const { value, done } = await Promise.race([reader.read(), late]);
      if (done) break;
      head.push(value.subarray(0, HEAD_BYTES - kept));
      kept += Math.min(value.length, HEAD_BYTES - kept);
    }
  } finally {
    clearTimeout(timer);
    void reader.cancel().catch(() => undefined);
  }
}

/** Reads `incoming` to its end (or `ms`), keeping nothing — but, when asked, its first HEAD_BYTES into `head`. */
function discard(incoming: IncomingMessage, ms: number, head?: Uint8Array[]): Promise<void> {
  if (incoming.readableEnded || incoming.destroyed) return Promise.resolve();
  return new Promise<void>((resolve) => {
    // its first HEAD_BYTES kept, when asked — where the event's name is —, copied into one buffer of
    // that size: nothing else of the chunks it came in (a byte a chunk, or 64 KiB) is held
    let kept: Buffer | undefined;
    let length = 0;
    const onData = (chunk: Buffer) => {
      if (length >= HEAD_BYTES) return;
      if (!kept) head!.push((kept = Buffer.alloc(HEAD_BYTES)));
      length += chunk.copy(kept, length, 0, HEAD_BYTES - length);
      head![0] = kept.subarray(0, length);
    };
    const done = () => {
      clearTimeout(timer);
      incoming.off("end", done);
      incoming.off("error", done);
      incoming.off("close", done);
      if (head) incoming.off("data", onData);
      incoming.pause();
      resolve();
    };
    const timer = setTimeout(done, ms);
    incoming.on("end", done);
    incoming.on("error", done);
    incoming.on("close", done);
    if (head) incoming.on("data", onData);
    incoming.resume();
  });
}

/** The most pieces a body of at most `maxBytes` may come in: `maxBytes` / `pieceBytes`, at least 4096. */
export const maxPiecesOf = (maxBytes: number, pieceBytes: number) => Math.max(4096, Math.floor(maxBytes / pieceBytes));

/**
 * A body's pieces (the reads it arrives in), counted and joined into blocks of `blockBytes` as they
 * come: the first piece, and one of a block or more with nothing waiting, go on as they are; smaller
 * ones are copied into the block, which goes on when full (or at `flush`). A body sent a byte a chunk
 * is held as a few blocks, never as a million buffers; one sent whole is never copied.
 */
export class PieceJoiner {
  private pieces = 0;
  private block: Buffer | undefined;
  private filled = 0;
  constructor(
    private readonly blockBytes: number,
    /** past this many pieces `add` refuses */
    readonly maxPieces: number,
    private readonly out: (block: Buffer) => void,
  ) {}

  /** Takes `piece`; false, taking nothing, once it is one past `maxPieces`. */
  add(piece: Buffer): boolean {
    if (++this.pieces > this.maxPieces) return false;
    if (this.filled === 0 && (this.pieces === 1 || piece.length >= this.blockBytes)) {
      this.out(piece);
      return true;
    }
    for (let at = 0; at < piece.length; ) {
      this.block ??= Buffer.allocUnsafe(this.blockBytes);
      const n = piece.copy(this.block, this.filled, at, Math.min(piece.length, at + this.blockBytes - this.filled));
      this.filled += n;
      at += n;
      if (this.filled === this.blockBytes) this.flush();
    }
    return true;
  }

  /** What waits in the block goes on. */
  flush(): void {
    if (this.filled > 0) this.out(this.filled === this.blockBytes ? this.block! : this.block!.subarray(0, this.filled));
    this.block = undefined;
    this.filled = 0;
  }
}

/** @default 16 KiB — an event body's pieces smaller than this are copied into blocks of it as they come */
const BODY_BLOCK_BYTES = 16 * 1024;
/**
 * @default 512 — the least an event body's pieces (the reads it arrives in) average: it may come in
 * the body cap / 512 of them (at least 4096: for 1 MiB), past them 400. Each piece costs the shared thread
 * a few microseconds whatever its size.
 */
export const BODY_PIECE_BYTES = 512;

/**
 * @default 4 KiB — what of a body too large is kept to learn its event from (an agent names it in
 * the first few hundred bytes): held while the rest is dropped, up to DISCARD_MS, by each of as many
 * such requests as there are connections.
 */
export const HEAD_BYTES = 4 * 1024;
/** jsonc-parser's token kinds and its no-error (`SyntaxKind`, `ScanError`: const enums, which a module cannot import by value) */
const TOKEN = { openBrace: 1, closeBrace: 2, openBracket: 3, closeBracket: 4, comma: 5, colon: 6, string: 10, lineComment: 12, blockComment: 13, lineBreak: 14, trivia: 15, unknown: 16, end: 17 } as const satisfies Record<string, SyntaxKind>;
const NO_ERROR = 0 satisfies ScanError;
/** an event's name: letters only */
const EVENT_NAME = /^[A-Za-z]+$/;

/**
 * The event a body's head names: its top-level `hook_event_name` (or Copilot's `hookEventName`),
 * read off jsonc-parser's scanner in one pass over `text` (its tokens, not its recursive walk: a
 * head of 64 KiB of `[` would overflow the stack) — never such a key inside a value (a tool's
 * arguments the model wrote) nor past where the text stops being JSON —; undefined when it does not
 * say, or names two events.
 */
export function eventNamedIn(text: string): string | undefined {
  const scanner = createScanner(text, false);
  let depth = 0;
  let topIsObject = false;
  let before: SyntaxKind = TOKEN.unknown;
  let key: string | undefined;
  let named: string | undefined;
  for (let token = scanner.scan(); token !== TOKEN.end; token = scanner.scan()) {
    if (token === TOKEN.trivia || token === TOKEN.lineBreak) continue;
    // a comment, a bad token or string: no longer JSON, nothing further is read
    if (scanner.getTokenError() !== NO_ERROR || token === TOKEN.unknown || token === TOKEN.lineComment || token === TOKEN.blockComment) break;
    if (token === TOKEN.openBrace || token === TOKEN.openBracket) {
      if (depth === 0) topIsObject = token === TOKEN.openBrace;
      depth++;
    } else if (token === TOKEN.closeBrace || token === TOKEN.closeBracket) depth--;
    else if (token === TOKEN.string && depth === 1 && topIsObject) {
      // at the top level, a string after `{` or `,` is a key, after `:` its value
      if (before === TOKEN.openBrace || before === TOKEN.comma) key = scanner.getTokenValue();
      else if (before === TOKEN.colon && (key === "hook_event_name" || key === "hookEventName") && EVENT_NAME.test(scanner.getTokenValue())) {
        if (named !== undefined && named !== scanner.getTokenValue()) return undefined;
        named = scanner.getTokenValue();
      }
    }
    before = token;
  }
  return named;
}

/** A body over the cap (413; on the native endpoints the tenant's failure mode for the event its head names). */
export class BodyTooLargeError extends HookboxError {
  constructor(maxBytes: number) {
    super(`the event body is over ${maxBytes} bytes`, "too_large");
  }
}

/** The head of the body each failed read had come to (see bodyHeadOf). */
const heads = new WeakMap<object, Uint8Array>();

/**
 * The first bytes, up to HEAD_BYTES, of the body a read failed on, as far as they came — too large,
 * refused (429), late (408), in too many pieces: the event its head names is the one the refusal is
 * answered for (on a native hook's URL that names none, a Stop is not blocked for a body refused).
 */
export const bodyHeadOf = (err: unknown): Uint8Array | undefined => (typeof err === "object" && err !== null ? heads.get(err) : undefined);

/** `err`, knowing the head of `pieces` (the body as far as it came). */
function withHead<E extends Error>(err: E, pieces: Uint8Array[]): E {
  heads.set(err, Buffer.concat(pieces, Math.min(HEAD_BYTES, pieces.reduce((n, b) => n + b.length, 0))));
  return err;
}

/**
 * Memory one tenant's events may hold while they are handled — waiting for a run slot or running —
 * as estimated from their bodies before they are parsed (`eventMemoryBytes`: a 1 MiB body of `{}`s
 * takes over 20 MiB once parsed). Past it, 429: a tenant's flood of large events earns that tenant
 * its 429s, never the process an out-of-memory kill. @default 64 MiB
 */
export const TENANT_EVENT_MEMORY_BYTES = 64 * 1024 * 1024;

/** What each tenant holds of a per-tenant byte budget: its bodies arriving, or its events being handled. */
export class BodyBudget {
  private readonly held = new Map<string, number>();
  constructor(
    readonly perTenant = TENANT_BODY_BYTES_IN_FLIGHT,
    private readonly says: (now: number, limit: number) => string = (now, limit) =>
      `this tenant already has ${now} bytes of event bodies arriving (TENANT_BODY_BYTES_IN_FLIGHT: ${limit}); retry when they are in`,
  ) {}

  /** Charges `bytes` to `tenant`, or throws 429; the returned function gives them back (once). */
  take(tenant: string, bytes: number): () => void {
    const now = this.held.get(tenant) ?? 0;
    if (now + bytes > this.perTenant) throw new OverloadedError(1, this.says(now, this.perTenant));
    this.held.set(tenant, now + bytes);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const left = (this.held.get(tenant) ?? bytes) - bytes;
      if (left <= 0) this.held.delete(tenant);
      else this.held.set(tenant, left);
    };
  }
}

/**
 * The body, whole, or a `too_large` error (413; on the native endpoints the tenant's failure mode)
 * as soon as the declared length or the bytes read pass `maxBytes`; `body_timeout` (408) when it has
 * not arrived within `readMs`; 429 when the tenant's bodies arriving at once would pass its `budget`.
 * What is left unread is drained and discarded by the HTTP adapter after the answer.
 */
export async function readBody(
  c: Context<Env>,
  maxBytes: number,
  opts: { budget?: BodyBudget; tenant?: string; readMs?: number } = {},
): Promise<Uint8Array> {
  const tooLarge = (head: Uint8Array[] = []) => withHead(new BodyTooLargeError(maxBytes), head);
  const length = c.req.header("content-length");
  const declared = Number(length ?? 0);
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (declared > maxBytes) {
    // Read and dropped, never kept (but its head), before the answer: a connection closed on a body
    // still arriving is reset, and the reset takes the answer with it.
    const head: Uint8Array[] = [];
    if (incoming && declared <= DISCARD_BYTES) await discard(incoming, DISCARD_MS, head);
    else if (!incoming) await readHead(c.req.raw.body, head, DISCARD_MS);
    throw tooLarge(head);
  }
  if (incoming?.readableEnded) return new Uint8Array(0);
  const charge = length !== undefined && Number.isFinite(declared) ? Math.max(declared, MIN_BODY_CHARGE_BYTES) : maxBytes;
  let give: (() => void) | undefined;
  try {
    give = opts.budget && opts.tenant !== undefined ? opts.budget.take(opts.tenant, charge) : undefined;
  } catch (err) {
    // Refused before it is read (429): read and dropped first, never kept (but its head), as a body
    // too large is — a connection closed on a body still arriving is reset, and the reset takes the answer with it.
    const head: Uint8Array[] = [];
    if (incoming) await discard(incoming, DISCARD_MS, head);
    throw withHead(err as Error, head);
  }
  const readMs = opts.readMs ?? EVENT_BODY_READ_MS;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new HookboxError(`the event body did not arrive within ${readMs} ms (EVENT_BODY_READ_MS)`, "body_timeout")), readMs);
  });
  try {
    return await Promise.race([incoming ? readNodeBody(incoming, maxBytes, tooLarge, late) : readWebBody(c.req.raw.body, maxBytes, tooLarge), late]);
  } finally {
    clearTimeout(timer);
    give?.();
  }
}

function readNodeBody(incoming: IncomingMessage, maxBytes: number, tooLarge: (head: Uint8Array[]) => Error, late: Promise<never>): Promise<Uint8Array> {
  return new Promise<Uint8Array>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    // Small pieces are joined into blocks as they come, and the body may come in so many pieces only (BODY_PIECE_BYTES).
    const joiner = new PieceJoiner(BODY_BLOCK_BYTES, maxPiecesOf(maxBytes, BODY_PIECE_BYTES), (block) => chunks.push(block));
    const stop = () => {
      incoming.off("data", onData);
      incoming.off("end", onEnd);
      incoming.off("error", onError);
      incoming.off("close", onClose);
    };
    /** Nothing more is read; what came is whole in `chunks`. */
    const halt = () => {
      stop();
      incoming.pause();
      joiner.flush();
    };
    // Too late: what came so far is let go at once (but its head), and the rest is not read.
    late.catch((err: Error) => {
      halt();
      withHead(err, chunks);
      chunks.length = 0;
    });
    const onData = (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > maxBytes) {
        halt();
        reject(tooLarge(chunks.length ? chunks : [chunk]));
      } else if (!joiner.add(chunk)) {
        halt();
        reject(withHead(new BadRequestError(`the event body came in more than ${joiner.maxPieces} pieces, under ${BODY_PIECE_BYTES} bytes each on average (BODY_PIECE_BYTES): send it in larger writes`, "body"), chunks));
      }
    };
    const onEnd = () => {
      stop();
      joiner.flush();
      // one piece is the body as it came; more are joined to its size (the last block's spare room not kept)
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, bytes));
    };
    // The client's doing, not hookbox's: a 400 (nobody is left to read it), never a 500.
    const onError = (err: Error) => {
      stop();
      reject(new HookboxError(`the body could not be read: ${err.message}`, "body_incomplete", { cause: err }));
    };
    const onClose = () => onError(new Error("the client went away before the body was read"));
    // gone before it was read: its close will not come again
    if (incoming.destroyed) return onClose();
    incoming.on("data", onData);
    incoming.once("end", onEnd);
    incoming.once("error", onError);
    incoming.once("close", onClose);
  });
}

async function readWebBody(body: ReadableStream<Uint8Array> | null, maxBytes: number, tooLarge: (head: Uint8Array[]) => Error): Promise<Uint8Array> {
  if (!body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for await (const chunk of body) {
    bytes += chunk.length;
    if (bytes > maxBytes) throw tooLarge(chunks.length ? chunks : [chunk]);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, bytes);
}
