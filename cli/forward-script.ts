/**
 * @module `hookbox forward --print-script`: the forwarder as a dependency-free POSIX sh script
 * (sh, curl ≥ 7.75, awk; sha256sum or shasum for the failure-mode cache) for the hottest paths —
 * no Node start-up per tool call. Same flags, answers, exit codes and failure-mode handling as
 * forward.ts, the same cache file per URL + token + event; test/examples.test.ts and
 * test/service/failure-mode.test.ts run both through the same tables.
 */
import { AGENT_DEADLINE_S, CLAUDE_EVENT_DEADLINE_S, CURSOR_NO_AGENT_MESSAGE } from "../engine/agents.js";
import { CODEX_STOP_ONLY, COPILOT_JSON_BLOCK, denyOutput, EVENT_NAME_PROBLEM, FORWARD_USAGE, MAX_ANSWER_DEPTH, MAX_ANSWER_LINES, MAX_SAID_BYTES, NOT_HOOKBOX, TOKEN_NOT_SENDABLE, TOKEN_REFUSED, URL_BYTES, URL_HOST, URL_USERINFO, USAGE_BLOCK_EXIT, type AgentFormat } from "./forward.js";

/** The JSON the forwarder reads and writes, in awk: the answer's fields, the agent's deny, terminal-safe text. */
const AWK = String.raw`
function chr(n) { return sprintf("%c", n) }
# The first n bytes of t and "…", cut before a character (never inside one); t when it fits.
function clipb(t, n) {
  if (length(t) <= n) return t
  while (n > 0 && ORD[substr(t, n + 1, 1)] >= 128 && ORD[substr(t, n + 1, 1)] < 192) n--
  return substr(t, 1, n) "…"
}
function hex(h,  i, v, c) { v = 0; h = tolower(h); if (length(h) != 4) BAD = 1; for (i = 1; i <= length(h); i++) { c = index("0123456789abcdef", substr(h, i, 1)); if (!c) { BAD = 1; return 63 } v = v * 16 + c - 1 } return v }
function utf8(c) {
  if (c < 128) return chr(c)
  if (c < 2048) return chr(192 + int(c / 64)) chr(128 + c % 64)
  if (c < 65536) return chr(224 + int(c / 4096)) chr(128 + int(c / 64) % 64) chr(128 + c % 64)
  return chr(240 + int(c / 262144)) chr(128 + int(c / 4096) % 64) chr(128 + int(c / 64) % 64) chr(128 + c % 64)
}
# One code point of a decoded string, as cli/terminal.ts block() shows it: controls but newline and tab escaped.
function cp(c) {
  if (c == 9) return "\t"
  if (c == 10) return "\n"
  if (c < 32 || c == 127) return sprintf("\\x%02x", c)
  if ((c >= 128 && c < 160) || hidden(c)) return sprintf("\\u%04x", c)
  return utf8(c)
}
# What moves or hides text on a screen (engine/visible-text.ts): Unicode's Default_Ignorable_Code_Point set but U+FE0E and U+FE0F (bidi marks, overrides and isolates, zero-width and invisible marks, variation selectors, tags …), line and paragraph separators, interlinear annotation marks.
function hidden(c) {
  return c == 173 || c == 847 || c == 1564 || c == 4447 || c == 4448 || c == 6068 || c == 6069 || (c >= 6155 && c <= 6159) || (c >= 8203 && c <= 8207) ||
    (c >= 8232 && c <= 8238) || (c >= 8288 && c <= 8303) || c == 12644 || (c >= 65024 && c <= 65037) || c == 65279 || c == 65440 || (c >= 65520 && c <= 65531) ||
    (c >= 113824 && c <= 113827) || (c >= 119155 && c <= 119162) || (c >= 917504 && c <= 921599)
}
# Raw C0 but tab and newline, DEL, C1 and hidden() characters in text: as "\x1b" / "\u0080" (json = 0: block()) or "\u001b" (json = 1: safeJson(), astral ones as surrogate pairs).
function esc(t, json,  pc, np, i, j, c, o, u, k, len, st, e, b, held) {
  if (t !~ /[\001-\010\013-\037\177-\377]/) return t
  split("", pc)
  np = 0
  len = length(t)
  st = 1 # where the run of bytes kept as they are starts: joined once, not byte by byte
  for (i = 1; i <= len; i++) {
    c = substr(t, i, 1)
    o = ORD[c]
    e = ""
    k = 0
    if (o < 128) {
      if ((o < 32 && c != "\t" && c != "\n") || o == 127) e = json ? sprintf("\\u%04x", o) : sprintf("\\x%02x", o)
    } else {
      # a UTF-8 sequence: its code point; a byte that starts none is U+FFFD, and so is a sequence
      # that breaks off — once for all it holds so far (its lead and the bytes that could follow it:
      # no overlong form, surrogate or value past U+10FFFF), as a UTF-8 decoder reads it (never a
      # raw C1 byte on a terminal)
      k = o >= 245 ? -1 : o >= 240 ? 3 : o >= 224 ? 2 : o >= 194 ? 1 : -1
      u = k == 3 ? o - 240 : k == 2 ? o - 224 : o - 192
      held = 0
      for (j = 1; j <= k; j++) {
        b = ORD[substr(t, i + j, 1)]
        if (b < (j > 1 ? 128 : o == 224 ? 160 : o == 240 ? 144 : 128) || b > (j > 1 ? 191 : o == 237 ? 159 : o == 244 ? 143 : 191)) { k = -1; break }
        held = j
        u = u * 64 + b - 128
      }
      if (k < 0) { e = utf8(65533); k = held }
      else if ((u >= 128 && u < 160) || hidden(u)) {
        if (json && u >= 65536) e = sprintf("\\u%04x\\u%04x", 55296 + int((u - 65536) / 1024), 56320 + (u - 65536) % 1024)
        else e = sprintf("\\u%04x", u)
      } else i += k
    }
    if (e != "") {
      pc[++np] = substr(t, st, i - st) e
      i += k
      st = i + 1
    }
  }
  pc[++np] = substr(t, st)
  return flat(pc, np)
}
# The pieces joined, pairwise round by round: n log n, where joining one by one is quadratic.
function flat(pc, n,  m, j) {
  if (n == 0) return ""
  while (n > 1) {
    m = 0
    for (j = 1; j <= n; j += 2) pc[++m] = pc[j] (j < n ? pc[j + 1] : "")
    n = m
  }
  return pc[1]
}
function ws() { while (P <= N && index(" \t\r\n", substr(S, P, 1))) P++ }
# The JSON string at P, decoded and made terminal-safe; P moves past it.
function str(  pc, np, out, c, st, u, lo) {
  P++
  split("", pc)
  np = 0
  while (P <= N) {
    out = ""
    c = substr(S, P, 1)
    if (c == "\"") { P++; return flat(pc, np) }
    if (c == "\\") {
      c = substr(S, P + 1, 1)
      P += 2
      if (c == "n") out = out "\n"
      else if (c == "t") out = out "\t"
      else if (c == "b") out = out "\\x08"
      else if (c == "f") out = out "\\x0c"
      else if (c == "r") out = out "\\x0d"
      else if (c != "\"" && c != "\\" && c != "/" && c != "u") BAD = 1
      else if (c == "u") {
        u = hex(substr(S, P, 4))
        P += 4
        if (u >= 55296 && u < 56320 && substr(S, P, 2) == "\\u") {
          lo = hex(substr(S, P + 2, 4))
          if (lo >= 56320 && lo < 57344) { u = 65536 + (u - 55296) * 1024 + (lo - 56320); P += 6 }
        }
        # a surrogate left alone is U+FFFD, as a UTF-8 encoder writes it
        if (u >= 55296 && u < 57344) u = 65533
        out = out cp(u)
      } else out = out c
      pc[++np] = out
      continue
    }
    st = P
    # JSON.parse refuses a raw control character in a string: so does this.
    while (P <= N && (c = substr(S, P, 1)) != "\"" && c != "\\") { if (c < " ") BAD = 1; P++ }
    pc[++np] = esc(substr(S, st, P - st), 0)
  }
  BAD = 1 # a string that does not end
  return flat(pc, np)
}
# Past the string at P (inside = 1: P is already past its opening quote), checked as JSON.parse
# checks it, nothing decoded: linear whatever its escapes.
function scan(inside,  c) {
  if (!inside) P++
  while (P <= N) {
    c = substr(S, P, 1)
    if (c == "\"") { P++; return }
    if (c == "\\") {
      c = substr(S, P + 1, 1)
      if (c == "u") { hex(substr(S, P + 2, 4)); P += 6 }
      else { if (!index("\"\\/bfnrt", c) || c == "") BAD = 1; P += 2 }
      continue
    }
    if (c < " ") BAD = 1
    P++
  }
  BAD = 1
}
# Past the value at P, as JSON.parse reads it (objects of string keys, arrays, strings, numbers,
# true, false, null; closers that match); what it would refuse sets BAD. Nothing is decoded.
# depth: the level of the array or object the value stands in (the answer's own object the first).
function skip(depth,  c, st) {
  ws()
  c = substr(S, P, 1)
  if (c == "\"") { scan(0); return }
  if (c == "{" || c == "[") {
    # (mawk's evaluation stack ends near 330 levels; hookbox's answers nest 70 at most)
    if (depth >= ${MAX_ANSWER_DEPTH}) { BAD = 1; P = N + 1; return }
    P++
    ws()
    if (substr(S, P, 1) == (c == "{" ? "}" : "]")) { P++; return }
    for (;;) {
      ws()
      if (c == "{") {
        if (substr(S, P, 1) != "\"") { BAD = 1; return }
        scan(0)
        ws()
        if (substr(S, P, 1) != ":") { BAD = 1; return }
        P++
      }
      skip(depth + 1)
      if (BAD) return
      ws()
      st = substr(S, P, 1)
      P++
      if (st == (c == "{" ? "}" : "]")) return
      if (st != ",") { BAD = 1; return }
    }
  }
  st = P
  while (P <= N && !index(",}] \t\r\n", substr(S, P, 1))) P++
  if (substr(S, st, P - st) !~ /^(true|false|null|-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?)$/) BAD = 1
}
# The object at P: for each key its first character (T), raw text (R) and decoded string (V); "error" one level down. 0: not one.
function obj(pre,  k, st, c) {
  ws()
  if (substr(S, P, 1) != "{") return 0
  P++
  ws()
  if (substr(S, P, 1) == "}") { P++; return 1 }
  for (;;) {
    ws()
    if (substr(S, P, 1) != "\"") return 0
    k = pre str()
    # A key of the answer's own named like one read a level down ("error.message") is none of it.
    if (pre == "" && substr(k, 1, 6) == "error.") k = "\001" k
    ws()
    if (substr(S, P, 1) != ":") return 0
    P++
    ws()
    st = P
    c = substr(S, P, 1)
    if (c == "" || index(",}]:", c)) return 0
    T[k] = c
    # a key said twice is what it says last: an earlier string is forgotten (JSON.parse's rule)
    delete V[k]
    if (k == "error") { delete V["error.message"]; delete T["error.message"] }
    if (c == "\"") V[k] = str()
    else if (c == "{" && pre == "" && k == "error") { if (!obj("error.")) return 0 }
    else skip(pre == "" ? 1 : 2)
    R[k] = substr(S, st, P - st)
    ws()
    c = substr(S, P, 1)
    P++
    if (c == "}") return 1
    if (c != ",") return 0
  }
}
# A JSON string for the agent: JSON.stringify's escapes, DEL, C1 and hidden() too (safeJson()).
function q(s,  out, i, c) {
  out = ""
  for (i = 1; i <= length(s); i++) {
    c = substr(s, i, 1)
    if (c == "\\") out = out "\\\\"
    else if (c == "\"") out = out "\\\""
    else if (c == "\n") out = out "\\n"
    else if (c == "\t") out = out "\\t"
    else if (c < " ") out = out sprintf("\\u%04x", ORD[c])
    else out = out c
  }
  return "\"" esc(out, 1) "\""
}
BEGIN {
  for (i = 1; i < 256; i++) ORD[chr(i)] = i
  MAXLINES = ${MAX_ANSWER_LINES}
  # a header line's name, as HTTP's token (the backquote among its characters, made here: no quote can hold it)
  HNAME = "^[-!#$%&'*+.^_|~0-9A-Za-z" sprintf("%c", 96) "]+:"
  MAXBYTES = 16777216
  if (mode == "text") { print esc(ENVIRON["HOOKBOX_TEXT"], 0); exit 0 }
  if (mode == "deny") {
    r = q(ENVIRON["HOOKBOX_REASON"])
    e = tolower(ENVIRON["HOOKBOX_EVENT"])
    if (fmt == "copilot" && e == "pretooluse") print "{\"permissionDecision\":\"deny\",\"permissionDecisionReason\":" r ",\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":" r "}}"
    else if (fmt == "copilot" && e == "permissionrequest") print "{\"behavior\":\"deny\",\"message\":" r ",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":" r "}"
    else if (fmt == "copilot" && (e == "userpromptsubmit" || e == "userpromptsubmitted")) print "{\"continue\":false,\"stopReason\":" r ",\"decision\":\"block\",\"reason\":" r "}"
    else if (fmt == "copilot" && e == "posttooluse") print "{\"decision\":\"block\",\"reason\":" r "}"
    else if (fmt == "copilot") print "{\"permissionDecision\":\"deny\",\"permissionDecisionReason\":" r "}"
    else if (fmt == "cursor" && e == "beforesubmitprompt") print "{\"continue\":false,\"user_message\":" r "}"
    else if (fmt == "cursor" && e ~ /^(${[...CURSOR_NO_AGENT_MESSAGE].join("|")})$/) print "{\"permission\":\"deny\",\"user_message\":" r "}"
    else if (fmt == "cursor") print "{\"permission\":\"deny\",\"user_message\":" r ",\"agent_message\":" r "}"
    else if ((fmt == "claude" || fmt == "codex") && tolower(ENVIRON["HOOKBOX_EVENT"]) == "pretooluse") print "{\"decision\":\"block\",\"reason\":" r ",\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":" r "}}"
    else if ((fmt == "claude" || fmt == "codex") && tolower(ENVIRON["HOOKBOX_EVENT"]) == "permissionrequest") print "{\"hookSpecificOutput\":{\"hookEventName\":\"PermissionRequest\",\"decision\":{\"behavior\":\"deny\",\"message\":" r "}}}"
    else if (fmt == "codex" && tolower(ENVIRON["HOOKBOX_EVENT"]) ~ /^(precompact|sessionstart|subagentstart)$/) print "{\"continue\":false,\"stopReason\":" r "}"
    else if (fmt == "gemini" && tolower(ENVIRON["HOOKBOX_EVENT"]) == "beforetoolselection") print "{\"decision\":\"block\",\"reason\":" r ",\"hookSpecificOutput\":{\"toolConfig\":{\"mode\":\"NONE\",\"allowedFunctionNames\":[]}}}"
    else print "{\"decision\":\"block\",\"reason\":" r "}"
    exit 0
  }
}
{
  # every byte read counts, a CR too: at the cap, head cut the stream (below)
  TOT += length($0) + 1
  cr = sub(/\r$/, "")
  LAST = $0
  # Headers (an interim answer's too) are not the answer's lines: hookbox writes a dozen, a proxy
  # before it may add hundreds (curl reads 300 KiB of them at most). An empty line ends them, with
  # or without its CR.
  # A status line Node's HTTP parser refuses (a version it does not know, a blank too many, a status
  # of other than three digits, "http/" in lower case) is no answer hookbox sends ('hookbox forward' alike).
  if (hd == 0 && tolower(substr($0, 1, 5)) == "http/") {
    if ($0 !~ /^HTTP\/(0\.9|1\.0|1\.1|2\.0) [0-9][0-9][0-9]( |$)/) garbled = 1
    hd = 1; st = substr($0, index($0, " ") + 1, 3) + 0; keep = 1
  }
  else if (hd == 1 && $0 == "") { hd = (st < 200 && st != 101) ? 0 : 2; keep = 1 }
  # the body's lines, MAXLINES of them, and curl's own last line after them
  else keep = hd < 2 || ++nb <= MAXLINES + 1
  # An answer of more lines or bytes than hookbox's ever are is no answer (and joining it would cost too much).
  if (keep && TOT <= MAXBYTES) { L[++n] = $0; CR[n] = cr }
  else BIG = 1
}
END {
  if (mode == "deny" || mode == "text") exit 0
  # the last line is curl's -w: status, curl's exit code (marked: x0), the body's bytes, curl's error
  if (BIG) L[++n] = LAST
  tr = L[n]
  split(tr, f, " ")
  em = tr
  sub(/^[^ ]* [^ ]* [^ ]* ?/, "", em)
  for (i = 1; i < n && L[i] !~ /^HTTP\//; i++) ;
  status = 0
  while (i < n) {
    status = L[i]
    sub(/^HTTP\/[^ ]* /, "", status)
    status = substr(status, 1, 3) + 0
    # Only the final answer's headers count; repeated or listed values say block if any does.
    told = ""
    hcl = hte = 0
    # An empty line ends them — without its CR too (headers ended by LF alone), but for the one curl's
    # -w line starts with (the line before it): headers cut off leave only that one.
    for (i++; i < n && !(L[i] == "" && (CR[i] || i < n - 1)); i++) {
      # A line Node's HTTP parser refuses — folded onto the one before (a leading blank), a name that
      # is no token (a blank before its colon, no colon), a control character but a tab, DEL — makes
      # the whole answer one no hookbox sends, whatever curl makes of it ('hookbox forward' alike).
      if (L[i] != "" && (L[i] ~ /^[ \t]/ || L[i] !~ HNAME || L[i] ~ /[\001-\010\012-\037\177]/)) garbled = 1
      h = tolower(L[i])
      # a length that is no number, one beside a transfer coding, a second one (even equal), or one
      # past 2^64 - 1: refused too
      if (h ~ /^content-length:/) {
        v = h
        sub(/^[^:]*:[ \t]*/, "", v)
        sub(/[ \t]+$/, "", v)
        if (v !~ /^[0-9]+$/ || hte || hcl) garbled = 1
        sub(/^0+/, "", v)
        if (length(v) > 20 || (length(v) == 20 && (v "") > "18446744073709551615")) garbled = 1
        hcl = 1
      }
      if (h ~ /^transfer-encoding:/) { if (hcl) garbled = 1; hte = 1 }
      if (h ~ /^hookbox-on-failure:/) {
        v = h
        sub(/^[^:]*:/, "", v)
        m = split(v, vs, ",")
        for (j = 1; j <= m; j++) {
          w = vs[j]
          gsub(/^[ \t]+|[ \t]+$/, "", w)
          if (w == "block") told = "block"
          else if (w == "allow" && told != "block") told = "allow"
        }
      }
    }
    # Headers cut off before the empty line that ends them (the connection closed) say nothing.
    if (i >= n) { told = ""; cut = 1; break }
    i++
    # 101 switches protocols: what follows is no answer of hookbox's, whatever it looks like
    if (status >= 200 || status == 101 || L[i] !~ /^HTTP\//) break
  }
  # an interim answer's headers (100–199 but 101, which switches protocols: the last answer there
  # is) say nothing about the final one
  if (status < 200 && status != 101) told = ""
  if (garbled) told = ""
  print told
  if (garbled) { print "!Wanswered with what no hookbox sends (a status or header line an HTTP parser refuses: folded, a name that is no token, a control character, a status line of another form): ${NOT_HOOKBOX}"; exit 0 }
  # A line hookbox refuses, or a URL that answers as no hookbox does (no failure mode told, and no
  # gateway's 408, 429 or 5xx): wiring to fix, blocked as any wrong line is ('hookbox forward' alike),
  # however long the page.
  if (status == 401 || status == 403) wl = "${TOKEN_REFUSED}"
  else if (told == "" && !cut && status >= 200 && status < 500 && status != 408 && status != 429) wl = "answered " status " ${NOT_HOOKBOX}"
  # Cut at the cap by head: what follows the headers is no answer, and curl's own last line is gone.
  # (TOT counts a newline after the last record too, which curl's -w line never has: a whole stream
  # counts one past its bytes, so one that reaches the cap was cut — after a newline as much as
  # inside a line — and an answer that long is past MAXBYTES anyway.)
  TRUNC = cap != "" && TOT >= cap + 0
  # A wrong line is one however long its page: judged by its status and headers alone.
  if (wl != "" && (TRUNC || BIG)) { print "!W" wl " (" status ": no decision)"; exit 0 }
  if (TRUNC) { print "!Ahookbox's answer is larger than " MAXBYTES " bytes: no answer"; exit 0 }
  # curl's exit code comes marked (x0): a curl older than 7.75 writes none (its -w knows no
  # %{exitcode}), and one that never ran (not found, an option it does not know) no line at all —
  # hookbox's answer, a block among them, would be read as no answer: a wrong line, blocked as
  # 'hookbox forward' blocks on its own failure.
  if (f[2] !~ /^x[0-9]+$/) { print "!Wcould not be asked: curl did not run to its end, or is older than 7.75 (its --write-out line holds no exit code): install curl 7.75 or later, or use hookbox forward"; exit 0 }
  f[2] = substr(f[2], 2)
  if (f[2] == "28") { print "!T"; exit 0 }
  # Something answered, but in no HTTP as hookbox writes it (HTTP/0.9, a NUL or a bad status line,
  # a broken chunk), before any failure mode was told: no hookbox there ('hookbox forward' alike).
  # A URL curl cannot read (exit 3): a wrong line, never hookbox out of reach.
  if (f[2] == "3") { print "!W${URL_HOST} (curl: " esc(clipb(em, ${MAX_SAID_BYTES}), 0) ")"; exit 0 }
  if (told == "" && (f[2] == "1" || f[2] == "8" || (f[2] == "56" && em ~ /chunk/))) { print "!Wanswered with what no hookbox sends (" esc(clipb(em, ${MAX_SAID_BYTES}), 0) "): ${NOT_HOOKBOX}"; exit 0 }
  # The last line is curl's word only when the answer was read to its end: else it is a piece of the
  # answer (cut at the cap), said no longer than any message.
  if (f[2] != "0" || f[1] == "000") { print "!U" esc(em != "" ? clipb(em, ${MAX_SAID_BYTES}) : "curl failed (exit " f[2] ")", 0); exit 0 }
  if (BIG) { print "!Ahookbox's answer is larger than " MAXBYTES " bytes or " MAXLINES " lines: no answer"; exit 0 }
  S = ""
  for (; i < n; i++) S = S L[i] (CR[i] ? "\r" : "") (i < n - 1 ? "\n" : "")
  # The body is what curl counted of it (-w size_download): trailers a chunked answer ends with
  # come after it in the same stream (-D -), and are no part of it.
  if (f[3] ~ /^[0-9]+$/ && length(S) > f[3] + 0) S = substr(S, 1, f[3] + 0)
  # Fewer bytes than curl counted: some were lost on the way in (BusyBox awk ends a record at a NUL,
  # which JSON never holds raw): no answer.
  if (f[3] ~ /^[0-9]+$/ && length(S) < f[3] + 0) BAD = 1
  # A CR is JSON's whitespace only (a string holds none raw): line ends read as JSON.parse reads them.
  gsub(/\r\n/, "\n", S)
  sub(/\r$/, "", S)
  N = length(S)
  P = 1
  ok = obj("")
  ws()
  if (P <= N || BAD) ok = 0
  if (status >= 200 && status < 300 && ok && ("output" in T)) {
    blocked = T["decision"] == "\"" && (V["decision"] == "block" || (fmt == "codex" && V["decision"] == "ask"))
    # An exit code is a whole number 0–255, else 0.
    x = R["exit_code"] + 0
    code = (T["exit_code"] ~ /[0-9]/ && x == int(x) && x >= 0 && x <= 255) ? x : 0
    if (blocked && fmt == "codex" && (tolower(ev) == "pretooluse" || tolower(ev) == "permissionrequest")) code = 2
    # A CR or LF in it stands between tokens (a string holds none raw): JSON's whitespace, printed as
    # a space — the answer is one line.
    o = R["output"]
    gsub(/[\r\n]/, " ", o)
    # Its exit code (and whether it blocks) first, then the answer: the shell exits with that code,
    # never with awk's own. A block's reason goes to stderr last, after all of it is out — a stderr
    # awk cannot open ("/dev/stderr" a socket, for gawk under POSIXLY_CORRECT) or that the agent
    # stopped reading ends awk with 2, which as the answer's code would lose a block where the
    # agent reads one at 0 only.
    print "?" code (blocked ? " b" : "")
    print "=" esc(o, 1)
    if (blocked) {
      fflush()
      print (("reason" in V) ? V["reason"] : "blocked by hookbox") > "/dev/stderr"
    }
    exit 0
  }
  said = status ": " ((ok && ("error.message" in V)) ? clipb(V["error.message"], ${MAX_SAID_BYTES}) : "no decision")
  if (wl != "") { print "!W" wl " (" said ")"; exit 0 }
  print "!Ahookbox answered " said
}
`;

