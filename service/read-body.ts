/**
 * @module An event's body, read with a cap. Over the HTTP adapter it is read straight off the Node
 * request: no web `Request` or `ReadableStream` is built around it, which on the path of every
 * event costs more than the rest of an event that matches no hook. In-process (`app.request()`)
 * the web body is read, with the same cap.
 */
import type { IncomingMessage } from "node:http";
import type { Context } from "hono";
import { HookboxError } from "../engine/index.js";
import type { Env } from "./context.js";

/**
 * The body, whole, or a `too_large` error (413; on the native endpoints the tenant's failure mode)
 * as soon as the declared length or the bytes read pass `maxBytes`. What is left unread is drained
 * and discarded by the HTTP adapter after the answer.
 */
export async function readBody(c: Context<Env>, maxBytes: number): Promise<Uint8Array> {
  const tooLarge = () => new HookboxError(`the event body is over ${maxBytes} bytes`, "too_large");
  const declared = Number(c.req.header("content-length") ?? 0);
  if (declared > maxBytes) throw tooLarge();
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (!incoming) return readWebBody(c.req.raw.body, maxBytes, tooLarge);
  if (incoming.readableEnded) return new Uint8Array(0);
  return new Promise<Uint8Array>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    const stop = () => {
      incoming.off("data", onData);
      incoming.off("end", onEnd);
      incoming.off("error", onError);
      incoming.off("close", onClose);
    };
    const onData = (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > maxBytes) {
        stop();
        incoming.pause();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      stop();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, bytes));
    };
    // The client's doing, not hookbox's: a 400 (nobody is left to read it), never a 500.
    const onError = (err: Error) => {
      stop();
      reject(new HookboxError(`the body could not be read: ${err.message}`, "body_incomplete", { cause: err }));
    };
    const onClose = () => onError(new Error("the client went away before the body was read"));
    incoming.on("data", onData);
    incoming.once("end", onEnd);
    incoming.once("error", onError);
    incoming.once("close", onClose);
  });
}

async function readWebBody(body: ReadableStream<Uint8Array> | null, maxBytes: number, tooLarge: () => Error): Promise<Uint8Array> {
  if (!body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for await (const chunk of body) {
    bytes += chunk.length;
    if (bytes > maxBytes) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, bytes);
}
