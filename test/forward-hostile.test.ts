/**
 * Both forwarders against a hostile or broken "hookbox": a raw TCP server that answers whatever a
 * case says. With the tenant's failure mode told as block, nothing it sends may come out as an
 * allow; both forwarders answer alike, byte for byte; and no control byte it sends reaches the
 * terminal raw.
 */
import { spawn } from "node:child_process";
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { createSecureServer } from "node:http2";
import { createServer as createHttpsServer } from "node:https";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { forward, MAX_CA_BUNDLE_BYTES, MAX_SAID_BYTES, MAX_STDIN_BYTES } from "../cli/forward.js";
import { withoutUserinfo } from "../cli/terminal.js";

const dir = mkdtempSync(join(tmpdir(), "hookbox-forward-hostile-"));
const script = join(dir, "forward.sh");
writeFileSync(script, execFileSync(process.execPath, ["dist/cli/hookbox.cjs", "forward", "--print-script"], { encoding: "utf8" }));

/** What the server writes for each case (chosen by the workspace query parameter), then closes. */
const CASES: Record<string, (sock: Socket, got: string) => void> = {};
const head = (status: string, headers: string[] = []) => `HTTP/1.1 ${status}\r\n${headers.map((h) => `${h}\r\n`).join("")}`;
const answer = (body: string, status = "200 OK", headers = ["Hookbox-On-Failure: block"]) => (sock: Socket) =>
  sock.end(`${head(status, [...headers, "Content-Type: application/json", `Content-Length: ${Buffer.byteLength(body)}`, "Connection: close"])}\r\n${body}`);

const PASS = '{"decision":null,"output":{},"exit_code":0}';
const DENY = JSON.stringify({ decision: "block", reason: "no", output: { permissionDecision: "deny", permissionDecisionReason: "no" }, exit_code: 0 });
Object.assign(CASES, {
  "empty-value": answer('{"output":}'),
  "bare-word": answer('{"output":x}'),
  "trailing-garbage": answer('{"output":{}}garbage'),
  "raw-escape-in-string": answer('{"decision":"block","reason":"a\u001b]0;PWNED\u0007","output":{}}'),
  "raw-escape-in-error": answer('{"error":{"code":"x","message":"m\u001b[2J"}}', "500 Internal Server Error"),
  "exit-code-fraction": answer('{"decision":null,"output":{},"exit_code":2.5}'),
  "exit-code-string": answer('{"decision":null,"output":{},"exit_code":"2"}'),
  "reason-number": answer('{"decision":"block","reason":5,"output":{"permissionDecision":"deny"}}'),
  // a cosh block: cosh reads it as JSON at exit 0 only
  "cosh-block": answer(JSON.stringify({ decision: "block", reason: "policy says no", output: { decision: "block", reason: "policy says no" }, exit_code: 0 })),
  "upgrade": (sock: Socket) => sock.end(`${head("101 Switching Protocols", ["Upgrade: websocket", "Connection: Upgrade", "Hookbox-On-Failure: block"])}\r\n`),
  "early-close": (sock: Socket) => {
    sock.write(`${head("200 OK", ["Hookbox-On-Failure: block", "Transfer-Encoding: chunked"])}\r\n5\r\n{"out\r\n`);
    setTimeout(() => sock.destroy(), 50);
  },
  "duplicate-headers": answer("{}", "503 Service Unavailable", ["Hookbox-On-Failure: allow", "Hookbox-On-Failure: block"]),
  "uppercase-header": answer("{}", "503 Service Unavailable", ["Hookbox-On-Failure: BLOCK"]),
  "listed-header": answer("{}", "503 Service Unavailable", ["Hookbox-On-Failure: allow, block"]),
  "many-lines": answer(`${"\n".repeat(300_000)}${DENY}`),
  "nested-closer-mismatch": answer('{"decision":null,"output":{"decision":"block"]}'),
  "nested-missing-comma": answer('{"decision":null,"output":{"hookSpecificOutput":{"permissionDecision":"deny" "permissionDecisionReason":"x"}}}'),
  "nested-bare-word": answer('{"decision":null,"output":{"a":[1,nope]}}'),
  "interim-allow": (sock: Socket) => sock.end(`${head("199 Interim", ["Hookbox-On-Failure: allow"])}\r\n${head("503 Service Unavailable", ["Hookbox-On-Failure: block", "Content-Length: 2"])}\r\n{}`),
  "broken-utf8-c1": (sock: Socket) => {
    const body = Buffer.concat([Buffer.from('{"decision":"block","reason":"A'), Buffer.from([0xc2, 0xc2, 0x9b]), Buffer.from("31mRED"), Buffer.from([0xc2, 0xe2, 0x80, 0xae]), Buffer.from('evil","output":{"permissionDecision":"deny"}}')]);
    sock.end(Buffer.concat([Buffer.from(`${head("200 OK", ["Hookbox-On-Failure: block", `Content-Length: ${body.length}`])}\r\n`), body]));
  },
  "escapes-everywhere": answer(JSON.stringify({ decision: null, output: { updatedInput: { content: "ab\n".repeat(250_000) } }, exit_code: 0 })),
  "forged-trace": answer(JSON.stringify({
    event_id: "evt_1", event: "PreToolUse", time: "t", decision: "allow", reason: null, duration_ms: "5\nFORGED  every hook passed", queued_ms: 0, tenant: "a",
    session_id: null, tool_name: null, workspace: null, blocked_by: null,
    hooks: [{ name: "h", source: "policy", sandbox: "host", format: "cosh", warm: false, decision: "allow", effective: true, rule: "r", outcome: "exited", exit_code: "0\nFORGED", offset_ms: 0, start_ms: 0, duration_ms: 1, remove_ms: null, error: null, stdin: "", stdout: "", stderr: "", env: {} }],
  })),
  "raw-trace": (sock: Socket) => sock.end(`${head("200 OK", ["Content-Length: 20"])}\r\n\u001b]0;PWNED\u0007\u001b[2Jxxxxx`),
  "live": (sock: Socket) => sock.end(`${head("200 OK", ["Content-Type: application/x-ndjson"])}\r\n\u001b]0;PWNED\u0007\n`),
  "long-c1-reason": answer(JSON.stringify({ decision: "block", reason: "\u0085".repeat(12_000), output: { permissionDecision: "deny" } })),
  "lone-surrogate": answer('{"decision":"block","reason":"bad \\ud800 x","output":{"permissionDecision":"deny"}}'),
  "overlong-escape": (sock: Socket) => {
    const body = Buffer.concat([Buffer.from('{"error":{"code":"x","message":"m'), Buffer.from([0xc0, 0x9b, 0x5b, 0x32, 0x4a, 0xed, 0xa0, 0x80]), Buffer.from('"}}')]);
    sock.end(Buffer.concat([Buffer.from(`${head("500 Internal Server Error", ["Hookbox-On-Failure: block", `Content-Length: ${body.length}`])}\r\n`), body]));
  },
  "duplicate-reason": answer('{"decision":"block","reason":"A","reason":5,"output":{"permissionDecision":"deny"}}'),
  "codex-block": answer(JSON.stringify({ decision: "block", reason: "stop here", output: { decision: "block", reason: "stop here", continue: false, stopReason: "budget spent" }, exit_code: 0 })),
  "refused-token": answer('{"error":{"code":"unauthorized","message":"a valid bearer token is required"}}', "401 Unauthorized", ['WWW-Authenticate: Bearer realm="hookbox"']),
  "redirect": (sock: Socket) => sock.end(`${head("302 Found", ["Location: https://elsewhere.example/", "Content-Length: 0", "Connection: close"])}\r\n`),
  "other-server-404": answer("<html>no such page</html>", "404 Not Found", []),
  "other-server-200": answer('{"ok":true}', "200 OK", []),
  // pages longer than any answer of hookbox's (forward.sh reads 200 lines at most)
  "long-404": answer(`<html>\n${"<p>no such page</p>\n".repeat(300)}</html>`, "404 Not Found", []),
  "long-403": answer(`<html>\n${"<p>sign in first</p>\n".repeat(300)}</html>`, "403 Forbidden", []),
  // past what either forwarder reads of an answer (MAX_ANSWER_BYTES)
  "huge-404": answer(`<html>${"x".repeat(20_000_000)}</html>`, "404 Not Found", []),
  "huge-401": answer(`<html>${"x".repeat(20_000_000)}</html>`, "401 Unauthorized", []),
  "gateway-502": answer("<html>bad gateway</html>", "502 Bad Gateway", []),
  "partial-headers-allow": (sock: Socket) => sock.end(head("200 OK", ["Hookbox-On-Failure: allow"])),
  "echo-answer-by": (sock: Socket, got: string) => answer(JSON.stringify({ decision: "block", reason: "r", output: { permissionDecision: "deny", permissionDecisionReason: `answer-by ${/hookbox-answer-by-ms: (\d+)/i.exec(got)?.[1] ?? "none"}` }, exit_code: 0 }))(sock),
  "upgrade-then-allow": (sock: Socket) => {
    const body = '{"decision":null,"output":{},"exit_code":0}';
    sock.end(`${head("101 Switching Protocols", ["Upgrade: websocket", "Connection: Upgrade", "Hookbox-On-Failure: block"])}\r\n${head("200 OK", ["Hookbox-On-Failure: allow", `Content-Length: ${body.length}`])}\r\n${body}`);
  },
  // An answer that says it is 200 MB long and sends it as fast as it is read, and one without end.
  "huge-declared": (sock: Socket) => {
    sock.write(`${head("200 OK", ["Hookbox-On-Failure: block", "Content-Type: application/json", "Content-Length: 200000000"])}\r\n{"decision":null,"output":{"x":"`);
    endless(sock, "a".repeat(65_536));
  },
  // Line ends without end under a failure mode of allow: head's cut falls just after one.
  "newlines-allow": (sock: Socket) => {
    sock.write(`${head("200 OK", ["Hookbox-On-Failure: allow", "Content-Type: application/json", "Content-Length: 200000000"])}\r\n`);
    endless(sock, "\n".repeat(65_536));
  },
  "endless": (sock: Socket) => {
    sock.write(`${head("200 OK", ["Hookbox-On-Failure: block", "Content-Type: application/json", "Transfer-Encoding: chunked"])}\r\n`);
    endless(sock, `10000\r\n${"\u0085".repeat(32_768)}\r\n`);
  },
  // The deny pretty-printed with CRLF line ends (an intermediary's reformatting), and chunked with trailers too.
  "crlf": answer(JSON.stringify(JSON.parse(DENY), null, 2).replaceAll("\n", "\r\n")),
  "crlf-trailers": (sock: Socket) => {
    const body = `${JSON.stringify(JSON.parse(DENY), null, 2).replaceAll("\n", "\r\n")}\r\n`;
    sock.end(`${head("200 OK", ["Hookbox-On-Failure: allow", "Transfer-Encoding: chunked", "Trailer: X-T"])}\r\n${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\nX-T: 1\r\n\r\n`);
  },
  // A chunked answer whose last chunk carries trailers: curl writes them after the body, in the same stream.
  "trailers": (sock: Socket) =>
    sock.end(`${head("200 OK", ["Hookbox-On-Failure: allow", "Transfer-Encoding: chunked", "Trailer: X-T"])}\r\n${DENY.length.toString(16)}\r\n${DENY}\r\n0\r\nX-T: 1\r\n\r\n`),
  "huge-error": answer(JSON.stringify({ error: { code: "x", message: `${"é".repeat(70_000)}tail` } }), "500 Internal Server Error"),
  // an error message made of what is shown escaped: cut once made safe, to MAX_SAID_BYTES of what is shown
  "escaped-error": answer(JSON.stringify({ error: { code: "x", message: `${"\u001b".repeat(2000)}TAIL` } }), "500 Internal Server Error"),
  // a key of the answer's own named like the one read a level down
  "forged-error-message": answer('{"error.message":"forged \\u001b text"}', "503 Service Unavailable"),
  // sequences that break off, in a reason: each a single U+FFFD for all it holds so far, as a decoder reads it
  "broken-utf8-prefixes": (sock: Socket) => {
    const reason = Buffer.concat([Buffer.from("a"), Buffer.from([0xe2, 0x82]), Buffer.from("b"), Buffer.from([0xf0, 0x9f, 0x98]), Buffer.from("c"), Buffer.from([0xe0, 0x80]), Buffer.from("d"), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from("e"), Buffer.from([0xf4, 0x90]), Buffer.from("f")]);
    const body = Buffer.concat([Buffer.from('{"decision":"block","reason":"'), reason, Buffer.from('","output":{"permissionDecision":"deny"},"exit_code":0}')]);
    sock.end(Buffer.concat([Buffer.from(`${head("200 OK", ["Hookbox-On-Failure: block", `Content-Length: ${body.length}`, "Connection: close"])}\r\n`), body]));
  },
  // Takes the event and never answers.
  "silent": () => undefined,
  // A block in the dialect the request asked for (its ?format=), as hookbox answers one.
  "echo-format": (sock: Socket, got: string) => {
    const format = /[?&]format=([a-z]+)/.exec(got)?.[1] ?? "";
    answer(JSON.stringify({ decision: "block", reason: "no", output: { asked: format }, exit_code: 0 }))(sock);
  },
  // A proxy before hookbox adding headers: hundreds of lines, or one of 20 KB (Node reads 16 KiB by default).
  "many-headers": answer(DENY, "200 OK", ["Hookbox-On-Failure: block", ...Array.from({ length: 250 }, (_, i) => `X-Proxy-${i}: v`)]),
  "big-header": answer(DENY, "200 OK", ["Hookbox-On-Failure: block", `X-Big: ${"a".repeat(20_000)}`]),
  // 150 KB of headers in all, each line within 100 KiB: read by both
  "many-big-headers": answer(DENY, "200 OK", ["Hookbox-On-Failure: block", ...Array.from({ length: 150 }, (_, i) => `X-Proxy-${i}: ${"a".repeat(1_000)}`)]),
  // past what either reads (curl: a line of 100 KiB, 300 KiB in all): hookbox out of reach, told nothing
  "huge-header": answer(DENY, "200 OK", ["Hookbox-On-Failure: block", `X-Big: ${"a".repeat(200_000)}`]),
  "huge-headers-total": answer(DENY, "200 OK", ["Hookbox-On-Failure: block", ...Array.from({ length: 320 }, (_, i) => `X-Proxy-${i}: ${"a".repeat(1_000)}`)]),
  // the deny in 200 lines (JSON's whitespace): as many as forward.sh reads
  "body-200-lines": answer(`${DENY}${"\n".repeat(199)}`),
  // one line more (a pretty-printing proxy), and a deny nested past MAX_ANSWER_DEPTH, under a failure mode of allow: no answer to either
  "body-201-lines-allow": answer(`${DENY}${"\n".repeat(200)}`, "200 OK", ["Hookbox-On-Failure: allow"]),
  "nested-128-allow": answer(DENY.replace('"exit_code":0', `"x":${"[".repeat(127)}${"]".repeat(127)},"exit_code":0`), "200 OK", ["Hookbox-On-Failure: allow"]),
  "nested-129-allow": answer(DENY.replace('"exit_code":0', `"x":${"[".repeat(128)}${"]".repeat(128)},"exit_code":0`), "200 OK", ["Hookbox-On-Failure: allow"]),
  "nested-error-129-503": answer(`{"error":{"code":"x","message":"m","x":${"[".repeat(127)}${"]".repeat(127)}}}`, "503 Service Unavailable", ["Hookbox-On-Failure: allow"]),
  // Content-Length twice (even equal), or past 2^64 - 1: Node's parser refuses both
  "length-twice-allow": (sock: Socket) => sock.end(`${head("200 OK", ["Hookbox-On-Failure: allow", `Content-Length: ${PASS.length}`, `Content-Length: ${PASS.length}`, "Connection: close"])}\r\n${PASS}`),
  "length-overflow-allow": (sock: Socket) => sock.end(`${head("200 OK", ["Hookbox-On-Failure: allow", "Content-Length: 18446744073709551616", "Connection: close"])}\r\n${PASS}`),
  "length-leading-zeros": (sock: Socket) => sock.end(`${head("200 OK", ["Hookbox-On-Failure: block", `Content-Length: 0000000000000000000000${DENY.length}`, "Connection: close"])}\r\n${DENY}`),
  // headers ended by LF alone (no HTTP as hookbox writes it), and after them a body of 2 million lines
  "lf-headers": (sock: Socket) => sock.end(`HTTP/1.1 200 OK\nHookbox-On-Failure: block\nContent-Length: ${DENY.length}\nConnection: close\n\n${DENY}`),
  "lf-headers-bomb": (sock: Socket) => sock.end(`HTTP/1.1 200 OK\nHookbox-On-Failure: block\nConnection: close\n\n${"\n".repeat(2_000_000)}${DENY}`),
  // a header line Node's parser refuses and curl reads
  "space-colon": answer(DENY, "200 OK", ["Hookbox-On-Failure: block", "X-Odd : v"]),
  // the same on an answer of no decision (503), the mode's own name with a blank before its colon, or folded onto two lines
  "space-colon-503": answer("{}", "503 Service Unavailable", ["Hookbox-On-Failure : block"]),
  "folded-503": answer("{}", "503 Service Unavailable", ["Hookbox-On-Failure:", " block"]),
  "folded-allow-block-503": answer("{}", "503 Service Unavailable", ["Hookbox-On-Failure: allow", "\tblock"]),
  "control-char-503": answer("{}", "503 Service Unavailable", ["Hookbox-On-Failure: block", "X-A: a\u0001b"]),
  "del-char-503": answer("{}", "503 Service Unavailable", ["Hookbox-On-Failure: allow", "X-A: a\u007fb"]),
  "length-not-a-number-503": (sock: Socket) => sock.end(`${head("503 Service Unavailable", ["Hookbox-On-Failure: allow", "Content-Length: 2x", "Connection: close"])}\r\n{}`),
  "length-and-chunked-503": (sock: Socket) => sock.end(`${head("503 Service Unavailable", ["Hookbox-On-Failure: allow", "Content-Length: 7", "Transfer-Encoding: chunked", "Connection: close"])}\r\n2\r\n{}\r\n0\r\n\r\n`),
  // a CR between tokens: JSON's whitespace
  "lone-cr": answer(DENY.replace(',"reason"', ',\r"reason"').replace('"permissionDecisionReason"', '\r"permissionDecisionReason"')),
  // a no-break space after the mode (one byte: latin1): no mode HTTP's whitespace leaves
  "nbsp-mode": (sock: Socket) => sock.end(Buffer.from(`${head("503 Service Unavailable", ["Hookbox-On-Failure: block\u00a0", "Content-Length: 2", "Connection: close"])}\r\n{}`, "latin1")),
  // Answers in no HTTP as hookbox writes it, no failure mode told before the fault: a wrong line in both.
  "ssh-banner": (sock: Socket) => sock.end("SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n"),
  "bad-chunk": (sock: Socket) => sock.end(`${head("200 OK", ["Transfer-Encoding: chunked"])}\r\nZZ\r\n${DENY}\r\n0\r\n\r\n`),
  "nul-header": (sock: Socket) => sock.end(`${head("503 Service Unavailable", ["Hookbox-On-Failure: block", "X-A: a\u0000b", "Content-Length: 2"])}\r\n{}`),
  // status lines curl reads and Node's parser refuses: each with an answer that passes, were it read
  ...Object.fromEntries(
    [["status-two-blanks", "HTTP/1.1  200 OK"], ["status-lowercase", "http/1.1 200 OK"], ["status-http2", "HTTP/2 200"], ["status-tab", "HTTP/1.1 200\tOK"]].map(([name, line]) => [
      name,
      (sock: Socket) => sock.end(`${line}\r\nHookbox-On-Failure: allow\r\nContent-Length: ${PASS.length}\r\nConnection: close\r\n\r\n${PASS}`),
    ]),
  ),
  "busy-block": answer('{"error":{"code":"overloaded","message":"busy"}}', "429 Too Many Requests"),
  "status-099": (sock: Socket) => sock.end(`HTTP/1.1 099 Odd\r\nHookbox-On-Failure: block\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`),
  // headers past what curl reads in all, an interim answer's counted: hookbox out of reach, told nothing
  "interim-headers-total": (sock: Socket) =>
    sock.end(`${head("100 Continue", Array.from({ length: 270 }, (_, i) => `X-Proxy-${i}: ${"a".repeat(1_000)}`))}\r\n${head("503 Service Unavailable", ["Hookbox-On-Failure: block", ...Array.from({ length: 90 }, (_, i) => `X-Proxy-${i}: ${"a".repeat(1_000)}`), "Content-Length: 2"])}\r\n{}`),
  // one header line of exactly 100 KiB with its CRLF: past what curl reads
  "line-102400": answer(DENY, "200 OK", ["Hookbox-On-Failure: block", `X-Big: ${"a".repeat(100 * 1024 - "X-Big: ".length - 2)}`]),
  "big-unicode": answer(JSON.stringify({ decision: null, output: { systemMessage: `${"日本語".repeat(100_000)}\u202e` }, exit_code: 0 })),
});

