/**
 * Requests written by hand over a connection of their own: a body sent a byte a chunk, all but its
 * last byte, or with a length it never reaches — what no HTTP client library sends.
 */
import { connect, type Socket } from "node:net";

/**
 * Connects to `port`, writes `head` (the request line and headers, no blank line after) and then
 * `body`; the caller writes whatever else it sends. `answer` is the whole HTTP answer once its JSON
 * body has come (whole, or chunked to its last chunk), or all that came before the close.
 */
export function byHand(port: number, head: string, body: string | Buffer = "", host = "127.0.0.1"): Promise<{ socket: Socket; answer: Promise<string> }> {
  return new Promise((resolve) => {
    const socket = connect(port, host, () => {
      socket.write(`${head}\r\n\r\n`);
      socket.write(body);
      resolve({ socket, answer });
    });
    let text = "";
    const answer = new Promise<string>((done) => {
      socket.on("data", (d: Buffer) => {
        text += d.toString("latin1");
        // a JSON body's end, sent whole or as the last chunk
        if (/\r\n\r\n[\s\S]*\}(\r\n0\r\n\r\n)?$/.test(text)) done(text);
      });
      socket.on("close", () => done(text));
    });
    socket.on("error", () => undefined);
  });
}

/** The body of an HTTP answer `byHand` read (a chunked one's framing taken off). */
export const bodyOf = (answer: string) => {
  const body = answer.slice(answer.indexOf("\r\n\r\n") + 4);
  return /^transfer-encoding: chunked/im.test(answer.slice(0, answer.indexOf("\r\n\r\n"))) ? body.replace(/^[0-9a-f]+\r\n|\r\n0\r\n\r\n$/g, "") : body;
};

/** ASCII `text` as chunks of one byte each (chunked transfer encoding), without the last chunk. */
export const byteChunks = (text: string) => [...text].map((c) => `1\r\n${c}\r\n`).join("");
