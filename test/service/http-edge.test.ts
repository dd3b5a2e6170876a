/**
 * The HTTP edge in-process (`createApp(...).request()`), with fakes of the runners: status codes,
 * error bodies, auth, tenant scoping, body limits, the 429 from admission, the failure-mode header,
 * /metrics. No Docker, no port, no build: milliseconds. The same checks against the real process
 * and engine stay in e2e.test.ts, security.test.ts and traces.test.ts.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { describe, expect, it, vi } from "vitest";
import { DecisionSchema, ErrorSchema, SessionsSchema, TraceListSchema, TraceSchema, WorkspaceInfoSchema } from "../../service/schemas.js";
import { LIVE_FOLLOWERS_PER_TENANT } from "../../service/routes/traces.js";
import { eventNamedIn } from "../../service/read-body.js";
import { TENANT_UPLOADS_IN_FLIGHT } from "../../service/routes/workspaces.js";
import { SNIFF_BYTES } from "../../service/app.js";
import { MAX_HOOK_MESSAGE_CHARS } from "../../engine/execute.js";
import { duplicateKey, MAX_EVENT_CONTAINERS } from "../../engine/event-body.js";
import { MAX_SESSIONS_PER_TENANT, Sessions } from "../../service/records/sessions.js";
import { edgeApp } from "../helpers/app.js";
import { ENV_FIELDS_KEPT } from "../../service/records/trace-content.js";
import { TOKEN_B } from "../helpers/service.js";
import { badSizeMember, rawMember, TAR_END, tarOf } from "../helpers/tar.js";

const rmEvent = { session_id: "s-1", hook_event_name: "PreToolUse", tool_name: "shell", tool_input: { command: "rm -rf /tmp/old" } };
const post = (body: unknown) => ({ method: "POST", body: typeof body === "string" ? body : JSON.stringify(body) });
const errorOf = async (res: Response) => ErrorSchema.parse(await res.json()).error;

describe("a URL whose percent-encoding is no UTF-8", () => {
  const edge = edgeApp();
  // hono decodes such a path or query one escape at a time, an exception each: refused before it routes.
  it.each([
    ["a path of bad escapes", `/${"%ffa".repeat(3870)}%`, null],
    ["a query of lone percents", `/v1/events?${"%&".repeat(7900)}`, undefined],
    ["a trace's id with one bad escape", "/v1/events/evt_%e2%82", undefined],
  ])("is refused with 400, token or not: %s", async (_what, path, token) => {
    const res = await edge.request(path, { token });
    expect(res.status).toBe(400);
    expect(await errorOf(res)).toMatchObject({ code: "bad_request", message: expect.stringMatching(/percent-encoding is no UTF-8/) });
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  });
  it("blocks in the agent's JSON on a native hook's URL (a wrong line), letting a stop go on", async () => {
    const res = await edge.request("/v1/hooks/claude/PreToolUse?x=%ff", { ...post(rmEvent), headers: { "content-type": "application/json" } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: expect.stringMatching(/refused the hook's URL/) } });
    // a native path spelled with escapes is one too
    const spelled = await edge.request("/v1/hooks/cl%61ude/PreToolUse?x=%ff", { ...post(rmEvent) });
    expect(spelled.status).toBe(200);
    expect(await spelled.json()).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
    const stop = await edge.request("/v1/hooks/claude/Stop/%", { ...post({ hook_event_name: "Stop" }) });
    expect(stop.status).toBe(200);
    expect(await stop.json()).not.toHaveProperty("decision");
    expect(edge.ran).toEqual([]);
  });
  it("answers a well-encoded URL naming the path badly encoded ones are routed to as a path that is not there", async () => {
    for (const path of ["/.badly-encoded", "/%2Ebadly-encoded/"]) {
      const res = await edge.request(path, { token: null });
      expect(res.status, path).toBe(404);
    }
  });
  it("routes a URL of whole UTF-8 escapes as before: decoded, a trailing slash dropped", async () => {
    expect((await edge.request("/%68ealthz/", { token: null })).status).toBe(200);
    const euro = await edge.request("/v1/events?session_id=%E2%82%AC");
    expect(euro.status).toBe(200);
    const missing = await edge.request("/v1/events/evt_%25zz");
    expect(missing.status).toBe(404);
    expect(await errorOf(missing)).toMatchObject({ message: expect.stringContaining("evt_%zz") });
  });
});

describe.concurrent("tokens", () => {
  const edge = edgeApp();
  it.each([
    ["no token", null],
    ["a wrong token", "not-a-token"],
    ["a malformed header", "Basic abc"],
  ])("refuses %s with 401 and WWW-Authenticate, running nothing", async (_what, token) => {
    const headers = token?.startsWith("Basic") ? { authorization: token } : undefined;
    const res = await edge.request("/v1/events", { ...post(rmEvent), token: headers ? undefined : token, headers });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="hookbox"');
    expect(await errorOf(res)).toEqual({ code: "unauthorized", message: "a valid bearer token is required" });
    expect(edge.ran).toEqual([]);
  });

  it("answers /healthz, /readyz and /openapi.json without a token", async () => {
    for (const path of ["/healthz", "/readyz", "/openapi.json"]) expect((await edge.request(path, { token: null })).status).toBe(200);
  });

  it("sends nosniff and no framing on every answer, and no-store on the tenant's own", async () => {
    for (const [path, token] of [["/healthz", null], ["/v1/events", undefined], ["/v1/nothing", undefined], ["/v1/events", null], ["/ui", null]] as const) {
      const res = await edge.request(path, { token });
      expect(res.headers.get("x-content-type-options"), path).toBe("nosniff");
      expect(res.headers.get("x-frame-options"), path).toBe("DENY");
      expect(res.headers.get("referrer-policy"), path).toBe("no-referrer");
      if (path.startsWith("/v1") && token === undefined) expect(res.headers.get("cache-control"), path).toBe("no-store");
    }
  });

  it("runs the page's one script by its hash, never any other inline script", async () => {
    const { UI_HTML } = await import("../../service/ui/page.js");
    const { createHash } = await import("node:crypto");
    const csp = (await edge.request("/ui", { token: null })).headers.get("content-security-policy")!;
    const script = /<script>([\s\S]*?)<\/script>/.exec(UI_HTML)![1]!;
    expect(csp).toContain(`script-src 'sha256-${createHash("sha256").update(script).digest("base64")}'`);
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    expect(csp).toContain("frame-ancestors 'none'");
  });

  it("says without a token what is not ready, and the engine's own words only to a token's holder", async () => {
    const down = edgeApp({ problems: ["container engine unreachable: connect ENOENT /run/secret/docker.sock", "image x is missing (run npm run setup)"] });
    const anonymous = await down.request("/readyz", { token: null });
    expect(anonymous.status).toBe(503);
    expect(await anonymous.json()).toEqual({ ready: false, problems: ["container engine unreachable", "image x is missing (run npm run setup)"] });
    expect(((await (await down.request("/readyz")).json()) as { problems: string[] }).problems[0]).toContain("/run/secret/docker.sock");
  });

  it("answers an unknown route with 404 in the error shape", async () => {
    const res = await edge.request("/v1/nothing");
    expect(res.status).toBe(404);
    expect(await errorOf(res)).toMatchObject({ code: "not_found" });
  });
});

describe.concurrent("events", () => {
  const edge = edgeApp();
  it.each([
    ["malformed JSON", '{"hook_event_name": "PreToolUse",', "", "bad_json", "body", /not valid JSON: .* at line 1, column \d+/],
    ["an empty body", "", "", "bad_json", "body", /empty/],
    ["an unknown event name", JSON.stringify({ hook_event_name: "PreToolUsed" }), "", "unknown_event", "hook_event_name", /did you mean "PreToolUse"/],
    ["no event name", JSON.stringify({ tool_name: "x" }), "", "event_missing", "hook_event_name", /missing/],
    ["a field of the wrong type", JSON.stringify({ hook_event_name: "PreToolUse", tool_name: 5 }), "", "bad_field", "tool_name", /^tool_name: /],
    // String() of an object whose toString is no function throws: read as a type, never as a name
    ["an event name that is an object, beside another", '{"hook_event_name":{"toString":1},"hookEventName":"PreToolUse"}', "", "bad_field", "hook_event_name", /^hook_event_name: /],
    ["format=yaml", JSON.stringify(rmEvent), "?format=yaml", "bad_request", "format", /format must be one of/],
    ["interactive=maybe", JSON.stringify(rmEvent), "?interactive=maybe", "bad_request", "interactive", /interactive must be "true" or "false"/],
    ["brief=yes", JSON.stringify(rmEvent), "?brief=yes", "bad_request", "brief", /brief must be "true" or "false"/],
  ])("refuses %s with 400 naming the field", async (_what, body, query, code, field, message) => {
    const res = await edge.request(`/v1/events${query}`, post(body));
    expect(res.status).toBe(400);
    const e = await errorOf(res);
    expect(e).toMatchObject({ code, field });
    expect(e.message).toMatch(message);
  });

  it.each(["abc", "99", "3600001", "1e4", ""])("refuses Hookbox-Answer-By-Ms: %j with 400 naming the header", async (value) => {
    const res = await edge.request("/v1/events", { ...post(rmEvent), headers: { "hookbox-answer-by-ms": value } });
    expect(res.status).toBe(400);
    expect(await errorOf(res)).toMatchObject({ code: "bad_header", field: "Hookbox-Answer-By-Ms", message: expect.stringMatching(/100 to 3600000/) });
  });

  it("refuses a body over the limit with 413 before reading it", async () => {
    const small = edgeApp({ maxEventBytes: 1024 });
    const res = await small.request("/v1/events", { ...post({ ...rmEvent, pad: "x".repeat(2048) }), headers: { "content-length": "2200" } });
    expect(res.status).toBe(413);
    expect(await errorOf(res)).toMatchObject({ code: "too_large" });
  });

  it("answers a canary with a block without running a hook", async () => {
    const own = edgeApp();
    const res = await own.request("/v1/events", { ...post(rmEvent), headers: { "hookbox-canary": "block" } });
    expect(DecisionSchema.parse(await res.json())).toMatchObject({ decision: "block", canary: true, hooks: [] });
    expect(own.ran).toEqual([]);
  });

  it("answers a native hook with exactly the agent's JSON, and refuses an unknown dialect", async () => {
    const res = await edge.request("/v1/hooks/claude", post({ ...rmEvent, tool_name: "Bash" }));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ hookSpecificOutput: expect.objectContaining({ permissionDecision: "deny" }) });
    const bad = await edge.request("/v1/hooks/yaml/PreToolUse", post(rmEvent));
    expect(bad.status).toBe(400);
    expect(await errorOf(bad)).toMatchObject({ field: "format" });
  });

  it("answers a native hook at its URL however it is written: a trailing slash, capitals, a typo after it", async () => {
    for (const path of ["/v1/hooks/claude/", "/v1/hooks/Claude/PreToolUse", "/v1/hooks/CLAUDE/PreToolUse/"]) {
      const res = await edge.request(path, post({ ...rmEvent, tool_name: "Bash" }));
      expect(res.status, path).toBe(200);
      expect(await res.json(), path).toEqual({ hookSpecificOutput: expect.objectContaining({ hookEventName: "PreToolUse", permissionDecision: "deny" }) });
    }
    // Not a route, but its tenant and agent are known: the failure mode in the agent's JSON, never a 404.
    const typo = await edge.request("/v1/hooks/claude/PreToolUse/extra", { ...post(rmEvent), token: TOKEN_B });
    expect(typo.status).toBe(200);
    expect(await typo.json()).toMatchObject({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny" } });
  });

  it("answers a native hook whose body cannot be read, on a URL without its event, with a block every Claude event reads, when the tenant blocks on any failure", async () => {
    const perEvent = edgeApp({ onFailureB: '{ UserPromptSubmit = "block" }' });
    for (const body of ["{not json", `{"a":${"[".repeat(100)}`]) {
      const res = await perEvent.request("/v1/hooks/claude", { ...post(body), token: TOKEN_B });
      expect(res.status).toBe(200);
      const answer = (await res.json()) as Record<string, unknown>;
      // No hookSpecificOutput: one written for another event than the one Claude sent is refused.
      expect(answer).toEqual({ decision: "block", reason: expect.stringMatching(/^hookbox could not decide \(bad_json\)/) });
    }
    // A tenant that allows on every failure: nothing to say.
    expect(await (await edge.request("/v1/hooks/claude", post("{not json"))).json()).toEqual({});
  });
});

describe.concurrent("events being handled", () => {
  it("counts a Copilot toolArgs string, parsed again later, as well", async () => {
    const { eventMemoryBytes, toolArgsMemoryBytes } = await import("../../engine/event-body.js");
    const dense = Buffer.from(`[${"{},".repeat(1000)}{}]`);
    expect(eventMemoryBytes(dense)).toBeGreaterThan(20 * dense.length);
    expect(eventMemoryBytes(Buffer.from(JSON.stringify({ s: "{}".repeat(1000) })))).toBeLessThan(5 * 2_010);
    expect(toolArgsMemoryBytes({ toolArgs: "x".repeat(1000) })).toBe(32_000);
  });

  it("counts what objects of keys unlike any other's take: a hidden class and a string of their own each", async () => {
    const { eventMemoryBytes } = await import("../../engine/event-body.js");
    // Measured in V8 (heap after JSON.parse, 1 MiB bodies): distinct keys about 15 bytes a byte, one key repeated about 17.
    const distinct = Buffer.from(`[${Array.from({ length: 80_000 }, (_, i) => `{"k${i}":0}`).join(",")}]`);
    const same = Buffer.from(`[${Array.from({ length: 100_000 }, () => '{"key":0}').join(",")}]`);
    expect(eventMemoryBytes(distinct)).toBeGreaterThan(15 * distinct.length);
    expect(eventMemoryBytes(same)).toBeGreaterThan(17 * same.length);
  });
});

describe("a hook hookbox's own preparation left no time", () => {
  it("is hookbox not deciding: a block for a tenant whose on_failure is block, never the hook's own timeout rule", async () => {
    const edge = edgeApp({ config: '[[hooks.PreToolUse]]\nname = "late"\ncommand = "prep-timeout"\n' });
    const blocked = DecisionSchema.parse(await (await edge.request("/v1/events", { ...post(rmEvent), token: TOKEN_B })).json());
    expect(blocked).toMatchObject({ decision: "block", reason: expect.stringMatching(/^hook late timed out after hookbox took 500 ms of its time to prepare its workspace/) });
  });
});

describe("a hook killed at the sandbox's memory limit", () => {
  it("is hookbox not deciding, never the hook's crash under its format's rules: the tenant's on_failure applies", async () => {
    const edge = edgeApp({ config: '[[hooks.PreToolUse]]\nname = "hungry"\ncommand = "oom"\n' });
    const blocked = (await (await edge.request("/v1/events", { ...post(rmEvent), token: TOKEN_B })).json()) as { decision: string; reason: string; note: string };
    expect(blocked).toMatchObject({ decision: "block", reason: expect.stringMatching(/hungry was killed at the sandbox's memory limit/), note: expect.stringMatching(/cut by memory; on_failure = block/) });
    const passed = (await (await edge.request("/v1/events", post(rmEvent))).json()) as { decision: string | null; note: string };
    expect(passed).toMatchObject({ decision: null, note: expect.stringMatching(/memory limit .*failure mode \(allow\) applies/) });
  });
});

describe("a hook its max_timeout cut short of the time its agent gives it", () => {
  it("is hookbox not deciding: a block for a tenant whose on_failure is block; a hook within max_timeout times out by its own rule", async () => {
    const edge = edgeApp({ config: '[sandbox]\nmax_timeout = 60000\n\n[[hooks.PreToolUse]]\nname = "slow"\ncommand = "timeout"\ntimeout = 90000\n' });
    const cut = DecisionSchema.parse(await (await edge.request("/v1/events", { ...post(rmEvent), token: TOKEN_B })).json());
    expect(cut).toMatchObject({ decision: "block", reason: expect.stringMatching(/^hook slow timed out at \[sandbox\] max_timeout \(60000 ms\), short of the 90000 ms its agent gives it: the tenant's failure mode \(block\) applies/) });
    expect(edge.ran.at(-1)?.timeoutMs).toBe(60_000);
    const own = edgeApp({ config: '[[hooks.PreToolUse]]\nname = "slow"\ncommand = "timeout"\ntimeout = 30000\n' });
    const passed = DecisionSchema.parse(await (await own.request("/v1/events", { ...post(rmEvent), token: TOKEN_B })).json());
    expect(passed).toMatchObject({ decision: null });
    expect(passed.hooks[0]).toMatchObject({ outcome: "timed_out", error: "timed out" });
  });
});

describe.concurrent("the time an event is given", () => {
  it.each(["/v1//hooks/claude/PreToolUse", "/v1/Hooks/claude/PreToolUse"])("answers %s, a path its agent may build, in the agent's JSON, never a 404", async (path) => {
    const res = await edgeApp().request(path, { ...post(rmEvent), token: TOKEN_B });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
  });
});

describe("a hook's changed arguments", () => {
  /** A folder of one Copilot-format policy file whose hook prints `answer` (Copilot hooks may give arguments as a JSON string). */
  const policyDir = (answer: unknown) => {
    const dir = mkdtempSync(join(tmpdir(), "hookbox-edge-policy-"));
    writeFileSync(join(dir, "rewrite.json"), JSON.stringify({ version: 1, hooks: { preToolUse: [{ type: "command", bash: `say ${JSON.stringify(answer)}` }] } }));
    return dir;
  };
  const copilotEvent = { toolName: "bash", toolArgs: JSON.stringify({ command: "ls" }) };
  it("as a string nested past every parser's stack: dropped as the hook's error, and the policy hook's ask stands (no 500)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hookbox-edge-policy-"));
    writeFileSync(join(dir, "rewrite.json"), JSON.stringify({ version: 1, hooks: { preToolUse: [{ type: "command", bash: "deep-args 100000" }] } }));
    const config = `[policy]\ndirs = [${JSON.stringify(dir)}]\n\n[[policy.PreToolUse]]\nname = "asker"\ncommand = '''say {"decision":"ask","reason":"a human should look"}'''\n`;
    const edge = edgeApp({ config });
    const res = await edge.request("/v1/events/preToolUse", post(copilotEvent));
    expect(res.status).toBe(200);
    const answer = DecisionSchema.parse(await res.json());
    expect(answer).toMatchObject({ decision: "ask", reason: "a human should look" });
    expect(answer.modifiedArgs).toBeUndefined();
    expect(answer.hooks.find((h) => h.name.startsWith("rewrite.json"))).toMatchObject({ decision: null, error: expect.stringMatching(/not a JSON object/) });
  });
  it("as a JSON string of an object: read as the object, which the policy hooks' second look sees", async () => {
    const config = `[policy]\ndirs = [${JSON.stringify(policyDir({ permissionDecision: "allow", modifiedArgs: JSON.stringify({ command: "rm -rf /tmp/x" }) }))}]\n\n[[policy.PreToolUse]]\nname = "guard"\ncommand = "guard"\n`;
    const edge = edgeApp({ config });
    const answer = DecisionSchema.parse(await (await edge.request("/v1/events/preToolUse", post(copilotEvent))).json());
    expect(answer).toMatchObject({ decision: "block", reason: "Dangerous rm -rf command" });
    expect(answer.hooks.find((h) => h.name === "guard" && h.pass === "rewritten")).toMatchObject({ decision: "block" });
  });
});

