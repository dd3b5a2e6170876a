/**
 * Attacks through event requests and what they select, replayed against a running service while a
 * probe calls /healthz every 50 ms: names that cost quadratic time, URLs of escapes that are no UTF-8, matchers that backtrack, one
 * event asking for hundreds of containers or for hours, one tenant flooding the others out.
 * Each is answered in bounded time, with a 4xx or its format's decision, and the service never
 * stops answering everyone else.
 */
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { docker, leftovers } from "../helpers/engine.js";
import { underProbe, WORST_HEALTH_MS } from "../helpers/probe.js";
import { byHand, byteChunks } from "../helpers/raw-http.js";
import { startService, tenantsToml, TOKEN_A, TOKEN_B, type Service } from "../helpers/service.js";
import { tarOf } from "../helpers/tar.js";
import { LABEL_MANAGED } from "../../engine/names.js";
import { TURN_BODY_BYTES } from "../../engine/turns.js";
import { METRICS_RENDER_EVERY_MS } from "../../service/metrics.js";
import { GET_BODY_DRAIN_MS, HEADERS_TIMEOUT_MS } from "../../service/main.js";

const pre = (extra: Record<string, unknown> = {}) => ({ session_id: "s", hook_event_name: "PreToolUse", tool_name: "shell", tool_input: { command: "ls" }, ...extra });

async function alive(svc: Service): Promise<void> {
  expect(svc.proc.exitCode).toBeNull();
  expect((await fetch(`${svc.url}/healthz`)).status).toBe(200);
}

const put = (svc: Service, id: string, body: Buffer) =>
  fetch(`${svc.url}/v1/workspaces/${id}`, { method: "PUT", headers: { authorization: `Bearer ${TOKEN_A}` }, body });

/** A request sent by hand as tenant A (see byHand): `line` its method and path, `header` one header more. */
const rawPost = (url: URL, line: string, header: string) =>
  byHand(Number(url.port), `${line} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${TOKEN_A}\r\nContent-Type: application/json\r\n${header}`, "", url.hostname);

/** An event of `body` posted by hand: all of it sent but its last byte (the caller sends that, or never does). */
async function sendAllButLast(url: URL, body: Buffer): Promise<{ socket: ReturnType<typeof connect>; answer: Promise<string> }> {
  const sent = await rawPost(url, "POST /v1/events/PreToolUse", `Content-Length: ${body.length}`);
  sent.socket.write(body.subarray(0, body.length - 1));
  return sent;
}