/** Writes `chunk` again and again, as fast as the client reads, until it goes. */
function endless(sock: Socket, chunk: string): void {
  const more = () => {
    while (!sock.destroyed && sock.write(chunk));
    if (!sock.destroyed) sock.once("drain", more);
  };
  sock.on("error", () => undefined);
  more();
}

let server: Server;
let url: string;
beforeAll(async () => {
  server = createServer((sock) => {
    let got = "";
    let answered = false;
    sock.on("data", (c: Buffer) => {
      if (answered) return;
      got += c.toString("latin1");
      const end = got.indexOf("\r\n\r\n");
      if (end === -1) return;
      // The whole body first: by its length, or (forward.sh streams it) to its last chunk.
      if (/transfer-encoding: chunked/i.test(got.slice(0, end))) {
        if (!got.slice(end + 4).includes("0\r\n\r\n")) return;
      } else {
        const length = Number(/content-length: (\d+)/i.exec(got)?.[1] ?? 0);
        if (got.length < end + 4 + length) return;
      }
      answered = true;
      const name = /[?&]workspace=([^& ]+)/.exec(got)?.[1] ?? /GET \/v1\/events\/(?:evt_)?([a-z-]+)/.exec(got)?.[1] ?? "";
      (CASES[name] ?? answer(DENY))(sock, got);
    });
    sock.on("error", () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

type Run = { code: number | null; stdout: string; stderr: string; ms: number; signal?: NodeJS.Signals | null };
/**
 * One forwarder run. `io.input`: the event on stdin (a Copilot bash call unless given);
 * `io.stdinClosed`, `io.stderrClosed`: run with stdin or stderr closed (`<&-`, `2>&-`); `io.stdoutGone`, `io.stderrGone`: the answer's or stderr's pipe closed at once.
 */
function run(via: "node" | "sh", args: string[], env: Record<string, string> = {}, cwd?: string, io: { input?: string | Buffer; stdinClosed?: boolean; stderrClosed?: boolean; stdoutGone?: boolean; stderrGone?: boolean } = {}): Promise<Run> {
  const t0 = performance.now();
  const cmd = via === "node" ? [process.execPath, join(process.cwd(), "dist/cli/hookbox.cjs"), "forward", ...args] : ["/bin/sh", script, ...args];
  const [file, ...argv] = io.stdinClosed ? ["/bin/sh", "-c", 'exec "$@" <&-', "sh", ...cmd] : io.stderrClosed ? ["/bin/sh", "-c", 'exec "$@" 2>&-', "sh", ...cmd] : cmd;
  // Each run its own empty cache: what it knows of the failure mode, it was told in this answer.
  const child = spawn(file!, argv, { cwd, env: { PATH: process.env.PATH ?? "", HOOKBOX_TOKEN: "t", XDG_CACHE_HOME: mkdtempSync(join(dir, "cache-")), ...env } });
  let stdout = "";
  let stderr = "";
  if (io.stdoutGone) child.stdout.destroy();
  else child.stdout.on("data", (c: Buffer) => (stdout += c.toString("latin1")));
  if (io.stderrGone) child.stderr.destroy();
  else child.stderr.on("data", (c: Buffer) => (stderr += c.toString("latin1")));
  child.stdin.on("error", () => undefined);
  child.stdin.end(io.input ?? JSON.stringify({ toolName: "bash", toolArgs: '{"command":"ls"}' }));
  return new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr, ms: performance.now() - t0 })));
}
const args = (name: string, extra: string[] = []) => ["--url", url, "--event", "preToolUse", "--format", "copilot", "--workspace", name, "--timeout", "8000", ...extra];
// eslint-disable-next-line no-control-regex -- the bytes a terminal acts on
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f\u009b]/;