describe("a hook's answer past hookbox's bounds (MAX_EVENT_CONTAINERS)", () => {
  it("is hookbox not deciding, never the hook's invalid output: the tenant's on_failure applies", async () => {
    const edge = edgeApp({ config: `[[policy.PreToolUse]]\nname = "wide"\ncommand = "wide ${MAX_EVENT_CONTAINERS}"\n` });
    const event = { session_id: "s-1", hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "ls" } };
    // team-b: on_failure = block
    const b = DecisionSchema.parse(await (await edge.request("/v1/events", { ...post(event), token: TOKEN_B })).json());
    expect(b).toMatchObject({ decision: "block", reason: expect.stringMatching(/^hook wide answered past hookbox's bounds for an answer .*MAX_EVENT_CONTAINERS.*: the tenant's failure mode \(block\) applies$/), note: "hook wide was cut by output_shape; on_failure = block" });
    expect(b.hooks[0]).toMatchObject({ name: "wide", error: expect.stringMatching(/holds more than 65536 arrays and objects/) });
    // team-a: on_failure = allow — said, never silent
    const a = DecisionSchema.parse(await (await edge.request("/v1/events", post(event))).json());
    expect(a).toMatchObject({ decision: null, note: expect.stringMatching(/^hook wide answered past hookbox's bounds .*: it made no decision, and the tenant's failure mode \(allow\) applies$/) });
  });

  it("blocks from a hook whose failure blocks (fail_open = false), whatever the tenant's failure mode — as past max_output_bytes", async () => {
    const edge = edgeApp({ config: `[[policy.PreToolUse]]\nname = "wide"\nfail_open = false\ncommand = "wide ${MAX_EVENT_CONTAINERS}"\n` });
    const event = { session_id: "s-1", hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "ls" } };
    // team-a: on_failure = allow
    const a = DecisionSchema.parse(await (await edge.request("/v1/events", post(event))).json());
    expect(a).toMatchObject({ decision: "block", reason: expect.stringMatching(/^hook wide failed: output holds more than 65536 arrays and objects/) });
    expect(a.hooks[0]).toMatchObject({ name: "wide", decision: "block", rule: expect.stringMatching(/fail_open = false turns the failure into a block/) });
  });
});

