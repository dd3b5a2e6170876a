/**
 * Attacks on the HTTP edge: missing and stolen tokens, hostile archives, huge bodies, malformed
 * events. Each is refused with the right status, names the problem, and runs or writes nothing.
 */
import { connect } from "node:net";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { leftovers } from "../helpers/engine.js";
import { startService, TOKEN_A, TOKEN_B, type Service } from "../helpers/service.js";
import { TAR_END, tarOf, type Entry } from "../helpers/tar.js";

let svc: Service;
const ev = { session_id: "s", hook_event_name: "PreToolUse", tool_name: "shell", tool_input: { command: "ls" } };

beforeAll(async () => {
  svc = await startService(`[[hooks.PreToolUse]]\nname = "marker"\ncommand = "echo '{}'"\n`, { server: 'max_body_bytes = "1m"\nmax_workspace_entries = 100' });
});
afterAll(async () => {
  await svc.stop();
  expect((await leftovers()).containers).toEqual([]);
});

const put = (id: string, body: Buffer | string, token: string | null = TOKEN_A) =>
  fetch(`${svc.url}/v1/workspaces/${id}`, { method: "PUT", headers: token ? { authorization: `Bearer ${token}` } : {}, body });

describe("tokens and tenants", () => {
  it.each([
    ["no token", null, 401],
    ["a wrong token", "not-a-token", 401],
  ])("refuses %s with %i and runs nothing", async (_what, token, status) => {
    const before = svc.auditLines().length;
    const res = await svc.event(ev, { token });
    expect(res.status).toBe(status);
    expect(res.headers.get("www-authenticate")).toMatch(/Bearer/);
    expect(await res.json()).toEqual({ error: { code: "unauthorized", message: expect.any(String) } });
    expect(svc.auditLines().length).toBe(before);
    expect((await put("x", "junk", token)).status).toBe(401);
  });

  it("gives another tenant's token a 404 for a workspace it does not own", async () => {
    expect((await put("mine", await tarOf([{ name: "a.txt", content: "a" }]))).status).toBe(200);
    const before = svc.auditLines().length;
    expect((await svc.event(ev, { token: TOKEN_B, query: "workspace=mine" })).status).toBe(404);
    expect(svc.auditLines().length).toBe(before);
    // team-b's own event, without the workspace, is served (its token comes from token_env).
    expect((await svc.event(ev, { token: TOKEN_B })).status).toBe(200);
  });
});

