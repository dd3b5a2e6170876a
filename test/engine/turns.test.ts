/**
 * The yields of the one thread's heavy work let the I/O that arrived in between be read before the
 * next piece: a `/healthz` waits for one piece, never for two back to back.
 */
import { createConnection, createServer, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { afterIO, AT_ONCE_BODIES, parseAtOnce, TURN_BODY_BYTES, Turns } from "../../engine/turns.js";

/**
 * Heavy work begun in an I/O callback (the poll phase: a socket's data), more data written to that
 * socket before the work yields (on the loopback, in the kernel's buffer at once): what runs first
 * after the yield — that data's callback, or the next piece?
 */
async function orderAfter(yieldOnce: () => Promise<void>): Promise<string[]> {
  const order: string[] = [];
  const peer: { client?: Socket } = {};
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  const server = createServer((socket) => {
    let first = true;
    socket.on("data", () => {
      if (!first) return void order.push("io");
      first = false;
      peer.client!.write("b");
      const t = performance.now();
      while (performance.now() - t < 5); // the first piece
      void yieldOnce().then(() => {
        order.push("next piece");
        setTimeout(done, 50);
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  const client = (peer.client = createConnection(port, "127.0.0.1"));
  client.setNoDelay(true);
  await new Promise<void>((r) => client.once("connect", r));
  client.write("a");
  await finished;
  client.destroy();
  await new Promise((r) => server.close(r));
  return order;
}

describe("letting I/O in between pieces of heavy work", () => {
  it("afterIO: the I/O that completed during a piece begun in an I/O callback is read before the next piece", async () => {
    expect(await orderAfter(afterIO)).toEqual(["io", "next piece"]);
  });

  it("(one setImmediate from an I/O callback runs before that I/O is read: what afterIO is for)", async () => {
    expect(await orderAfter(() => new Promise((r) => setImmediate(r)))).toEqual(["next piece", "io"]);
  });

  it("a turn taken from an I/O callback comes after the I/O that completed meanwhile", async () => {
    const turns = new Turns();
    expect(await orderAfter(() => turns.take("tenant"))).toEqual(["io", "next piece"]);
  });
});

describe("small bodies parsed at once", () => {
  it(`lets AT_ONCE_BODIES (${AT_ONCE_BODIES.count} bodies, ${AT_ONCE_BODIES.bytes / 1024} KiB) through in one iteration of the loop, the rest to turns; a body of TURN_BODY_BYTES or more never`, async () => {
    await afterIO();
    expect(parseAtOnce(TURN_BODY_BYTES)).toBe(false);
    const given = Array.from({ length: AT_ONCE_BODIES.count + 4 }, () => parseAtOnce(100));
    expect(given.filter(Boolean)).toHaveLength(AT_ONCE_BODIES.count);
    expect(given.slice(0, AT_ONCE_BODIES.count).every(Boolean)).toBe(true);
    // the next iteration, a fresh allowance
    await afterIO();
    expect(parseAtOnce(100)).toBe(true);
    await afterIO();
    // by bytes: four bodies just under the turn's size fill 64 KiB
    const big = Array.from({ length: 6 }, () => parseAtOnce(TURN_BODY_BYTES - 1));
    expect(big.filter(Boolean)).toHaveLength(Math.floor(AT_ONCE_BODIES.bytes / (TURN_BODY_BYTES - 1)));
  });
});