describe("a hook's lone surrogate", () => {
  it("never reaches an agent's answer: a strict JSON parser (Codex's serde_json) would refuse the whole answer, block and all", async () => {
    const say = String.raw`say {"decision":"block","reason":"no \ud800 here","systemMessage":"half \udc00 a pair","hookSpecificOutput":{"additionalContext":"a whole pair: \ud83d\ude00"}}`;
    const edge = edgeApp({ config: `[[hooks.UserPromptSubmit]]\nname = "lone"\ncommand = '''${say}'''\n` });
    for (const path of ["/v1/events?format=codex", "/v1/hooks/codex/UserPromptSubmit"]) {
      const res = await edge.request(path, post({ session_id: "s-1", hook_event_name: "UserPromptSubmit", prompt: "hi" }));
      const text = await res.text();
      expect(text, path).not.toMatch(/\\u[dD][89a-fA-F]/);
      expect(text, path).toContain("no \ufffd here");
      expect(text, path).toContain("a whole pair: \u{1F600}");
      expect(JSON.parse(text), path).toMatchObject(path.startsWith("/v1/hooks") ? { decision: "block" } : { decision: "block", output: { decision: "block" } });
    }
  });

  it("is never made by hookbox's own cuts: a reason cut at MAX_HOOK_MESSAGE_CHARS mid-pair ends before the pair", async () => {
    // a policy hook that echoes a long prompt in its reason, an emoji straddling the cut
    const reason = `${"a".repeat(MAX_HOOK_MESSAGE_CHARS - 1)}\u{1F600}tail`;
    const edge = edgeApp({ config: `[[policy.UserPromptSubmit]]\nname = "long"\ncommand = '''say ${JSON.stringify({ decision: "block", reason })}'''\n` });
    for (const path of ["/v1/events?format=codex", "/v1/hooks/codex/UserPromptSubmit"]) {
      const res = await edge.request(path, post({ session_id: "s-1", hook_event_name: "UserPromptSubmit", prompt: "hi" }));
      const text = await res.text();
      expect(text, path).not.toMatch(/\\u[dD][89a-fA-F]/);
      expect(Buffer.from(text).toString() === text, path).toBe(true); // a lone surrogate does not survive UTF-8
      expect(text, path).toContain(`${"a".repeat(100)}…`);
      expect(JSON.parse(text), path).toMatchObject(path.startsWith("/v1/hooks") ? { decision: "block" } : { decision: "block", output: { decision: "block" } });
    }
  });
});

