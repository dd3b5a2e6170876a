/**
 * The attack tests' liveness probe sees a stalled server, and only the server: a loop held for
 * 600 ms shows as a slow /healthz; the same hold in the thread that drives the attack, with the
 * server elsewhere, does not.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Worker } from "node:worker_threads";
import { afterEach, expect, it } from "vitest";
import { underProbe, WORST_HEALTH_MS } from "./helpers/probe.js";

const hold = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

let server: Server | undefined;
let elsewhere: Worker | undefined;
afterEach(async () => {
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  await elsewhere?.terminate();
  server = elsewhere = undefined;
});

it("sees a server whose loop is held", async () => {
  server = createServer((_, res) => res.end("ok")).listen(0, "127.0.0.1");
  await new Promise((r) => server!.once("listening", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { health } = await underProbe(url, async () => {
    await new Promise((r) => setTimeout(r, 100));
    hold(600); // this thread is the server's
    await new Promise((r) => setTimeout(r, 100));
  });
  expect(health.failures).toBe(0);
  expect(health.worstMs).toBeGreaterThan(400);
});

it("does not count the attacking thread's own stalls against a server elsewhere", async () => {
  elsewhere = new Worker(
    `const { createServer } = require("node:http"); const s = createServer((_, res) => res.end("ok")).listen(0, "127.0.0.1", () => require("node:worker_threads").parentPort.postMessage(s.address().port));`,
    { eval: true },
  );
  const port = await new Promise<number>((r) => elsewhere!.once("message", r));
  const { health } = await underProbe(`http://127.0.0.1:${port}`, async () => {
    await new Promise((r) => setTimeout(r, 100));
    hold(600); // the attack's own work: building a body, reading answers
    await new Promise((r) => setTimeout(r, 100));
  });
  expect(health.failures).toBe(0);
  expect(health.calls).toBeGreaterThan(5);
  expect(health.worstMs).toBeLessThan(WORST_HEALTH_MS);
});