const d = AGENT_DEADLINE_S;
/** `case` arms setting Claude Code's shorter deadlines by event, in any letter case, without a process: `[Uu][Ss]…) d=30 ;;` */
const claudeEventDeadlines = Object.entries(CLAUDE_EVENT_DEADLINE_S)
  .map(([name, s]) => `    ${[...name].map((c) => `[${c.toUpperCase()}${c}]`).join("")}) d=${s} ;;`)
  .join("\n");

/**
 * fallback_block's arms: the agent's own deny for each format and event whose shape differs,
 * written by denyOutput — the one place the shapes are — and the rest's (cosh's) last.
 */
const FALLBACK_ARMS = ([
  ["gemini", "BeforeToolSelection"], ["claude", "PermissionRequest"], ["codex", "PermissionRequest"], ["claude", "PreToolUse"], ["codex", "PreToolUse"],
  ...[...CODEX_STOP_ONLY].map((e): [AgentFormat, string] => ["codex", e]), ["cursor", "beforeSubmitPrompt"], ...[...CURSOR_NO_AGENT_MESSAGE].map((e): [AgentFormat, string] => ["cursor", e]), ["copilot", "PreToolUse"], ["copilot", "PermissionRequest"], ["copilot", "UserPromptSubmit"], ["copilot", "UserPromptSubmitted"], ["copilot", "PostToolUse"], ["copilot", "*"], ["cursor", "*"], ["cosh", "*"],
] as [AgentFormat, string][])
  .map(([format, event]) => `    ${format === "cosh" ? "*" : `${format}:${event.toLowerCase()}`}) printf '%s\\n' '${JSON.stringify(denyOutput(format, event, "blocked by hookbox"))}' ;;`)
  .join("\n");