describe.concurrent("admission and shutdown", () => {
  it("takes the event a body too large names at its top level only: a hook_event_name inside a tool's arguments, ahead of it, names nothing", async () => {
    const edge = edgeApp({ onFailureB: '{ PreToolUse = "block" }', maxEventBytes: 4096 });
    const body = JSON.stringify({ session_id: "s", tool_input: { hook_event_name: "Stop", content: "x".repeat(8192) }, hook_event_name: "PreToolUse", tool_name: "Write" });
    const res = await edge.request("/v1/hooks/claude", { method: "POST", body, headers: { "content-type": "application/json" }, token: TOKEN_B });
    expect(await res.json()).toMatchObject({ decision: "block", reason: expect.stringMatching(/too_large/) });
    expect(eventNamedIn('{"a":{"hook_event_name":"Stop"},"b":"\\"hook_event_name\\":\\"Stop\\"","hookEventName" : "preToolUse"')).toBe("preToolUse");
    expect(eventNamedIn('{"hook_event_name":"PreToolUse","x":1,"hook_event_name":"Stop"}')).toBeUndefined();
    expect(eventNamedIn('["hook_event_name",{"hook_event_name":"Stop"}]')).toBeUndefined();
    expect(eventNamedIn('{"hook_event_name":"Pre')).toBeUndefined();
    // read off tokens, never a recursive walk: a head deep in brackets names what came before them
    expect(eventNamedIn('{"hook_event_name":"Stop","a":' + "[".repeat(60_000))).toBe("Stop");
    // nothing past where the text stops being JSON
    expect(eventNamedIn('{"a":1 /* c */, "hook_event_name":"Stop"}')).toBeUndefined();
    expect(eventNamedIn('{"hook\\u005fevent_name":"Stop"}')).toBe("Stop");
  });

  it("says a block at TaskCreated in the JSON a native hook answers (an HTTP hook has no exit 2), the failure mode's too", async () => {
    const edge = edgeApp({ onFailureB: '{ TaskCreated = "block" }' });
    const res = await edge.request("/v1/hooks/claude/TaskCreated", { method: "POST", headers: { "content-type": "application/json" }, body: "{not json", token: TOKEN_B });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ decision: "block", reason: expect.stringMatching(/hookbox could not decide \(bad_json\)/) });
  });

  it("answers a native hook on a URL naming no known event with the strictest failure mode (the event may be any), unless the tenant says what \"*\" is", async () => {
    const explicit = edgeApp({ onFailureB: '{ PreToolUse = "block", "*" = "allow" }' });
    const told = await explicit.request("/v1/hooks/claude/pretooluse", { ...post(rmEvent), token: TOKEN_B });
    expect(told.headers.get("hookbox-on-failure")).toBe("allow");
    const edge = edgeApp({ onFailureB: '{ PreToolUse = "block" }' });
    const native = await edge.request("/v1/hooks/claude/pretooluse", { ...post(rmEvent), token: TOKEN_B });
    expect(native.status).toBe(200);
    expect(native.headers.get("hookbox-on-failure")).toBe("block");
    expect(await native.json()).toMatchObject({ decision: "block", reason: expect.stringMatching(/unknown_event/) });
  });

  it("answers 503 with Retry-After while draining", async () => {
    const edge = edgeApp();
    edge.drain();
    const res = await edge.request("/v1/events", post(rmEvent));
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("5");
    expect(await errorOf(res)).toMatchObject({ code: "shutting_down" });
  });

  it("answers a native endpoint whose path names no event, for a body refused once read, for the event its body names: at a stop, never the block that keeps the agent going", async () => {
    const edge = edgeApp();
    // team-b: on_failure = block. A lone surrogate (JSON.stringify's escape of one, in Claude's last message) and a field of the wrong type.
    for (const refused of [`{"session_id":"b","hook_event_name":"Stop","last_assistant_message":"done \\ud800"}`, `{"session_id":"b","hook_event_name":"Stop","prompt":7}`]) {
      const stop = await edge.request("/v1/hooks/claude", { ...post(refused), token: TOKEN_B });
      expect(stop.status, refused).toBe(200);
      expect(await stop.json(), refused).toEqual({});
      const pre = await edge.request("/v1/hooks/claude", { ...post(refused.replace('"Stop"', '"PreToolUse"')), token: TOKEN_B });
      expect(await pre.json(), refused).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
    }
    // Read two ways (a key given twice), its event is in doubt: the strictest answer, whatever it names.
    const twice = await edge.request("/v1/hooks/claude", { ...post(`{"session_id":"b","hook_event_name":"Stop","x":1,"x":2}`), token: TOKEN_B });
    expect(await twice.json()).toMatchObject({ decision: "block" });
    // Two names of two events: in doubt too.
    const two = await edge.request("/v1/hooks/claude", { ...post(`{"session_id":"b","hook_event_name":"Stop","hookEventName":"PreToolUse","prompt":7}`), token: TOKEN_B });
    expect(await two.json()).toMatchObject({ decision: "block" });
  });

  it("answers a native endpoint whose path names no event, while draining, for the event its body names: at a stop, never the block that keeps the agent going", async () => {
    const edge = edgeApp();
    edge.drain();
    // team-b: on_failure = block
    const stop = await edge.request("/v1/hooks/claude", { ...post({ session_id: "b", hook_event_name: "Stop" }), token: TOKEN_B });
    expect(stop.status).toBe(200);
    expect(await stop.json()).toEqual({});
    const pre = await edge.request("/v1/hooks/claude", { ...post({ ...rmEvent, hook_event_name: "PreToolUse" }), token: TOKEN_B });
    expect(await pre.json()).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
  });
});

