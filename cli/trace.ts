/**
 * @module `hookbox trace EVENT_ID` prints one event's trace as a tree; `hookbox tail` follows
 * decisions live. Clients of GET /v1/events/{id} and /v1/events/live. Everything a hook or an agent
 * could have written passes through terminal.ts before it is printed.
 */
import { parseArgs } from "node:util";
import { block, oneLine as o, safeJson, shownUrl, withoutUserinfo } from "./terminal.js";

interface Hook {
  name: string; source: string; sandbox: string; format: string; warm: boolean; decision: string | null; effective: boolean;
  rule: string; outcome: string; exit_code: number | null; offset_ms: number; start_ms: number; duration_ms: number; remove_ms: number | null;
  error: string | null; stdin: string; stdout: string; stderr: string; env: Record<string, string>;
}
interface Trace {
  event_id: string; event: string; time: string; decision: string | null; reason: string | null; duration_ms: number; queued_ms: number;
  tenant: string; session_id: string | null; tool_name: string | null; workspace: string | null; blocked_by: string | null; hooks: Hook[];
  /** what the agent was answered when that is not `decision` (its deadline came first, or the event expired waiting) */
  answered?: { decision: string | null; why: string } | null;
}

/**
 * The decision the agent got: the record's, unless its deadline came first or the event expired
 * waiting — then the answer that went out (a block the hooks gave after it stopped nothing).
 */
const gotOf = (t: Pick<Trace, "decision" | "answered">) => (t.answered ? t.answered.decision : t.decision);

/** A field the server says is a number, shown as one line whatever it holds (a hostile server's string). */
const n = (v: unknown) => o(String(v));

const options = { url: { type: "string" as const }, token: { type: "string" as const } };
const base = (v: { url?: string }, env: NodeJS.ProcessEnv) => (v.url ?? env.HOOKBOX_URL ?? "http://127.0.0.1:8080").replace(/\/+$/, "");
const auth = (v: { token?: string }, env: NodeJS.ProcessEnv) => ({ authorization: `Bearer ${v.token ?? env.HOOKBOX_TOKEN ?? ""}` });

export function renderTrace(t: Trace): string {
  const got = gotOf(t);
  const out = [`${o(t.event_id)}  ${o(t.event)}  decision: ${o(got ?? "pass-through")}${t.reason ? `  (${o(t.reason)})` : ""}  ${n(t.duration_ms)} ms${t.queued_ms ? ` (queued ${n(t.queued_ms)} ms)` : ""}`];
  if (t.answered) out.push(`  answered ${o(got ?? "pass-through")}: ${o(t.answered.why)}${got !== t.decision ? `; the hooks decided ${o(t.decision ?? "pass-through")}` : ""}`);
  out.push(`  ${o(t.time)}  tenant ${o(t.tenant)}${t.session_id ? `  session ${o(t.session_id)}` : ""}${t.tool_name ? `  tool ${o(t.tool_name)}` : ""}${t.workspace ? `  workspace ${o(t.workspace)}` : ""}`);
  t.hooks.forEach((h, i) => {
    const last = i === t.hooks.length - 1;
    const [branch, pipe] = last ? ["└─", "   "] : ["├─", "│  "];
    const mark = t.blocked_by === h.name && h.decision === "block" && h.effective ? (got === "block" ? "  ⟵ blocked here" : "  ⟵ blocked late") : "";
    out.push(`${branch} ${o(h.name)}  ${o(h.source)}/${o(h.sandbox)}${h.warm ? " (warm)" : ""}  ${o(h.format)}  ${o(h.outcome)}${h.exit_code !== null ? ` ${n(h.exit_code)}` : ""}  → ${o(h.decision ?? "none")}${h.effective ? "" : " (no effect)"}  +${n(h.offset_ms)} ms, ${n(h.start_ms)} ms set-up, ${n(h.duration_ms)} ms${h.remove_ms !== null ? `, ${n(h.remove_ms)} ms removal` : ""}${mark}`);
    out.push(`${pipe}   rule: ${o(h.rule)}`);
    if (h.error) out.push(`${pipe}   error: ${o(h.error)}`);
    for (const stream of ["stdin", "stdout", "stderr"] as const) {
      const text = block(h[stream].trimEnd());
      if (text) out.push(`${pipe}   ${stream}: ${text.split("\n").join(`\n${pipe}           `)}`);
    }
    if (Object.keys(h.env).length) out.push(`${pipe}   env: ${Object.entries(h.env).map(([k, v]) => `${o(k)}=${o(v)}`).join(" ")}`);
  });
  if (t.hooks.length === 0) out.push("└─ (no hook ran)");
  return `${block(out.join("\n"))}\n`; // each field escaped above; this pass guards the rest
}