/** The script `hookbox forward --print-script` prints. */
export const FORWARD_SCRIPT = String.raw`#!/bin/sh
# hookbox forward, as a POSIX sh script (printed by 'hookbox forward --print-script'): posts the
# agent's event on stdin to hookbox and prints the agent-native answer, with the same flags, exit
# codes and failure-mode handling as 'hookbox forward'. Needs sh, curl >= 7.75, awk, and sha256sum
# or shasum. Keep it next to the agent's config, e.g. .hookbox/forward.sh.
umask 077
# An agent that stops reading the answer does not end this script before its exit code: a write
# to its stdout fails, and the code it exits with is still the answer's ('hookbox forward' alike).
trap '' PIPE
# A stderr the agent closed: /dev/null in its place, before anything is said on it (dash would end
# the script on a bare exec of it — exit 2, no answer, which cosh and Gemini read as no decision —
# and an awk that cannot close it exits 2 after its answer, which the fallback would follow with a second).
command exec 5>&2 2>/dev/null || exec 5>/dev/null
exec 2>&5 5>&-
AWK='${AWK.replace(/'/g, `'\\''`)}'
# A line whose flags are wrong is a guard that never reaches hookbox: it blocks — exit 2 with the
# problem on stderr, every agent's block — but where a block would keep the agent going (a stop).
# Where the agent reads a block from the JSON at exit 0 only, any exit 2 its hook's failure: cosh (a
# non-zero exit does not affect its main flow), Codex's compaction and starts (the stop read at exit 0
# only), Gemini's BeforeToolSelection (no tool left is its toolConfig, read from stdout at exit 0)
# Claude Code's PermissionRequest (exit 2 is not honored there: its decision object denies) and
# Copilot's prompt and post-tool events (exit 2 a warning there; VS Code reads the block's JSON).
# $1 in ASCII lower case, as l: all of it — \$( ) alone would drop its trailing newlines ("Stop\n" is no stop).
lower() {
  l=$(printf '%s.' "$1" | LC_ALL=C tr '[:upper:]' '[:lower:]')
  l=\${l%.}
}
# A block all the same should awk fail, in the shape the agent reads at that event: 'hookbox
# forward''s own (denyOutput), for each shape that differs.
fallback_block() {
  lower "$2"
  case $1:$l in
${FALLBACK_ARMS}
  esac
}
# The agent's deny for format $1 at event $2, its reason $3: as awk writes it — or, should awk fail or
# say nothing, fallback_block's. One answer either way (an awk that wrote its answer and then failed,
# to close a stderr the agent closed say, is not followed by a second).
say_deny() {
  dj=$(HOOKBOX_REASON=$3 HOOKBOX_EVENT=$2 LC_ALL=C awk -v mode=deny -v fmt="$1" "$AWK" </dev/null 2>/dev/null)
  if [ -n "$dj" ]; then printf '%s\n' "$dj"; else fallback_block "$1" "$2"; fi
}
json_block_only() {
  [ "$1" = cosh ] && return 0
  lower "$2"
  [ "$1" = codex ] && case $l in precompact|sessionstart|subagentstart) true ;; *) false ;; esac && return 0
  [ "$1" = gemini ] && [ "$l" = beforetoolselection ] && return 0
  [ "$1" = claude ] && [ "$l" = permissionrequest ] && return 0
  [ "$1" = copilot ] && case $l in ${[...COPILOT_JSON_BLOCK].join("|")}) true ;; *) false ;; esac && return 0
  return 1
}
# BeforeToolSelection is Gemini's alone: a line that names it is asked and answered as Gemini's (its
# deadline, its toolConfig) whatever agent's --format it names — another's answer there, a block
# too, would be a decision Gemini does not read, every tool left.
picks_tools() {
  case $1 in [Bb][Ee][Ff][Oo][Rr][Ee][Tt][Oo][Oo][Ll][Ss][Ee][Ll][Ee][Cc][Tt][Ii][Oo][Nn]) return 0 ;; esac
  return 1
}
usage() {
  cat >&2 <<'USAGE'
${FORWARD_USAGE.replace("usage: hookbox forward", "usage: forward.sh")}
USAGE
  wrongline "\${1:-the command line is wrong}"
}
# A line that is wrong blocks (at a stop it lets the agent stop), whatever the failure mode.
wrongline() {
  ue=$ev0
  # what the line said, its control characters out (a flag's text may hold any byte)
  said=$(HOOKBOX_TEXT="forward.sh: $1" LC_ALL=C awk -v mode=text "$AWK" </dev/null 2>/dev/null)
  # (without an awk that works, every byte but a printable ASCII one as ?)
  [ -n "$said" ] || said=$(printf '%s' "forward.sh: $1" | LC_ALL=C tr -c '[:print:]' '?')
  lower "$ue"
  case $l in
    stop|agentstop|subagentstop|afteragent|teammateidle|taskcompleted)
      printf '%s (at this stop a block would keep the agent going: it goes on)\n' "$said" >&2
      printf '{}\n'
      exit 0 ;;
  esac
  reason="$said: blocking (a guard whose line is wrong lets nothing through; 'hookbox doctor' checks each line)"
  # The block the failure mode gives, in the line's own format where it names one (cosh unless told).
  uf=cosh
  [ -n "$fmset" ] && uf=$fm0
  case $uf in cosh|copilot|claude|codex|gemini|cursor) ;; *) uf=unknown ;; esac
  picks_tools "$ue" && uf=gemini
  say_deny "$uf" "$ue" "$reason"
  printf '%s\n' "$reason" >&2
  json_block_only "$uf" "$ue" && exit 0
  exit ${USAGE_BLOCK_EXIT}
}
# The event and format, read ahead of the flags (the last of each, as the flags are read): a usage
# error at a stop lets the agent stop, and elsewhere blocks in the line's own format.
# Left to right, each flag that takes a value taking the next word, up to '--' (as 'hookbox forward' reads it).
ev0= fm0= fmset= take=
for a in "$@"; do
  if [ -n "$take" ]; then
    case $take in --event) ev0=$a ;; --format) fm0=$a; fmset=1 ;; esac
    take=
    continue
  fi
  case $a in
    --) break ;;
    --url|--event|--format|--workspace|--token|--on-unreachable|--deadline|--timeout|--interactive) take=$a ;;
    --event=*) ev0=\${a#--event=} ;;
    --format=*) fm0=\${a#--format=}; fmset=1 ;;
  esac
done
nl='
'
url= event= format=cosh workspace= token=\${HOOKBOX_TOKEN-} onu= deadline= timeout= interactive=
while [ $# -gt 0 ]; do
  joined=
  case $1 in
    --*=*) k=\${1%%=*} v=\${1#*=}; shift; set -- "$k" "$v" "$@"; joined=1 ;;
  esac
  [ $# -ge 2 ] || usage
  # As 'hookbox forward' reads flags: a value given apart from its flag does not start with '-'.
  if [ -z "$joined" ]; then case $2 in -*) usage ;; esac; fi
  case $1 in
    --url) url=$2 ;;
    --event) event=$2 ;;
    --format) format=$2 ;;
    --workspace) workspace=$2 ;;
    --token) token=$2 ;;
    --on-unreachable) onu=$2; [ -n "$2" ] || usage "--on-unreachable must be allow or block" ;;
    --deadline) deadline=$2; [ -n "$2" ] || usage "--deadline must be a number of seconds, at least 0.001" ;;
    --timeout) timeout=$2; [ -n "$2" ] || usage "--timeout must be a whole number of milliseconds, at least 1" ;;
    --interactive) interactive=$2; case $2 in true|false) ;; *) usage "--interactive must be true or false" ;; esac ;;
    *) usage "unknown flag $1" ;;
  esac
  shift 2