describe("a hostile hookbox, failure mode block", () => {
  it.each([
    "empty-value", "bare-word", "trailing-garbage", "raw-escape-in-string", "raw-escape-in-error", "upgrade", "early-close",
    "duplicate-headers", "uppercase-header", "listed-header", "nested-closer-mismatch", "nested-missing-comma", "nested-bare-word",
    "interim-allow", "upgrade-then-allow",
  ])("%s: both forwarders deny (exit 2), alike, with nothing raw for the terminal", async (name) => {
    const [node, sh] = await Promise.all([run("node", args(name)), run("sh", args(name))]);
    expect(node.code, node.stderr).toBe(2);
    expect(JSON.parse(node.stdout)).toMatchObject({ permissionDecision: "deny" });
    expect(node.stderr).toMatch(/blocking: on_failure = block/);
    expect(sh.code, sh.stderr).toBe(2);
    expect(JSON.parse(sh.stdout)).toMatchObject({ permissionDecision: "deny" });
    for (const out of [node.stdout, node.stderr, sh.stdout, sh.stderr]) expect(out).not.toMatch(RAW_CONTROL);
    // Messages about the transport may differ (Node's and curl's words); the rest may not.
    if (!["upgrade", "early-close", "upgrade-then-allow"].includes(name)) {
      expect(sh.stdout).toBe(node.stdout);
      expect(sh.stderr).toBe(node.stderr);
    }
  });

  it("names the event as Claude Code and Codex name it in their deny, however the line spells it: a hookEventName of another spelling costs the block", async () => {
    for (const format of ["claude", "codex"])
      for (const [spelled, named] of [["preToolUse", "PreToolUse"], ["PRETOOLUSE", "PreToolUse"], ["permissionRequest", "PermissionRequest"]]) {
        const line = ["--url", url, "--event", spelled!, "--format", format, "--workspace", "busy-block", "--timeout", "8000"];
        const [node, sh] = await Promise.all([run("node", line), run("sh", line)]);
        for (const r of [node, sh]) expect(JSON.parse(r.stdout), `${format} ${spelled}: ${r.stderr}`).toMatchObject({ hookSpecificOutput: { hookEventName: named } });
        expect(sh.stdout).toBe(node.stdout);
      }
  });

  it.each(["huge-declared", "endless"])("%s: an answer larger than hookbox's ever are is no answer in both, read no further than that — never to the deadline", async (name) => {
    const long = ["--url", url, "--event", "preToolUse", "--format", "copilot", "--workspace", name, "--timeout", "45000"];
    const [node, sh] = await Promise.all([run("node", long), run("sh", long)]);
    for (const r of [node, sh]) {
      expect(r.code, r.stderr).toBe(2);
      expect(JSON.parse(r.stdout)).toMatchObject({ permissionDecision: "deny" });
      // --timeout 45000: what is never coming is not waited for (about 2 s to read 16 MiB here, 11 s on a loaded machine).
      expect(r.ms).toBeLessThan(25_000);
    }
  });

  it("an answer of line ends past the cap (head's cut just after one) is no answer in both: the failure mode (allow) decides, never a wrong line's block", async () => {
    const long = ["--url", url, "--event", "preToolUse", "--format", "copilot", "--workspace", "newlines-allow", "--timeout", "45000"];
    const [node, sh] = await Promise.all([run("node", long), run("sh", long)]);
    for (const r of [node, sh]) {
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe("{}\n");
      expect(r.stderr).toMatch(/larger than 16777216 bytes.*\(passing through: on_failure = allow/);
    }
  });

  it.each([
    ["exit-code-fraction", 0],
    ["exit-code-string", 0],
  ])("%s: an exit code that is not a whole number 0–255 is 0, in both", async (name, code) => {
    const [node, sh] = await Promise.all([run("node", args(name)), run("sh", args(name))]);
    expect(node).toMatchObject({ code, stdout: "{}\n" });
    expect(sh).toMatchObject({ code, stdout: "{}\n" });
  });

  it("an error message of 140 KB is cut at MAX_SAID_BYTES before a character, alike in both, and cosh still gets its block", async () => {
    const cosh = (name: string) => ["--url", url, "--event", "PreToolUse", "--format", "cosh", "--workspace", name, "--timeout", "8000"];
    const [node, sh] = await Promise.all([run("node", cosh("huge-error")), run("sh", cosh("huge-error"))]);
    for (const r of [node, sh]) {
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ decision: "block" });
      const said = Buffer.from(r.stderr, "latin1").toString("utf8");
      expect(said).toMatch(/hookbox answered 500: (é)+…/);
      expect(said).not.toContain("tail");
      expect(said).not.toContain("\ufffd");
      expect(r.stderr.length).toBeLessThan(3 * MAX_SAID_BYTES);
    }
    expect(sh.stdout).toBe(node.stdout);
    expect(sh.stderr).toBe(node.stderr);
  });

  it("forward.sh sends the token through no proxy and reads no .curlrc, as hookbox forward does not", async () => {
    let trapped = 0;
    const trap = createServer((sock) => {
      trapped++;
      sock.destroy();
    });
    await new Promise<void>((r) => trap.listen(0, "127.0.0.1", () => r()));
    const proxy = `http://127.0.0.1:${(trap.address() as { port: number }).port}`;
    const curlHome = mkdtempSync(join(dir, "curlhome-"));
    writeFileSync(join(curlHome, ".curlrc"), `proxy = "${proxy}"\n`);
    try {
      for (const env of [{ http_proxy: proxy, HTTP_PROXY: proxy, all_proxy: proxy }, { CURL_HOME: curlHome }] as Record<string, string>[]) {
        const sh = await run("sh", args("proxied"), env);
        // hookbox's own deny, from --url: not a proxy's answer, not a failure to reach it
        expect(sh.code, sh.stderr).toBe(0);
        expect(JSON.parse(sh.stdout)).toMatchObject({ permissionDecision: "deny", permissionDecisionReason: "no" });
      }
      expect(trapped).toBe(0);
    } finally {
      await new Promise<void>((r) => trap.close(() => r()));
    }
  });

  it("a reason that is not a string is no reason, in both", async () => {
    const [node, sh] = await Promise.all([run("node", args("reason-number")), run("sh", args("reason-number"))]);
    expect(node.stderr).toBe("blocked by hookbox\n");
    expect(sh.stderr).toBe(node.stderr);
  });

  it.each(["long-c1-reason", "lone-surrogate", "overlong-escape", "escaped-error", "forged-error-message", "broken-utf8-prefixes"])("%s: both forwarders print the same bytes, nothing raw for the terminal", async (name) => {
    const [node, sh] = await Promise.all([run("node", args(name)), run("sh", args(name))]);
    expect(sh.code).toBe(node.code);
    expect(sh.stdout).toBe(node.stdout);
    expect(sh.stderr).toBe(node.stderr);
    for (const out of [sh.stdout, sh.stderr]) expect(out).not.toMatch(RAW_CONTROL);
  });

  it("cuts an error message once it is made safe to show, to MAX_SAID_BYTES of what is shown; reads no key of the answer's own as the error's; reads a broken UTF-8 sequence as one U+FFFD — in both", async () => {
    const escaped = await run("node", args("escaped-error"));
    // (cut within an escape's characters, never within a character: what is shown)
    expect(Buffer.from(escaped.stderr, "latin1").toString("utf8")).toMatch(/hookbox answered 500: (\\x1b)+[\\x1b]{0,3}… \(blocking/);
    expect(escaped.stderr).not.toContain("TAIL");
    expect(Buffer.byteLength(escaped.stderr)).toBeLessThan(MAX_SAID_BYTES + 400);
    const forged = await run("node", args("forged-error-message"));
    expect(forged.stderr).toMatch(/hookbox answered 503: no decision/);
    const broken = await run("sh", args("broken-utf8-prefixes"));
    expect(Buffer.from(broken.stderr, "latin1").toString("utf8")).toBe("a\ufffdb\ufffdc\ufffd\ufffdd\ufffd\ufffd\ufffde\ufffd\ufffdf\n");
  });

  it("a reason said twice, the last time not as a string, is no reason, in both", async () => {
    const [node, sh] = await Promise.all([run("node", args("duplicate-reason")), run("sh", args("duplicate-reason"))]);
    expect(node.stderr).toBe("blocked by hookbox\n");
    expect(sh.stderr).toBe(node.stderr);
  });

  it("never lets a broken UTF-8 sequence carry a C1 or bidi byte to the terminal raw (forward.sh reads it as U+FFFD, as a decoder does)", async () => {
    const [node, sh] = await Promise.all([run("node", args("broken-utf8-c1")), run("sh", args("broken-utf8-c1"))]);
    for (const r of [node, sh]) {
      expect(JSON.parse(r.stdout)).toMatchObject({ permissionDecision: "deny" });
      expect(r.stderr).toMatch(/^A.*RED.*evil\n$/s);
      expect(r.stderr).not.toMatch(RAW_CONTROL);
      expect(Buffer.from(r.stderr, "latin1").includes(Buffer.from([0xe2, 0x80, 0xae]))).toBe(false);
      expect(Buffer.from(r.stderr, "latin1").includes(Buffer.from([0xc2, 0x9b]))).toBe(false);
    }
  });

  it("reads a 750 KB answer of escapes in forward.sh in a moment (nothing nested is decoded), exactly as hookbox forward does", async () => {
    const [node, sh] = await Promise.all([run("node", args("escapes-everywhere")), run("sh", args("escapes-everywhere"))]);
    expect(node.code).toBe(0);
    expect(sh.stdout).toBe(node.stdout);
    expect(sh.ms).toBeLessThan(4_000);
  });

  it("an answer of 300 000 lines costs forward.sh no more than a moment, and is no answer", async () => {
    const sh = await run("sh", args("many-lines"));
    expect(sh.ms).toBeLessThan(8_000);
    expect(sh.code).toBe(2);
    expect(sh.stderr).toMatch(/larger than .* lines: no answer .*blocking: on_failure = block/);
  });

  it("reads a 900 KB answer of non-ASCII text in forward.sh in a moment, exactly as hookbox forward does", async () => {
    const [node, sh] = await Promise.all([run("node", args("big-unicode")), run("sh", args("big-unicode"))]);
    expect(node.code).toBe(0);
    expect(sh.stdout).toBe(node.stdout);
    expect(node.stdout).toContain("\\u202e");
    expect(sh.ms).toBeLessThan(8_000);
  });

  it("shows a --url without its user name and password in both, on stderr and in the reason the model reads — and refuses a password holding a raw @ (curl and Node read it apart) without showing it", async () => {
    for (const u of ["http://alice:s3cretpw@127.0.0.1:1", "http://alice:pa%40ssw0rd@127.0.0.1:1/x/y@z", "http://alice:pa@ssw0rd@127.0.0.1:1/x/y@z"]) {
      const a = ["--url", u, "--event", "preToolUse", "--format", "copilot", "--on-unreachable", "block"];
      const [node, sh] = await Promise.all([run("node", a), run("sh", a)]);
      for (const r of [node, sh]) {
        expect(r.stdout + r.stderr, u).not.toMatch(/alice|s3cret|ssw0rd/);
        expect(r.stderr, u).toMatch(u.includes("pa@") ? /--url holds more than one @/ : /unreachable at http:\/\/127\.0\.0\.1:1/);
        expect(JSON.parse(r.stdout), u).toMatchObject({ permissionDecision: "deny" });
      }
    }
  });

  it("refuses a --url with control bytes as a wrong line, in both, printing none of them", async () => {
    const evil = "http://127.0.0.1:1/\u001b]0;PWNED\u0007";
    const [node, sh] = await Promise.all([run("node", ["--url", evil, "--event", "preToolUse", "--format", "copilot"]), run("sh", ["--url", evil, "--event", "preToolUse", "--format", "copilot"])]);
    for (const r of [node, sh]) {
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/--url holds a blank, a control or non-ASCII byte/);
      expect(r.stderr + r.stdout).not.toMatch(RAW_CONTROL);
    }
  });
});

/** A folder holding key.pem and cert.pem: a certificate for 127.0.0.1 signed by its own key (a CA of its own). */
function selfSigned(prefix: string): string {
  const certs = mkdtempSync(join(dir, prefix));
  execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", join(certs, "key.pem"), "-out", join(certs, "cert.pem")], { stdio: "ignore" });
  return certs;
}

/** Reads the request whole, then answers 200 with `body`, hookbox's header telling `mode`. */
const answering = (mode: string, body: string) => (req: { resume(): void; on(event: "end", f: () => void): void }, res: { writeHead(status: number, headers: Record<string, string>): void; end(body: string): void }) => {
  req.resume();
  req.on("end", () => {
    res.writeHead(200, { "hookbox-on-failure": mode, "content-type": "application/json" });
    res.end(body);
  });
};

describe("hookbox behind a TLS proxy that offers HTTP/2", () => {
  it("is read alike by both forwarders: both speak HTTP/1.1 to it, and take its answer", async () => {
    const certs = selfSigned("tls-");
    const allow = JSON.stringify({ decision: "allow", output: { permissionDecision: "allow" }, exit_code: 0 });
    const versions: string[] = [];
    const answer = answering("block", allow);
    const tls = createSecureServer({ allowHTTP1: true, key: readFileSync(join(certs, "key.pem")), cert: readFileSync(join(certs, "cert.pem")) }, (req, res) => {
      versions.push(req.httpVersion);
      answer(req, res);
    });
    await new Promise<void>((r) => tls.listen(0, "127.0.0.1", () => r()));
    try {
      const at = `https://127.0.0.1:${(tls.address() as { port: number }).port}`;
      const line = ["--url", at, "--event", "preToolUse", "--format", "copilot", "--timeout", "8000"];
      const trust = { CURL_CA_BUNDLE: join(certs, "cert.pem"), NODE_EXTRA_CA_CERTS: join(certs, "cert.pem") };
      const [node, sh] = await Promise.all([run("node", line, trust), run("sh", line, trust)]);
      for (const r of [node, sh]) {
        expect(r.code, r.stderr).toBe(0);
        expect(JSON.parse(r.stdout)).toEqual({ permissionDecision: "allow" });
      }
      expect(versions).toEqual(["1.1", "1.1"]);
    } finally {
      await new Promise<void>((r) => tls.close(() => r()));
    }
  });
});