export async function trace(argv: string[], env: NodeJS.ProcessEnv): Promise<{ stdout: string; stderr: string; code: number }> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { ...options, json: { type: "boolean", default: false } } });
  if (!positionals[0]) return { stdout: "", stderr: "usage: hookbox trace EVENT_ID [--url URL] [--token T] [--json]\n", code: 64 };
  const res = await fetch(`${base(values, env)}/v1/events/${encodeURIComponent(positionals[0])}`, { headers: auth(values, env) }).catch((e: Error) => e);
  if (res instanceof Error) return { stdout: "", stderr: `hookbox: cannot reach ${shownUrl(base(values, env))}: ${o(withoutUserinfo(res.message))}\n`, code: 69 };
  let body: Trace & { error?: { message: string } };
  try {
    body = (await res.json()) as Trace & { error?: { message: string } };
  } catch (err) {
    // the parser quotes what it read: what the server sent is shown escaped, never raw
    return { stdout: "", stderr: `hookbox: ${res.status}: the answer is not JSON: ${o((err as Error).message)}\n`, code: 65 };
  }
  if (!res.ok) return { stdout: "", stderr: `hookbox: ${res.status}: ${o(body.error?.message ?? "")}\n`, code: res.status === 404 ? 66 : 65 };
  return { stdout: values.json ? `${safeJson(body, 2)}\n` : renderTrace(body), stderr: "", code: 0 };
}

export async function tail(argv: string[], env: NodeJS.ProcessEnv, write: (s: string) => void): Promise<number> {
  const { values } = parseArgs({ args: argv, options });
  const res = await fetch(`${base(values, env)}/v1/events/live`, { headers: auth(values, env) }).catch((e: Error) => e);
  if (res instanceof Error || !res.ok || !res.body) {
    process.stderr.write(`hookbox: cannot follow ${shownUrl(base(values, env))}: ${res instanceof Error ? o(withoutUserinfo(res.message)) : res.status}\n`);
    return 69;
  }
  let buf = "";
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buf += Buffer.from(chunk).toString();
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (!line) continue;
      let msg: { type: string; event?: Omit<Trace, "hooks"> & { hooks: number } };
      try {
        msg = JSON.parse(line) as typeof msg;
      } catch (err) {
        process.stderr.write(`hookbox: a line of the stream is not JSON, left out: ${o((err as Error).message)}\n`);
        continue;
      }
      if (msg.type !== "decision" || !msg.event) continue;
      write(tailLine(msg.event));
    }
  }
  return 0;
}

/** One decision of `hookbox tail`: as the agent got it, the hooks' own beside it when they differ. */
export function tailLine(e: Omit<Trace, "hooks"> & { hooks: number }): string {
  const got = gotOf(e);
  const hooks = got !== e.decision ? ` (hooks: ${o(e.decision ?? "pass")})` : "";
  return block(`${o(e.time)}  ${o(e.event_id)}  ${o(e.event).padEnd(17)} ${o(got ?? "pass").padEnd(6)}${hooks} ${o(e.tool_name ?? "").padEnd(12)} ${n(e.hooks)} hook(s) ${n(e.duration_ms)} ms${e.reason ? `  ${o(e.reason)}` : ""}`) + "\n";
}