done
# The agent the line is for: Gemini's at BeforeToolSelection (picks_tools; a --format that is no agent's is refused below).
case $format in cosh|copilot|claude|codex|cursor) picks_tools "$event" && format=gemini ;; esac
# Each agent's own hook deadline, in seconds (engine/agents.ts).
case $format in
  cosh) q=cosh d=${d.cosh} ;;
  copilot) q=copilot d=${d.copilot} ;;
  claude) q=claude d=${d.claude} ;;
  codex) q=codex d=${d.codex} ;;
  gemini) q=gemini d=${d.gemini} ;;
  cursor) q=cursor d=${d.cursor} ;;
  *) usage ;;
esac
# Claude Code gives a hook less time at a few events.
if [ "$format" = claude ]; then
  case $event in
${claudeEventDeadlines}
  esac
fi
[ -n "$url" ] && [ -n "$event" ] || usage "--url and --event are needed"
# Every tenant has a token: a line without one is refused by hookbox on every call.
[ -n "$token" ] || usage "no token: set HOOKBOX_TOKEN (or --token)"
# One no header can carry (a CR from a CRLF .env file, say) never reaches hookbox: a wrong line.
case $token in *[!!-~]*) wrongline "${TOKEN_NOT_SENDABLE}" ;; esac
# hookbox speaks HTTP: curl would speak gopher, dict, smtp or file to whatever --url names.
case $url in [Hh][Tt][Tt][Pp]://*|[Hh][Tt][Tt][Pp][Ss]://*) ;; *) usage "--url must be http:// or https://" ;; esac
# Read as 'hookbox forward' reads it, before anything is sent: printable ASCII without a byte curl
# and Node's URL parser read apart (a backslash is a user name's to curl, a path's to Node: the token
# would go to two hosts), nor ? or # (the event's path goes after it); one @ at most (curl ends the
# user name at the first, Node at the last); a host that is a name of letters, digits, dots and
# hyphens — one that ends in a number an IPv4 address of four numbers 0–255, as both read it — or
# [an IPv6 address]; a port of 1–65535.
case $url in *[!!-~]*|*[\\\"\<\>\^\`{\|}?#]*) usage "${URL_BYTES}" ;; esac
after=\${url#*://}
authority=\${after%%/*}
case $authority in *@*@*) usage "${URL_USERINFO}" ;; esac
# A user name and password: % only as an escape of ASCII (Node decodes them before it sends anything).
case $authority in
  *@*)
    ui=\${authority%@*}
    while :; do
      case $ui in
        *%*) ui=\${ui#*%}; case $ui in 0[1-9A-Fa-f]*|[1-7][0-9A-Fa-f]*) ;; *) usage "${URL_HOST}" ;; esac ;;
        *) break ;;
      esac
    done
    ;;
esac
hp=\${authority##*@}
hh=$hp hport=
case $hp in
  \[*\]:*) hh=\${hp%\]:*}] hport=\${hp##*\]:} ;;
  \[*) ;;
  *:*) hh=\${hp%%:*} hport=\${hp#*:} ;;
esac
case $hp in *:) hport=x ;; esac
case $hh in
  \[\]|\[*[!0-9A-Fa-f:.]*\]) usage "${URL_HOST}" ;;
  \[*\]) ;;
  ''|*[!A-Za-z0-9.-]*) usage "${URL_HOST}" ;;
esac
case $hport in
  '') ;;
  *[!0-9]*|??????*) usage "${URL_HOST}" ;;
  *) [ "$hport" -ge 1 ] && [ "$hport" -le 65535 ] || usage "${URL_HOST}" ;;
esac
case $hh in
  \[*) ;;
  *)
    h4=\${hh%.} last=\${hh%.}
    last=\${last##*.}
    case $last in
      '') h4= ;;
      *[!0-9]*) case $last in 0[xX]*[!0-9A-Fa-f]*) h4= ;; 0[xX]*) ;; *) h4= ;; esac ;;
    esac
    # ends in a number: four numbers 0–255, no leading zero, no dot after them (curl asks a resolver
    # for 127.0.0.1., Node reads it as the address); no label of punycode (Node may refuse it)
    case $hh in *.) [ -z "$h4" ] || usage "${URL_HOST}" ;; esac
    case .$hh in *.[Xx][Nn]--*) usage "${URL_HOST}" ;; esac
    n4=0
    while [ -n "$h4" ]; do
      p4=\${h4%%.*}
      case $p4 in ''|*[!0-9]*|0?*|????*) usage "${URL_HOST}" ;; esac
      [ "$p4" -le 255 ] || usage "${URL_HOST}"
      n4=$((n4 + 1))
      case $h4 in *.*) h4=\${h4#*.} ;; *) h4= ;; esac
    done
    [ "$n4" -eq 0 ] || [ "$n4" -eq 4 ] || usage "${URL_HOST}"
    ;;
esac
# An event is a name (never a path: no dot, no slash), as every agent's are.
case $event in *[!A-Za-z0-9_-]*) usage "${EVENT_NAME_PROBLEM}" ;; esac
[ "\${#event}" -le 128 ] || usage "${EVENT_NAME_PROBLEM}"
# The URL as it may be shown: without a user name and password (through the last @ before the path).
case $authority in *@*) shown="\${url%%://*}://\${authority##*@}\${after#"$authority"}" ;; *) shown=$url ;; esac
case $onu in ''|allow|block) ;; *) usage ;; esac
[ -n "$deadline" ] && d=$deadline
case $d in ''|.|*[!0-9.]*|*.*.*) usage ;; esac
di=\${d%%.*} df=
# Decimal, as 'hookbox forward' reads it: sh arithmetic would read 010 as octal, and a number past
# ten digits out of its range (any agent gives up long before).
di=\${di#"\${di%%[!0]*}"}
case $di in ??????????*) di=999999999 ;; esac
case $d in *.*) df=\${d#*.} ;; esac
df=\${df}000
df=\${df%"\${df#???}"}
dms=$(( \${di:-0} * 1000 + 1$df - 1000 ))
[ "$dms" -gt 0 ] || usage
# Answer before the agent's deadline: 90 %, and at least 0.5 s early.
by=$(( dms - 500 ))
[ $(( dms * 9 / 10 )) -lt "$by" ] && by=$(( dms * 9 / 10 ))
[ "$by" -lt 100 ] && by=100
if [ -n "$timeout" ]; then
  case $timeout in ''|*[!0-9.]*) usage ;; esac
  tms=\${timeout%%.*}
  tms=\${tms#"\${tms%%[!0]*}"}
  case $tms in ??????????*) tms=2147483647 ;; esac
  tms=\${tms:-0}
  [ "$tms" -gt 0 ] || usage
  # never past a --deadline given beside it: the agent would give up on the line first
  if [ -n "$deadline" ] && [ "$tms" -gt "$by" ]; then tms=$by; fi
else
  tms=$by
fi
# As long as a timer can wait ('hookbox forward' caps it there too).
[ "$tms" -gt 2147483647 ] && tms=2147483647
r=$(( tms % 1000 + 1000 ))
mt="$(( tms / 1000 )).\${r#1}"
# Sets e to $1 fit for a URL: as it is when plain, else every byte percent-encoded.
enc() {
  case $1 in
    *[!A-Za-z0-9_.~-]*) e=$(printf %s "$1" | od -An -v -tx1 | awk '{ for (i = 1; i <= NF; i++) printf "%%%s", $i }') ;;
    *) e=$1 ;;
  esac
}
base=$url
while :; do case $base in */) base=\${base%/} ;; *) break ;; esac; done
enc "$event"; path="$base/v1/events/$e?format=$q&brief=true"
if [ -n "$workspace" ]; then enc "$workspace"; path="$path&workspace=$e"; fi
if [ -n "$interactive" ]; then enc "$interactive"; path="$path&interactive=$e"; fi
# -q first: no .curlrc (a repository can point CURL_HOME at its own); no proxy: the token and the
# event go to --url and nowhere else, as hookbox forward sends them. The event is streamed from
# stdin as it arrives (-T -, chunked), so --max-time covers its arrival too: an agent that never
# ends it is answered by the deadline all the same. HTTP/1.1 only, as Node's client speaks it: the
# answer's status line is judged as 'hookbox forward' judges it, whatever a TLS proxy offers.
set -- -q -sS --noproxy '*' --globoff --http1.1 --proto =http,https --suppress-connect-headers -X POST -T - -H 'content-type: application/json' -H 'Expect:' -D - -w '\n%{http_code} x%{exitcode} %{size_download} %{errormsg}' --max-time "$mt"
# hookbox answers by then with what is decided so far, a little before curl gives up: 5 % of the
# wait sooner, at least 300 ms and at most 2 s, for the answer's way back ('hookbox forward' alike).
# curl streams the event as it arrives: hookbox counts from the request's start, as curl does.
am=$(( tms / 20 ))
[ "$am" -lt 300 ] && am=300
[ "$am" -gt 2000 ] && am=2000
if [ "$tms" -ge $(( am + 100 )) ]; then
  aby=$(( tms - am ))
  [ "$aby" -gt 3600000 ] && aby=3600000
  set -- "$@" -H "hookbox-answer-by-ms: $aby"
fi
# HOOKBOX_CANARY: 'hookbox doctor' runs this very line to see whether a block reaches the agent.
[ -n "\${HOOKBOX_CANARY-}" ] && set -- "$@" -H 'hookbox-canary: block'
# stdin as it is — or, closed by the agent, as /dev/null (an empty event, as Node reads it): dash
# would end the script on the bare exec (command keeps it going; its message is not shown).
exec 5>&2
command exec 2>/dev/null 4<&0 || exec 4</dev/null
exec 2>&5 5>&-
# awk reads hookbox's answer: without it no answer can be read, a block hookbox gave included —
# this line is wrong, not hookbox out of reach.
command -v awk >/dev/null 2>&1 || wrongline "awk is not on PATH: hookbox's answer cannot be read (install a POSIX awk, or use hookbox forward)"
# The failure mode hookbox last told is kept in one small file per URL + token (hashed) + event, as
# 'hookbox forward' keeps it — only in the user's own absolute cache folder (a relative
# XDG_CACHE_HOME is the repository's, a missing HOME leaves only a shared /tmp): no cache otherwise.
cdir= hasher=
case \${XDG_CACHE_HOME:-} in
  /*) cdir=$XDG_CACHE_HOME/hookbox ;;
  '') case \${HOME:-} in /*) cdir=$HOME/.cache/hookbox ;; esac ;;
esac
if [ -n "$cdir" ]; then
  if command -v sha256sum >/dev/null 2>&1; then hasher=sha256sum
  elif command -v shasum >/dev/null 2>&1; then hasher=shasum
  fi
fi
# Read no further than an answer of hookbox's can be, and its headers: past that, head ends, curl
# stops on its next write, and awk reads no more (what it got is no answer: the failure mode).
# The cache file's hash is taken in the same subshell, after the answer (a process fewer to start
# on every call): its line comes last, after a line '#' of its own.
cap=16842752
hashline() {
  printf '\n#'
  case $hasher in
    sha256sum) printf '%s\n%s\n%s' "$url" "$token" "$event" | sha256sum 2>/dev/null ;;
    shasum) printf '%s\n%s\n%s' "$url" "$token" "$event" | shasum -a 256 2>/dev/null ;;
  esac
}
case $token in
  ?*)
    # The token reaches curl on a pipe, never on its command line.
    out=$(printf 'authorization: Bearer %s\n' "$token" | curl "$@" -H @/dev/fd/3 -- "$path" 3<&0 <&4 2>/dev/null | head -c "$cap" | LC_ALL=C awk -v fmt="$format" -v ev="$event" -v cap="$cap" "$AWK"; c=$?; hashline; exit "$c") ;;
  *)
    out=$(curl "$@" -- "$path" <&4 2>/dev/null | head -c "$cap" | LC_ALL=C awk -v fmt="$format" -v ev="$event" -v cap="$cap" "$AWK"; c=$?; hashline; exit "$c") ;;
esac
aw=$?
# the hash: what follows the last '#' line; the answer: what precedes it, without its trailing newlines (as \$( ) leaves it)
h=\${out##*"$nl#"}
out=\${out%"$nl#"*}
while :; do case $out in *"$nl") out=\${out%"$nl"} ;; *) break ;; esac; done
told=\${out%%"$nl"*} rest=\${out#*"$nl"}
# The cache file, from the hash taken beside the call. Without a hash there is no file of this URL,
# token and event alone: no cache.
h=\${h%% *}
case $h in ????????????????????????*) f="$cdir/on-failure-\${h%"\${h#????????????????????????}"}" ;; *) f= ;; esac
[ -n "$cdir" ] || f=
# A folder or regular file of this user's, not a link (never a FIFO, which would hold the call).
own() { [ ! -h "$1" ] && [ -O "$1" ] && [ "$2" "$1" ]; }
# its first line, exactly ('hookbox forward' alike)
readcache() { cur=; [ -n "$f" ] && own "$cdir" -d && own "$f" -f && IFS= read -r cur < "$f"; }
if [ -n "$told" ]; then
  readcache
  if [ -n "$f" ] && [ "$cur" != "$told" ] && mkdir -p "$cdir" 2>/dev/null && own "$cdir" -d && { [ ! -e "$f" ] && [ ! -h "$f" ] || own "$f" -f; }; then
    printf '%s\n' "$told" 2>/dev/null > "$f"
  fi
fi
case $rest in
  '?'*)
    # its exit code's line (short: the shell strips no long prefix — dash's cost grows with its square), then the answer
    code=\${rest%%"$nl"*} ans=
    case $rest in *"$nl"*) ans=\${rest#*"$nl"} ;; esac
    blocks=\${code#*' '} code=\${code#'?'}
    code=\${code%%' '*}
    case $code:$ans in
      [0-9]:=*|[0-9][0-9]:=*|[0-9][0-9][0-9]:=*)
        printf '%s\n' "\${ans#=}"
        # awk wrote the reason itself, unless it failed to (then the reason is said, not lost)
        [ "$aw" = 0 ] || [ "$blocks" != b ] || printf 'blocked by hookbox\n' >&2 2>/dev/null
        exit "$code" ;;
    esac
    problem="hookbox answered, but its answer was not read whole" ;;
  !T) problem="hookbox did not answer within $tms ms (the agent's $d s deadline is near)" ;;
  !U*) problem="hookbox unreachable at $(HOOKBOX_TEXT=$shown LC_ALL=C awk -v mode=text "$AWK" </dev/null): \${rest#!U}" ;;
  !A*) problem=\${rest#!A} ;;
  !W*) wrongline "$shown \${rest#!W}" ;;
  # awk said nothing of the answer (it failed, or was stopped): what hookbox answered is not known — the
  # forwarder's own failure, never hookbox out of reach (which a block it gave would pass as)
  *) wrongline "$shown: awk ended (exit $aw) without a reading of hookbox's answer: what hookbox answered is not known (a POSIX awk is needed, not BusyBox's; or use hookbox forward)" ;;
esac
# Who decides what a failure means: --on-unreachable, else what hookbox said (now or last time), else allow.
mode= why=
if [ -n "$onu" ]; then
  mode=$onu why="--on-unreachable = $onu"
elif [ -n "$told" ]; then
  mode=$told why="on_failure = $told (the tenant's, from hookbox)"
else
  readcache
  # the path is the environment's (XDG_CACHE_HOME, HOME): escaped for the terminal
  case $cur in allow|block) mode=$cur why="on_failure = $cur (the tenant's, as hookbox last said: $(HOOKBOX_TEXT=$f LC_ALL=C awk -v mode=text "$AWK" </dev/null))" ;; esac
fi
if [ -z "$mode" ]; then
  printf '{}\n'
  printf '%s (passing through: no failure mode known yet for this hookbox and token (set on_failure for the tenant, or pass --on-unreachable))\n' "$problem" >&2
  # said where it is why: without a hasher no failure mode is ever kept
  [ -n "$cdir" ] && [ -z "$hasher" ] && printf 'forward.sh: neither sha256sum nor shasum is on PATH: no failure mode hookbox told is kept (install one, or use hookbox forward)\n' >&2
  exit 0
fi
if [ "$mode" = allow ]; then
  printf '{}\n'
  printf '%s (passing through: %s)\n' "$problem" "$why" >&2
  exit 0
fi
# Where a block keeps the agent going (a stop: another turn; a teammate idle; a task completed),
# hookbox's failure lets the agent go on as it would, not told the error as its next step. In the C
# locale, as everywhere here: a Turkish one lowers TeammateIdle's I to a dotless ı (or not at all).
lower "$event"
case $l in
  stop|agentstop|subagentstop|afteragent|teammateidle|taskcompleted)
    printf '{}\n'
    printf '%s (blocking: %s; at %s a block would keep the agent going: it goes on as it would)\n' "$problem" "$why" "$(HOOKBOX_TEXT=$event LC_ALL=C awk -v mode=text "$AWK" </dev/null)" >&2
    exit 0 ;;
esac
# Exit 2 with the reason on stderr blocks in every one of these agents; the agent's own deny JSON is printed too.
reason="$problem (blocking: $why)"
# Should awk fail, a block all the same: cosh reads this JSON, the others exit 2.
say_deny "$format" "$event" "$reason"
printf '%s\n' "$reason" >&2
json_block_only "$format" "$event" && exit 0
exit 2
`.replaceAll("\\${", "${");
