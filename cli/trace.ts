/**
 * @module `hookbox trace EVENT_ID` prints one event's trace as a tree; `hookbox tail` follows
 * decisions live. Clients of GET /v1/events/{id} and /v1/events/live. Everything a hook or an agent
 * could have written passes through terminal.ts before it is printed.
 */
import { parseArgs } from "node:util";
import { AnswerTooLarge, MAX_CLIENT_ANSWER_BYTES, readText, TRACE_DEADLINE_MS } from "./read-answer.js";
import { block, oneLine as o, safeJson, sendableToken, shownUrl, TOKEN_NOT_SENDABLE, withoutUserinfo } from "./terminal.js";

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
const tokenOf = (v: { token?: string }, env: NodeJS.ProcessEnv) => v.token ?? env.HOOKBOX_TOKEN ?? "";
/** A token that no header can carry is never sent (fetch's error would repeat it): no token at all (401) is. */
const unsendable = (v: { token?: string }, env: NodeJS.ProcessEnv) => tokenOf(v, env) !== "" && !sendableToken(tokenOf(v, env));
const auth = (v: { token?: string }, env: NodeJS.ProcessEnv) => ({ authorization: `Bearer ${tokenOf(v, env)}` });

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

export async function trace(argv: string[], env: NodeJS.ProcessEnv, deadlineMs = TRACE_DEADLINE_MS): Promise<{ stdout: string; stderr: string; code: number }> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { ...options, json: { type: "boolean", default: false } } });
  if (!positionals[0]) return { stdout: "", stderr: "usage: hookbox trace EVENT_ID [--url URL] [--token T] [--json]\n", code: 64 };
  if (unsendable(values, env)) return { stdout: "", stderr: `hookbox: ${TOKEN_NOT_SENDABLE}\n`, code: 64 };
  const at = base(values, env);
  // One deadline for the request and its answer read whole, at most MAX_CLIENT_ANSWER_BYTES of it;
  // a redirect is no trace (its status is said).
  const signal = AbortSignal.timeout(deadlineMs);
  const late = `no answer within ${deadlineMs} ms`;
  const res = await fetch(`${at}/v1/events/${encodeURIComponent(positionals[0])}`, { headers: auth(values, env), redirect: "manual", signal }).catch((e: Error) => e);
  if (res instanceof Error) return { stdout: "", stderr: `hookbox: cannot reach ${shownUrl(at)}: ${o(signal.aborted ? late : withoutUserinfo(res.message))}\n`, code: 69 };
  let text: string;
  try {
    text = await readText(res, MAX_CLIENT_ANSWER_BYTES);
  } catch (err) {
    if (err instanceof AnswerTooLarge) return { stdout: "", stderr: `hookbox: ${res.status}: ${o(err.message)}\n`, code: 65 };
    return { stdout: "", stderr: `hookbox: ${res.status}: the answer is not JSON (it broke off: ${o(signal.aborted ? late : (err as Error).message)})\n`, code: 65 };
  }
  let body: Trace & { error?: { message?: unknown } };
  try {
    body = JSON.parse(text) as Trace & { error?: { message?: unknown } };
  } catch (err) {
    // the parser quotes what it read: what the server sent is shown escaped, never raw
    return { stdout: "", stderr: `hookbox: ${res.status}: the answer is not JSON: ${o((err as Error).message)}\n`, code: 65 };
  }
  if (!res.ok) {
    const message = typeof body === "object" && body !== null ? body.error?.message : undefined;
    return { stdout: "", stderr: `hookbox: ${res.status}: ${o(String(message ?? ""))}\n`, code: res.status === 404 ? 66 : 65 };
  }
  if (values.json) return { stdout: `${safeJson(body, 2)}\n`, stderr: "", code: 0 };
  try {
    return { stdout: renderTrace(body), stderr: "", code: 0 };
  } catch {
    // JSON of another shape (a field missing, a list that is not one): said, never a crash
    return { stdout: "", stderr: `hookbox: ${res.status}: the answer is not a trace (--json shows it as it came)\n`, code: 65 };
  }
}

/**
 * @default 60 s — `hookbox tail` gives up on a stream that sends nothing for this long: the service
 * sends a line every 15 s (LIVE_KEEPALIVE_MS), so a connection that died without a word (the
 * server's machine gone, a NAT's idle timeout) is never waited on for ever.
 */