describe("a GET or HEAD that carries a body", () => {
  it.each([
    ["GET /healthz", "GET", "/healthz", { "content-length": "100000000" }],
    ["GET /v1/sessions", "GET", "/v1/sessions", { "content-length": "1" }],
    ["HEAD /readyz", "HEAD", "/readyz", { "content-length": "5" }],
  ])("is refused with 400, its connection closed, before any route or token is looked at: %s", async (_what, method, path, headers) => {
    const edge = edgeApp({ metricsRenderEveryMs: 0 });
    const res = await edge.request(path, { method, headers, token: null });
    expect(res.status).toBe(400);
    expect(res.headers.get("connection")).toBe("close");
    if (method === "GET") expect(await errorOf(res)).toEqual({ code: "bad_request", message: `a ${method} request carries no body (it sent a Content-Length that is not 0)` });
    expect(await (await edge.request("/metrics")).text()).toMatch(/^hookbox_rejected_total\{status="400"\} 1$/m);
    edge.metrics.close();
  });
  it("takes one whose Content-Length is 0 (00 too), and one chunked — a proxy may send an empty body so: the service gives it GET_BODY_DRAIN_MS after the answer", async () => {
    const edge = edgeApp();
    expect((await edge.request("/healthz", { headers: { "content-length": "0" }, token: null })).status).toBe(200);
    expect((await edge.request("/healthz", { headers: { "content-length": "00" }, token: null })).status).toBe(200);
    expect((await edge.request("/v1/sessions", { headers: { "content-length": " 0" } })).status).toBe(200);
    expect((await edge.request("/readyz", { method: "HEAD", headers: { "transfer-encoding": "chunked" }, token: null })).status).toBe(200);
    edge.metrics.close();
  });
});

describe("a body read to learn its event while the service stops", () => {
  it(`is read no further than SNIFF_BYTES (${SNIFF_BYTES}): a Stop named within them is let end, one whose name ends past them gets the block of an event not known`, async () => {
    const edge = edgeApp();
    edge.drain();
    // the body, `extra` bytes longer than SNIFF_BYTES, its name at its end
    const body = (extra: number) => {
      const around = JSON.stringify({ pad: "", hook_event_name: "Stop" }).length;
      return JSON.stringify({ pad: "x".repeat(SNIFF_BYTES - around + extra), hook_event_name: "Stop" });
    };
    expect(Buffer.byteLength(body(0))).toBe(SNIFF_BYTES);
    const answer = async (text: string) => (await edge.request("/v1/hooks/claude", { ...post(text), token: TOKEN_B })).json();
    expect(await answer(body(0))).toEqual({});
    // only the closing brace past them: named; the name's closing quote past them too: not
    expect(await answer(body(1))).toEqual({});
    expect(await answer(body(2))).toMatchObject({ decision: "block" });
  });
});

// Each on an app of its own: they run at once.
describe.concurrent("what a tenant's readers hold", () => {
  it(`live followers answer HEAD with the headers alone, holding nothing; ${LIVE_FOLLOWERS_PER_TENANT} may follow per tenant, one more is 429`, async ({ expect }) => {
    const edge = edgeApp();
    // HEADs hold no follower: hono drops a HEAD's body unread, and a stream would wait on it for ever.
    for (let i = 0; i < LIVE_FOLLOWERS_PER_TENANT + 4; i++) {
      const head = await edge.request("/v1/events/live", { method: "HEAD" });
      expect(head.status).toBe(200);
      expect(head.headers.get("content-type")).toMatch(/ndjson/);
    }
    const open: ReadableStreamDefaultReader<Uint8Array>[] = [];
    for (let i = 0; i < LIVE_FOLLOWERS_PER_TENANT; i++) {
      const res = await edge.request("/v1/events/live");
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      expect(new TextDecoder().decode((await reader.read()).value)).toMatch(/"hello"/);
      open.push(reader);
    }
    const more = await edge.request("/v1/events/live");
    expect(more.status).toBe(429);
    expect(more.headers.get("retry-after")).toBe("5");
    expect(await errorOf(more)).toMatchObject({ code: "overloaded", message: expect.stringMatching(/live followers/) });
    // Another tenant's followers are its own.
    const b = await edge.request("/v1/events/live", { token: TOKEN_B });
    expect(b.status).toBe(200);
    await b.body!.cancel();
    // One closed, one more may follow.
    await open.pop()!.cancel();
    await expect.poll(async () => {
      const again = await edge.request("/v1/events/live");
      await again.body?.cancel();
      return again.status;
    }).toBe(200);
    for (const reader of open) await reader.cancel();
  });
});