describe("names and matchers cost linear time", () => {
  let svc: Service;
  beforeAll(async () => {
    // An administrator's guard written for snake_case events: a Copilot event reaches it translated.
    svc = await startService(`[sandbox]\npool_size = 0\n\n[[policy.PreToolUse]]\nname = "no-rm"\nmatcher = "bash"\ncommand = '''grep -q 'rm -rf' && echo '{"decision":"block","reason":"policy: no rm -rf"}' || true'''\n`);
  });
  afterAll(async () => {
    await svc.stop();
  });

  it("translates a Copilot event whose timestamp no Date can hold for the policy guard, and the guard still blocks", async () => {
    // new Date(1e20).toISOString() throws: the event once ended in a 500 before any hook ran — an allow under on_failure = "allow".
    for (const timestamp of [1e20, -1e300, 1]) {
      const res = await svc.event({ toolName: "bash", toolArgs: JSON.stringify({ command: "rm -rf /" }), timestamp }, { path: "/v1/events/preToolUse" });
      expect(res.status, String(timestamp)).toBe(200);
      expect(await res.json()).toMatchObject({ decision: "block", reason: "policy: no rm -rf" });
    }
    const native = await fetch(`${svc.url}/v1/hooks/copilot/preToolUse`, { method: "POST", headers: { authorization: `Bearer ${TOKEN_A}`, "content-type": "application/json" }, body: JSON.stringify({ toolName: "bash", toolArgs: '{"command":"rm -rf /"}', timestamp: 1e20 }) });
    expect(await native.json()).toMatchObject({ permissionDecision: "deny" });
  });

  it("takes a client that goes away halfway through its body as a 400, never a 500", async () => {
    const url = new URL(svc.url);
    const socket = connect(Number(url.port), url.hostname);
    await new Promise<void>((r) => socket.once("connect", () => r()));
    socket.write(`POST /v1/events HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${TOKEN_A}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"session_id":`);
    await new Promise((r) => setTimeout(r, 100));
    socket.destroy();
    await expect.poll(() => /"path":"\/v1\/events"\},"res":\{"status":\d+/.test(svc.logs()), { timeout: 5_000 }).toBe(true);
    expect(svc.logs()).toMatch(/"path":"\/v1\/events"\},"res":\{"status":400/);
    expect(svc.logs()).not.toMatch(/"status":500/);
    await alive(svc);
  });

  it("holds at most 16 MiB of one tenant's stalled bodies: the 17th 1 MiB body is 429, the other tenant is served, the stalled ones are 408 after EVENT_BODY_READ_MS", async () => {
    const url = new URL(svc.url);
    // each declares 1 MiB and sends all of it but the last byte, then waits
    const stall = () => sendAllButLast(url, Buffer.alloc(1024 * 1024, 0x20));
    const t0 = performance.now();
    const held = await Promise.all(Array.from({ length: 16 }, () => stall()));
    await new Promise((r) => setTimeout(r, 300));
    const extra = await stall();
    expect(await extra.answer).toMatch(/^HTTP\/1\.1 429 [\s\S]*TENANT_BODY_BYTES_IN_FLIGHT/);
    const other = await svc.event(pre({ tool_name: "nothing-matches" }), { token: TOKEN_B });
    expect(other.status).toBe(200);
    await alive(svc);
    for (const { answer } of held) expect(await answer).toMatch(/^HTTP\/1\.1 408 [\s\S]*EVENT_BODY_READ_MS/);
    expect(performance.now() - t0).toBeLessThan(20_000);
    for (const { socket } of [...held, extra]) socket.destroy();
    // every share was given back
    expect((await svc.event(pre({ tool_name: "nothing-matches" }))).status).toBe(200);
  }, 30_000);

  /**
   * Sixteen copies of `body` sent but for their last byte, which all get at once under the health
   * probe, another tenant's event beside them: each answer (its raw HTTP text) must match `answer`,
   * the other tenant is served, `/healthz` answers throughout, and the service lives on.
   */
  async function sixteenAtOnce(body: Buffer, answer: RegExp, count = 16): Promise<void> {
    const url = new URL(svc.url);
    const held = await Promise.all(Array.from({ length: count }, () => sendAllButLast(url, body)));
    await new Promise((r) => setTimeout(r, 1000));
    // The probe's client is warm before the attack: its first call would time its own start-up.
    await (await fetch(`${svc.url}/healthz`)).arrayBuffer();
    const { value: answers, health } = await underProbe(svc.url, async () => {
      for (const { socket } of held) socket.write(body.subarray(body.length - 1));
      const other = svc.event(pre({ tool_name: "nothing-matches" }), { token: TOKEN_B });
      const all = await Promise.all(held.map((h) => h.answer));
      expect((await other).status).toBe(200);
      return all;
    });
    for (const text of answers) expect(text).toMatch(answer);
    expect(health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
    for (const { socket } of held) socket.destroy();
    await alive(svc);
  }

  it("takes 16 bodies of 1 MiB of invalid JSON completed at once in turns: each gets its located 400, the loop answers throughout", async () => {
    const size = 1024 * 1024;
    // Valid up to its last byte, which is not: locating the error reads the whole mebibyte.
    const body = Buffer.concat([Buffer.from('{"a":'), Buffer.alloc(size - 6, 0x20), Buffer.from("x")]);
    await sixteenAtOnce(body, /^HTTP\/1\.1 400 [\s\S]*expected a value, found \\"x\\" at line 1, column 1048576/);
  }, 30_000);

  it("takes 256 bodies just under TURN_BODY_BYTES of invalid JSON completed at once in turns past AT_ONCE_BODIES: each its located 400, the loop answers throughout", async () => {
    // Each small enough to be parsed at once alone: together, back to back, half a second of the thread.
    const head = '{"hook_event_name":"PreToolUse","x":[';
    const body = Buffer.from(`${head}${"0,".repeat(Math.floor((TURN_BODY_BYTES - 1 - head.length - 2) / 2))}]}`);
    expect(body.length).toBeLessThan(TURN_BODY_BYTES);
    await sixteenAtOnce(body, /^HTTP\/1\.1 400 [\s\S]*at line 1, column/, 256);
  }, 60_000);

  it("takes 16 bodies of 1 MiB of surrogate-pair escapes ending in a lone one, completed at once: each a 400 naming it, the loop answers throughout", async () => {
    const size = 1024 * 1024;
    // Every escape a pair until the last, unpaired: the check reads every backslash of the mebibyte.
    const head = '{"hook_event_name":"PreToolUse","tool_name":"x","notes":"';
    const pairs = "\\ud83d\\ude00".repeat(Math.floor((size - head.length - 10) / 12));
    const body = Buffer.from(`${head}${pairs}\\ud800"}`);
    expect(body.length).toBeLessThanOrEqual(size);
    await sixteenAtOnce(body, /^HTTP\/1\.1 400 [\s\S]*lone surrogate escape/);
  }, 30_000);

  it("takes 16 bodies of 1 MiB of two-byte characters ending in a byte that is none, completed at once: each a 400 saying where, the loop answers throughout", async () => {
    const size = 1024 * 1024;
    // UTF-8 up to its last bytes: finding where it stops reads the whole mebibyte.
    const head = '{"hook_event_name":"PreToolUse","tool_name":"x","notes":"';
    const body = Buffer.concat([Buffer.from(`${head}${"é".repeat(Math.floor((size - head.length - 10) / 2))}`), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
    expect(body.length).toBeLessThanOrEqual(size);
    await sixteenAtOnce(body, new RegExp(`^HTTP/1\\.1 400 [\\s\\S]*the body is not UTF-8 \\(at byte offset ${body.length - 3}, line 1\\)`));
  }, 30_000);

  it("closes a connection that trickles its headers past 10 s (headers timeout checked every second)", async () => {
    const url = new URL(svc.url);
    const socket = connect(Number(url.port), url.hostname);
    await new Promise<void>((r) => socket.once("connect", () => r()));
    const t0 = performance.now();
    let text = "";
    socket.on("data", (d: Buffer) => (text += d.toString("latin1")));
    // A drip written as the service closes the connection meets a reset: the close is what is awaited.
    socket.on("error", () => undefined);
    const closed = new Promise<void>((r) => socket.once("close", () => r()));
    socket.write(`POST /v1/events HTTP/1.1\r\nHost: ${url.host}\r\n`);
    // one header line a second, never the blank line that ends them
    const drip = setInterval(() => socket.write(`X-Drip-${Math.round(performance.now())}: 1\r\n`), 1_000);
    await closed;
    clearInterval(drip);
    const s = (performance.now() - t0) / 1000;
    expect(s).toBeGreaterThan(9);
    expect(s).toBeLessThan(13);
    expect(text === "" || /^HTTP\/1\.1 408/.test(text)).toBe(true);
    await alive(svc);
  }, 30_000);

  it("refuses a GET that carries a body, trickled a byte every 2 s, with 400 and closes its connection at once: never held for the upload's request timeout", async () => {
    const url = new URL(svc.url);
    const socket = connect(Number(url.port), url.hostname);
    await new Promise<void>((r) => socket.once("connect", () => r()));
    let text = "";
    socket.on("data", (d: Buffer) => (text += d.toString("latin1")));
    socket.on("error", () => undefined);
    const t0 = performance.now();
    const closed = new Promise<number>((r) => socket.once("close", () => r(performance.now())));
    socket.write(`GET /healthz HTTP/1.1\r\nHost: ${url.host}\r\nContent-Length: 100000000\r\n\r\n`);
    const drip = setInterval(() => socket.write("x"), 2_000);
    const at = await Promise.race([closed, new Promise<number>((r) => setTimeout(() => r(Number.POSITIVE_INFINITY), 15_000))]);
    clearInterval(drip);
    socket.destroy();
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    expect(text).toMatch(/a GET request carries no body/);
    expect(at - t0).toBeLessThan(3_000);
    await alive(svc);
  }, 30_000);

  it(`answers a GET sent chunked (as a proxy may send an empty body), and closes the connection of one whose chunks go on arriving GET_BODY_DRAIN_MS (${GET_BODY_DRAIN_MS} ms) after its answer`, async () => {
    const url = new URL(svc.url);
    const ask = async (chunks: "none" | "trickle") => {
      const socket = connect(Number(url.port), url.hostname);
      await new Promise<void>((r) => socket.once("connect", () => r()));
      let text = "";
      let answeredAt = 0;
      socket.on("data", (d: Buffer) => {
        text += d.toString("latin1");
        answeredAt ||= performance.now();
      });
      socket.on("error", () => undefined);
      const closed = new Promise<number>((r) => socket.once("close", () => r(performance.now())));
      socket.write(`GET /healthz HTTP/1.1\r\nHost: ${url.host}\r\nTransfer-Encoding: chunked\r\n\r\n${chunks === "none" ? "0\r\n\r\n" : ""}`);
      const drip = chunks === "trickle" ? setInterval(() => socket.write("1\r\nx\r\n"), 200) : undefined;
      // (within Node's keep-alive wait, 5 s: an idle connection is closed after it)
      const at = await Promise.race([closed, new Promise<number>((r) => setTimeout(() => r(Number.POSITIVE_INFINITY), 3_000))]);
      clearInterval(drip);
      socket.destroy();
      return { text, closedAfterAnswerMs: at - answeredAt };
    };
    const [empty, trickled] = await Promise.all([ask("none"), ask("trickle")]);
    expect(empty.text).toMatch(/^HTTP\/1\.1 200 /);
    // an empty body ends at once: the connection stays for the next request
    expect(empty.closedAfterAnswerMs).toBe(Number.POSITIVE_INFINITY);
    expect(trickled.text).toMatch(/^HTTP\/1\.1 200 /);
    expect(trickled.closedAfterAnswerMs).toBeGreaterThanOrEqual(GET_BODY_DRAIN_MS - 50);
    expect(trickled.closedAfterAnswerMs).toBeLessThan(GET_BODY_DRAIN_MS + 2_000);
    await alive(svc);
  }, 30_000);

  it(`shares one rendering of /metrics between the scrapes of each METRICS_RENDER_EVERY_MS: 32 connections scraping for 2.5 s with a tenant's token see a handful, the loop answers throughout`, async () => {
    const bodies: string[] = [];
    const { ms, health } = await underProbe(svc.url, async () => {
      const until = performance.now() + 2_500;
      await Promise.all(Array.from({ length: 32 }, async () => {
        while (performance.now() < until) {
          const res = await fetch(`${svc.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN_A}` } });
          expect(res.status).toBe(200);
          bodies.push(await res.text());
        }
      }));
    });
    // every rendering differs from the last (the process's CPU seconds, the loop's lag): one per window, and the one at the start
    expect(bodies.length).toBeGreaterThan(100);
    expect(new Set(bodies).size).toBeLessThanOrEqual(Math.ceil(ms / METRICS_RENDER_EVERY_MS) + 1);
    expect(health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
    await alive(svc);
  }, 30_000);

  it(`closes a connection that sends nothing at all at HEADERS_TIMEOUT_MS (${HEADERS_TIMEOUT_MS / 1000} s), with a 408, as one that trickles its headers: never held to the idle timeout (max_event_ms + 30 s)`, async () => {
    const url = new URL(svc.url);
    const t0 = performance.now();
    const silent = connect(Number(url.port), url.hostname);
    let text = "";
    silent.on("data", (d: Buffer) => (text += d.toString("latin1")));
    silent.on("error", () => undefined);
    await new Promise<void>((r) => silent.once("close", () => r()));
    const s = (performance.now() - t0) / 1000;
    expect(s).toBeGreaterThan(HEADERS_TIMEOUT_MS / 1000 - 0.5);
    expect(s).toBeLessThan(HEADERS_TIMEOUT_MS / 1000 + 3);
    expect(text === "" || /^HTTP\/1\.1 408/.test(text)).toBe(true);
    await alive(svc);
  }, 30_000);

  it("answers a 1 MB hook_event_name with a 400 at once", async () => {
    const body = JSON.stringify(pre({ hook_event_name: "PreToolUsx".repeat(100_000) }));
    const { value: res, ms, health } = await underProbe(svc.url, () => svc.event(body));
    expect(res.status).toBe(400);
    const err = ((await res.json()) as { error: { code: string; message: string } }).error;
    expect(err.code).toBe("unknown_event");
    expect(err.message.length).toBeLessThan(2_000);
    expect(ms).toBeLessThan(5_000);
    expect(health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
    await alive(svc);
  });

  it("answers a 1 MB unknown event name in the path with a 400 at once", async () => {
    const name = "x".repeat(200_000);
    const { value: res, health } = await underProbe(svc.url, () => svc.event(pre(), { path: `/v1/events/${name}` }));
    expect([400, 414, 431]).toContain(res.status);
    expect(health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
    await alive(svc);
  });

  it("refuses 200 URLs of 15 KB of escapes that are no UTF-8, completed at once, before they route: each a 400 (a block on a native hook's URL), the loop answers throughout", async () => {
    // hono decoded such a path one escape at a time, an exception each: about 30 ms of the thread a URL.
    const url = new URL(svc.url);
    const bad = "%ffa".repeat(3600);
    const requests = Array.from({ length: 200 }, (_, i) =>
      i % 4 === 0
        ? `POST /v1/hooks/claude/PreToolUse?x=${bad} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${TOKEN_A}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`
        : `GET /${bad}% HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`,
    );
    const held = await Promise.all(
      requests.map(async (text) => {
        const socket = connect(Number(url.port), url.hostname);
        await new Promise<void>((r) => socket.once("connect", () => r()));
        let got = "";
        const answer = new Promise<string>((resolve) => {
          socket.on("data", (d: Buffer) => {
            got += d.toString("latin1");
            if (/\r\n\r\n[\s\S]*\}$/.test(got)) resolve(got);
          });
          socket.on("close", () => resolve(got));
          socket.on("error", () => resolve(got));
        });
        socket.write(text.slice(0, -1));
        return { socket, answer, last: text.slice(-1) };
      }),
    );
    await new Promise((r) => setTimeout(r, 500));
    await (await fetch(`${svc.url}/healthz`)).arrayBuffer();
    const { value: answers, health } = await underProbe(svc.url, async () => {
      for (const h of held) h.socket.write(h.last);
      const other = svc.event(pre({ tool_name: "nothing-matches" }), { token: TOKEN_B });
      const all = await Promise.all(held.map((h) => h.answer));
      expect((await other).status).toBe(200);
      return all;
    });
    expect(health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
    answers.forEach((text, i) => {
      if (i % 4 === 0) expect(text).toMatch(/^HTTP\/1\.1 200 [\s\S]*"permissionDecision":"deny"[\s\S]*refused the hook's URL/);
      else expect(text).toMatch(/^HTTP\/1\.1 400 [\s\S]*percent-encoding is no UTF-8/);
    });
    for (const { socket } of held) socket.destroy();
    await alive(svc);
  }, 60_000);

  it("reads an event body sent a byte a chunk into blocks, and refuses one in more than 4096 pieces (BODY_PIECE_BYTES) with 400: the loop answers throughout", async () => {
    const url = new URL(svc.url);
    /** `body` posted chunked, a byte a chunk, ten thousand chunks to a write; the whole answer. */
    const byBytes = async (body: string) => {
      const { socket, answer } = await rawPost(url, "POST /v1/events", "Transfer-Encoding: chunked");
      void answer.then(() => socket.destroy());
      for (let at = 0; at < body.length && !socket.destroyed; at += 10_000) {
        const part = byteChunks(body.slice(at, at + 10_000));
        // (the answer may come, and the socket go, while a write waits: no drain comes then)
        if (!socket.write(part)) await Promise.race([new Promise((r) => socket.once("drain", r)), answer]);
      }
      if (!socket.destroyed) socket.write("0\r\n\r\n");
      return answer;
    };
    const sized = (n: number) => JSON.stringify(pre({ tool_name: "nothing-matches", notes: "" })).replace('"notes":""', `"notes":"${"n".repeat(n)}"`);
    const { value, health } = await underProbe(svc.url, async () => [await byBytes(sized(3_000)), await byBytes(sized(200_000))]);
    expect(value[0]).toMatch(/^HTTP\/1\.1 200 /);
    expect(value[1]).toMatch(/^HTTP\/1\.1 400 [\s\S]*more than 4096 pieces.*BODY_PIECE_BYTES/);
    expect(health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
    await alive(svc);
  }, 60_000);

  it("refuses a tool name over 256 characters, naming the field", async () => {
    const res = await svc.event(pre({ tool_name: "a".repeat(257) }));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { field: string } }).error.field).toBe("tool_name");
    expect((await svc.event(pre({ tool_name: "a".repeat(256) }))).status).toBe(200);
  });

  it("runs a repository matcher (a+)+b against a 64-char tool name in linear time", async () => {
    const settings = { hooks: { PreToolUse: [{ matcher: "(a+)+b", hooks: [{ type: "command", command: "echo '{\"decision\":\"block\",\"reason\":\"redos\"}'" }] }] } };
    expect((await put(svc, "redos", await tarOf([{ name: ".claude/settings.json", content: JSON.stringify(settings) }]))).status).toBe(200);
    const { value: res, ms, health } = await underProbe(svc.url, () => svc.event(pre({ tool_name: "a".repeat(64) }), { query: "workspace=redos" }));
    expect(res.status).toBe(200);
    // The matcher does not match: no hook ran, no decision.
    const answer = (await res.json()) as { decision: string | null; hooks: unknown[] };
    expect(answer).toMatchObject({ decision: null, hooks: [] });
    expect(ms).toBeLessThan(5_000);
    expect(health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
    // … and still matches what it should.
    const hit = (await (await svc.event(pre({ tool_name: "aaab" }), { query: "workspace=redos" })).json()) as { decision: string };
    expect(hit.decision).toBe("block");
  });

  it("warns of a matcher RE2 cannot run (backreference) with the file and line, and runs its hook for every tool: no guard silently skipped", async () => {
    const settings = `{\n  "hooks": {\n    "PreToolUse": [\n      { "matcher": "(a)\\\\1", "hooks": [{ "type": "command", "command": "echo '{\\"decision\\":\\"block\\",\\"reason\\":\\"backref\\"}'" }] }\n    ]\n  }\n}\n`;
    const res = await put(svc, "backref", await tarOf([{ name: ".claude/settings.json", content: settings }]));
    expect(res.status).toBe(200);
    expect(((await res.json()) as { warnings: string[] }).warnings).toEqual([expect.stringMatching(/^\.claude\/settings\.json:4: .*matcher is not a valid regular expression.*; the hook runs for every call$/)]);
    const answer = (await (await svc.event(pre({ tool_name: "Read" }), { query: "workspace=backref" })).json()) as { decision: string };
    expect(answer.decision).toBe("block");
  });
});

describe("one event's containers and time are bounded", () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService(`[sandbox]\npool_size = 0\nmax_event_ms = 3000\nmax_containers_per_event = 4\n`);
  });
  afterAll(async () => {
    await svc.stop();
    expect((await leftovers()).containers).toEqual([]);
  });

  it("runs 300 parallel repository hooks at most 4 containers at once, and answers by max_event_ms", async () => {
    const hooks = Array.from({ length: 300 }, (_, i) => `[[hooks.PreToolUse]]\nname = "h${i}"\ncommand = "sleep 0.2; echo '{}'"\n`).join("\n");
    const toml = `[hooks]\nparallel = true\n\n${hooks}`;
    expect((await put(svc, "many", await tarOf([{ name: ".copilot-shell/config.toml", content: toml }]))).status).toBe(200);
    let most = 0;
    let watching = true;
    const watch = (async () => {
      const filters = JSON.stringify({ label: [`${LABEL_MANAGED}=true`], status: ["created", "running"] });
      while (watching) {
        most = Math.max(most, (await docker.listContainers({ all: true, filters })).length);
        await new Promise((r) => setTimeout(r, 25));
      }
    })();
    const { value: res, ms, health } = await underProbe(svc.url, () => svc.event(pre(), { query: "workspace=many" }));
    watching = false;
    await watch;
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { decision: string | null; hooks: { outcome: string; error: string | null }[] };
    expect(answer.hooks).toHaveLength(300);
    // Hooks the deadline left no time for are timeouts: pass-through under cosh's rules.
    expect(answer.decision).toBeNull();
    expect(answer.hooks.filter((h) => h.outcome === "timed_out").length).toBeGreaterThan(200);
    expect(answer.hooks.some((h) => h.error === "not run: the event's max_event_ms had passed")).toBe(true);
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(4);
    // max_event_ms, and the answer within the 5 s every attack is answered in.
    expect(ms).toBeLessThan(5_000);
    expect(health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
    await alive(svc);
  });
});

describe("sequential hooks stop at max_event_ms", () => {
  let svc: Service;
  beforeAll(async () => {
    const policy = Array.from({ length: 8 }, (_, i) => `[[policy.PreToolUse]]\nname = "slow-${i}"\ncommand = "sleep 4; echo '{}'"\ntimeout = 5000\n`).join("\n");
    // team-b's failure mode is block: a guard the deadline cut is hookbox not deciding, not a pass.
    const tenants = tenantsToml().replace('token_env = "HOOKBOX_TEST_TOKEN_B"', 'token_env = "HOOKBOX_TEST_TOKEN_B"\non_failure = "block"');
    svc = await startService(`[sandbox]\npool_size = 0\nmax_event_ms = 10000\n\n${policy}`, { tenants });
  });
  afterAll(async () => {
    await svc.stop();
  });

  it("answers 8 sequential 4 s hooks at 10 s: two ran, the third was cut, the rest never started", async () => {
    const blockTenant = svc.event(pre(), { token: TOKEN_B });
    const { value: res, ms, health } = await underProbe(svc.url, () => svc.event(pre()));
    // on_failure = allow: the cut hooks are timeouts, judged by their format's rule (pass-through).
    expect(res.status).toBe(200);
    const cut = (await (await blockTenant).json()) as { decision: string | null; reason: string; hooks: unknown[] };
    expect(cut.decision).toBe("block");
    expect(cut.reason).toMatch(/^hook slow-2 had not decided when the event's max_event_ms \(10000 ms\) ran out: the tenant's failure mode \(block\) applies/);
    expect(cut.hooks).toHaveLength(8);
    const answer = (await res.json()) as { decision: string | null; hooks: { name: string; outcome: string; duration_ms: number }[] };
    expect(answer.hooks.map((h) => h.outcome)).toEqual(["exited", "exited", "timed_out", "timed_out", "timed_out", "timed_out", "timed_out", "timed_out"]);
    expect(answer.hooks.slice(3).every((h) => h.duration_ms === 0)).toBe(true);
    expect(ms).toBeGreaterThan(9_000);
    expect(ms).toBeLessThan(11_500);
    expect(health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
  });
});

// A guard that hookbox's own limits — not its agent's rules — kept from deciding: cut by
// max_event_ms, or stopped at max_output_bytes while it wrote a block that echoes a long command
// (the agent, which has no such cap, would have read it), or never started (no container). With on_failure = block that is a block;
// with allow, the allow another hook gave is not answered for it.
describe("a guard hookbox's limits kept from deciding", () => {
  let svc: Service;
  beforeAll(async () => {
    const policy = [
      `[[policy.PreToolUse]]\nname = "approver"\ncommand = "cat >/dev/null; echo '{\\"decision\\":\\"allow\\"}'"\n`,
      `[[policy.PreToolUse]]\nname = "slow-guard"\nmatcher = "cutme"\ncommand = "sleep 10"\ntimeout = 20000\n`,
      `[[policy.PreToolUse]]\nname = "echo-guard"\nmatcher = "loudguard"\ncommand = '''cat >/dev/null; printf '{"decision":"block","reason":"rm in: '; head -c 2000000 /dev/zero | tr '\\0' a; printf '"}' '''\n`,
      // An operator's guard whose container cannot be made (its image is not there): it never ran.
      `[[hooks.PreToolUse]]\nname = "boxed-guard"\nmatcher = "noimage"\nimage = "hookbox/does-not-exist:1"\ncommand = "echo '{\\"decision\\":\\"block\\"}'"\n`,
    ].join("\n");
    const tenants = tenantsToml().replace('token_env = "HOOKBOX_TEST_TOKEN_B"', 'token_env = "HOOKBOX_TEST_TOKEN_B"\non_failure = "block"');
    svc = await startService(`[sandbox]\npool_size = 0\nmax_event_ms = 1500\n\n${policy}`, { tenants });
  });
  afterAll(async () => {
    await svc.stop();
  });

  it.each([
    ["cut by max_event_ms", "cutme", /^hook slow-guard had not decided when the event's max_event_ms \(1500 ms\) ran out/],
    ["stopped at max_output_bytes", "loudguard", /^hook echo-guard printed past max_output_bytes \(1048576 bytes\) before it finished its answer/],
    ["not started (failed_to_start)", "noimage", /^hook boxed-guard could not be run \(failed_to_start\)/],
  ])("%s: a block for on_failure = block; no allow for on_failure = allow", async (_what, tool, why) => {
    const block = (await (await svc.event(pre({ tool_name: tool }), { token: TOKEN_B })).json()) as { decision: string | null; reason: string };
    expect(block.decision).toBe("block");
    expect(block.reason).toMatch(why);
    const allow = (await (await svc.event(pre({ tool_name: tool }))).json()) as { decision: string | null; note: string; hooks: { name: string; decision: string | null }[] };
    expect(allow.hooks[0]).toMatchObject({ name: "approver", decision: "allow" });
    expect(allow.decision).toBeNull();
    expect(allow.note).toMatch(/the allow the other hooks gave is not answered for it$/);
  });
});

describe("fair shares between tenants", () => {
  let svc: Service;
  beforeAll(async () => {
    // Events of the session "flood" hold their slot for 1.5 s; every other event answers at once.
    const policy = `[[policy.PreToolUse]]\nname = "slow-for-flood"\ncommand = "case $(cat) in *flood*) sleep 1.5 ;; esac; echo '{}'"\n`;
    svc = await startService(`[sandbox]\npool_size = 0\nmax_concurrency = 4\nmax_queue = 8\n\n${policy}`);
  });
  afterAll(async () => {
    await svc.stop();
  });

  it("serves the other tenant at once, never 429, during a 60-event flood", async () => {
    const flood = Array.from({ length: 60 }, () => svc.event(pre({ session_id: "flood" }), { token: TOKEN_A }));
    await new Promise((r) => setTimeout(r, 200));
    const { value: others, health } = await underProbe(svc.url, async () => {
      const out: { status: number; ms: number }[] = [];
      for (let i = 0; i < 10; i++) {
        const t0 = performance.now();
        const res = await svc.event(pre({ session_id: `calm-${i}` }), { token: TOKEN_B });
        await res.arrayBuffer();
        out.push({ status: res.status, ms: performance.now() - t0 });
      }
      return out;
    });
    const floodStatuses = await Promise.all(flood.map(async (p) => (await p).status));
    expect(others.map((o) => o.status)).toEqual(Array(10).fill(200));
    // Never behind the flood: each well under one flood event's 1.5 s.
    expect(Math.max(...others.map((o) => o.ms))).toBeLessThan(1_000);
    // The flooding tenant gets its own 429s: 2 running (half the slots) + 8 waiting fit, the rest are refused.
    expect(floodStatuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(10);
    expect(floodStatuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    expect(floodStatuses.every((s) => s === 200 || s === 429)).toBe(true);
    expect(health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
    await alive(svc);
  });
});

// A parsed event takes many times its bytes (65 000 objects of distinct keys, as many arrays and
// objects as a body may hold: 0.8 MiB, about 7 MiB parsed): what one tenant's
// waiting and running events hold is charged from their bytes before they are parsed, and bounded.
const DENSE = `{"session_id":"s","hook_event_name":"Stop","x":[${Array.from({ length: 65_000 }, (_, i) => `{"k${i}":0}`).join(",")}]}`;

describe("what one tenant's events hold while they wait and run", () => {
  let svc: Service;
  beforeAll(async () => {
    const policy = `[[policy.Stop]]\nname = "slow"\ncommand = "sleep 2; echo '{}'"\ntimeout = 10000\n`;
    svc = await startService(`[sandbox]\npool_size = 0\n\n${policy}`, { env: { NODE_OPTIONS: "--max-old-space-size=200" } });
  });
  afterAll(async () => {
    await svc.stop();
  });

  it("refuses, with 429 TENANT_EVENT_MEMORY_BYTES, the events of a tenant past its share, serves the others, and survives on a 200 MB heap", async () => {
    const dense = DENSE;
    const send = (token: string) => fetch(`${svc.url}/v1/events`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: dense });
    const flood = await Promise.all(Array.from({ length: 16 }, () => send(TOKEN_A).then(async (r) => ({ status: r.status, text: await r.text() }))));
    const other = await send(TOKEN_B);
    expect(other.status).toBe(200);
    await other.text();
    const served = flood.filter((r) => r.status === 200).length;
    expect(served).toBeGreaterThanOrEqual(1);
    expect(flood.filter((r) => r.status === 429).length).toBeGreaterThan(0);
    expect(flood.every((r) => r.status === 200 || r.status === 429)).toBe(true);
    expect(flood.some((r) => r.status === 429 && /TENANT_EVENT_MEMORY_BYTES/.test(r.text))).toBe(true);
    await alive(svc);
  }, 60_000);

  it("counts bodies waiting for their turn to be parsed against the tenant's share: 200 connections posting dense bodies back to back hold no more than it", async () => {
    // Read whole, a body once left its arriving share and waited for its turn charged to nothing:
    // bodies slow to parse arrive faster than turns come, and one tenant's connections queued any
    // number of mebibytes.
    const body = DENSE;
    let peakKb = 0;
    const sampler = setInterval(() => (peakKb = Math.max(peakKb, svc.rssKb())), 20);
    const statuses: (number | string)[] = [];
    try {
      await Promise.all(Array.from({ length: 200 }, async () => {
        for (let i = 0; i < 5; i++) {
          const status = await fetch(`${svc.url}/v1/events`, { method: "POST", headers: { authorization: `Bearer ${TOKEN_A}`, "content-type": "application/json" }, body })
            .then(async (r) => (r.status === 200 || r.status === 429 ? (await r.arrayBuffer(), r.status) : `${r.status} ${await r.text()}`), (err: Error & { cause?: { code?: string } }) => `no answer: ${err.cause?.code ?? err.message}`);
          statuses.push(status);
        }
      }));
    } finally {
      clearInterval(sampler);
    }
    // (listed, not counted: a failure says which statuses came)
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    // The share (64 MiB) and what arrives (16 MiB) — about 260 MB all told here —, not hundreds of
    // mebibytes of queued bodies (about 470 MB when they were charged to nothing).
    expect(peakKb).toBeLessThan(350 * 1024);
    await alive(svc);
  }, 120_000);
});

// What a request leaves in memory is a copy of the part kept, never the request: V8 keeps a whole
// string alive for as long as a slice of it lives. The sessions list keeps each session id as a
// trace summary does, 1 KiB of it (1000 sessions a tenant; 10 000 events a tenant).
describe("kept parts of a request hold no more than themselves", () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService(`[sandbox]\npool_size = 0\n`, { env: { NODE_OPTIONS: "--max-old-space-size=160" } });
  });
  afterAll(async () => {
    await svc.stop();
  });

  it("survives 400 events with distinct 1 MB session ids on a 160 MB heap", async () => {
    const pad = "s".repeat(1_000_000);
    for (let i = 0; i < 400; i++) {
      const res = await svc.event(pre({ session_id: `${i}-${pad}`, tool_name: "no-hook-matches" }));
      expect(res.status).toBe(200);
      await res.text();
    }
    await alive(svc);
    const sessions = (await (await fetch(`${svc.url}/v1/sessions`, { headers: { authorization: `Bearer ${TOKEN_A}` } })).json()) as { sessions: { session_id: string }[] };
    expect(sessions.sessions).toHaveLength(400); // every one kept (up to MAX_SESSIONS_PER_TENANT), the most recent first
    expect(sessions.sessions[0]!.session_id).toMatch(/^399-s{1020}…\[truncated \d+ bytes\]$/);
  });
});

describe("a flood of connections", () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService("", { server: "max_connections = 8" });
  });
  afterAll(async () => {
    await svc.stop();
  });

  it("closes connections past max_connections as they come, counts them, and serves again once the flood goes", async () => {
    const url = new URL(svc.url);
    const open = (): Promise<ReturnType<typeof connect>> =>
      new Promise((resolve, reject) => {
        const s = connect(Number(url.port), url.hostname, () => resolve(s));
        s.on("error", reject);
      });
    // eight idle connections, none of them sending a byte
    const flood = await Promise.all(Array.from({ length: 8 }, open));
    // the ninth is closed at once, without an answer
    const ninth = await open();
    const said = await new Promise<string>((resolve) => {
      let got = "";
      ninth.on("data", (d: Buffer) => (got += d.toString("latin1")));
      ninth.on("close", () => resolve(got));
      ninth.on("error", () => undefined);
      ninth.write("GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n");
    });
    expect(said).toBe("");
    for (const s of flood) s.destroy();
    // once they are gone, every request is served again
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = await fetch(`${svc.url}/healthz`).then((r) => r.status, () => 0);
      if (status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(200);
    const metrics = await (await fetch(`${svc.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN_A}` } })).text();
    expect(metrics).toMatch(/^hookbox_connections_dropped_total [1-9]\d*$/m);
    expect(svc.logs()).toMatch(/max_connections are open: new connections are closed as they come/);
  });
});