describe("hookbox behind an organisation's own certificate authority, which the system's bundle holds", () => {
  it("is reached by both forwarders: hookbox forward checks a certificate Node's roots do not vouch for against what curl reads (CURL_CA_BUNDLE alone where set; else SSL_CERT_FILE or the system's bundle, and SSL_CERT_DIR), and takes hookbox's block", async () => {
    const certs = selfSigned("own-ca-");
    // the system's bundle with the organisation's CA added, as update-ca-certificates writes it
    const system = ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt"].find((f) => existsSync(f));
    writeFileSync(join(certs, "bundle.crt"), `${system ? readFileSync(system, "latin1") : ""}${readFileSync(join(certs, "cert.pem"), "latin1")}`);
    const deny = JSON.stringify({ decision: "block", reason: "no", output: { permissionDecision: "deny", permissionDecisionReason: "no" }, exit_code: 0 });
    const server = createHttpsServer({ key: readFileSync(join(certs, "key.pem")), cert: readFileSync(join(certs, "cert.pem")) }, answering("allow", deny));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    try {
      const at = `https://127.0.0.1:${(server.address() as { port: number }).port}`;
      const line = ["--url", at, "--event", "preToolUse", "--format", "copilot", "--timeout", "8000"];
      for (const trust of [{ SSL_CERT_FILE: join(certs, "bundle.crt") }, { CURL_CA_BUNDLE: join(certs, "bundle.crt") }] as Record<string, string>[]) {
        const [node, sh] = await Promise.all([run("node", line, trust), run("sh", line, trust)]);
        for (const [via, r] of [["node", node], ["sh", sh]] as const) {
          expect(r.code, `${via} ${JSON.stringify(trust)}: ${r.stderr}`).toBe(0);
          expect(JSON.parse(r.stdout), via).toEqual({ permissionDecision: "deny", permissionDecisionReason: "no" });
        }
      }
      // a folder of certificates under OpenSSL's hashed names (SSL_CERT_DIR), as c_rehash leaves it
      const hashed = mkdtempSync(join(dir, "ca-dir-"));
      writeFileSync(join(hashed, "org-ca.pem"), readFileSync(join(certs, "cert.pem")));
      execFileSync("openssl", ["rehash", hashed], { stdio: "ignore" });
      // beside a file that holds no certificate but looks like one: it hides none of the others (as OpenSSL reads a folder)
      writeFileSync(join(hashed, "00000000.0"), "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n");
      // CURL_CA_BUNDLE is curl's whole answer where it is set: one that is not there trusts nothing, however good SSL_CERT_FILE is
      const missing = { CURL_CA_BUNDLE: join(certs, "no-such.crt"), SSL_CERT_FILE: join(certs, "bundle.crt") };
      const [dirNode, dirSh, missingNode, missingSh] = await Promise.all([run("node", line, { SSL_CERT_DIR: hashed }), run("sh", line, { SSL_CERT_DIR: hashed }), run("node", line, missing), run("sh", line, missing)]);
      for (const [via, r] of [["node", dirNode], ["sh", dirSh]] as const) expect(JSON.parse(r.stdout), `${via}: ${r.stderr}`).toEqual({ permissionDecision: "deny", permissionDecisionReason: "no" });
      for (const [via, r] of [["node", missingNode], ["sh", missingSh]] as const) {
        expect(r.stdout, via).toBe("{}\n");
        expect(r.stderr, via).toMatch(/hookbox unreachable at https:\/\/127\.0\.0\.1:\d+: .*\(passing through: no failure mode known yet/);
      }
      // a bundle of MAX_CA_BUNDLE_BYTES is read; one a byte larger is not (nor, then, the system's, as curl reads none but the one it is given)
      const cert = readFileSync(join(certs, "cert.pem"), "latin1");
      writeFileSync(join(certs, "edge.crt"), `${"#".repeat(MAX_CA_BUNDLE_BYTES - cert.length - 1)}\n${cert}`);
      writeFileSync(join(certs, "over.crt"), `${"#".repeat(MAX_CA_BUNDLE_BYTES - cert.length)}\n${cert}`);
      const [edge, over] = await Promise.all([run("node", line, { SSL_CERT_FILE: join(certs, "edge.crt") }), run("node", line, { SSL_CERT_FILE: join(certs, "over.crt") })]);
      expect(JSON.parse(edge.stdout), edge.stderr).toEqual({ permissionDecision: "deny", permissionDecisionReason: "no" });
      expect(over.stdout).toBe("{}\n");
      expect(over.stderr).toMatch(/hookbox unreachable at https:\/\/127\.0\.0\.1:\d+: self[- ]signed certificate/);
      // a CA no bundle holds is still no hookbox reached (the failure mode, none known yet: through, said)
      const untrusted = await run("node", line, { SSL_CERT_FILE: join(dir, "no-such-bundle.crt") });
      expect(untrusted.stdout).toBe("{}\n");
      expect(untrusted.stderr).toMatch(/hookbox unreachable at https:\/\/127\.0\.0\.1:\d+: self[- ]signed certificate/);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});

describe("a line that reaches no hookbox of its tenant blocks, whatever the failure mode", () => {
  it.each([
    ["refused-token", /refused the token: check --token or HOOKBOX_TOKEN \(401: a valid bearer token is required\)/],
    ["redirect", /answered 302 without hookbox's Hookbox-On-Failure header: no hookbox at this --url/],
    ["other-server-404", /answered 404 without hookbox's Hookbox-On-Failure header/],
    ["other-server-200", /answered 200 without hookbox's Hookbox-On-Failure header/],
    ["long-404", /answered 404 without hookbox's Hookbox-On-Failure header/],
    ["long-403", /refused the token: check --token or HOOKBOX_TOKEN \(403/],
    ["huge-404", /answered 404 without hookbox's Hookbox-On-Failure header/],
    ["huge-401", /refused the token: check --token or HOOKBOX_TOKEN \(401/],
  ])("%s: a deny in both (a wrong line, not a hookbox that cannot decide), even with --on-unreachable allow; at a stop it lets the agent stop", async (name, said) => {
    const [node, sh] = await Promise.all([run("node", args(name, ["--on-unreachable", "allow"])), run("sh", args(name, ["--on-unreachable", "allow"]))]);
    for (const r of [node, sh]) {
      expect(r.code, r.stderr).toBe(2);
      expect(JSON.parse(r.stdout)).toMatchObject({ permissionDecision: "deny", permissionDecisionReason: expect.stringMatching(said) });
      expect(r.stderr).toMatch(/: blocking \(a guard whose line is wrong lets nothing through/);
      expect(r.stderr).toMatch(new RegExp(`^(hookbox forward|forward\\.sh): http://127\\.0\\.0\\.1:\\d+ `));
    }
    const stop = ["--url", url, "--event", "agentStop", "--format", "copilot", "--workspace", name, "--timeout", "8000"];
    const [nodeStop, shStop] = await Promise.all([run("node", stop), run("sh", stop)]);
    for (const r of [nodeStop, shStop]) {
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe("{}\n");
      expect(r.stderr).toMatch(said);
    }
  });

  it("forward.sh with a curl older than 7.75 (no %{exitcode} in its -w), or none at all, blocks: a wrong line, never hookbox out of reach under on_failure = allow", async () => {
    CASES["allow-told-deny"] = answer(DENY, "200 OK", ["Hookbox-On-Failure: allow"]);
    // curl 7.74 (Debian 11's) writes nothing for the -w variables it does not know
    const old = mkdtempSync(join(dir, "curl-"));
    const curl = execFileSync("sh", ["-c", "command -v curl"], { encoding: "utf8" }).trim();
    writeFileSync(join(old, "curl"), `#!/bin/sh\nfor a; do shift; set -- "$@" "$(printf '%s' "$a" | sed 's/%{exitcode}//; s/%{errormsg}//')"; done\nexec ${curl} "$@"\n`, { mode: 0o755 });
    // no curl on the PATH: the rest of what forward.sh runs, linked one by one
    const none = mkdtempSync(join(dir, "no-curl-"));
    for (const tool of ["awk", "head", "sha256sum", "mkdir", "sed", "cat"]) symlinkSync(execFileSync("sh", ["-c", `command -v ${tool}`], { encoding: "utf8" }).trim(), join(none, tool));
    const said = /curl did not run to its end, or is older than 7\.75 \(its --write-out line holds no exit code\): install curl 7\.75 or later, or use hookbox forward/;
    for (const PATH of [`${old}:${process.env.PATH ?? ""}`, none]) {
      const r = await run("sh", args("allow-told-deny"), { PATH });
      expect(r.code, r.stderr).toBe(2);
      expect(JSON.parse(r.stdout)).toMatchObject({ permissionDecision: "deny", permissionDecisionReason: expect.stringMatching(said) });
      expect(r.stderr).toMatch(/: blocking \(a guard whose line is wrong lets nothing through/);
    }
    // the same server through today's curl: its deny as it is
    const r = await run("sh", args("allow-told-deny"));
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ permissionDecision: "deny", permissionDecisionReason: "no" });
  });

  it("forward.sh without awk, or with an awk that reads nothing, blocks: a wrong line, never hookbox out of reach under on_failure = allow (which hookbox's own block would pass as)", async () => {
    CASES["allow-told-deny"] = answer(DENY, "200 OK", ["Hookbox-On-Failure: allow"]);
    const bin = (name: string) => execFileSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" }).trim();
    // no awk on the PATH: the rest of what forward.sh runs, linked one by one
    const none = mkdtempSync(join(dir, "no-awk-"));
    for (const tool of ["curl", "head", "sha256sum", "mkdir", "sed", "cat", "tr", "od"]) symlinkSync(bin(tool), join(none, tool));
    const r = await run("sh", args("allow-told-deny"), { PATH: none });
    expect(r.code, r.stderr).toBe(2);
    // (the agent's deny as forward.sh writes it without awk; the reason said on stderr)
    expect(JSON.parse(r.stdout)).toEqual({ permissionDecision: "deny", permissionDecisionReason: "blocked by hookbox", hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "blocked by hookbox" } });
    expect(r.stderr).toMatch(/^forward\.sh: awk is not on PATH: hookbox's answer cannot be read \(install a POSIX awk, or use hookbox forward\): blocking/m);
    // an awk that ends at once without a word (exit 0): what hookbox said is not known
    const mute = mkdtempSync(join(dir, "awk-mute-"));
    writeFileSync(join(mute, "awk"), "#!/bin/sh\ncat >/dev/null\nexit 0\n", { mode: 0o755 });
    const m = await run("sh", args("allow-told-deny"), { PATH: `${mute}:${process.env.PATH ?? ""}` });
    expect(m.code, m.stderr).toBe(2);
    expect(JSON.parse(m.stdout)).toMatchObject({ permissionDecision: "deny" });
    expect(m.stderr).toMatch(/awk ended \(exit 0\) without a reading of hookbox's answer: what hookbox answered is not known/);
    expect(m.stderr).not.toMatch(/passing through/);
  });

  it("a gateway's 502 without hookbox's header is hookbox out of reach: the failure mode decides (none known: through, said)", async () => {
    const [node, sh] = await Promise.all([run("node", args("gateway-502")), run("sh", args("gateway-502"))]);
    for (const r of [node, sh]) {
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe("{}\n");
      expect(r.stderr).toMatch(/hookbox answered 502: no decision \(passing through: no failure mode known yet/);
    }
  });
});

describe("the failure-mode cache cannot be planted", () => {
  const cacheName = (u: string, token: string, event: string) => `on-failure-${createHash("sha256").update(`${u}\n${token}\n${event}`).digest("hex").slice(0, 24)}`;
  const unreachable = "http://127.0.0.1:1";

  it("a FIFO where the cache file goes holds neither forwarder: it is not read", async () => {
    const xdg = mkdtempSync(join(dir, "fifo-"));
    mkdirSync(join(xdg, "hookbox"), { mode: 0o700 });
    execFileSync("mkfifo", [join(xdg, "hookbox", cacheName(unreachable, "t", "preToolUse"))]);
    const [node, sh] = await Promise.all(
      (["node", "sh"] as const).map((via) => run(via, ["--url", unreachable, "--event", "preToolUse", "--format", "copilot", "--timeout", "1000"], { XDG_CACHE_HOME: xdg })),
    );
    for (const r of [node!, sh!]) {
      expect(r.ms).toBeLessThan(4_000);
      expect(r.code).toBe(0);
      expect(r.stderr).toMatch(/no failure mode known yet/);
    }
  });

  it("a link where the cache file goes is never written through", async () => {
    for (const via of ["node", "sh"] as const) {
      const xdg = mkdtempSync(join(dir, "link-"));
      mkdirSync(join(xdg, "hookbox"), { mode: 0o700 });
      const victim = join(dir, `victim-${via}`);
      writeFileSync(victim, "precious\n");
      symlinkSync(victim, join(xdg, "hookbox", cacheName(url, "t", "preToolUse")));
      const r = await run(via, args("duplicate-headers"), { XDG_CACHE_HOME: xdg });
      expect(r.code).toBe(2);
      expect(readFileSync(victim, "utf8")).toBe("precious\n");
    }
  });

  it("shows the cache file's path with its control characters escaped, in both (XDG_CACHE_HOME is the environment's: an agent's settings can set it)", async () => {
    for (const via of ["node", "sh"] as const) {
      const xdg = mkdtempSync(join(dir, "esc-\u001b]0;PWNED\u0007\u001b[2J-"));
      mkdirSync(join(xdg, "hookbox"), { mode: 0o700 });
      writeFileSync(join(xdg, "hookbox", cacheName(unreachable, "t", "preToolUse")), "block\n", { mode: 0o600 });
      const r = await run(via, ["--url", unreachable, "--event", "preToolUse", "--format", "copilot", "--timeout", "1000"], { XDG_CACHE_HOME: xdg });
      expect(r.code, `${via}: ${r.stderr}`).toBe(2);
      expect(r.stderr, via).toContain("as hookbox last said:");
      expect(r.stderr, via).toContain("\\x1b]0;PWNED\\x07\\x1b[2J");
      expect(r.stderr, via).not.toMatch(RAW_CONTROL);
    }
  });

  it("keeps no cache in the working directory for a relative XDG_CACHE_HOME, nor in /tmp without HOME", async () => {
    for (const via of ["node", "sh"] as const) {
      const cwd = mkdtempSync(join(dir, "cwd-"));
      const r = await run(via, args("duplicate-headers"), { XDG_CACHE_HOME: "rel-cache" }, cwd);
      expect(r.code).toBe(2);
      expect(existsSync(join(cwd, "rel-cache"))).toBe(false);
      // no HOME: no shared /tmp/.cache either
      const token = `t-${via}-${process.pid}-${Date.now()}`;
      const bare = await run(via, args("duplicate-headers"), { XDG_CACHE_HOME: "", HOOKBOX_TOKEN: token });
      expect(bare.code).toBe(2);
      expect(existsSync(join("/tmp/.cache/hookbox", cacheName(url, token, "preToolUse")))).toBe(false);
    }
  });
});

describe("both forwarders read what they are given alike", () => {
  const cacheName = (u: string, token: string, event: string) => `on-failure-${createHash("sha256").update(`${u}\n${token}\n${event}`).digest("hex").slice(0, 24)}`;

  it("read a cache file as the shell's read does (NUL bytes dropped, the first line only), in both: alike however it came to hold them", async () => {
    for (const [content, mode] of [["\0block\n", "block"], ["bl\0\0ock\nallow\n", "block"], [`${"\0".repeat(100)}allow`, "allow"], ["block \n", undefined], ["\0", undefined]] as const) {
      const [node, sh] = await Promise.all(
        (["node", "sh"] as const).map((via) => {
          const xdg = mkdtempSync(join(dir, "nul-"));
          mkdirSync(join(xdg, "hookbox"), { mode: 0o700 });
          writeFileSync(join(xdg, "hookbox", cacheName("http://127.0.0.1:1", "t", "preToolUse")), content, { mode: 0o600 });
          return run(via, ["--url", "http://127.0.0.1:1", "--event", "preToolUse", "--format", "copilot", "--timeout", "1000"], { XDG_CACHE_HOME: xdg });
        }),
      );
      for (const r of [node!, sh!]) {
        expect(r.code, `${JSON.stringify(content)}: ${r.stderr}`).toBe(mode === "block" ? 2 : 0);
        expect(r.stderr).toMatch(mode === undefined ? /no failure mode known yet/ : new RegExp(`on_failure = ${mode} \\(the tenant's, as hookbox last said`));
      }
    }
  });

  it("headers cut off before their end say nothing: a remembered block stands, and is not overwritten", async () => {
    for (const via of ["node", "sh"] as const) {
      const xdg = mkdtempSync(join(dir, "partial-"));
      mkdirSync(join(xdg, "hookbox"), { mode: 0o700 });
      const file = join(xdg, "hookbox", cacheName(url, "t", "preToolUse"));
      writeFileSync(file, "block\n", { mode: 0o600 });
      const r = await run(via, args("partial-headers-allow"), { XDG_CACHE_HOME: xdg });
      expect(r.code, `${via}: ${r.stderr}`).toBe(2);
      expect(r.stderr, via).toMatch(/blocking: on_failure = block \(the tenant's, as hookbox last said/);
      expect(readFileSync(file, "utf8"), via).toBe("block\n");
    }
  });

  it("takes headers past 100 KiB as hookbox out of reach, and a mode with a no-break space after it as none, in both: the failure mode decides (none known: through, said)", async () => {
    for (const name of ["huge-header", "huge-headers-total", "nbsp-mode"]) {
      const [node, sh] = await Promise.all([run("node", args(name)), run("sh", args(name))]);
      for (const r of [node, sh]) {
        expect(r.code, `${name}: ${r.stderr}`).toBe(0);
        expect(r.stdout).toBe("{}\n");
        expect(r.stderr).toMatch(/no failure mode known yet/);
      }
    }
  });

  it.each(["ssh-banner", "bad-chunk", "nul-header", "status-099", "status-two-blanks", "status-lowercase", "status-http2", "status-tab"])("blocks an answer in no HTTP as hookbox writes it as a wrong line, in both, whatever the failure mode known (%s)", async (name) => {
    const [node, sh] = await Promise.all([run("node", args(name)), run("sh", args(name))]);
    for (const r of [node, sh]) {
      expect(r.code, `${name}: ${r.stderr}`).toBe(2);
      expect(JSON.parse(r.stdout)).toMatchObject({ permissionDecision: "deny" });
      expect(r.stderr).toMatch(/answered with what no hookbox sends \(.+\): without hookbox's Hookbox-On-Failure header/);
      expect(r.stderr).not.toMatch(/passing through/);
    }
  });

  it.each(["interim-headers-total", "line-102400"])("takes headers past what curl reads as hookbox out of reach, in both (%s): the failure mode decides", async (name) => {
    const [node, sh] = await Promise.all([run("node", args(name)), run("sh", args(name))]);
    for (const r of [node, sh]) {
      expect(r.code, `${name}: ${r.stderr}`).toBe(0);
      expect(r.stdout).toBe("{}\n");
      expect(r.stderr).toMatch(/^hookbox unreachable at .*no failure mode known yet/);
    }
  });

  it("denies on headers ended by LF alone, in both (a wrong line to Node's parser, the deny read by forward.sh), and reads no more than 200 lines after them", async () => {
    const [node, sh] = await Promise.all([run("node", args("lf-headers")), run("sh", args("lf-headers"))]);
    expect(node.code, node.stderr).toBe(2);
    expect(JSON.parse(node.stdout)).toMatchObject({ permissionDecision: "deny" });
    expect(sh.code, sh.stderr).toBe(0);
    expect(JSON.parse(sh.stdout)).toEqual({ permissionDecision: "deny", permissionDecisionReason: "no" });
    const bomb = await run("sh", args("lf-headers-bomb"));
    expect(bomb.code, bomb.stderr).toBe(2);
    expect(bomb.stderr).toMatch(/larger than \d+ bytes or 200 lines: no answer \(blocking: on_failure = block/);
  });

  it.each(["space-colon", "space-colon-503", "folded-503", "folded-allow-block-503", "control-char-503", "del-char-503", "length-not-a-number-503", "length-and-chunked-503"])("blocks on a header line Node's parser refuses as a wrong line, in both, whatever curl makes of it and whatever failure mode is known (%s); nothing is remembered", async (name) => {
    const xdg = mkdtempSync(join(dir, "garbled-"));
    const [node, sh] = await Promise.all([run("node", args(name), { XDG_CACHE_HOME: xdg }), run("sh", args(name), { XDG_CACHE_HOME: xdg })]);
    for (const r of [node, sh]) {
      expect(r.code, `${name}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(/answered with what no hookbox sends/);
      expect(r.stderr).not.toMatch(/passing through/);
      expect(JSON.parse(r.stdout)).toMatchObject({ permissionDecision: "deny" });
    }
    expect(existsSync(join(xdg, "hookbox")) ? readdirSync(join(xdg, "hookbox")) : []).toEqual([]);
  });

  it.each(["body-201-lines-allow", "nested-129-allow"])("takes an answer of more lines (MAX_ANSWER_LINES) or deeper JSON (MAX_ANSWER_DEPTH) than hookbox's ever are for none, in both alike: the failure mode hookbox told (%s)", async (name) => {
    const [node, sh] = await Promise.all([run("node", args(name)), run("sh", args(name))]);
    for (const r of [node, sh]) {
      expect(r.code, `${name}: ${r.stderr}`).toBe(0);
      expect(r.stdout).toBe("{}\n");
      expect(r.stderr).toMatch(name === "nested-129-allow" ? /^hookbox answered 200: no decision \(passing through: on_failure = allow/ : /^hookbox's answer is larger than \d+ bytes or 200 lines: no answer \(passing through: on_failure = allow/);
    }
    expect(sh.stderr).toBe(node.stderr);
  });

  it("reads JSON nested up to MAX_ANSWER_DEPTH, and an error object's as deep, in both alike", async () => {
    const [node, sh] = await Promise.all([run("node", args("nested-128-allow")), run("sh", args("nested-128-allow"))]);
    for (const r of [node, sh]) {
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ permissionDecision: "deny", permissionDecisionReason: "no" });
    }
    const [node5, sh5] = await Promise.all([run("node", args("nested-error-129-503")), run("sh", args("nested-error-129-503"))]);
    expect(node5.stderr).toMatch(/^hookbox answered 503: no decision \(passing through/);
    expect(sh5.stderr).toBe(node5.stderr);
  });

  it.each(["length-twice-allow", "length-overflow-allow"])("blocks on a Content-Length Node's parser refuses (%s) as a wrong line, in both, whatever failure mode the answer tells", async (name) => {
    const [node, sh] = await Promise.all([run("node", args(name)), run("sh", args(name))]);
    for (const r of [node, sh]) {
      expect(r.code, `${name}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(/answered with what no hookbox sends/);
      expect(JSON.parse(r.stdout)).toMatchObject({ permissionDecision: "deny" });
    }
    // a length of leading zeros is still one: read by both
    const [node0, sh0] = await Promise.all([run("node", args("length-leading-zeros")), run("sh", args("length-leading-zeros"))]);
    for (const r of [node0, sh0]) expect(JSON.parse(r.stdout)).toEqual({ permissionDecision: "deny", permissionDecisionReason: "no" });
  });

  it.each(["trailers", "crlf", "crlf-trailers", "lone-cr", "many-headers", "big-header", "many-big-headers", "body-200-lines"])("reads an answer's body as JSON.parse does (%s: without a chunked answer's trailers, CRLF line ends and a lone CR as blanks, past a proxy's headers), in both: the deny stands", async (name) => {
    const [node, sh] = await Promise.all([run("node", args(name)), run("sh", args(name))]);
    for (const r of [node, sh]) {
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ permissionDecision: "deny", permissionDecisionReason: "no" });
      expect(r.stdout).not.toMatch(RAW_CONTROL);
    }
  });

  it("waits no longer than Claude Code's shorter deadline at UserPromptSubmit (30 s) and MessageDisplay (10 s), in any letter case, in both", async () => {
    const by = (r: Run) => Number(/answer-by (\d+)/.exec(r.stdout)?.[1]);
    for (const [event, agentS] of [["UserPromptSubmit", 30], ["userpromptsubmit", 30], ["MessageDisplay", 10], ["PreToolUse", 600]] as const) {
      const a = ["--url", url, "--event", event, "--format", "claude", "--workspace", "echo-answer-by"];
      const [node, sh] = await Promise.all([run("node", a), run("sh", a)]);
      for (const r of [node, sh]) {
        // 90 % of the agent's deadline, less 5 % of it (300 ms to 2 s) and the forwarder's start-up
        expect(by(r), `${event}: ${r.stdout}`).toBeLessThanOrEqual(agentS * 900 - 300);
        expect(by(r), `${event}: ${r.stdout}`).toBeGreaterThan(agentS * 900 - 3_000);
      }
    }
  });

  it("answers by a --deadline given beside a longer --timeout, in both: the agent never gives up on the line first (its own default, not the failure mode)", async () => {
    const a = ["--url", url, "--event", "preToolUse", "--format", "copilot", "--workspace", "silent", "--deadline", "3", "--timeout", "15000", "--on-unreachable", "block"];
    const [node, sh] = await Promise.all([run("node", a), run("sh", a)]);
    for (const r of [node, sh]) {
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/did not answer within \d+ ms/);
      // 90 % of the 3 s, from the forwarder's start: before the agent gives up on it
      expect(r.ms).toBeLessThan(3_000);
    }
  });

  it("reads --deadline and --timeout as decimal (010 is ten, 08 is eight), in both", async () => {
    for (const extra of [["--timeout", "0500"], ["--deadline", "08"], ["--deadline", "010"]]) {
      const a = ["--url", url, "--event", "preToolUse", "--format", "copilot", "--workspace", "echo-answer-by", ...extra];
      const [node, sh] = await Promise.all([run("node", a), run("sh", a)]);
      expect(node.code, node.stderr).toBe(0);
      expect(sh.code, sh.stderr).toBe(0);
      // hookbox was asked to answer by the same time by both (the reason echoes the header)
      const by = (r: Run) => Number(/answer-by (\d+)/.exec(r.stdout)?.[1]);
      expect(by(node), extra.join(" ")).toBeGreaterThan(0);
      // 500 ms less 300 for the way back; the Node forwarder also less the time the event took to arrive
      if (extra[0] === "--timeout") {
        expect(by(sh)).toBe(200);
        expect(by(node)).toBeLessThanOrEqual(200);
        expect(by(node)).toBeGreaterThan(100);
      }
      else expect(Math.abs(by(sh) - by(node)), `${extra.join(" ")}: ${by(node)} ${by(sh)}`).toBeLessThan(1_000);
    }
  });

  it.each([
    ["a flag's value given apart that starts with -", ["--url", "http://127.0.0.1:1", "--event", "-x"]],
    // parseArgs took a lone "-" as a value, forward.sh (and the doctor) never: one line, two answers
    ["a flag's value given apart that is a lone -", ["--url", "http://127.0.0.1:1", "--event", "preToolUse", "--workspace", "-"]],
    ["a deadline under a millisecond", ["--url", "http://127.0.0.1:1", "--event", "preToolUse", "--deadline", "0.0001"]],
    ["a trailing --", ["--url", "http://127.0.0.1:1", "--event", "preToolUse", "--"]],
    ["--print-script among a hook line's flags (alone it prints the script, exit 0: an allow)", ["--url", "http://127.0.0.1:1", "--event", "preToolUse", "--on-unreachable", "block", "--print-script"]],
  ])("refuses %s as a usage error — a block (cosh's: its JSON at exit 0), in both", async (_what, a) => {
    const [node, sh] = await Promise.all([run("node", a), run("sh", a)]);
    for (const r of [node, sh]) {
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ decision: "block" });
      expect(r.stderr).toMatch(/: blocking \(a guard whose line is wrong/);
    }
  });

  it("takes an unreadable cache folder (a file in its path) as no cache, never as a crash", async () => {
    const file = join(dir, "not-a-folder");
    writeFileSync(file, "x");
    const a = ["--url", "http://127.0.0.1:1", "--event", "preToolUse", "--format", "copilot", "--timeout", "1000"];
    const [node, sh] = await Promise.all([run("node", a, { XDG_CACHE_HOME: join(file, "x") }), run("sh", a, { XDG_CACHE_HOME: join(file, "x") })]);
    for (const r of [node, sh]) {
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe("{}\n");
      expect(r.stderr).toMatch(/no failure mode known yet/);
    }
  });

  it.each([
    ["a line break (no header smuggled)", "t\nx-injected: 1"],
    ["a CR (a CRLF .env file)", "t0ken\r"],
    ["a control character", "t\u0001x"],
    ["DEL", "t\u007fx"],
    ["a space", "t x"],
  ])("sends no token that holds %s: hookbox is not reached, and the line blocks (a wrong line) whatever the failure mode, in both", async (_what, token) => {
    const a = ["--url", url, "--event", "preToolUse", "--format", "copilot", "--workspace", "echo-answer-by", "--on-unreachable", "allow"];
    const [node, sh] = await Promise.all([run("node", a, { HOOKBOX_TOKEN: token }), run("sh", a, { HOOKBOX_TOKEN: token })]);
    for (const r of [node, sh]) {
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/the token holds a character no header can carry .*: blocking \(a guard whose line is wrong/);
      expect(JSON.parse(r.stdout)).toMatchObject({ permissionDecision: "deny" });
      expect(r.stdout).not.toMatch(/answer-by/);
    }
  });

  it("lets the agent stop when hookbox cannot decide at a stop, failure mode block or not, in both: a block there would keep it going", async () => {
    for (const event of ["Stop", "agentStop", "subagentStop", "AfterAgent", "stop", "TeammateIdle", "TaskCompleted"]) {
      const a = ["--url", "http://127.0.0.1:1", "--event", event, "--format", "claude", "--timeout", "1000", "--on-unreachable", "block"];
      const [node, sh] = await Promise.all([run("node", a), run("sh", a)]);
      for (const r of [node, sh]) {
        expect(r.code, `${event}: ${r.stderr}`).toBe(0);
        expect(r.stdout).toBe("{}\n");
        expect(r.stderr).toMatch(/a block would keep the agent going: it goes on as it would\)$/m);
      }
      // (the transport's own words differ: Node's and curl's)
    }
  });

  it("blocks Copilot in the shape each event reads when hookbox cannot decide, in both: exit 2 before a tool and at a permission request, VS Code's JSON at exit 0 at the prompt and after a tool (exit 2 is a warning there)", async () => {
    for (const [event, code, shape] of [
      ["preToolUse", 2, { permissionDecision: "deny", hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny" } }],
      ["PreToolUse", 2, { permissionDecision: "deny", hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny" } }],
      ["permissionRequest", 2, { behavior: "deny", message: expect.stringMatching(/^hookbox unreachable/), permissionDecision: "deny" }],
      ["UserPromptSubmit", 0, { continue: false, stopReason: expect.stringMatching(/^hookbox unreachable/), decision: "block" }],
      ["userPromptSubmitted", 0, { continue: false, decision: "block" }],
      ["PostToolUse", 0, { decision: "block", reason: expect.stringMatching(/^hookbox unreachable/) }],
      ["postToolUse", 0, { decision: "block" }],
    ] as const) {
      const a = ["--url", "http://127.0.0.1:1", "--event", event, "--format", "copilot", "--timeout", "1000", "--on-unreachable", "block"];
      const [node, sh] = await Promise.all([run("node", a), run("sh", a)]);
      for (const r of [node, sh]) {
        expect(r.code, `${event}: ${r.stderr}`).toBe(code);
        expect(JSON.parse(r.stdout), event).toMatchObject(shape);
      }
      expect(Object.keys(JSON.parse(sh.stdout))).toEqual(Object.keys(JSON.parse(node.stdout)));
    }
    // a wrong line there too: its block in that shape, at exit 0
    const wrong = await Promise.all((["node", "sh"] as const).map((via) => run(via, ["--url", url, "--event", "UserPromptSubmit", "--format", "copilot"], { HOOKBOX_TOKEN: "a b" })));
    for (const r of wrong) {
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ continue: false, decision: "block" });
    }
  });

  it("reaches hookbox at a name under localhost as curl does (the loopback addresses, whatever the system resolver says), in both", async () => {
    const at = url.replace("127.0.0.1", "hookbox.localhost");
    const a = ["--url", at, "--event", "preToolUse", "--format", "copilot", "--workspace", "cosh-block", "--timeout", "8000"];
    const [node, sh] = await Promise.all([run("node", a), run("sh", a)]);
    for (const r of [node, sh]) {
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ decision: "block", reason: "policy says no" });
    }
    // nothing there: each address tried is named (Node gives the error of both with no message of its own)
    const gone = await run("node", ["--url", "http://hookbox.localhost:1", "--event", "preToolUse", "--format", "copilot", "--timeout", "1000", "--on-unreachable", "block"]);
    expect(gone.code).toBe(2);
    expect(gone.stderr).toMatch(/^hookbox unreachable at http:\/\/hookbox\.localhost:1: connect ECONNREFUSED 127\.0\.0\.1:1/);
  });

  it.each(["PreCompact", "SessionStart", "SubagentStart"])("stops Codex at %s when hookbox cannot decide with the one answer Codex takes there (continue: false, no decision field), in both", async (event) => {
    const a = ["--url", "http://127.0.0.1:1", "--event", event, "--format", "codex", "--timeout", "1000", "--on-unreachable", "block"];
    const [node, sh] = await Promise.all([run("node", a), run("sh", a)]);
    for (const r of [node, sh]) {
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ continue: false, stopReason: expect.stringMatching(/^hookbox unreachable/) });
    }
  });

  it.each(["BeforeToolSelection", "beforetoolselection"])("leaves Gemini's model no tool at %s when hookbox cannot decide, failure mode block (Gemini reads no decision there), at exit 0 (where every Gemini CLI reads stdout), in both", async (event) => {
    const a = ["--url", "http://127.0.0.1:1", "--event", event, "--format", "gemini", "--timeout", "1000", "--on-unreachable", "block"];
    const [node, sh] = await Promise.all([run("node", a), run("sh", a)]);
    expect(sh.stdout).toBe(node.stdout.replace(/"reason":"[^"]*"/, `"reason":${JSON.stringify(JSON.parse(sh.stdout).reason)}`));
    for (const r of [node, sh]) {
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ decision: "block", reason: expect.stringMatching(/^hookbox unreachable/), hookSpecificOutput: { toolConfig: { mode: "NONE", allowedFunctionNames: [] } } });
    }
    // elsewhere a Gemini block is its decision alone
    const before = await run("sh", ["--url", "http://127.0.0.1:1", "--event", "BeforeTool", "--format", "gemini", "--timeout", "1000", "--on-unreachable", "block"]);
    expect(Object.keys(JSON.parse(before.stdout))).toEqual(["decision", "reason"]);
  });

  it("asks hookbox for Gemini's answer at BeforeToolSelection whatever agent's --format the line names (none: cosh), in both: another's answer would be a decision Gemini does not read", async () => {
    for (const format of [[], ["--format", "claude"], ["--format", "copilot"], ["--format", "gemini"]]) {
      const a = ["--url", url, "--event", "beforeToolSelection", ...format, "--workspace", "echo-format"];
      const [node, sh] = await Promise.all([run("node", a), run("sh", a)]);
      for (const r of [node, sh]) {
        expect(r.code, `${format.join(" ")}: ${r.stderr}`).toBe(0);
        expect(JSON.parse(r.stdout), format.join(" ")).toEqual({ asked: "gemini" });
      }
    }
    // elsewhere the line's own
    const before = await run("sh", ["--url", url, "--event", "BeforeTool", "--format", "claude", "--workspace", "echo-format"]);
    expect(JSON.parse(before.stdout)).toEqual({ asked: "claude" });
  });

  it("leaves Gemini's model no tool at BeforeToolSelection whatever --format says — a wrong one (a usage error), none (cosh) or another agent's, unreachable: no other agent has the event, in both", async () => {
    const none = { mode: "NONE", allowedFunctionNames: [] };
    for (const format of [["--format", "gemni"], [], ["--format", "claude"], ["--format", "cosh"]]) {
      const a = ["--url", "http://127.0.0.1:1", "--event", "BeforeToolSelection", ...format, "--timeout", "1000", "--on-unreachable", "block"];
      const [node, sh] = await Promise.all([run("node", a), run("sh", a)]);
      for (const r of [node, sh]) {
        expect(r.code, `${format.join(" ")}: ${r.stderr}`).toBe(0);
        expect(JSON.parse(r.stdout), format.join(" ")).toMatchObject({ decision: "block", hookSpecificOutput: { toolConfig: none } });
      }
    }
  });

  it("answers a block of its own at Claude Code's PermissionRequest with the decision object at exit 0 (exit 2 is not honored there, nor JSON beside it read), in both: the failure mode and a wrong line", async () => {
    for (const extra of [["--url", "http://127.0.0.1:1", "--on-unreachable", "block"], ["--url", url, "--workspace", "refused-token"]]) {
      const a = [...extra, "--event", "PermissionRequest", "--format", "claude", "--timeout", "8000"];
      const [node, sh] = await Promise.all([run("node", a), run("sh", a)]);
      for (const r of [node, sh]) {
        expect(r.code, `${extra.join(" ")}: ${r.stderr}`).toBe(0);
        expect(JSON.parse(r.stdout)).toMatchObject({ hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "deny" } } });
      }
    }
  });

  it("answers a Codex block after a tool with its JSON at exit 0 (Codex reads no JSON at exit 2), before a tool with exit 2, in both", async () => {
    for (const [event, code] of [["PostToolUse", 0], ["Stop", 0], ["PreToolUse", 2], ["PermissionRequest", 2]] as const) {
      const a = ["--url", url, "--event", event, "--format", "codex", "--workspace", "codex-block"];
      const [node, sh] = await Promise.all([run("node", a), run("sh", a)]);
      expect(node.code, `${event}: ${node.stderr}`).toBe(code);
      expect(sh.code, `${event}: ${sh.stderr}`).toBe(code);
      expect(JSON.parse(node.stdout)).toMatchObject({ decision: "block", continue: false });
      expect(sh.stdout).toBe(node.stdout);
    }
  });

  it("resolve a name as the system does — the search list and ndots too — in both: the token goes where curl would send it", () => {
    // A network of its own: a DNS server that answers hookbox.tools.ns.svc.cluster.local (where a
    // Kubernetes pod's resolver looks first) with the "hookbox" that says it was reached, and the bare
    // hookbox.tools — someone else's domain — with another address.
    const resolv = join(dir, "resolv-search.conf");
    writeFileSync(resolv, "nameserver 127.0.0.1\nsearch ns.svc.cluster.local\noptions ndots:5 timeout:2 attempts:1\n");
    const servers = join(process.cwd(), "test/fixtures/dns-and-hookbox.cjs");
    const a = "--url http://hookbox.tools:18080 --event preToolUse --format copilot --timeout 3000 --on-unreachable allow --token t </dev/null";
    const node = `${JSON.stringify(process.execPath)} ${JSON.stringify(join(process.cwd(), "dist/cli/hookbox.cjs"))} forward ${a}`;
    const out = execFileSync("unshare", ["-mn", "sh", "-c", `ip link set lo up && mount --bind ${resolv} /etc/resolv.conf && { ${JSON.stringify(process.execPath)} ${servers} hookbox.tools.ns.svc.cluster.local=127.0.0.1 hookbox.tools=127.0.0.3 & s=$!; sleep 0.5; echo "node: $(${node} 2>/dev/null)"; echo "sh: $(sh ${script} ${a} 2>/dev/null)"; kill $s; }`], { encoding: "utf8" });
    expect(out).toMatch(/^node: .*"permissionDecisionReason":"reached"/m);
    expect(out).toMatch(/^sh: .*"permissionDecisionReason":"reached"/m);
  });

  it("hookbox forward ends when its answer is out, not when a name lookup that never returns gives up", async () => {
    // A network of its own whose DNS server (127.0.0.1:53) takes queries and never answers.
    const resolv = join(dir, "resolv.conf");
    writeFileSync(resolv, "nameserver 127.0.0.1\noptions timeout:15 attempts:1\n");
    const sink = `require("dgram").createSocket("udp4").bind(53, "127.0.0.1")`;
    const line = `${JSON.stringify(process.execPath)} ${JSON.stringify(join(process.cwd(), "dist/cli/hookbox.cjs"))} forward --url http://hookbox.example.invalid:8080 --event preToolUse --format copilot --timeout 1000 --on-unreachable block --token t </dev/null`;
    const t0 = performance.now();
    const out = execFileSync("unshare", ["-mn", "sh", "-c", `ip link set lo up && mount --bind ${resolv} /etc/resolv.conf && { ${JSON.stringify(process.execPath)} -e '${sink}' & s=$!; sleep 0.5; ${line}; echo "exit=$?"; kill $s; }`], { encoding: "utf8" });
    const ms = performance.now() - t0;
    expect(out).toMatch(/"permissionDecision":"deny"/);
    expect(out).toMatch(/exit=2/);
    // 1 s of timeout, 0.5 s of set-up: well before the resolver's 15 s
    expect(ms).toBeLessThan(5_000);
  });
});

describe("both entries of hookbox forward", () => {
  it("end once the answer is out, main.js as the bundle, though the agent keeps stdin open and never writes the event", async () => {
    const open = (entry: string) =>
      new Promise<Run & { signal: NodeJS.Signals | null }>((resolve) => {
        const t0 = performance.now();
        const child = spawn(process.execPath, [entry, "forward", "--url", url, "--event", "PreToolUse", "--format", "claude", "--deadline", "2"], {
          env: { PATH: process.env.PATH ?? "", HOOKBOX_TOKEN: "t", XDG_CACHE_HOME: mkdtempSync(join(dir, "cache-")) },
        });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (c: Buffer) => (stdout += c.toString("latin1")));
        child.stderr.on("data", (c: Buffer) => (stderr += c.toString("latin1")));
        // Answered about 1.5 s in (--deadline 2): one still running at 15 s never ends on its own.
        const kill = setTimeout(() => child.kill("SIGKILL"), 15_000);
        child.on("close", (code, signal) => {
          clearTimeout(kill);
          resolve({ code, signal, stdout, stderr, ms: performance.now() - t0 });
        });
      });
    const [main, bundle] = await Promise.all([open("dist/cli/main.js"), open("dist/cli/hookbox.cjs")]);
    for (const r of [main, bundle]) {
      expect(r.signal, r.stderr).toBeNull();
      expect(r.stderr).toMatch(/the event did not arrive on stdin within \d+ ms \(the agent's 2 s deadline is near\)/);
    }
    expect(main.code).toBe(bundle.code);
    expect(main.stdout).toBe(bundle.stdout);
  });

  it("stop reading stdin past MAX_STDIN_BYTES and answer with the failure mode, the agent still writing", async () => {
    const flood = (entry: string) =>
      new Promise<Run & { written: number }>((resolve) => {
        const t0 = performance.now();
        const child = spawn(process.execPath, [entry, "forward", "--url", "http://127.0.0.1:1", "--event", "preToolUse", "--format", "copilot", "--on-unreachable", "block"], {
          env: { PATH: process.env.PATH ?? "", HOOKBOX_TOKEN: "t", XDG_CACHE_HOME: mkdtempSync(join(dir, "cache-")) },
        });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (c: Buffer) => (stdout += c.toString("latin1")));
        child.stderr.on("data", (c: Buffer) => (stderr += c.toString("latin1")));
        // A mebibyte at a time, for as long as the command reads (EPIPE once it is gone), 64 MiB at most.
        let written = 0;
        const chunk = Buffer.alloc(1024 * 1024, 0x20);
        const more = () => {
          while (written < 64 * chunk.length && !child.stdin.destroyed) {
            written += chunk.length;
            if (!child.stdin.write(chunk)) return void child.stdin.once("drain", more);
          }
          child.stdin.end();
        };
        child.stdin.on("error", () => undefined);
        more();
        const kill = setTimeout(() => child.kill("SIGKILL"), 30_000);
        child.on("close", (code) => {
          clearTimeout(kill);
          resolve({ code, stdout, stderr, ms: performance.now() - t0, written });
        });
      });
    for (const entry of ["dist/cli/main.js", "dist/cli/hookbox.cjs"]) {
      const r = await flood(entry);
      expect(r.stderr, entry).toMatch(/^hookbox unreachable at http:\/\/127\.0\.0\.1:1: .*\(blocking: --on-unreachable = block\)/);
      expect(r.code, entry).toBe(2);
      expect(JSON.parse(r.stdout), entry).toMatchObject({ permissionDecision: "deny" });
      // it stopped reading: far less than the 64 MiB offered went into the pipe
      expect(r.written, entry).toBeLessThan(32 * 1024 * 1024);
    }
  });
});

describe("trace and tail against a hostile server", () => {
  const cli = (args: string[]) =>
    new Promise<Run>((resolve) => {
      const t0 = performance.now();
      const child = spawn(process.execPath, ["dist/cli/main.js", ...args, "--url", url], { env: { PATH: process.env.PATH ?? "", HOOKBOX_TOKEN: "t" } });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (c: Buffer) => (stdout += c.toString("latin1")));
      child.stderr.on("data", (c: Buffer) => (stderr += c.toString("latin1")));
      child.on("close", (code) => resolve({ code, stdout, stderr, ms: performance.now() - t0 }));
    });

  it("print what is not JSON escaped, never raw", async () => {
    const trace = await cli(["trace", "evt_raw-trace"]);
    expect(trace.code).toBe(65);
    expect(trace.stderr).toMatch(/not JSON/);
    const tail = await cli(["tail"]);
    expect(tail.stderr).toMatch(/not JSON, left out/);
    for (const r of [trace, tail]) expect(r.stdout + r.stderr).not.toMatch(RAW_CONTROL);
  });

  it("print a --url's user name and password nowhere, not even inside the error that repeats the URL", () => {
    for (const args of [["trace", "abc"], ["tail"], ["workspace", "push", process.cwd(), "--id", "x"]]) {
      const r = spawnSync(process.execPath, ["dist/cli/main.js", ...args, "--url", "http://admin:s3c@ret@127.0.0.1:1"], { encoding: "utf8", env: { PATH: process.env.PATH ?? "", HOOKBOX_TOKEN: "t" }, timeout: 30_000 });
      expect(r.status, args.join(" ")).not.toBe(0);
      expect(r.stdout + r.stderr, args.join(" ")).not.toMatch(/admin|s3c|ret@/);
    }
  });

  it("send no token a header cannot carry, nor show it (fetch's own error repeats the header, its line break escaped past a CI log's masking)", () => {
    for (const args of [["trace", "evt_x"], ["tail"], ["workspace", "push", process.cwd(), "--id", "x"]]) {
      const r = spawnSync(process.execPath, ["dist/cli/main.js", ...args, "--url", url], { encoding: "utf8", env: { PATH: process.env.PATH ?? "", HOOKBOX_TOKEN: "abc\r\ndef-secret" }, timeout: 30_000 });
      expect(r.stderr, args.join(" ")).toBe("hookbox: the token holds a character no header can carry (a space, a control character, a line break, a non-ASCII letter): check HOOKBOX_TOKEN (or --token)\n");
      expect(r.status, args.join(" ")).toBe(64);
    }
  });

  it("print a field the server should send as a number on its own line, whatever it holds: no line forged", async () => {
    const trace = await cli(["trace", "evt_forged-trace"]);
    expect(trace.code).toBe(0);
    expect(trace.stdout).toContain("5\\nFORGED");
    expect(trace.stdout).not.toMatch(/^FORGED/m);
  });
});

describe("a URL's user name and password left out of any text", () => {
  it("whatever comes before the scheme: a megabyte that could all be one is one pass, and the password still goes", () => {
    // `a.a.a.…`: a word starts at every other character; read from each to the end of the run, it
    // cost the square of its length (a minute and more for this one).
    const run = "a.".repeat(1 << 19);
    expect(withoutUserinfo(`${run} and ${run}x://u:p@host/`)).toBe(`${run} and ${run}x://host/`);
    expect(withoutUserinfo("9http://u:p@ss@h/ _https://a@b x+y://c@d")).toBe("9http://h/ _https://b x+y://d");
    expect(withoutUserinfo("mail me@example.org or see https://example.org/a@b")).toBe("mail me@example.org or see https://example.org/a@b");
  });
});

describe("hookbox forward's stdin", () => {
  // Chunks of a mebibyte, as many as asked, made as they are read: how many were read is counted.
  const stdinOf = (bytes: number) => {
    const read = { chunks: 0 };
    async function* chunks() {
      const chunk = Buffer.alloc(1024 * 1024, 0x20);
      for (let left = bytes; left > 0; left -= chunk.length) {
        read.chunks++;
        yield left >= chunk.length ? chunk : chunk.subarray(0, left);
      }
    }
    // as process.stdin is given to it: a stream, here one that reads no further ahead than a chunk
    return { stdin: Readable.from(chunks(), { highWaterMark: 1 }), read };
  };
  // --timeout: the agent's deadline counts from the process's start, and this process (the test's) started long ago
  const unreachable = ["--url", "http://127.0.0.1:1", "--event", "preToolUse", "--format", "copilot", "--on-unreachable", "block", "--timeout", "20000"];

  it("reads at most MAX_STDIN_BYTES + 1 bytes of it, the rest not read, and sends them (hookbox refuses them with the failure mode, as forward.sh's whole event)", async () => {
    const { stdin, read } = stdinOf(64 * 1024 * 1024);
    const r = await forward(unreachable, { stdin, env: { HOOKBOX_TOKEN: "t" }, cacheDir: mkdtempSync(join(dir, "cache-")) });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^hookbox unreachable at http:\/\/127\.0\.0\.1:1: .*\(blocking: --on-unreachable = block\)/);
    // the chunk that goes past it, and at most the one the stream had asked for next
    expect(read.chunks).toBeGreaterThanOrEqual(MAX_STDIN_BYTES / (1024 * 1024) + 1);
    expect(read.chunks).toBeLessThanOrEqual(MAX_STDIN_BYTES / (1024 * 1024) + 2);
  });

  it("asks hookbox to answer by what is left of its wait once the event is in, less the way back", async () => {
    async function* late() {
      await new Promise((r) => setTimeout(r, 1_500));
      yield Buffer.from(JSON.stringify({ toolName: "bash", toolArgs: "{}" }));
    }
    const r = await forward(["--url", url, "--event", "preToolUse", "--format", "copilot", "--workspace", "echo-answer-by", "--timeout", "10000"], { stdin: Readable.from(late()), env: { HOOKBOX_TOKEN: "t" }, cacheDir: mkdtempSync(join(dir, "cache-")) });
    const by = Number(/answer-by (\d+)/.exec(r.stdout)?.[1]);
    // 10 s less the 1.5 s the event took, less 5 % of the 8.5 s left (425 ms)
    expect(by, r.stdout).toBeLessThanOrEqual(10_000 - 1_500 - 425);
    expect(by, r.stdout).toBeGreaterThan(7_000);
  });

  it("takes an event of exactly MAX_STDIN_BYTES, and sends it", async () => {
    const { stdin } = stdinOf(MAX_STDIN_BYTES);
    const r = await forward(unreachable, { stdin, env: { HOOKBOX_TOKEN: "t" }, cacheDir: mkdtempSync(join(dir, "cache-")) });
    expect(r.stderr).toMatch(/^hookbox unreachable at http:\/\/127\.0\.0\.1:1/);
  });
});

describe("both forwarders read their command line and stdin alike", () => {
  const line = (u: string, event = "preToolUse") => ["--url", u, "--event", event, "--format", "copilot", "--timeout", "8000"];
  const bothBlock = async (a: string[], problem: RegExp) => {
    const [node, sh] = await Promise.all([run("node", a), run("sh", a)]);
    for (const r of [node, sh]) {
      expect(r.code, `${JSON.stringify(a)}: ${r.stderr}`).toBe(2);
      expect(r.stderr, JSON.stringify(a)).toMatch(problem);
      expect(r.stderr).not.toMatch(/hookbox unreachable|passing through/);
      expect(JSON.parse(r.stdout)).toMatchObject({ permissionDecision: "deny" });
    }
  };

  it("refuses a --url that curl and Node would read apart, or that names no host, as a wrong line in both: nothing is sent", async () => {
    const port = new URL(url).port;
    // each would reach this test's hookbox (which answers a deny at exit 0) if it were sent
    for (const u of [`${url}/ `, `${url}\n/`, `${url}/\t`, `http://127.0.0.1:1\\@127.0.0.1:${port}`, `${url}/{a}`, `${url}/?q=1`, `${url}/#f`, `${url}/a"b`, `${url}/a|b`]) {
      await bothBlock(line(u), /--url holds a blank, a control or non-ASCII byte, or a character curl and Node read apart/);
    }
    for (const u of ["http://x y", "http://127.0.0.1:99999", "http://[::1", "http://", "http:///v1", "http://127.0.0.1:", `http://127.0.0.1:00${port}`, "http://[]:1", "http://[::g]:1", "http://a:b:c/"]) {
      await bothBlock(line(u), /--url (holds|has no host)/);
    }
    // Read by one client only, or by neither — never "hookbox unreachable", which the failure mode
    // would let through: a host that ends in a number but is no IPv4 address of four numbers 0–255
    // (Node refuses 999.1.1.1, reads 1.2.3 and 0x7f.1 its own way), an IPv6 address Node refuses,
    // port 0 (Node goes to 80), a user name Node cannot decode, two @ (curl ends the user name at the
    // first, Node at the last).
    for (const u of ["http://999.1.1.1", `http://999.1.1.1:${port}`, "http://[1:2]", `http://127.0.0.1:0`, "http://1.2.3", "http://0x7f.1", "http://010.0.0.1", "http://127.0.0.256", "http://a.0x", `http://127.0.0.1.:${port}`, `http://xn--a:${port}`, `http://a.XN--b.example:${port}`, `http://a%00@127.0.0.1:${port}`]) {
      await bothBlock(line(u), /--url has no host/);
    }
    await bothBlock(line(`http://%zz@127.0.0.1:${port}`), /--url has no host .*a user name or password with a % that is no escape of ASCII/);
    await bothBlock(line(`http://%ff@127.0.0.1:${port}`), /--url has no host/);
    await bothBlock(line(`http://u@x@127.0.0.1:${port}`), /--url holds more than one @/);
  });

  it("takes what both read alike: a user name and password before the host, an upper-case scheme, an IPv6 address, a path", async () => {
    const port = new URL(url).port;
    for (const u of [`http://alice:pw@127.0.0.1:${port}`, `HTTP://127.0.0.1:${port}/`, `http://127.0.0.1:${port}/`]) {
      const [node, sh] = await Promise.all([run("node", line(u)), run("sh", line(u))]);
      for (const r of [node, sh]) {
        expect(r.code, `${u}: ${r.stderr}`).toBe(0);
        expect(JSON.parse(r.stdout)).toEqual({ permissionDecision: "deny", permissionDecisionReason: "no" });
      }
    }
    const [node, sh] = await Promise.all([run("node", line("http://[::1]:1/prefix")), run("sh", line("http://[::1]:1/prefix"))]);
    for (const r of [node, sh]) expect(r.stderr).toMatch(/^hookbox unreachable at http:\/\/\[::1\]:1\/prefix/);
  });

  it("refuses an --event that is no name (a path, a dot, a blank, a letter only JavaScript folds to ASCII) as a wrong line in both", async () => {
    for (const event of ["..", ".", "a/b", "a b", "Tas\u212aCompleted", "x".repeat(129), "pre%54oolUse", "Stop\n", "subagentStop\n\n"]) {
      await bothBlock(line(url, event), /--event must be a name of at most 128 letters, digits, _ and -/);
    }
    const [node, sh] = await Promise.all([run("node", line(url, "x".repeat(128))), run("sh", line(url, "x".repeat(128)))]);
    for (const r of [node, sh]) expect(r.code, r.stderr).toBe(0);
  });

  it("read a closed stdin as an empty event, and keep their exit code when the agent stops reading the answer", async () => {
    const closed = (via: "node" | "sh") => run(via, [...line(url), "--format", "cosh"], {}, undefined, { stdinClosed: true });
    const [node, sh] = await Promise.all([closed("node"), closed("sh")]);
    expect(sh.stderr).not.toMatch(/Bad file descriptor/);
    expect(sh.stdout, sh.stderr).toBe(node.stdout);
    expect(sh.code).toBe(node.code);
    expect(node.stdout).not.toBe("");

    // the agent closes the pipe it reads the answer from: a block is still exit 2, never a signal's death (141)
    const gone = async (via: "node" | "sh") => {
      const { code, signal } = await run(via, ["--url", "http://127.0.0.1:1", "--event", "preToolUse", "--format", "copilot", "--on-unreachable", "block"], {}, undefined, { input: "{}", stdoutGone: true });
      return { code, signal };
    };
    for (const via of ["node", "sh"] as const) expect(await gone(via), via).toEqual({ code: 2, signal: null });
  });

  it("keep a block's exit code when the agent stops reading stderr, or awk cannot write to it: cosh's block (read at exit 0 only) stays one, its reason said", async () => {
    const cosh = ["--url", url, "--event", "PreToolUse", "--format", "cosh", "--workspace", "cosh-block", "--timeout", "8000"];
    for (const via of ["node", "sh"] as const) {
      const gone = await run(via, cosh, {}, undefined, { input: '{"hook_event_name":"PreToolUse","tool_name":"shell","tool_input":{"command":"rm -rf ~"}}', stderrGone: true });
      expect(gone.code, via).toBe(0);
      expect(JSON.parse(gone.stdout), via).toEqual({ decision: "block", reason: "policy says no" });
    }
    // an awk whose stderr is closed (as gawk fails to open /dev/stderr when it is a socket, under POSIXLY_CORRECT)
    const bin = mkdtempSync(join(dir, "awk-"));
    const mawk = execFileSync("sh", ["-c", "command -v awk"], { encoding: "utf8" }).trim();
    writeFileSync(join(bin, "awk"), `#!/bin/sh\nexec ${mawk} "$@" 2>&-\n`, { mode: 0o755 });
    const mute = await run("sh", cosh, { PATH: `${bin}:${process.env.PATH ?? ""}` });
    expect(mute.code, mute.stderr).toBe(0);
    expect(JSON.parse(mute.stdout)).toEqual({ decision: "block", reason: "policy says no" });
    expect(mute.stderr).toBe("blocked by hookbox\n");
    // a Copilot deny stays exit 2 alike
    const deny = await run("sh", args("deny"), {}, undefined, { stderrGone: true });
    expect(deny.code).toBe((await run("node", args("deny"))).code);
    // started with no stderr at all (2>&-): the same block, where dash would end the script at its first exec of it;
    // and a wrong line's block (a token no header carries) one answer, where awk's failed close of stderr added the fallback's
    for (const via of ["node", "sh"] as const) {
      const closed = await run(via, cosh, {}, undefined, { input: '{"hook_event_name":"PreToolUse","tool_name":"shell","tool_input":{"command":"rm -rf ~"}}', stderrClosed: true });
      expect(closed.code, via).toBe(0);
      expect(JSON.parse(closed.stdout), via).toEqual({ decision: "block", reason: "policy says no" });
      const wrong = await run(via, ["--url", url, "--event", "PermissionRequest", "--format", "claude"], { HOOKBOX_TOKEN: "a b" }, undefined, { stderrClosed: true });
      expect(wrong.code, via).toBe(0);
      expect(JSON.parse(wrong.stdout), via).toMatchObject({ hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "deny" } } });
    }
    // an awk that fails outright: the block in the shape the agent reads at that event
    const failing = mkdtempSync(join(dir, "awk-fails-"));
    writeFileSync(join(failing, "awk"), "#!/bin/sh\nexit 1\n", { mode: 0o755 });
    for (const [format, event, code, shape] of [
      ["claude", "PermissionRequest", 0, { hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "deny" } } }],
      ["claude", "PreToolUse", 2, { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny" } }],
      ["copilot", "preToolUse", 2, { permissionDecision: "deny", hookSpecificOutput: { permissionDecision: "deny" } }],
      ["copilot", "permissionRequest", 2, { behavior: "deny" }],
      ["copilot", "UserPromptSubmit", 0, { continue: false }],
      ["copilot", "postToolUse", 0, { decision: "block" }],
      ["codex", "SessionStart", 0, { continue: false }],
      ["cursor", "beforeSubmitPrompt", 2, { continue: false }],
      ["cursor", "beforeShellExecution", 2, { permission: "deny" }],
      ["gemini", "BeforeToolSelection", 0, { hookSpecificOutput: { toolConfig: { mode: "NONE" } } }],
      ["cosh", "PreToolUse", 0, { decision: "block" }],
    ] as const) {
      const r = await run("sh", ["--url", url, "--event", event, "--format", format], { HOOKBOX_TOKEN: "a b", PATH: `${failing}:${process.env.PATH ?? ""}` });
      expect(r.code, `${format} ${event}`).toBe(code);
      expect(JSON.parse(r.stdout), `${format} ${event}`).toMatchObject(shape);
    }
    // Cursor's subagentStart and file reads take no agent_message: none in any forwarder's own deny
    for (const event of ["subagentStart", "beforeReadFile", "beforeTabFileRead", "SubagentStart", "BEFOREREADFILE"]) {
      for (const [via, env] of [["node", {}], ["sh", {}], ["sh", { PATH: `${failing}:${process.env.PATH ?? ""}` }]] as const) {
        const r = await run(via, ["--url", url, "--event", event, "--format", "cursor"], { HOOKBOX_TOKEN: "a b", ...env });
        expect(r.code, `${via} ${event}`).toBe(2);
        expect(Object.keys(JSON.parse(r.stdout) as object), `${via} ${event}`).toEqual(["permission", "user_message"]);
      }
    }
  });

  it("send an event past MAX_STDIN_BYTES for hookbox to refuse: its 413 tells the failure mode, in both", async () => {
    // as hookbox does: the headers read, 413 with the tenant's failure mode, the rest read and dropped
    const refusing = createServer((sock) => {
      let head = "";
      let answered = false;
      sock.on("data", (c: Buffer) => {
        if (answered) return;
        head += c.toString("latin1");
        if (!head.includes("\r\n\r\n")) return;
        answered = true;
        const body = '{"error":{"code":"too_large","message":"the event is larger than 1048576 bytes"}}';
        sock.write(`${head.startsWith("POST") ? "HTTP/1.1 413 Payload Too Large" : "HTTP/1.1 400 Bad Request"}\r\nHookbox-On-Failure: block\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
        sock.end();
      });
      sock.on("error", () => undefined);
    });
    await new Promise<void>((r) => refusing.listen(0, "127.0.0.1", () => r()));
    try {
      const at = `http://127.0.0.1:${(refusing.address() as { port: number }).port}`;
      for (const via of ["node", "sh"] as const) {
        const r = await run(via, line(at), {}, undefined, { input: Buffer.alloc(MAX_STDIN_BYTES + 4 * 1024 * 1024, 0x20) });
        expect(r.code, `${via}: ${r.stderr}`).toBe(2);
        expect(r.stderr, via).toMatch(/blocking: on_failure = block \(the tenant's, from hookbox\)/);
        expect(JSON.parse(r.stdout)).toMatchObject({ permissionDecision: "deny" });
      }
    } finally {
      await new Promise<void>((r) => refusing.close(() => r()));
    }
  });
});