describe("uploads", () => {
  it("tells a gzip upload by its first two bytes even when they arrive in two chunks", async () => {
    const edge = edgeApp();
    const tar = await tarOf([{ name: "README.md", content: "hi" }], { gzip: true });
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(tar.subarray(0, 1));
        controller.enqueue(tar.subarray(1));
        controller.close();
      },
    });
    const put = await edge.request("/v1/workspaces/split", { method: "PUT", body, duplex: "half" } as RequestInit);
    expect(put.status, await put.clone().text()).toBe(200);
    expect(WorkspaceInfoSchema.parse(await put.json())).toMatchObject({ id: "split", files: 1 });
  });

  /** `p`'s value, or "pending" when it has not settled within `ms`. */
  const within = <T>(ms: number, p: Promise<T>) => Promise.race([p, new Promise<"pending">((resolve) => setTimeout(resolve, ms, "pending"))]);

  it.each<[string, string, Buffer]>([
    ["a file (1536 bytes, plain)", "a.txt", Buffer.concat([badSizeMember("a.txt"), TAR_END])],
    ["a file, gzip", "a.txt", gzipSync(Buffer.concat([badSizeMember("a.txt", "0", 0xfe), TAR_END]))],
    ["a symbolic link", "l", Buffer.concat([badSizeMember("l", "2", 0x81, "a.txt"), TAR_END])],
    ["a file after a whole one", "b.txt", Buffer.concat([rawMember("ok.txt", "0", Buffer.from("hi\n")), badSizeMember("b.txt", "0", 0xc0), TAR_END])],
  ])(`refuses %s whose size field cannot be read with 400 naming it, at once, ${TENANT_UPLOADS_IN_FLIGHT + 1} times over: no upload place held`, async (_what, entry, archive) => {
    // tar-stream reads a base-256 size opening 0x81–0xFE as null and took it for an entry that never
    // ends: the upload, all its bytes in, was never answered and held one of the tenant's places for good.
    const edge = edgeApp();
    for (let i = 0; i <= TENANT_UPLOADS_IN_FLIGHT; i++) {
      const res = await within(2_000, edge.request(`/v1/workspaces/bad-size-${i}`, { method: "PUT", body: new Uint8Array(archive) }));
      if (res === "pending") expect.fail(`upload ${i} not answered within 2 s`);
      expect(res.status).toBe(400);
      expect(await errorOf(res)).toMatchObject({ code: "archive_refused", message: `archive entry ${JSON.stringify(entry)}: invalid size field` });
      expect((await edge.request(`/v1/workspaces/bad-size-${i}`)).status).toBe(404);
    }
    const ok = await edge.request("/v1/workspaces/whole", { method: "PUT", body: new Uint8Array(await tarOf([{ name: "a.txt", content: "a" }])) });
    expect(ok.status, await ok.clone().text()).toBe(200);
  });
});

describe("sessions", () => {
  it("are listed by their session_id as traces and the audit log keep it — redacted and capped, once an event — and find their events by it", async () => {
    const audit = join(mkdtempSync(join(tmpdir(), "hookbox-edge-audit-")), "audit.jsonl");
    const edge = edgeApp({ auditFile: audit });
    const secretId = "sk-abcdefghijklmnopqrstuvwx";
    const longId = `s-${"x".repeat(3000)}`;
    // an assignment every ten characters, past the cap: the costliest text to redact
    const chainId = `password=hunter2 ${"password=1".repeat(200)}`;
    for (const session_id of [secretId, longId, chainId]) expect((await edge.request("/v1/events", post({ ...rmEvent, session_id }))).status).toBe(200);
    const listed = SessionsSchema.parse(await (await edge.request("/v1/sessions")).json()).sessions.map((s) => s.session_id);
    expect(listed).toHaveLength(3);
    expect(listed.join("\n")).not.toContain(secretId);
    expect(listed.join("\n")).not.toContain("hunter2");
    expect(listed).toContain("[redacted]");
    expect(listed.find((id) => id.startsWith("password="))).toMatch(/^password=\[redacted\] password=\[redacted\].*…\[truncated \d+ bytes\]$/);
    const audited = readFileSync(audit, "utf8").trim().split("\n").map((l) => (JSON.parse(l) as { session_id: string }).session_id);
    expect(audited.toSorted()).toEqual(listed.toSorted());
    for (const id of listed) {
      const found = TraceListSchema.parse(await (await edge.request(`/v1/events?session_id=${encodeURIComponent(id)}`)).json()).events;
      expect(found.map((e) => e.session_id)).toEqual([id]);
    }
  });
  it(`are listed all, up to MAX_SESSIONS_PER_TENANT (${MAX_SESSIONS_PER_TENANT}), the most recently heard first; the least recently heard go`, () => {
    const sessions = new Sessions();
    for (let i = 0; i < MAX_SESSIONS_PER_TENANT + 100; i++) sessions.heard("team-a", `sess-${i}`, "PreToolUse", "cosh");
    const listed = sessions.list("team-a");
    expect(listed).toHaveLength(MAX_SESSIONS_PER_TENANT);
    expect(listed[0]!.session_id).toBe(`sess-${MAX_SESSIONS_PER_TENANT + 99}`);
    expect(listed.at(-1)!.session_id).toBe("sess-100");
  });
  it("take a canary as heard from, never as the event it last sent or its dialect", () => {
    const sessions = new Sessions();
    sessions.heard("team-a", "sess-1", "PreToolUse", "claude");
    sessions.heard("team-a", "sess-1", "Stop", "copilot", true);
    expect(sessions.list("team-a")[0]).toMatchObject({ session_id: "sess-1", last_event: "PreToolUse", format: "claude", events: 1, last_canary: expect.any(String) });
  });
});