describe("lists read as fast as the socket takes them", () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService(`[sandbox]\npool_size = 0\n`);
  });
  afterAll(async () => {
    await svc.stop();
  });

  it("sixteen clients of one tenant reading 500-summary lists of escaped NULs (4 MB each) over and over stall nothing: /healthz and the other tenant's events are answered throughout", async () => {
    // 600 events that match no hook, each summary as large as a summary gets: 1 KiB of session id
    // and a 256-character tool name, every character a NUL that JSON writes in six
    const nul = (n: number) => "\u0000".repeat(n);
    for (let i = 0; i < 600; i += 30) {
      const posted = await Promise.all(Array.from({ length: 30 }, (_, j) => svc.event({ session_id: `${i + j}${nul(1100)}`, hook_event_name: "Notification", tool_name: nul(256), message: "m" }, { path: "/v1/events/Notification" })));
      expect(posted.map((r) => r.status)).toEqual(posted.map(() => 200));
    }
    const list = () => fetch(`${svc.url}/v1/events?limit=500`, { headers: { authorization: `Bearer ${TOKEN_A}` } }).then((r) => r.arrayBuffer());
    expect((await list()).byteLength).toBeGreaterThan(3_000_000);
    const { value, health } = await underProbe(svc.url, async () => {
      const until = performance.now() + 4_000;
      let lists = 0;
      const readers = Array.from({ length: 16 }, async () => {
        while (performance.now() < until) {
          await list();
          lists++;
        }
      });
      // the other tenant's events, one after another, while the lists are read
      const other: { status: number; ms: number }[] = [];
      const posting = (async () => {
        while (performance.now() < until) {
          const t0 = performance.now();
          const res = await fetch(`${svc.url}/v1/events/PreToolUse`, { method: "POST", headers: { authorization: `Bearer ${TOKEN_B}`, "content-type": "application/json" }, body: JSON.stringify(pre()) });
          await res.arrayBuffer();
          other.push({ status: res.status, ms: performance.now() - t0 });
        }
      })();
      await Promise.all([...readers, posting]);
      return { lists, other };
    });
    // the attack ran: lists were read, tens of megabytes of them
    expect(value.lists).toBeGreaterThan(16);
    expect(value.other.length).toBeGreaterThan(10);
    expect(value.other.every((o) => o.status === 200)).toBe(true);
    expect(health.failures).toBe(0);
    expect(health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
    await alive(svc);
  });
});
