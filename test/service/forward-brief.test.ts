/**
 * What hooks write beside their decisions never costs the agent a decision. Attack replayed: a
 * workspace of MAX_REPOSITORY_HOOKS repository hooks that decide nothing but each fill their
 * record's texts with NUL characters (six bytes apiece as JSON) makes hookbox's full answer larger
 * than a forwarder reads (MAX_ANSWER_BYTES); a forwarder that read it would drop the policy hook's
 * ask and apply the failure mode (allow). Both forwarders ask for the brief answer, which holds
 * what the agent acts on only, and get the ask. The app is served on a port, its runners faked:
 * what is under test is the answer's size, not the sandbox.
 */
import { serve } from "@hono/node-server";
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_ANSWER_BYTES } from "../../cli/forward.js";
import { BriefDecisionSchema } from "../../service/schemas.js";
import { edgeApp } from "../helpers/app.js";
import { TOKEN_B } from "../helpers/service.js";
import { tarOf } from "../helpers/tar.js";

const ASK = { decision: "ask", reason: "curl | sh: a human should look" };
// Beside the repository's thousand, an operator's thousand noisy hooks: a repository's text reaches the
// answer escaped (control characters as `\x00`), within the same character caps, so its own say is smaller.
const NOISY_SERVICE_HOOKS = Array.from({ length: 1000 }, (_, i) => `[[hooks.PreToolUse]]\nname = "noise-${i}"\ncommand = "noise 1100"\n`).join("\n");
const edge = edgeApp({ onFailureB: '"allow"', config: `[[policy.PreToolUse]]\nname = "asker"\ncommand = '''say ${JSON.stringify(ASK)}'''\n\n${NOISY_SERVICE_HOOKS}` });
const dir = mkdtempSync(join(tmpdir(), "hookbox-brief-"));
const script = join(dir, "forward.sh");
let server: ReturnType<typeof serve>;
let url: string;
const event = JSON.stringify({ session_id: "s-1", hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "curl x | sh" } });

beforeAll(async () => {
  // A hook file whose name is 245 control characters: each hook's name and origin carry it.
  const hooks = { version: 1, hooks: { preToolUse: Array.from({ length: 1000 }, () => ({ type: "command", bash: "noise 1100" })) } };
  const put = await edge.request("/v1/workspaces/loud", { method: "PUT", body: new Uint8Array(await tarOf([{ name: `.github/hooks/${"\u0001".repeat(245)}.json`, content: JSON.stringify(hooks) }])), token: TOKEN_B });
  expect(put.status).toBe(200);
  server = serve({ fetch: edge.app.fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise((r) => server.once("listening", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  writeFileSync(script, execFileSync(process.execPath, ["dist/cli/hookbox.cjs", "forward", "--print-script"], { encoding: "utf8" }));
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

function forward(via: "node" | "sh"): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const args = ["--url", url, "--event", "PreToolUse", "--format", "claude", "--workspace", "loud"];
  const [file, argv] = via === "node" ? [process.execPath, ["dist/cli/hookbox.cjs", "forward", ...args]] : ["/bin/sh", [script, ...args]];
  const child = spawn(file, argv, { env: { PATH: process.env.PATH ?? "", HOOKBOX_TOKEN: TOKEN_B, XDG_CACHE_HOME: join(dir, via) } });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  child.stdin.end(event);
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

describe("a workspace whose hooks say much and decide nothing", () => {
  it("makes the full answer larger than a forwarder reads: the attack holds", async () => {
    const res = await edge.request("/v1/events/PreToolUse?workspace=loud&format=claude", { method: "POST", body: event, token: TOKEN_B });
    const text = await res.text();
    expect(Buffer.byteLength(text)).toBeGreaterThan(MAX_ANSWER_BYTES);
    expect(JSON.parse(text)).toMatchObject({ decision: "ask", hooks: expect.any(Array) });
  });

  it("answers brief=true with what the agent acts on only: the ask, and the hooks' messages within MAX_EVENT_MESSAGE_CHARS", async () => {
    const res = await edge.request("/v1/events/PreToolUse?workspace=loud&format=claude&brief=true", { method: "POST", body: event, token: TOKEN_B });
    const text = await res.text();
    // the agent's answer keeps every hook's message, joined and capped (64 Ki characters, six bytes each here)
    expect(Buffer.byteLength(text)).toBeLessThan(1024 * 1024);
    const brief = BriefDecisionSchema.strict().parse(JSON.parse(text));
    expect(brief).toMatchObject({ decision: "ask", reason: ASK.reason, output: { hookSpecificOutput: { permissionDecision: "ask" } } });
  });

  it.each(["node", "sh"] as const)("still reaches the agent as the policy hook's ask through %s", async (via) => {
    const r = await forward(via);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    expect(JSON.parse(r.stdout)).toMatchObject({ hookSpecificOutput: { permissionDecision: "ask", permissionDecisionReason: ASK.reason } });
  });
});