describe("a trace's bounds", () => {
  it(`shows a hook's first ENV_FIELDS_KEPT (${ENV_FIELDS_KEPT}) env entries and counts the rest in one line`, async () => {
    const env = (n: number) => Array.from({ length: n }, (_, i) => `VAR_${String(i).padStart(2, "0")} = "v"`).join(", ");
    const edge = edgeApp({ config: `[[hooks.PreToolUse]]\nname = "at"\ncommand = "say {}"\nenv = { ${env(ENV_FIELDS_KEPT)} }\n\n[[hooks.PreToolUse]]\nname = "past"\ncommand = "say {}"\nenv = { ${env(ENV_FIELDS_KEPT + 1)} }\n` });
    const { event_id } = DecisionSchema.parse(await (await edge.request("/v1/events", post(rmEvent))).json());
    const trace = TraceSchema.parse(await (await edge.request(`/v1/events/${event_id}`)).json());
    const [at, past] = ["at", "past"].map((name) => trace.hooks.find((h) => h.name === name)!.env as Record<string, string>);
    expect(Object.keys(at!)).toHaveLength(ENV_FIELDS_KEPT);
    expect(at!["…"]).toBeUndefined();
    // an operator's hook: names only, every tenant sees them
    expect(Object.values(at!).every((v) => v === "[hidden]")).toBe(true);
    expect(Object.keys(past!)).toHaveLength(ENV_FIELDS_KEPT + 1);
    expect(past!["…"]).toBe("1 more not shown");
    expect(past!.VAR_16).toBeUndefined();
  });
});