describe("hostile archives", () => {
  const canary = `/tmp/hookbox-canary-${process.pid}`;
  it.each<[string, Entry[], RegExp]>([
    ["tar-slip (..)", [{ name: `../../../../../../..${canary}-slip`, content: "x" }], /'\.\.' is not accepted/],
    ["an absolute path", [{ name: `${canary}-abs`, content: "x" }], /absolute paths are not accepted/],
    ["a symlink pointing out", [{ name: "out", type: "symlink", linkname: "../../../../../../tmp" }, { name: `out/hookbox-canary-${process.pid}-link`, content: "x" }], /link points outside/],
    ["an absolute symlink", [{ name: "etc", type: "symlink", linkname: "/etc" }], /absolute path/],
    ["a symlink through a symlinked folder", [{ name: "d", type: "symlink", linkname: "." }, { name: "d/up", type: "symlink", linkname: ".." }], /nothing is unpacked through a link/],
    ["a hard link", [{ name: "a", content: "x" }, { name: "b", type: "link", linkname: "/etc/passwd" }], /hard links are not accepted/],
    ["a device", [{ name: "null", type: "character-device" }], /character-device entries are not accepted/],
    ["a duplicate entry", [{ name: "a.txt", content: "1" }, { name: "./a.txt", content: "2" }], /duplicate entry/],
  ])("refuses %s, writes nothing outside, stores nothing", async (_what, entries, message) => {
    const res = await put("hostile", await tarOf(entries));
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("archive_refused");
    expect(body.error.message).toMatch(message);
    for (const suffix of ["-slip", "-abs", "-link"]) expect(existsSync(`${canary}${suffix}`)).toBe(false);
    expect(existsSync(`/tmp/hookbox-canary-${process.pid}-link`)).toBe(false);
    expect((await fetch(`${svc.url}/v1/workspaces/hostile`, { headers: { authorization: `Bearer ${TOKEN_A}` } })).status).toBe(404);
    const tenantDirs = readdirSync(join(svc.dataDir, "workspaces"));
    for (const d of tenantDirs) expect(readdirSync(join(svc.dataDir, "workspaces", d)).filter((n) => n.startsWith("."))).toEqual([]);
  });

  it("refuses an archive over max_body_bytes with 413", async () => {
    // Over a connection of its own: after a 413 the server stops reading and closes it.
    const { status } = await hugeBody("/v1/workspaces/big", 2 * 1024 * 1024, false);
    expect(status).toBe(413);
    expect((await fetch(`${svc.url}/v1/workspaces/big`, { headers: { authorization: `Bearer ${TOKEN_A}` } })).status).toBe(404);
  });

  it("refuses an archive that unpacks past its limit (a gzip bomb) with 413", async () => {
    const bomb = gzipSync(await tarOf([{ name: "zeros", content: "\0".repeat(8 * 1024 * 1024) }]));
    expect(bomb.length).toBeLessThan(1024 * 1024);
    const res = await put("bomb", bomb);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("archive_too_large");
  });

  it("refuses an archive with more entries than max_workspace_entries", async () => {
    const entries: Entry[] = Array.from({ length: 101 }, (_, i) => ({ name: `d${i}`, type: "directory" as const }));
    const res = await put("many", gzipSync(await tarOf(entries)));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("archive_too_many_entries");
  });

  it("refuses a body that is not an archive", async () => {
    const res = await put("junk", "this is not a tar file at all, just text that goes on for a while ".repeat(20));
    expect(res.status).toBe(400);
  });

  it("skips a hook file that is malformed, naming the file and line, the others loading; an entry without a command is a warning at its line", async () => {
    const guard = { name: ".github/hooks/guard.json", content: JSON.stringify({ version: 1, hooks: { preToolUse: [{ type: "command", bash: "guard.sh" }] } }) };
    const res = await put("badhooks", await tarOf([{ name: ".github/hooks/h.json", content: '{\n  "version": 1,\n  "hooks": { "preToolUse": [ { "type": "command" "bash": "x" } ] }\n}\n' }, guard]));
    expect(res.status).toBe(200);
    const body = (await res.json()) as { hooks: { origin: string }[]; warnings: string[] };
    expect(body.warnings).toEqual([expect.stringMatching(/^\.github\/hooks\/h\.json:3:\d+: invalid JSON.*; the file is skipped: none of its hooks are read$/)]);
    expect(body.hooks.map((h) => h.origin)).toEqual([expect.stringMatching(/^\.github\/hooks\/guard\.json/)]);
    const warned = await put("nocommand", await tarOf([{ name: ".github/hooks/h.json", content: '{\n  "version": 1,\n  "hooks": { "preToolUse": [ { "type": "command" } ] }\n}\n' }]));
    expect(warned.status).toBe(200);
    expect(((await warned.json()) as { warnings: string[] }).warnings).toEqual([expect.stringMatching(/^\.github\/hooks\/h\.json:3: hooks\.preToolUse\[0\]: a command hook needs "bash" or "command"; skipped$/)]);
  });
});

/**
 * Sends up to `totalBytes` (declared with Content-Length, or chunked) over a raw socket, reading
 * the answer as it comes, and stops as soon as the status line arrives.
 */
function hugeBody(path: string, totalBytes: number, chunked: boolean, chunkAt?: (i: number) => Buffer): Promise<{ status: number; sentBytes: number }> {
  return new Promise((resolve, reject) => {
    const url = new URL(svc.url);
    const socket = connect(Number(url.port), url.hostname);
    let sent = 0;
    let answer = "";
    let done = false;
    const finish = () => {
      const m = /^HTTP\/1\.1 (\d{3})/.exec(answer);
      if (!m || done) return;
      done = true;
      socket.destroy();
      resolve({ status: Number(m[1]), sentBytes: sent });
    };
    socket.on("data", (d: Buffer) => { answer += d.toString("latin1"); finish(); });
    socket.on("error", () => { finish(); if (!done) setTimeout(() => { finish(); if (!done) reject(new Error(`no answer after ${sent} bytes`)); }, 500); });
    socket.on("close", () => finish());
    const method = path.includes("workspaces") ? "PUT" : "POST";
    const framing = chunked ? "Transfer-Encoding: chunked" : `Content-Length: ${totalBytes}`;
    socket.write(`${method} ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${TOKEN_A}\r\nContent-Type: application/json\r\n${framing}\r\n\r\n`);
    const spaces = Buffer.alloc(64 * 1024, 0x20);
    let n = 0;
    const pump = () => {
      while (!done && !socket.destroyed && sent < totalBytes) {
        const chunk = chunkAt ? chunkAt(n++) : spaces;
        const framed = chunked ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from("\r\n")]) : chunk;
        sent += chunk.length;
        if (!socket.write(framed)) return void socket.once("drain", pump);
      }
    };
    // A declared length is judged before any of the body is read: give the answer time to come first.
    if (chunked) pump();
    else setTimeout(pump, 300);
  });
}

