/**
 * An agent's HTTP hook takes any non-2xx answer for a non-blocking error: a silent allow. Against a
 * running service, every failure of the native endpoints once the token is known — a body over the
 * limit, one nested too deep, a full queue — is answered
 * 200 with the tenant's failure mode in the agent's own JSON; on /v1/events the same failures stay
 * errors (413, 400, 429) carrying `Hookbox-On-Failure`. An event still undecided shortly before the
 * agent's own deadline is answered the failure mode by then. (An event that waits past max_event_ms:
 * test/service/http-edge.test.ts.)
 */
import { createHash } from "node:crypto";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startService, TOKEN_A, TOKEN_B, type Service } from "../helpers/service.js";

const sha = (t: string) => createHash("sha256").update(t).digest("hex");
let svc: Service;

beforeAll(async () => {
  const tenants = `[[tenants]]\nname = "team-a"\ntoken_sha256 = "${sha(TOKEN_A)}"\non_failure = "block"\n\n[[tenants]]\nname = "team-b"\ntoken_env = "HOOKBOX_TEST_TOKEN_B"\non_failure = "allow"\n`;
  // Events that mention "slow" hold their slot for 10 s; "late" ones are decided after 6 s.
  const policy = `[[policy.PreToolUse]]\nname = "slow"\ncommand = "case $(cat) in *slow*) sleep 10 ;; *late*) sleep 6 ;; esac; echo '{}'"\ntimeout = 15000\n`;
  svc = await startService(`[sandbox]\npool_size = 0\nmax_concurrency = 2\nmax_tenant_concurrency = 1\nmax_queue = 1\n\n${policy}`, { tenants });
});
afterAll(async () => {
  await svc.stop("SIGKILL");
});

/**
 * POSTs over a connection of its own and reads the whole answer: past the body limit the service
 * answers before the body is read and then closes, which a pooled client reports as an error.
 */
function post(path: string, body: string, token: string, chunked = false): Promise<Response> {
  return new Promise((resolve, reject) => {
    const url = new URL(svc.url);
    const socket = connect(Number(url.port), url.hostname);
    let raw = Buffer.alloc(0);
    const done = () => {
      const text = raw.toString("latin1");
      const end = text.indexOf("\r\n\r\n");
      const length = /content-length: (\d+)/i.exec(text)?.[1];
      if (end < 0 || length === undefined || raw.length < end + 4 + Number(length)) return false;
      const [status, ...headers] = text.slice(0, end).split("\r\n");
      socket.destroy();
      resolve(new Response(raw.subarray(end + 4, end + 4 + Number(length)), {
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(status!)![1]),
        headers: headers.map((h) => [h.slice(0, h.indexOf(":")), h.slice(h.indexOf(":") + 1).trim()] as [string, string]),
      }));
      return true;
    };
    socket.on("data", (d: Buffer) => { raw = Buffer.concat([raw, d]); done(); });
    socket.on("error", () => undefined);
    socket.on("close", () => { if (!done()) reject(new Error(`no whole answer: ${raw.toString("latin1").slice(0, 200)}`)); });
    const bytes = Buffer.from(body);
    const framing = chunked ? "Transfer-Encoding: chunked" : `Content-Length: ${bytes.length}`;
    socket.write(`POST ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n${framing}\r\nConnection: close\r\n\r\n`);
    if (!chunked) socket.write(bytes);
    else {
      for (let at = 0; at < bytes.length; at += 65536) {
        const part = bytes.subarray(at, at + 65536);
        socket.write(`${part.length.toString(16)}\r\n`);
        socket.write(part);
        socket.write("\r\n");
      }
      socket.write("0\r\n\r\n");
    }
  });
}
const claude = (body: string, token = TOKEN_A) => post("/v1/hooks/claude/PreToolUse", body, token);
const event = (command: string) => JSON.stringify({ session_id: "s", hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command } });
const deny = { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: expect.stringMatching(/^hookbox could not decide/) } };