describe("tenant scoping", () => {
  const edge = edgeApp();
  it("keeps workspaces, traces and sessions to their tenant", async () => {
    const tar = await tarOf([{ name: "README.md", content: "hi" }], { gzip: true });
    const put = await edge.request("/v1/workspaces/repo", { method: "PUT", body: tar });
    expect(put.status).toBe(200);
    expect(WorkspaceInfoSchema.parse(await put.json())).toMatchObject({ id: "repo", files: 1 });
    expect((await edge.request("/v1/workspaces/repo", { token: TOKEN_B })).status).toBe(404);
    // (run without it, its policy hooks having nothing to say: recorded as team-b's own event, answered 404)
    expect((await edge.request("/v1/events?workspace=repo", { ...post({ ...rmEvent, session_id: "s-b" }), token: TOKEN_B })).status).toBe(404);
    expect((await edge.request("/v1/workspaces/repo", { method: "DELETE", token: TOKEN_B })).status).toBe(404);

    const { event_id } = DecisionSchema.parse(await (await edge.request("/v1/events", { ...post(rmEvent), headers: { "hookbox-workspace": "repo" } })).json());
    expect(TraceSchema.parse(await (await edge.request(`/v1/events/${event_id}`)).json())).toMatchObject({ event_id, workspace: "repo", tenant: "team-a" });
    expect((await edge.request(`/v1/events/${event_id}`, { token: TOKEN_B })).status).toBe(404);
    expect(TraceListSchema.parse(await (await edge.request("/v1/events?decision=block")).json()).events.map((e) => e.event_id)).toContain(event_id);
    expect(TraceListSchema.parse(await (await edge.request("/v1/events", { token: TOKEN_B })).json()).events.map((e) => e.event_id)).not.toContain(event_id);
    expect(SessionsSchema.parse(await (await edge.request("/v1/sessions")).json()).sessions.map((s) => s.session_id)).toContain("s-1");
    expect(SessionsSchema.parse(await (await edge.request("/v1/sessions", { token: TOKEN_B })).json()).sessions.map((s) => s.session_id)).toEqual(["s-b"]);
    expect((await edge.request("/v1/workspaces/repo", { method: "DELETE" })).status).toBe(204);
  });

  it("answers a trace in which no key is said twice: a strict reader (Go's encoding/json, serde) refuses one whose hooks are a count and then a list", async () => {
    const { event_id } = DecisionSchema.parse(await (await edge.request("/v1/events", post(rmEvent))).json());
    const text = await (await edge.request(`/v1/events/${event_id}`)).text();
    expect(duplicateKey(text)).toBeUndefined();
    expect(TraceSchema.parse(JSON.parse(text)).hooks).toHaveLength(1);
  });

  it("pages through decisions of the same millisecond without skipping one or listing one twice", async () => {
    const paged = edgeApp();
    // One millisecond for all nine, a recent one: the listing's default window counts back from now.
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() - 60_000 });
    const ids: string[] = [];
    try {
      for (let i = 0; i < 9; i++) ids.push(DecisionSchema.parse(await (await paged.request("/v1/events", post({ session_id: `s-${i}`, hook_event_name: "SessionEnd" }))).json()).event_id);
    } finally {
      vi.useRealTimers();
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = TraceListSchema.parse(await (await paged.request(`/v1/events?limit=2${cursor ? `&cursor=${cursor}` : ""}`)).json());
      seen.push(...page.events.map((e) => e.event_id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
    const bad = await paged.request("/v1/events?cursor=bm9wZQ");
    expect(bad.status).toBe(400);
    expect(await errorOf(bad)).toMatchObject({ field: "cursor" });
  });

  it.each([
    ["decision=maybe", "decision"],
    ["limit=ten", "limit"],
    ["since=yesterday", "since"],
  ])("refuses the trace query %s naming %s", async (query, field) => {
    const res = await edge.request(`/v1/events?${query}`);
    expect(res.status).toBe(400);
    expect(await errorOf(res)).toMatchObject({ code: "bad_request", field });
  });

  it("refuses an upload over the limit with 413", async () => {
    const small = edgeApp({ maxUploadBytes: 1024 });
    const res = await small.request("/v1/workspaces/big", { method: "PUT", body: Buffer.alloc(4096), headers: { "content-length": "4096" } });
    expect(res.status).toBe(413);
    expect(await errorOf(res)).toMatchObject({ code: "too_large" });
  });
});

describe("/metrics", () => {
  it("is Prometheus text with today's names, process and Node metrics, and event-loop lag", async () => {
    const edge = edgeApp();
    await edge.request("/v1/events", post(rmEvent));
    await edge.request("/v1/events", { ...post(rmEvent), token: null });
    expect((await edge.request("/metrics", { token: null })).status).toBe(401);
    const res = await edge.request("/metrics");
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const families = new Map(parsePrometheusTextFormat(await res.text()).map((f) => [f.name, f]));
    expect(Object.fromEntries(["hookbox_events_total", "hookbox_hooks_total", "hookbox_rejected_total", "hookbox_log_lines_dropped_total", "hookbox_event_duration_seconds", "hookbox_hook_duration_seconds",
      "hookbox_queue_depth", "hookbox_events_running", "hookbox_containers_running", "hookbox_pool_ready", "hookbox_event_loop_lag_seconds",
      "process_cpu_user_seconds_total", "process_resident_memory_bytes", "nodejs_heap_size_used_bytes", "nodejs_eventloop_lag_seconds"].map((n) => [n, families.get(n)?.type])))
      .toEqual({
        hookbox_events_total: "COUNTER", hookbox_hooks_total: "COUNTER", hookbox_rejected_total: "COUNTER", hookbox_log_lines_dropped_total: "COUNTER",
        hookbox_event_duration_seconds: "HISTOGRAM", hookbox_hook_duration_seconds: "HISTOGRAM",
        hookbox_queue_depth: "GAUGE", hookbox_events_running: "GAUGE", hookbox_containers_running: "GAUGE", hookbox_pool_ready: "GAUGE",
        hookbox_event_loop_lag_seconds: "HISTOGRAM",
        process_cpu_user_seconds_total: "COUNTER", process_resident_memory_bytes: "GAUGE", nodejs_heap_size_used_bytes: "GAUGE", nodejs_eventloop_lag_seconds: "GAUGE",
      });
    expect(families.get("hookbox_events_total")!.metrics).toEqual([{ labels: { event: "PreToolUse", decision: "block" }, value: "1" }]);
    expect(families.get("hookbox_hooks_total")!.metrics).toEqual([{ labels: { source: "service", sandbox: "container", decision: "block", outcome: "exited" }, value: "1" }]);
    expect(families.get("hookbox_rejected_total")!.metrics).toContainEqual({ labels: { status: "401" }, value: "2" });
    expect(families.get("hookbox_hook_duration_seconds")!.metrics[0]!.buckets).toMatchObject({ "0.005": "1", "+Inf": "1" });
    edge.metrics.close();
  });

  it("needs no token with public_metrics", async () => {
    expect((await edgeApp({ publicMetrics: true }).request("/metrics", { token: null })).status).toBe(200);
  });

  it("takes the operator's metrics token only, where one is set: no tenant reads the others' figures", async () => {
    const edge = edgeApp({ server: `metrics_token_sha256 = "${createHash("sha256").update("scraper-token").digest("hex")}"` });
    expect((await edge.request("/metrics", { token: "scraper-token" })).status).toBe(200);
    for (const token of [null, undefined, TOKEN_B, "scraper-token2"]) expect((await edge.request("/metrics", { token })).status, String(token)).toBe(401);
    // and it is no tenant's: it reads nothing else
    expect((await edge.request("/v1/events", { token: "scraper-token" })).status).toBe(401);
    edge.metrics.close();
  });
});

describe("what one request may cost and answer", () => {
  it.each([
    // Copilot CLI's permissionRequest reads `behavior`; its agentStop and VS Code's prompt and post-tool events `decision: "block"`.
    ["copilot", { permissionDecision: "deny", behavior: "deny", decision: "block" }],
    // Cursor's beforeSubmitPrompt reads `continue: false`, its permission hooks `permission`.
    ["cursor", { permission: "deny", continue: false }],
  ])("answers a %s native hook whose body cannot be read, on a URL without its event, with a block each of its blocking events reads", async (format, block) => {
    const edge = edgeApp({ maxEventBytes: 1024 });
    // (a body too large whose head names its event is answered for that event: below)
    for (const body of ["{not json", JSON.stringify({ pad: "x".repeat(2048) })]) {
      const res = await edge.request(`/v1/hooks/${format}`, { ...post(body), token: TOKEN_B });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject(block);
    }
  });

  it("refuses an event body holding a lone surrogate escape (400, the failure mode): a hook's strict JSON reader refuses it and fails open; a pair of escapes is one character", async () => {
    const edge = edgeApp();
    // JSON.stringify writes a lone surrogate as the escape \ud800, as an agent's would from a tool call that held one.
    for (const command of ["rm -rf / \ud800", "rm -rf / \udfff x"]) {
      const res = await edge.request("/v1/events", { ...post({ ...rmEvent, tool_input: { command } }), token: TOKEN_B });
      expect(res.status, JSON.stringify(command)).toBe(400);
      expect(res.headers.get("hookbox-on-failure")).toBe("block");
      expect(await errorOf(res)).toMatchObject({ code: "bad_json", field: "body" });
    }
    const key = await edge.request("/v1/events", { ...post({ ...rmEvent, tool_input: { ["\ud800"]: 1 } }), token: TOKEN_B });
    expect(key.status).toBe(400);
    // Copilot's toolArgs, JSON in a string: the escape in the JSON a hook parses from it.
    const args = await edge.request("/v1/events", { ...post({ sessionId: "s", hookEventName: "preToolUse", toolName: "bash", toolArgs: JSON.stringify({ command: "rm -rf / \ud800" }) }), token: TOKEN_B });
    expect(args.status).toBe(400);
    expect(await errorOf(args)).toMatchObject({ code: "bad_field", field: "toolArgs" });
    // A literal backslash before "ud800" is no escape; an escaped pair is one character (😀).
    const pair = await edge.request("/v1/events", { ...post(`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"shell","tool_input":{"command":"rm -rf / \\\\ud800 \\ud83d\\ude00"}}`), token: TOKEN_B });
    expect(pair.status).toBe(200);
  });

  it("refuses an event body that is not UTF-8 (400, the failure mode; a native endpoint's block): a hook of its dialect reads its bytes, which a strict JSON reader refuses", async () => {
    const edge = edgeApp();
    const json = JSON.stringify({ ...rmEvent, tool_input: { command: "rm -rf / X" } });
    const bytes = Buffer.from(json);
    bytes[json.indexOf("X")] = 0xff;
    const res = await edge.request("/v1/events", { method: "POST", body: bytes, token: TOKEN_B });
    expect(res.status).toBe(400);
    expect(res.headers.get("hookbox-on-failure")).toBe("block");
    expect(await errorOf(res)).toMatchObject({ code: "bad_json", field: "body", message: expect.stringMatching(/^the body is not UTF-8 \(at byte offset \d+, line 1\)/) });
    const native = await edge.request("/v1/hooks/claude/PreToolUse", { method: "POST", body: bytes, token: TOKEN_B });
    expect(native.status).toBe(200);
    expect(await native.json()).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
    expect(edge.ran).toEqual([]);
  });

  it.each(["/V1/hooks/claude/PreToolUse", "//v1/hooks/claude/PreToolUse"])("answers %s (a base URL in capitals, or ending in a slash) in the agent's JSON once the token is known, never a 404", async (path) => {
    const res = await edgeApp().request(path, { ...post(rmEvent), token: TOKEN_B });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny" } });
    // Without a valid token: a block all the same (the hook line is wrong), and no failure mode told.
    const refused = await edgeApp().request(path, { ...post(rmEvent), token: "not-a-token" });
    expect(refused.status).toBe(200);
    expect(refused.headers.get("hookbox-on-failure")).toBeNull();
    expect(await refused.json()).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny", permissionDecisionReason: expect.stringMatching(/^hookbox refused the token/) } });
  });
});