export const LIVE_IDLE_MS = 60_000;
/**
 * @default 1 Mi — characters of one line of the live stream (one decision's summary is a few KiB at
 * most): a longer one is left out, never held whole, whatever a server sends without a newline.
 */
export const MAX_LIVE_LINE_CHARS = 1024 * 1024;

export async function tail(argv: string[], env: NodeJS.ProcessEnv, write: (s: string) => void, idleMs = LIVE_IDLE_MS): Promise<number> {
  const { values } = parseArgs({ args: argv, options });
  if (unsendable(values, env)) {
    process.stderr.write(`hookbox: ${TOKEN_NOT_SENDABLE}\n`);
    return 64;
  }
  const at = base(values, env);
  const idle = new AbortController();
  let timer = setTimeout(() => idle.abort(), idleMs);
  const heard = () => {
    clearTimeout(timer);
    timer = setTimeout(() => idle.abort(), idleMs);
  };
  const silent = `no line from hookbox in ${idleMs} ms (it sends one every 15 s): the stream is gone`;
  try {
    const res = await fetch(`${at}/v1/events/live`, { headers: auth(values, env), redirect: "manual", signal: idle.signal }).catch((e: Error) => e);
    if (res instanceof Error || !res.ok || !res.body) {
      const why = res instanceof Error ? (idle.signal.aborted ? silent : o(withoutUserinfo(res.message))) : res.status;
      process.stderr.write(`hookbox: cannot follow ${shownUrl(at)}: ${why}\n`);
      if (!(res instanceof Error)) await res.body?.cancel().catch(() => undefined);
      return 69;
    }
    const take = (raw: string) => {
      const line = raw.trim();
      if (!line) return;
      let msg: { type: string; event?: Omit<Trace, "hooks"> & { hooks: number } };
      try {
        msg = JSON.parse(line) as typeof msg;
      } catch (err) {
        process.stderr.write(`hookbox: a line of the stream is not JSON, left out: ${o((err as Error).message)}\n`);
        return;
      }
      if (msg?.type !== "decision" || !msg.event) return;
      let shown: string;
      try {
        shown = tailLine(msg.event);
      } catch {
        // JSON of another shape (a field that is no text): said, never the end of the stream
        process.stderr.write("hookbox: a line of the stream is not a decision as hookbox sends one, left out\n");
        return;
      }
      write(shown);
    };
    // Lines as they come, each found once (no scan of what was already looked through); a
    // character split between two chunks is joined again.
    const decoder = new TextDecoder();
    const tooLong = () => process.stderr.write(`hookbox: a line of the stream is longer than ${MAX_LIVE_LINE_CHARS} characters, left out\n`);
    let held = "";
    let over = false;
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        heard();
        const text = decoder.decode(chunk, { stream: true });
        let from = 0;
        for (let nl = text.indexOf("\n"); nl >= 0; from = nl + 1, nl = text.indexOf("\n", from)) {
          if (!over && held.length + nl - from <= MAX_LIVE_LINE_CHARS) take(held + text.slice(from, nl));
          else if (!over) tooLong();
          held = "";
          over = false;
        }
        if (over) continue;
        if (held.length + text.length - from <= MAX_LIVE_LINE_CHARS) held += text.slice(from);
        else {
          tooLong();
          held = "";
          over = true;
        }
      }
    } catch (err) {
      process.stderr.write(`hookbox: lost ${shownUrl(at)}: ${idle.signal.aborted ? silent : o(withoutUserinfo((err as Error).message))}\n`);
      return 69;
    }
    return 0;
  } finally {
    clearTimeout(timer);
  }
}

/** One decision of `hookbox tail`: as the agent got it, the hooks' own beside it when they differ. */
export function tailLine(e: Omit<Trace, "hooks"> & { hooks: number }): string {
  const got = gotOf(e);
  const hooks = got !== e.decision ? ` (hooks: ${o(e.decision ?? "pass")})` : "";
  return block(`${o(e.time)}  ${o(e.event_id)}  ${o(e.event).padEnd(17)} ${o(got ?? "pass").padEnd(6)}${hooks} ${o(e.tool_name ?? "").padEnd(12)} ${n(e.hooks)} hook(s) ${n(e.duration_ms)} ms${e.reason ? `  ${o(e.reason)}` : ""}`) + "\n";
}