describe("huge bodies", () => {
  it.each([
    ["an event with Content-Length 1 GB", "/v1/events", false],
    ["a chunked event of 1 GB", "/v1/events", true],
    ["a workspace upload with Content-Length 1 GB", "/v1/workspaces/huge", false],
  ])("refuses %s early with 413, memory flat", async (_what, path, chunked) => {
    const rssBefore = svc.rssKb();
    const { status, sentBytes } = await hugeBody(path, 1024 ** 3, chunked);
    expect(status).toBe(413);
    expect(sentBytes).toBeLessThan(256 * 1024 * 1024);
    expect(svc.rssKb() - rssBefore).toBeLessThan(64 * 1024);
  });

  it("refuses a chunked upload of a valid tar stream past max_body_bytes with 413, streaming it, never buffering it", async () => {
    // hono's bodyLimit would have buffered a body without Content-Length; the upload's own counter stops it.
    // each a member without the end blocks of its own archive: one archive that never ends
    const entries = await Promise.all(Array.from({ length: 64 }, async (_, i) => (await tarOf([{ name: `f${i}`, content: "x".repeat(60 * 1024) }])).subarray(0, -TAR_END.length)));
    const rssBefore = svc.rssKb();
    const { status, sentBytes } = await hugeBody("/v1/workspaces/chunked", 1024 ** 3, true, (i) => entries[i % entries.length]!);
    expect(status).toBe(413);
    expect(sentBytes).toBeLessThan(256 * 1024 * 1024);
    expect(svc.rssKb() - rssBefore).toBeLessThan(64 * 1024);
    expect((await fetch(`${svc.url}/v1/workspaces/chunked`, { headers: { authorization: `Bearer ${TOKEN_A}` } })).status).toBe(404);
  });
});

describe("malformed events", () => {
  it.each([
    ["malformed JSON", '{"hook_event_name": "PreToolUse",', undefined, 400, "bad_json", /not valid JSON: .* at line 1, column \d+/],
    ["a body that is not an object", "[1,2]", undefined, 400, "bad_json", /must be a JSON object/],
    ["an empty body", "", undefined, 400, "bad_json", /empty/],
    ["an unknown event name in the body", JSON.stringify({ hook_event_name: "PreToolUsed" }), undefined, 400, "unknown_event", /unknown event "PreToolUsed" \(did you mean "PreToolUse"\?\)/],
    ["an unknown event name in the path", JSON.stringify({}), "/v1/events/beforeEverything", 400, "unknown_event", /unknown event "beforeEverything"/],
    ["no event name at all", JSON.stringify({ tool_name: "x" }), undefined, 400, "event_missing", /event name is missing/],
    ["tool_name of the wrong type", JSON.stringify({ hook_event_name: "PreToolUse", tool_name: 5 }), undefined, 400, "bad_field", /^tool_name: .*expected string/],
    ["tool_input of the wrong type", JSON.stringify({ hook_event_name: "PreToolUse", tool_input: "rm" }), undefined, 400, "bad_field", /^tool_input: /],
  ] as const)("answers %s with %i naming the problem", async (_what, body, path, status, code, message) => {
    const res = await svc.event(body, { path });
    expect(res.status).toBe(status);
    const e = ((await res.json()) as { error: { code: string; message: string } }).error;
    expect(e.code).toBe(code);
    expect(e.message).toMatch(message);
  });

  it.each([
    ["format=yaml", "format"],
    ["interactive=maybe", "interactive"],
  ])("refuses the query %s naming %s", async (query, field) => {
    const res = await svc.event(ev, { query });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { field: string } }).error.field).toBe(field);
  });
});
