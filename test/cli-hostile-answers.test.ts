/**
 * `hookbox trace`, `tail`, `workspace push` and `doctor` against a hostile or broken "hookbox": a raw
 * TCP server that answers whatever the path asks for — without end, never, with lines that never
 * end or are not what hookbox sends. Each command ends in a bounded time, reads a bounded amount,
 * and prints nothing raw for the terminal. And `forward.sh` reads an event's name in the C locale.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { doctor } from "../cli/doctor.js";
import { FORWARD_SCRIPT } from "../cli/forward-script.js";
import { MAX_CLIENT_ANSWER_BYTES } from "../cli/read-answer.js";
import { MAX_LIVE_LINE_CHARS, tail, trace } from "../cli/trace.js";
import { MAX_PUSH_FILES, workspacePush } from "../cli/workspace-push.js";

const dir = mkdtempSync(join(tmpdir(), "hookbox-cli-hostile-"));
// eslint-disable-next-line no-control-regex -- the bytes a terminal acts on
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f\u009b]/;

/** Writes `chunk` again and again, as fast as the client reads, until it goes. */
function endless(sock: Socket, chunk: string): void {
  const more = () => {
    while (!sock.destroyed && sock.write(chunk));
    if (!sock.destroyed) sock.once("drain", more);
  };
  more();
}
const head = (status: string, headers: string[]) => `HTTP/1.1 ${status}\r\n${headers.map((h) => `${h}\r\n`).join("")}\r\n`;
const DECISION = JSON.stringify({ type: "decision", event: { event_id: "evt_1", event: "PreToolUse", time: "t", decision: "block", reason: "r", duration_ms: 1, tool_name: "Bash", hooks: 1 } });

/** What the server answers, by the last part of the request's path. */
const CASES: Record<string, (sock: Socket) => void> = {
  // a 200 that says it is 200 MB, and one without end (chunked, gzip-free: what fetch counts is what came)
  "declared-huge": (sock) => {
    sock.write(head("200 OK", ["Content-Type: application/json", "Content-Length: 200000000"]));
    endless(sock, "a".repeat(65_536));
  },
  "endless": (sock) => {
    sock.write(head("200 OK", ["Content-Type: application/json", "Transfer-Encoding: chunked"]));
    endless(sock, `10000\r\n${"\u0085".repeat(32_768)}\r\n`);
  },
  // headers, then nothing: never the end of the answer
  "silent": (sock) => sock.write(head("200 OK", ["Content-Type: application/json", "Content-Length: 100"])),
  // nothing at all, not even headers
  "mute": () => undefined,
  // JSON that is no trace
  "not-a-trace": (sock) => {
    const body = '{"event_id":"\\u001b]0;PWNED\\u0007","hooks":5}';
    sock.end(`${head("200 OK", ["Content-Type: application/json", `Content-Length: ${body.length}`])}${body}`);
  },
  "null-error": (sock) => sock.end(`${head("500 Internal Server Error", ["Content-Length: 4"])}null`),
  "redirect": (sock) => sock.end(`${head("302 Found", ["Location: http://127.0.0.1:1/v1/events/x", "Content-Length: 0"])}`),
  // the live stream: a hello, then silence
  "live-silent": (sock) => sock.write(`${head("200 OK", ["Content-Type: application/x-ndjson"])}{"type":"hello"}\n`),
  // a line longer than any decision (no newline for megabytes), a decision of the wrong shape, a
  // character split between two writes, then a decision as hookbox sends it
  "live-long": (sock) => {
    sock.write(`${head("200 OK", ["Content-Type: application/x-ndjson"])}{"type":"hello"}\n`);
    sock.write(`{"type":"decision","x":"${"a".repeat(MAX_LIVE_LINE_CHARS + 4096)}`);
    sock.write(`"}\n${JSON.stringify({ type: "decision", event: { time: 5, event_id: [], hooks: {} } })}\n`);
    const line = Buffer.from(`${DECISION.replace('"r"', '"日本"')}\n`);
    const cut = line.indexOf(Buffer.from("日")) + 1;
    sock.write(line.subarray(0, cut));
    setTimeout(() => sock.end(line.subarray(cut)), 50);
  },
};