describe("native hook endpoints answer the failure mode, never an error status", () => {
  it.each([
    ["a body over the 1 MiB limit", JSON.stringify({ hook_event_name: "PreToolUse", tool_name: "Write", tool_input: { content: "x".repeat(1_100_000) } }), /too_large/],
    ["a body nested deeper than 64 levels", `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":${"[".repeat(100)}${"]".repeat(100)}}`, /bad_json/],
    ["a tool name over 256 characters", event("ls").replace('"Bash"', JSON.stringify("B".repeat(300))), /bad_field/],
  ])("%s: a deny for an on_failure = block tenant, {} for allow", async (_what, body, code) => {
    const a = await claude(body);
    expect(a.status).toBe(200);
    const answer = (await a.json()) as typeof deny;
    expect(answer).toMatchObject(deny);
    expect(answer.hookSpecificOutput.permissionDecisionReason).toMatch(code);
    const b = await claude(body, TOKEN_B);
    expect(b.status).toBe(200);
    expect(await b.json()).toEqual({});
    // /v1/events keeps its error status, and says the failure mode.
    const plain = await post("/v1/events", body, TOKEN_A);
    expect(plain.status).toBeGreaterThanOrEqual(400);
    expect(plain.headers.get("hookbox-on-failure")).toBe("block");
  });

  it("a body over the 1 MiB limit, on a path naming no event, is answered for the event its head names — with its length declared or chunked: Claude Code's PermissionRequest gets its deny object, a Stop is let end", async () => {
    const body = (event: string) => JSON.stringify({ session_id: "s", hook_event_name: event, tool_name: "Write", tool_input: { file_path: "a", content: "x".repeat(1_100_000) } });
    for (const chunked of [false, true]) {
      const res = await post("/v1/hooks/claude", body("PermissionRequest"), TOKEN_A, chunked);
      expect(res.status).toBe(200);
      expect(await res.json(), `chunked ${chunked}`).toEqual({ hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "deny", message: expect.stringMatching(/too_large/) } } });
      expect(await (await post("/v1/hooks/claude", body("Stop"), TOKEN_A, chunked)).json()).toEqual({});
    }
  });

  it("a body refused once read, on a path naming no event, is answered for the event it names: a Stop with a lone surrogate is let end ({}), never held by a block", async () => {
    const stop = JSON.stringify({ session_id: "s", hook_event_name: "Stop", stop_hook_active: true, last_assistant_message: "done \ud800" });
    expect(stop).toContain("\\ud800");
    const res = await post("/v1/hooks/claude", stop, TOKEN_A);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    // The same refusal at PreToolUse: the deny of an on_failure = block tenant.
    const pre = await post("/v1/hooks/claude", stop.replace('"Stop"', '"PreToolUse"'), TOKEN_A);
    expect(await pre.json()).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny", permissionDecisionReason: expect.stringMatching(/lone surrogate/) } });
  });

  it("a wrong token is a block (the hook line is wrong), with no failure mode told", async () => {
    const res = await claude(event("ls"), "not-a-token");
    expect(res.status).toBe(200);
    expect(res.headers.get("hookbox-on-failure")).toBeNull();
    expect(await res.json()).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny", permissionDecisionReason: expect.stringMatching(/^hookbox refused the token/) } });
  });

  it("an event not decided before the agent's deadline (cosh: 5 s) is answered the failure mode by then, and its decision is still recorded", async () => {
    const started = Date.now();
    const res = await post("/v1/hooks/cosh/PreToolUse", JSON.stringify({ session_id: "late-1", hook_event_name: "PreToolUse", tool_name: "run_shell_command", tool_input: { command: "late" } }), TOKEN_A);
    const waited = Date.now() - started;
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ decision: "block", reason: expect.stringMatching(/did not decide within 4500 ms/) });
    // Before cosh gives up on the hook, and not before hookbox had to answer.
    expect(waited).toBeGreaterThanOrEqual(4_400);
    expect(waited).toBeLessThan(5_000);
    await expect.poll(() => svc.auditLines().some((l) => l.session_id === "late-1"), { timeout: 10_000, interval: 200 }).toBe(true);
  }, 20_000);

  it("a full queue (429) is the failure mode too", async () => {
    // team-a's one slot is held by a slow event; one more waits (the queue has one place).
    void claude(event("slow")).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 300));
    void fetch(`${svc.url}/v1/events`, { method: "POST", headers: { authorization: `Bearer ${TOKEN_A}` }, body: event("slow") }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 200));
    const full = await claude(event("ls"));
    expect(full.status).toBe(200);
    expect(await full.json()).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny", permissionDecisionReason: expect.stringMatching(/overloaded/) } });
    const allowTenant = await claude(event("ls"), TOKEN_B);
    expect(allowTenant.status).toBe(200);
  });
});
