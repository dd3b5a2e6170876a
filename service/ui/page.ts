/**
 * @module The decisions page served at /ui: one self-contained HTML document (no build step, no
 * external network). It asks for a bearer token, lists recent decisions with filters, follows new
 * ones live (`/v1/events/live`), and draws one event's hooks as a waterfall with their output.
 */
import { createHash } from "node:crypto";
import { BLOCK_PATTERN } from "../../engine/visible-text.js";
import { NO_SESSION_ID } from "../records/sessions.js";

export const UI_HTML = /* html */ `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>hookbox — decisions</title>
<style>
  :root { --bg:#0f1115; --panel:#171a21; --line:#272b35; --text:#e6e8ee; --dim:#8b93a7;
          --allow:#2ea043; --block:#e5534b; --ask:#d29922; --none:#6e7681; --fail:#a371f7; --setup:rgba(255,255,255,.25); }
  * { box-sizing: border-box; }
  body { margin:0; font:13px/1.45 system-ui, sans-serif; background:var(--bg); color:var(--text); }
  header { display:flex; gap:12px; align-items:center; padding:10px 16px; border-bottom:1px solid var(--line); background:var(--panel); }
  header h1 { font-size:15px; margin:0 12px 0 0; }
  input, select, button { background:#0b0d11; color:var(--text); border:1px solid var(--line); border-radius:5px; padding:5px 8px; font:inherit; }
  button { cursor:pointer; }
  #live { color:var(--dim); margin-left:auto; }
  #live.on::before { content:"●"; color:var(--allow); margin-right:5px; }
  main { display:grid; grid-template-columns: minmax(420px, 42%) 1fr; height: calc(100vh - 49px); }
  #list { overflow:auto; border-right:1px solid var(--line); }
  table { width:100%; border-collapse:collapse; }
  th, td { text-align:left; padding:6px 10px; border-bottom:1px solid var(--line); white-space:nowrap; }
  th { color:var(--dim); font-weight:500; position:sticky; top:0; background:var(--bg); }
  tr.row { cursor:pointer; } tr.row:hover { background:#1b1f27; } tr.row.selected { background:#1f2633; }
  tr.row.new { animation: flash 1.5s; } @keyframes flash { from { background:#2a3550; } }
  td.reason { white-space:normal; color:var(--dim); max-width:260px; }
  .badge { display:inline-block; padding:1px 7px; border-radius:10px; font-size:11px; font-weight:600; color:#fff; }
  .badge.allow { background:var(--allow); } .badge.block { background:var(--block); } .badge.ask { background:var(--ask); } .badge.none { background:var(--none); }
  #detail { overflow:auto; padding:14px 18px; }
  #detail .empty { color:var(--dim); margin-top:40px; text-align:center; }
  .meta { color:var(--dim); margin:4px 0 14px; }
  .waterfall { border:1px solid var(--line); border-radius:6px; padding:10px; background:var(--panel); }
  .axis { display:flex; justify-content:space-between; color:var(--dim); font-size:11px; margin:0 0 6px 230px; }
  .hook { display:grid; grid-template-columns:220px 1fr; gap:10px; align-items:center; margin:5px 0; }
  .hook .name { overflow:hidden; text-overflow:ellipsis; white-space:nowrap; }
  .track { position:relative; height:22px; background:#0b0d11; border-radius:4px; }
  .bar { position:absolute; top:3px; height:16px; border-radius:3px; min-width:3px; display:flex; }
  .bar .setup { background:var(--setup); height:100%; border-radius:3px 0 0 3px; }
  .bar.allow { background:var(--allow); } .bar.block { background:var(--block); } .bar.ask { background:var(--ask); }
  .bar.none { background:var(--none); } .bar.failed { background:var(--fail); }
  .bar.blocking { outline:2px solid #fff; }
  .tag { font-size:11px; color:var(--dim); margin-left:6px; }
  .tag.blocking { color:var(--block); font-weight:700; }
  .tag.recorded { color:var(--ask); }
  .answered { color:var(--ask); margin:-8px 0 14px; }
  .outputs { margin-top:16px; }
  .out { border:1px solid var(--line); border-radius:6px; margin:10px 0; background:var(--panel); }
  .out h3 { margin:0; padding:7px 10px; font-size:13px; border-bottom:1px solid var(--line); display:flex; gap:8px; align-items:center; }
  .out .rule { color:var(--dim); font-weight:400; font-size:12px; }
  pre { margin:0; padding:8px 10px; white-space:pre-wrap; word-break:break-all; font:12px/1.4 ui-monospace, monospace; color:#c9d1d9; max-height:180px; overflow:auto; }
  .label { color:var(--dim); font-size:11px; padding:4px 10px 0; }
  #login { max-width:420px; margin:80px auto; background:var(--panel); padding:20px; border-radius:8px; border:1px solid var(--line); }
  #login input { width:100%; margin:10px 0; }
</style>
</head>
<body>
<div id="login" hidden>
  <h2>hookbox</h2>
  <p>Paste a tenant's bearer token. It stays in this tab only.</p>
  <form id="login-form"><input id="token" type="password" autocomplete="off" placeholder="bearer token"><button>Open</button></form>
  <p id="login-error" style="color:var(--block)"></p>
</div>
<div id="app" hidden>
  <header>
    <h1>hookbox decisions</h1>
    <select id="f-decision"><option value="">any decision</option><option>block</option><option>ask</option><option>allow</option><option value="none">pass-through</option></select>
    <input id="f-session" placeholder="session id">
    <button id="show-sessions">sessions</button>
    <button id="sign-out">sign out</button>
    <span id="live">connecting…</span>
  </header>
  <main>
    <section id="list"><table><thead><tr><th>time</th><th>event</th><th>tool</th><th>decision</th><th>hooks</th><th>ms</th><th>reason</th></tr></thead><tbody id="rows"></tbody></table></section>
    <section id="detail"><div class="empty">Select an event to see its hooks.</div></section>
  </main>
</div>
<script>
"use strict";
const $ = (s) => document.querySelector(s);
// A hook's text shown as hookbox trace shows it: controls (but newline and tab) and the characters
// that reorder or hide text (bidi overrides, zero-width marks) as escapes, then HTML-escaped.
const HIDDEN = new RegExp(${JSON.stringify(BLOCK_PATTERN)}, "gu");
const visible = (c) => { const code = c.codePointAt(0); return code < 0x80 ? "\\\\x" + code.toString(16).padStart(2, "0") : "\\\\u" + code.toString(16).padStart(4, "0"); };
const esc = (s) => String(s ?? "").replace(HIDDEN, visible).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
// The sessions list's name for the events that gave none: as a filter, those events.
const NO_SESSION_ID = ${JSON.stringify(NO_SESSION_ID)};
let token = sessionStorage.getItem("hookbox-token") || "";
let selected = null;
let liveAbort = null;
// Counts sign-outs: an answer asked for before the last one is no one's to show now.
let generation = 0;
// Counts what was asked of the list and of the detail pane: an answer to an older ask is drawn over
// nothing a newer one drew (a slow event's answer after the next one's click).
let listAsked = 0;
let detailAsked = 0;

async function api(path, init = {}) {
  const res = await fetch(path, { ...init, headers: { ...(init.headers || {}), authorization: "Bearer " + token } });
  if (res.status === 401) { signOut("That token is not valid."); throw new Error("unauthorized"); }
  return res;
}
async function json(path) {
  const asked = generation;
  const res = await api(path);
  if (!res.ok) throw new Error("hookbox answered " + res.status);
  const body = await res.json();
  if (asked !== generation) throw new Error("signed out since");
  return body;
}
function signOut(message) {
  generation++; listAsked++; detailAsked++;
  sessionStorage.removeItem("hookbox-token"); token = "";
  if (liveAbort) liveAbort.abort();
  // Nothing of this tenant's stays for whoever signs in next in this tab.
  selected = null; $("#rows").textContent = ""; $("#f-session").value = ""; $("#f-decision").value = ""; $("#token").value = "";
  $("#detail").innerHTML = "<div class='empty'>Select an event to see its hooks.</div>";
  $("#app").hidden = true; $("#login").hidden = false; $("#login-error").textContent = message || "";
}
const decisionOf = (d) => d || "none";
// What the agent got: the record's decision, unless its deadline came first or the event expired
// waiting (then its answered field says what went out — a block the hooks gave after it stopped nothing).
const gotOf = (e) => decisionOf(e.answered ? e.answered.decision : e.decision);
const otherwise = (e) => gotOf(e) !== decisionOf(e.decision);
const matches = (e) => (!$("#f-decision").value || decisionOf(e.decision) === $("#f-decision").value) && (!$("#f-session").value || (e.session_id || NO_SESSION_ID) === $("#f-session").value);

function row(e, fresh) {
  const tr = document.createElement("tr");
  tr.className = "row" + (fresh ? " new" : "") + (selected === e.event_id ? " selected" : "");
  tr.dataset.eventId = e.event_id;
  tr.dataset.decision = gotOf(e);
  tr.dataset.recorded = decisionOf(e.decision);
  tr.innerHTML = "<td>" + esc(new Date(e.time).toLocaleTimeString()) + "</td><td>" + esc(e.event) + "</td><td>" + esc(e.tool_name || "") +
    "</td><td><span class='badge " + gotOf(e) + "'>" + esc(gotOf(e)) + "</span>" +
    (otherwise(e) ? "<span class='tag recorded' title='" + esc(e.answered.why) + "'>hooks: " + esc(decisionOf(e.decision)) + "</span>" : "") + "</td><td>" + e.hooks +
    "</td><td>" + e.duration_ms + "</td><td class='reason'>" + esc(e.reason || "") + "</td>";
  tr.onclick = () => open(e.event_id);
  return tr;
}
async function load() {
  const q = new URLSearchParams({ limit: "100" });
  if ($("#f-decision").value) q.set("decision", $("#f-decision").value);
  if ($("#f-session").value) q.set("session_id", $("#f-session").value);
  const asked = ++listAsked;
  const { events } = await json("/v1/events?" + q);
  if (asked !== listAsked) return;
  const rows = $("#rows"); rows.textContent = "";
  for (const e of events) rows.append(row(e, false));
}
async function follow() {
  if (liveAbort) liveAbort.abort();
  liveAbort = new AbortController();
  const signal = liveAbort.signal;
  try {
    const res = await api("/v1/events/live", { signal });
    if (!res.ok) {
      // 429: this tenant's live followers are all taken (other tabs, tail): wait as told, and say so.
      const waitS = Number(res.headers.get("retry-after")) || 5;
      $("#live").className = ""; $("#live").textContent = "not live (" + res.status + "), retrying in " + waitS + " s";
      setTimeout(() => { if (!signal.aborted) follow(); }, waitS * 1000);
      return;
    }
    $("#live").className = "on"; $("#live").textContent = "live";
    const reader = res.body.getReader(); const dec = new TextDecoder(); let buf = "";
    for (;;) {
      const { done, value } = await reader.read(); if (done) break;
      buf += dec.decode(value, { stream: true });
      let nl; while ((nl = buf.indexOf("\\n")) >= 0) {
        const line = buf.slice(0, nl).trim(); buf = buf.slice(nl + 1);
        if (!line) continue;
        const msg = JSON.parse(line);
        if (msg.type === "decision" && matches(msg.event)) $("#rows").prepend(row(msg.event, true));
      }
    }
  } catch (err) { if (signal.aborted) return; }
  $("#live").className = ""; $("#live").textContent = "reconnecting…";
  setTimeout(() => { if (!signal.aborted) follow(); }, 2000);
}
function hookClass(h) {
  if (["timed_out", "oom_killed", "output_truncated", "failed_to_start", "cancelled"].includes(h.outcome) || h.error) return h.decision === "block" && h.effective ? "block" : "failed";
  return h.effective ? decisionOf(h.decision) : "none";
}
async function open(id) {
  selected = id;
  for (const tr of document.querySelectorAll("tr.row")) tr.classList.toggle("selected", tr.dataset.eventId === id);
  const asked = ++detailAsked;
  let t;
  try {
    t = await json("/v1/events/" + encodeURIComponent(id));
  } catch (err) {
    // Not another event's hooks under this one's highlighted row: said, in its place.
    if (asked === detailAsked && selected === id) $("#detail").innerHTML = "<div class='empty'>This event's trace could not be shown (" + esc(err.message) + ").</div>";
    return;
  }
  if (asked !== detailAsked) return;
  const span = (h) => h.start_ms + h.duration_ms + (h.remove_ms || 0);
  const total = Math.max(1, ...t.hooks.map((h) => h.offset_ms + span(h)));
  const pct = (ms) => (100 * ms / total).toFixed(2) + "%";
  const bars = t.hooks.map((h, i) => {
    const blocking = t.blocked_by === h.name && h.decision === "block" && h.effective;
    const setup = span(h) > 0 ? (100 * h.start_ms / span(h)).toFixed(1) : 0;
    const removal = span(h) > 0 ? (100 * (h.remove_ms || 0) / span(h)).toFixed(1) : 0;
    return "<div class='hook'><div class='name' title='" + esc(h.origin) + "'>" + esc(h.name) +
      (blocking ? "<span class='tag blocking'>" + (gotOf(t) === "block" ? "blocked here" : "blocked late") + "</span>" : "") + "<div class='tag'>" + esc(h.source + " · " + h.sandbox + (h.warm ? " (warm)" : "")) + "</div></div>" +
      "<div class='track'><div class='bar " + hookClass(h) + (blocking ? " blocking" : "") + "' data-hook='" + i + "' data-name='" + esc(h.name) + "' data-outcome='" + esc(h.outcome) +
      "' title='" + esc(h.outcome + " · set-up " + h.start_ms + " ms, run " + h.duration_ms + " ms" + (h.remove_ms !== null ? ", removal " + h.remove_ms + " ms" : "")) +
      "' style='left:" + pct(h.offset_ms) + ";width:" + pct(span(h)) +
      "'><div class='setup' style='width:" + setup + "%'></div><div style='flex:1'></div><div class='setup' style='width:" + removal + "%'></div></div></div></div>";
  }).join("");
  const outs = t.hooks.map((h) =>
    "<div class='out' data-hook-output='" + esc(h.name) + "'><h3>" + esc(h.name) + " <span class='badge " + hookClass(h) + "'>" + esc(h.decision || "none") + "</span> <span class='rule'>" +
    esc(h.outcome + (h.exit_code !== null ? " " + h.exit_code : "") + " — " + h.rule) + "</span></h3>" +
    (h.error ? "<div class='label'>error</div><pre>" + esc(h.error) + "</pre>" : "") +
    "<div class='label'>stdout" + (h.truncated.stdout ? " (first bytes)" : "") + "</div><pre class='stdout'>" + esc(h.stdout) + "</pre>" +
    (h.stderr ? "<div class='label'>stderr</div><pre class='stderr'>" + esc(h.stderr) + "</pre>" : "") +
    "<div class='label'>stdin</div><pre class='stdin'>" + esc(h.stdin) + "</pre></div>").join("");
  $("#detail").innerHTML = "<h2>" + esc(t.event) + " <span class='badge " + gotOf(t) + "'>" + esc(gotOf(t)) + "</span></h2>" +
    (t.answered ? "<div class='answered'>The agent was answered " + esc(gotOf(t)) + ": " + esc(t.answered.why) + (otherwise(t) ? "; the hooks decided " + esc(decisionOf(t.decision)) + "." : ".") + "</div>" : "") +
    "<div class='meta'>" + esc(t.event_id) + " · " + esc(new Date(t.time).toLocaleString()) + " · " + t.duration_ms + " ms" +
    (t.queued_ms ? " (queued " + t.queued_ms + " ms)" : "") + (t.tool_name ? " · tool " + esc(t.tool_name) : "") + (t.session_id ? " · session " + esc(t.session_id) : "") +
    (t.reason ? "<br>" + esc(t.reason) : "") + "</div>" +
    "<div class='waterfall'><div class='axis'><span>0 ms</span><span>" + total + " ms</span></div>" + (bars || "<div class='meta'>No hook ran.</div>") + "</div>" +
    "<div class='outputs'>" + outs + "</div>";
}
const ago = (iso) => { const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000)); return s < 60 ? s + " s ago" : s < 3600 ? Math.round(s / 60) + " min ago" : Math.round(s / 3600) + " h ago"; };
async function showSessions() {
  selected = null;
  for (const tr of document.querySelectorAll("tr.row")) tr.classList.remove("selected");
  const asked = ++detailAsked;
  const { sessions } = await json("/v1/sessions");
  if (asked !== detailAsked) return;
  const rows = sessions.map((s) => "<tr class='row session' data-session='" + esc(s.session_id) + "'><td>" + esc(s.session_id) + "</td><td title='" + esc(s.last_seen) + "'>" + esc(ago(s.last_seen)) +
    "</td><td>" + esc(s.last_event) + "</td><td>" + esc(s.format || "") + "</td><td>" + s.events + "</td><td>" + (s.last_canary ? esc(ago(s.last_canary)) : "never") + "</td></tr>").join("");
  $("#detail").innerHTML = "<h2>Sessions</h2><div class='meta'>When hookbox last heard from each agent session (events, and <code>hookbox doctor</code> checks). A session that has gone quiet while its agent still runs is a guard that no longer reaches hookbox.</div>" +
    "<table id='sessions'><thead><tr><th>session</th><th>last heard</th><th>last event</th><th>dialect</th><th>events</th><th>doctor check</th></tr></thead><tbody>" + (rows || "<tr><td colspan='6'>No session yet.</td></tr>") + "</tbody></table>";
  // each row's session id as the list gave it (its data-session is escaped for the eye, as its text is)
  document.querySelectorAll("tr.session").forEach((tr, i) => { tr.onclick = () => { $("#f-session").value = sessions[i].session_id; load(); }; });
}
async function start() {
  $("#login").hidden = true; $("#app").hidden = false;
  await load(); follow();
}
$("#login-form").onsubmit = async (ev) => {
  ev.preventDefault(); token = $("#token").value.trim();
  const res = await fetch("/v1/events?limit=1", { headers: { authorization: "Bearer " + token } });
  if (!res.ok) { $("#login-error").textContent = "That token is not valid."; return; }
  sessionStorage.setItem("hookbox-token", token); $("#token").value = ""; start();
};
$("#sign-out").onclick = () => signOut("");
$("#show-sessions").onclick = showSessions;
$("#f-decision").onchange = load; $("#f-session").onchange = load;
if (token) start(); else $("#login").hidden = false;
</script>
</body>
</html>
`;

/**
 * The page's Content-Security-Policy: its one script runs by its hash (no other inline script
 * does, whatever text a page might come to hold), it talks only to this origin, and no other site
 * may frame it.
 */
export const UI_CSP = (() => {
  const script = /<script>([\s\S]*?)<\/script>/.exec(UI_HTML)![1]!;
  const hash = createHash("sha256").update(script).digest("base64");
  return `default-src 'self'; style-src 'unsafe-inline'; script-src 'sha256-${hash}'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`;
})();