let server: Server;
let url: string;
beforeAll(async () => {
  server = createServer((sock) => {
    let got = "";
    sock.on("error", () => undefined);
    sock.on("data", (c: Buffer) => {
      if (got.includes("\r\n\r\n")) return;
      got += c.toString("latin1");
      if (!got.includes("\r\n\r\n")) return;
      const path = /^[A-Z]+ ([^ ]+)/.exec(got)?.[1] ?? "";
      const name = path.startsWith("/live-silent/") ? "live-silent"
        : path.endsWith("/v1/events/live") ? "live-long"
          : path.startsWith("/v1/hooks/") ? "endless"
            : /\/v1\/(?:events|workspaces)\/(?:evt_)?([a-z-]+)/.exec(path)?.[1] ?? "";
      // an upload or an HTTP hook is answered once its body is in (Content-Length), as a server would
      const length = Number(/content-length: (\d+)/i.exec(got)?.[1] ?? 0);
      const answer = () => (CASES[name] ?? CASES.silent!)(sock);
      if (length === 0) return answer();
      let body = got.length - got.indexOf("\r\n\r\n") - 4;
      if (body >= length) return answer();
      sock.on("data", (more: Buffer) => {
        body += more.length;
        if (body >= length) answer();
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
afterEach(() => vi.restoreAllMocks());

/** What a command wrote on stderr through process.stderr.write (tail writes there as it goes). */
function stderrOf(): { text: () => string } {
  let text = "";
  vi.spyOn(process.stderr, "write").mockImplementation((c: string | Uint8Array) => {
    text += String(c);
    return true;
  });
  return { text: () => text };
}

const env = { HOOKBOX_TOKEN: "t" };

describe("hookbox trace", () => {
  it.each(["declared-huge", "endless"])("%s: an answer past MAX_CLIENT_ANSWER_BYTES is not read past it, in moments", async (name) => {
    const t0 = performance.now();
    const r = await trace([`evt_${name}`, "--url", url], env);
    expect(r.code).toBe(65);
    expect(r.stderr).toContain(`larger than ${MAX_CLIENT_ANSWER_BYTES} bytes`);
    expect(performance.now() - t0).toBeLessThan(10_000);
  });

  it("gives up on a server that never answers, or never finishes its answer, by its deadline", async () => {
    expect(await trace(["evt_mute", "--url", url], env, 500)).toMatchObject({ code: 69, stderr: expect.stringMatching(/cannot reach .*no answer within 500 ms/) });
    const t0 = performance.now();
    const r = await trace(["evt_silent", "--url", url], env, 500);
    expect(r.code).toBe(65);
    expect(r.stderr).toMatch(/no answer within 500 ms/);
    expect(performance.now() - t0).toBeLessThan(5_000);
  });

  it("says JSON that is no trace, an error that is null, and a redirect, never crashes on them, escapes what they hold", async () => {
    const shape = await trace(["evt_not-a-trace", "--url", url], env);
    expect(shape).toMatchObject({ code: 65, stdout: "" });
    expect(shape.stderr).toMatch(/not a trace/);
    expect((await trace(["evt_not-a-trace", "--url", url, "--json"], env)).stdout).not.toMatch(RAW_CONTROL);
    expect(await trace(["evt_null-error", "--url", url], env)).toMatchObject({ code: 65, stderr: "hookbox: 500: \n" });
    // a redirect is not followed: its status is said
    expect(await trace(["evt_redirect", "--url", url], env)).toMatchObject({ code: 65 });
  });
});

describe("hookbox tail", () => {
  it("gives up on a stream that sends nothing for its idle time (the service sends a line every 15 s)", async () => {
    const err = stderrOf();
    const t0 = performance.now();
    const code = await tail(["--url", `${url}/live-silent`], env, () => undefined, 500);
    expect(code).toBe(69);
    expect(err.text()).toMatch(/no line from hookbox in 500 ms/);
    expect(performance.now() - t0).toBeLessThan(5_000);
  });

  it("leaves out a line longer than MAX_LIVE_LINE_CHARS and one of another shape, and goes on: the next decision is printed whole", async () => {
    const err = stderrOf();
    const lines: string[] = [];
    const code = await tail(["--url", url], env, (l) => lines.push(l), 5_000);
    expect(code).toBe(0);
    expect(err.text()).toContain(`longer than ${MAX_LIVE_LINE_CHARS} characters, left out`);
    expect(err.text()).toMatch(/not a decision as hookbox sends one, left out/);
    expect(lines).toHaveLength(1);
    // the character split between two writes arrives whole
    expect(lines[0]).toContain("日本");
    expect(err.text() + lines.join("")).not.toMatch(RAW_CONTROL);
  });
});

describe("hookbox workspace push", () => {
  const repo = mkdtempSync(join(dir, "repo-"));
  mkdirSync(join(repo, ".claude", "hooks"), { recursive: true });
  writeFileSync(join(repo, ".claude", "hooks", "guard.sh"), "#!/bin/sh\nexit 0\n");

  it.each(["declared-huge", "endless"])("%s: reads no more of the answer than MAX_CLIENT_ANSWER_BYTES, in moments", async (name) => {
    const t0 = performance.now();
    const r = await workspacePush([repo, "--id", name, "--url", url], env);
    expect(r.code).toBe(0);
    expect(performance.now() - t0).toBeLessThan(10_000);
  });

  it("gives up on a server that never answers the upload, by its deadline", async () => {
    const r = await workspacePush([repo, "--id", "mute", "--url", url], env, 500);
    expect(r.code).toBe(69);
    expect(r.stderr).toMatch(/no answer within 500 ms/);
  });

  it("refuses more files than the service's max_workspace_entries before reading or packing any", async () => {
    const many = mkdtempSync(join(dir, "many-"));
    const hooks = join(many, ".claude", "hooks");
    mkdirSync(hooks, { recursive: true });
    for (let i = 0; i <= MAX_PUSH_FILES; i++) writeFileSync(join(hooks, `f${i}`), "");
    const r = await workspacePush([many, "--id", "x", "--url", "http://127.0.0.1:1"], env);
    expect(r.code).toBe(65);
    expect(r.stderr).toContain(`more than ${MAX_PUSH_FILES} files to send`);
  });

  it("counts the folders the files packed lie in as the service does: files and folders past max_workspace_entries together are refused, nothing sent", async () => {
    const tree = mkdtempSync(join(dir, "folders-"));
    // each file in a folder of its own: half of MAX_PUSH_FILES of them come to MAX_PUSH_FILES entries
    const make = (n: number) => {
      for (let i = 0; i < n; i++) {
        mkdirSync(join(tree, `d${i}`), { recursive: true });
        writeFileSync(join(tree, `d${i}`, "f"), "");
      }
    };
    make(MAX_PUSH_FILES / 2);
    const at = await workspacePush([tree, "--all", "--id", "x", "--url", "http://127.0.0.1:1"], env);
    // at the limit: packed, and sent (to nobody here)
    expect(at.stderr).not.toMatch(/entries together/);
    expect(at.code).toBe(69);
    make(MAX_PUSH_FILES / 2 + 1);
    const over = await workspacePush([tree, "--all", "--id", "x", "--url", "http://127.0.0.1:1"], env);
    expect(over.code).toBe(65);
    expect(over.stderr).toContain(`${MAX_PUSH_FILES / 2 + 1} files in ${MAX_PUSH_FILES / 2 + 1} folders to send, more than ${MAX_PUSH_FILES} entries together`);
  });

  it("refuses a file given for the folder with 66, with or without --all, sending nothing", async () => {
    const file = join(dir, "not-a-folder.json");
    writeFileSync(file, "{}");
    for (const all of [[], ["--all"]]) {
      const r = await workspacePush([file, ...all, "--id", "x", "--url", "http://127.0.0.1:1"], env);
      expect(r.code).toBe(66);
      expect(r.stderr).toContain("is no folder");
    }
  });

  it("prints the folder it was given escaped", async () => {
    const r = await workspacePush([join(dir, "no-\u001b]0;PWNED\u0007"), "--url", url], env);
    expect(r.code).toBe(66);
    expect(r.stderr).not.toMatch(RAW_CONTROL);
  });
});

describe("hookbox doctor", () => {
  it("reads no more of an HTTP hook's answer than the forwarders do (MAX_ANSWER_BYTES), and prints the folders it names escaped", async () => {
    const repo = mkdtempSync(join(dir, "doctor-"));
    mkdirSync(join(repo, ".claude"));
    const hook = { type: "http", url: `${url}/v1/hooks/claude/PreToolUse`, headers: { Authorization: "Bearer $HOOKBOX_TOKEN" }, allowedEnvVars: ["HOOKBOX_TOKEN"] };
    writeFileSync(join(repo, ".claude", "settings.json"), JSON.stringify({ hooks: { PreToolUse: [{ hooks: [hook] }] } }));
    const t0 = performance.now();
    const r = await doctor([repo, "--home", mkdtempSync(join(dir, "home-")), "--url", url], env);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/larger than \d+ bytes/);
    expect(performance.now() - t0).toBeLessThan(8_000);
    const none = await doctor([mkdtempSync(join(dir, "empty-\u001b[2J-")), "--home", mkdtempSync(join(dir, "home-\u009b31m-")), "--url", url], env);
    expect(none.code).toBe(1);
    expect(none.stdout).not.toMatch(RAW_CONTROL);
  });
});

describe("forward.sh in a Turkish locale", () => {
  const script = join(dir, "forward.sh");
  writeFileSync(script, FORWARD_SCRIPT);
  // Every letter case is turned in the C locale: tr_TR lowers I to a dotless ı, or (in UTF-8) not at all.
  it("lowers event names in the C locale only", () => {
    expect(FORWARD_SCRIPT.match(/\btr '\[:upper:\]'/g)?.length).toBeGreaterThan(0);
    expect(FORWARD_SCRIPT).not.toMatch(/(?<!LC_ALL=C )\btr '\[:upper:\]'/);
  });

  const locales = join(dir, "locales");
  const built = (() => {
    try {
      mkdirSync(locales);
      execFileSync("localedef", ["-i", "tr_TR", "-f", "UTF-8", join(locales, "tr_TR.UTF-8")], { stdio: "ignore" });
      return true;
    } catch {
      return false;
    }
  })();
  it.runIf(built)("lets TeammateIdle go on when hookbox cannot decide, as hookbox forward does, in tr_TR.UTF-8 too", () => {
    const r = spawnSync("/bin/sh", [script, "--url", "http://127.0.0.1:1", "--event", "TeammateIdle", "--format", "claude", "--on-unreachable", "block", "--timeout", "2000"], {
      encoding: "utf8", input: "{}", env: { PATH: process.env.PATH ?? "", HOOKBOX_TOKEN: "t", LOCPATH: locales, LC_ALL: "tr_TR.UTF-8" },
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe("{}\n");
  });
});
