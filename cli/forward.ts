/**
 * @module `hookbox forward`: the one-line hook an agent runs. Reads the event on stdin, posts it to
 * hookbox, prints the agent-native answer and exits with the agent-native code. On a block it also
 * writes the reason to stderr (Codex and Gemini CLI read it; the others ignore it on exit 0). Both
 * may reach a terminal: the answer is printed as JSON with DEL and C1 escaped too, the reason and
 * any message with every control but newline and tab escaped (terminal.ts).
 */
import { closeSync, constants, existsSync, fstatSync, ftruncateSync, lstatSync, mkdirSync, openSync, readSync, writeSync } from "node:fs";
import { isAbsolute } from "node:path";
import type { Readable } from "node:stream";
import { parseArgs } from "node:util";
import { agentDeadlineS, asciiLower, CURSOR_NO_AGENT_MESSAGE } from "../engine/agents.js";
import { headBytes } from "../engine/detached.js";
import { block, safeJson, sendableToken, shownUrl, TOKEN_NOT_SENDABLE, withoutUserinfo } from "./terminal.js";

/** An error answer's message as the forwarders pass it on: its first MAX_SAID_BYTES, and "…" when cut. */
function said(message: string): string {
  const kept = headBytes(message, MAX_SAID_BYTES);
  return kept.length < message.length ? `${kept}…` : message;
}

/**
 * Where a block keeps the agent going (each agent's name, lower case): its stops, and Claude Code's
 * TeammateIdle (the teammate works on) and TaskCompleted (the task stays open).
 */
const STOP_EVENTS = new Set(["stop", "agentstop", "subagentstop", "afteragent", "teammateidle", "taskcompleted"]);

/** Where a Codex block is exit 2 (lower case); elsewhere Codex reads the answer's JSON at exit 0. */
const CODEX_EXIT_2_EVENTS = new Set(["pretooluse", "permissionrequest"]);

/** Agent dialects the forwarder asks hookbox for. */
const FORMATS = { cosh: "cosh", copilot: "copilot", claude: "claude", codex: "codex", gemini: "gemini", cursor: "cursor" } as const;
export type AgentFormat = keyof typeof FORMATS;
type Mode = "allow" | "block";

const MAX_TIMER_MS = 2 ** 31 - 1;
/** @default 16 MiB — an answer larger than this is no answer (hookbox's own are far smaller). */
export const MAX_ANSWER_BYTES = 16 * 1024 * 1024;
/**
 * @default 200 — an answer body of more lines than this (200 or more line feeds) is no answer:
 * hookbox's are one line, and forward.sh's awk keeps no more of it.
 */
export const MAX_ANSWER_LINES = 200;
/**
 * @default 128 — an answer whose JSON nests arrays and objects deeper than this (the answer itself
 * the first level) is no answer: hookbox's nest 70 at most (an event's arguments, 64, inside its
 * output), and forward.sh's awk reads no deeper.
 */
export const MAX_ANSWER_DEPTH = 128;
/**
 * @default 4 KiB — of an error answer's message, what the forwarders pass on (cut before a
 * character, never inside one): forward.sh hands it to awk in its environment, where a few hundred
 * KiB would fail the exec.
 */
export const MAX_SAID_BYTES = 4096;
/**
 * @default 16 MiB — the most of stdin read as the event: hookbox takes a mebibyte at most (413 past
 * it, with the tenant's failure mode), so a larger event goes cut one byte past this — refused as the
 * whole of it forward.sh streams is — and the forwarder's memory stays bounded whatever the agent writes.
 */
export const MAX_STDIN_BYTES = 16 * 1024 * 1024;



export const FORWARD_USAGE = `usage: hookbox forward --url URL --event NAME [--format cosh|copilot|claude|codex|gemini|cursor]
       [--workspace ID] [--token T | env HOOKBOX_TOKEN] [--on-unreachable allow|block] [--deadline SECONDS]
       [--timeout MS] [--interactive true|false]
       hookbox forward --print-script > .hookbox/forward.sh   (the same in POSIX sh + curl, no Node per call)`;

/** The flags of `hookbox forward` (forward.sh takes the same, but --print-script). */
export const FORWARD_OPTIONS = {
  url: { type: "string" }, event: { type: "string" }, format: { type: "string", default: "cosh" },
  workspace: { type: "string" }, token: { type: "string" }, "on-unreachable": { type: "string" },
  deadline: { type: "string" }, timeout: { type: "string" }, interactive: { type: "string" },
  "print-script": { type: "boolean" },
} as const;

/**
 * A line whose flags are wrong is a guard that never reaches hookbox: it blocks — exit 2 with the
 * problem on stderr, which every agent reads as a block (Claude Code, Codex, Gemini CLI, Cursor,
 * cosh; Copilot before a tool) — never the non-blocking error an agent lets the call through on.
 * Where a block would keep the agent going (its stops), it lets it stop. `hookbox doctor` names it.
 */
function usageError(problem: string, argv: string[], usage = true): { stdout: string; stderr: string; code: number } {
  const head = usage ? `${FORWARD_USAGE}\n` : "";
  const text = `hookbox forward: ${block(problem)}`;
  const event = lastFlag(argv, "event");
  if (event !== undefined && STOP_EVENTS.has(asciiLower(event))) return { stdout: "{}\n", stderr: `${head}${text} (at ${block(event)} a block would keep the agent going: it goes on)\n`, code: 0 };
  const reason = `${text}: blocking (a guard whose line is wrong lets nothing through; \`hookbox doctor\` checks each line)`;
  // The block the failure mode gives, in the line's own format where it names one (cosh unless told).
  // No --format: cosh, the default; an empty one is no agent's.
  const format = lineFormat(lastFlag(argv, "format") ?? "cosh", event ?? "");
  const output = format ? denyOutput(format, event ?? "", reason) : { decision: "block", reason };
  return { stdout: `${safeJson(output)}\n`, stderr: `${head}${reason}\n`, code: format && jsonBlockOnly(format, event ?? "") ? 0 : USAGE_BLOCK_EXIT };
}

/**
 * The agent a line is asked and answered for: its `--format`'s (undefined for one that is no
 * agent's) — but Gemini's wherever it names BeforeToolSelection, which no other agent has: another's
 * answer there, a block too, would be a decision Gemini does not read, every tool left.
 */
export function lineFormat(named: string, event: string): AgentFormat | undefined {
  if (asciiLower(event) === "beforetoolselection") return "gemini";
  return Object.hasOwn(FORMATS, named) ? (named as AgentFormat) : undefined;
}

/**
 * Where the agent reads a block from the JSON at exit 0 only — any exit 2 its hook's failure: cosh
 * (cosh-hooks.md: a non-zero exit "does not affect main flow"), Codex's compaction and its
 * session's and subagent's start (answers without a decision: the stop read from exit 0's JSON), and
 * Gemini's BeforeToolSelection (no tool left is its toolConfig, which a Gemini CLI that reads stdout
 * at exit 0 only would miss), and Claude Code's PermissionRequest (its hooks reference: exit 2 is
 * not honored there, and JSON is read at exit 0 only: its decision object's deny is the block), and
 * Copilot's prompt and post-tool events (copilot-hooks.md: exit 2 is a warning there; VS Code reads
 * the block's JSON at exit 0).
 */
function jsonBlockOnly(format: AgentFormat, event: string): boolean {
  return format === "cosh" || (format === "codex" && CODEX_STOP_ONLY.has(asciiLower(event))) || picksTools(format, event) || (format === "claude" && asciiLower(event) === "permissionrequest") || (format === "copilot" && COPILOT_JSON_BLOCK.has(asciiLower(event)));
}
/** Copilot's prompt events, the CLI's name and VS Code's (lower case). */
const COPILOT_PROMPT_EVENTS: ReadonlySet<string> = new Set(["userpromptsubmit", "userpromptsubmitted"]);
/** Where Copilot's exit 2 is a warning but VS Code reads a block from the JSON at exit 0: the prompt and after a tool (lower case). */
export const COPILOT_JSON_BLOCK: ReadonlySet<string> = new Set([...COPILOT_PROMPT_EVENTS, "posttooluse"]);
/** Gemini's BeforeToolSelection: no decision is read there, a block is no tool left to the model. */
const picksTools = (format: AgentFormat, event: string): boolean => format === "gemini" && asciiLower(event) === "beforetoolselection";

/** Codex's events whose answer takes no decision, where a block is the stop it reads at exit 0 (`continue: false`). */
export const CODEX_STOP_ONLY: ReadonlySet<string> = new Set(["precompact", "sessionstart", "subagentstart"]);

/** What a usage error exits with, but for cosh (whose block is its JSON at exit 0): 2, a block to every other agent. */
export const USAGE_BLOCK_EXIT = 2;

/** The flags that take a value: each takes the word after it (`--name v`), or its own (`--name=v`). */
const VALUE_FLAGS = new Set(Object.entries(FORWARD_OPTIONS).filter(([, o]) => o.type === "string").map(([name]) => `--${name}`));

/**
 * A flag's value as a command line gives it last, read as forward.sh reads it ahead of its flags:
 * left to right, each flag that takes a value taking the next word, up to `--`.
 */
function lastFlag(argv: string[], name: string): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (word === "--") break;
    if (VALUE_FLAGS.has(word)) {
      if (i + 1 >= argv.length) break;
      if (word === `--${name}`) value = argv[i + 1];
      i++;
    } else if (word.startsWith(`--${name}=`)) value = word.slice(name.length + 3);
  }
  return value;
}

/** A failure of the forwarder itself (no answer could be made): a block, as a usage error is. */
export function forwardFailed(err: unknown, argv: string[]): { stdout: string; stderr: string; code: number } {
  return usageError(`failed: ${String((err as Error)?.message ?? err)}`, argv, false);
}

/** Milliseconds on a monotonic clock: the `performance` global would load perf_hooks into every call's start-up. */
const monotonicMs = () => Number(process.hrtime.bigint()) / 1e6;

/**
 * `hookbox forward` as a command, from either entry (hookbox.ts, main.ts): prints the answer and
 * ends the process once it is out — stdin the agent keeps open, or a name lookup still running (a
 * DNS server that never answers outlives the request it was for), must not keep the agent waiting
 * past its deadline. A failure of its own is a block too, never an exit the agent lets the call through on.
 */
export function forwardCommand(argv: string[]): void {
  const answer = (r: { stdout: string; stderr: string; code: number }) => {
    // stderr's stream is made only when there is something to say (it costs a start-up a millisecond or two)
    if (r.stderr) process.stderr.write(r.stderr);
    process.stdout.write(r.stdout, () => process.exit(r.code));
  };
  forward(argv, { stdin: process.stdin, env: process.env }).then(answer, (err: unknown) => answer(forwardFailed(err, argv)));
}

export async function forward(argv: string[], io: { stdin: Readable; env: NodeJS.ProcessEnv; cacheDir?: string }): Promise<{ stdout: string; stderr: string; code: number }> {
  const options = FORWARD_OPTIONS;
  let values: ReturnType<typeof parseArgs<{ args: string[]; options: typeof options }>>["values"];
  try {
    let tokens: { kind: string; rawName?: string; value?: string; inlineValue?: boolean }[];
    ({ values, tokens } = parseArgs({ args: argv, options, tokens: true }));
    // `--` ends no flag list on a hook line (forward.sh refuses it too): a usage error, never a forward.
    if (tokens.some((t) => t.kind === "option-terminator")) return usageError("-- is not a flag of hookbox forward", argv);
    // A value given apart never starts with "-": parseArgs refuses "-x" there, but takes a lone "-",
    // which forward.sh (and hookbox doctor) refuse — one line, one reading.
    const dashed = tokens.find((t) => t.kind === "option" && t.inlineValue === false && t.value?.startsWith("-"));
    if (dashed) return usageError(`${dashed.rawName} has no value of its own (a value given apart cannot start with "-": write ${dashed.rawName}=${dashed.value})`, argv);
  } catch (err) {
    // an unknown flag, or one without its value: the event, if it can be read, says whether this is a stop
    return usageError((err as Error).message.split("\n")[0]!, argv);
  }
  // The script, only when asked for alone: on a hook line with other flags it would print a script
  // and exit 0 — an allow for every agent — where a wrong line must block.
  if (values["print-script"]) {
    if (argv.length !== 1) return usageError("--print-script takes no other flag (it prints the shell forwarder, it forwards nothing)", argv);
    return { stdout: (await import("./forward-script.js")).FORWARD_SCRIPT, stderr: "", code: 0 };
  }
  const named = values.format!;
  // Its deadline and its answer: the agent's the line is for (a --format that is no agent's is refused below).
  const format = lineFormat(named, values.event ?? "") ?? (named as AgentFormat);
  const override = values["on-unreachable"];
  // --deadline: seconds in decimal digits with at most one point, at least 1 ms, as forward.sh reads
  // it (no 0x1e, 1e10, Infinity; 010 is ten)
  const deadlineS = values.deadline === undefined ? agentDeadlineS(format, values.event ?? "") : /^(?:\d+\.?\d*|\.\d+)$/.test(values.deadline) ? Number(values.deadline) : NaN;
  // --timeout: whole milliseconds, at least 1 (as forward.sh reads it)
  const badTimeout = values.timeout !== undefined && !(/^[0-9.]+$/.test(values.timeout) && parseInt(values.timeout, 10) > 0);
  // The first thing wrong with the line.
  const problem0 = ((): string | undefined => {
    if (!values.url) return "--url is missing";
    const url = urlProblem(values.url);
    if (url !== undefined) return url;
    if (!values.event) return "--event is missing";
    if (!EVENT_NAME.test(values.event)) return EVENT_NAME_PROBLEM;
    if (!Object.hasOwn(FORMATS, named)) return `--format ${named} is not one of cosh, copilot, claude, codex, gemini, cursor`;
    if (override !== undefined && override !== "allow" && override !== "block") return "--on-unreachable must be allow or block";
    if (!(Math.floor(deadlineS * 1000) > 0)) return "--deadline must be a number of seconds, at least 0.001";
    if (badTimeout) return "--timeout must be a whole number of milliseconds, at least 1";
    if (values.interactive !== undefined && values.interactive !== "true" && values.interactive !== "false") return "--interactive must be true or false";
    return undefined;
  })();
  if (problem0 !== undefined || !values.url || !values.event) return usageError(problem0 ?? "--url and --event are needed", argv);
  const token = values.token ?? io.env.HOOKBOX_TOKEN;
  // Every tenant has a token: a line without one is refused by hookbox on every call.
  if (!token) return usageError("no token: set HOOKBOX_TOKEN (or --token)", argv);
  // One no header can carry (a CR from a CRLF .env file, say) never reaches hookbox: a wrong line, never "unreachable".
  if (!sendableToken(token)) return usageError(TOKEN_NOT_SENDABLE, argv, false);
  // Answer before the agent's deadline, counted from this process's start: 90 %, and at least 0.5 s early.
  const answerByMs = Math.min(deadlineS * 1000 - 500, deadlineS * 900) - process.uptime() * 1000;
  const byDeadlineMs = Math.round(Math.max(100, answerByMs));
  // --timeout in place of that, but never past a --deadline given beside it: the forwarder answers
  // before the agent gives up on it (the agent's own default is no failure mode of the tenant's).
  // A timer takes at most 2^31 − 1 ms (longer ones fire at once): more than any agent waits.
  const asked = values.timeout !== undefined ? parseInt(values.timeout, 10) : undefined;
  const timeoutMs = Math.min(MAX_TIMER_MS, asked === undefined ? byDeadlineMs : values.deadline !== undefined ? Math.min(asked, byDeadlineMs) : asked);
  const cache = modeCache(io.cacheDir ?? cacheDirOf(io.env), values.url, token, values.event);

  // One clock for the whole call, the event's arrival on stdin included: an agent that is slow to
  // write it (or never ends it) is answered by the deadline all the same.
  const signal = AbortSignal.timeout(timeoutMs);
  const startedMs = monotonicMs();
  // brief: what the agent acts on only — what hooks wrote beside their decisions (the records, in
  // the trace) can never make the answer larger than MAX_ANSWER_BYTES.
  const query = new URLSearchParams({ format: FORMATS[format], brief: "true" });
  if (values.workspace) query.set("workspace", values.workspace);
  if (values.interactive) query.set("interactive", values.interactive);
  const url = `${values.url.replace(/\/+$/, "")}/v1/events/${encodeURIComponent(values.event)}?${query}`;
  let problem: string;
  let told: Mode | undefined;
  try {
    const body = await readAll(io.stdin, signal);
    // What is left of this process's wait once the event is in, less the way back (answerMarginMs).
    const leftMs = timeoutMs - (monotonicMs() - startedMs);
    const answerByMs = Math.min(Math.floor(leftMs - answerMarginMs(leftMs)), 3_600_000);
    const res = await post(url, body, (mode) => {
      // Told before the body arrives: a body that then fails still knows the tenant's failure mode.
      told = mode;
      cache.save(mode);
    }, () => cache.name(), {
      "content-type": "application/json",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      // HOOKBOX_CANARY: `hookbox doctor` runs this very line to see whether a block reaches the agent.
      ...(io.env.HOOKBOX_CANARY ? { "hookbox-canary": "block" } : {}),
      // hookbox answers by then with what is decided so far, a little before this process gives up.
      ...(answerByMs >= 100 ? { "hookbox-answer-by-ms": String(answerByMs) } : {}),
    }, signal, io.env);
    // An answer of more lines than hookbox's ever are is none (forward.sh reads no more of it),
    // judged by its status and headers alone where they say the line is wrong.
    if (linesPast(res.body, MAX_ANSWER_LINES)) {
      const wrong = wrongLine(res.status, told !== undefined);
      if (wrong) return usageError(`${shownUrl(values.url)} ${wrong} (${res.status}: no decision)`, argv, false);
      throw new NoAnswer(`hookbox's answer is larger than ${MAX_ANSWER_BYTES} bytes or ${MAX_ANSWER_LINES} lines: no answer`);
    }
    // JSON nested deeper than hookbox's answers ever are is no answer either (forward.sh alike).
    const answer = (nestedPast(res.body, MAX_ANSWER_DEPTH) ? {} : (parseJson(res.body) ?? {})) as { output?: unknown; exit_code?: number; decision?: string; reason?: string; error?: { message?: string } };
    if (res.ok && answer.output !== undefined) {
      // Codex has no ask: hookbox's codex answer says it as a deny, and the forwarder blocks it as one.
      const blocked = answer.decision === "block" || (format === "codex" && answer.decision === "ask");
      const reason = typeof answer.reason === "string" ? answer.reason : "blocked by hookbox";
      return {
        stdout: `${safeJson(answer.output)}\n`,
        stderr: blocked ? `${block(String(reason))}\n` : "",
        // Codex reads a block before a tool from exit code 2 with the reason on stderr; elsewhere its
        // JSON (continue: false, context) is read at exit 0 only. An exit code is 0–255, or none.
        code: blocked && format === "codex" && CODEX_EXIT_2_EVENTS.has(asciiLower(values.event)) ? 2 : exitCodeOf(answer.exit_code),
      };
    }
    const message = answer.error?.message;
    // Made safe to show, then cut: at most MAX_SAID_BYTES of what is shown (forward.sh alike).
    const text = typeof message === "string" ? said(block(message)) : "no decision";
    // A line hookbox refuses, or one whose URL answers as no hookbox does: wiring to fix, not a
    // hookbox that cannot decide — it blocks as any wrong line does, whatever the failure mode.
    const wrong = wrongLine(res.status, told !== undefined);
    if (wrong) return usageError(`${shownUrl(values.url)} ${wrong} (${res.status}: ${text})`, argv, false);
    problem = `hookbox answered ${res.status}: ${text}`;
  } catch (err) {
    const e = err as Error;
    // Something at the URL answered, but not in HTTP as hookbox writes it (headers past
    // MAX_HEADER_BYTES, a malformed line), before any failure mode was told: no hookbox there.
    if (isGarbled(e) && told === undefined && !signal.aborted) return usageError(`${shownUrl(values.url)} answered with what no hookbox sends (${block(e.message)}): ${NOT_HOOKBOX}`, argv, false);
    problem = e instanceof NoAnswer
      ? e.message
      : e instanceof StdinTooSlow
      ? `the event did not arrive on stdin within ${Math.round(timeoutMs)} ms (the agent's ${deadlineS} s deadline is near)`
      : signal.aborted
        ? `hookbox did not answer within ${Math.round(timeoutMs)} ms (the agent's ${deadlineS} s deadline is near)`
        : `hookbox unreachable at ${shownUrl(values.url)}: ${block(withoutUserinfo(errorText(e)))}`;
  }
  // Who decides what a failure means: --on-unreachable, else what hookbox said (now or last time), else allow.
  const known = override !== undefined ? { mode: override as Mode, from: "--on-unreachable" } : told ? { mode: told, from: "on_failure (the tenant's, from hookbox)" } : cache.load();
  const mode: Mode = known?.mode ?? "allow";
  const verb = mode === "block" ? "blocking" : "passing through";
  const why = known
    ? `${verb}: ${known.from.replace(/^(\S+)(.*)$/, `$1 = ${mode}$2`)}`
    : "passing through: no failure mode known yet for this hookbox and token (set on_failure for the tenant, or pass --on-unreachable)";
  if (mode === "allow") return { stdout: "{}\n", stderr: `${problem} (${why})\n`, code: 0 };
  // Where the agent is about to stop, a block would keep it going (another turn, told the error):
  // hookbox's failure lets it stop.
  if (STOP_EVENTS.has(asciiLower(values.event))) return { stdout: "{}\n", stderr: `${problem} (${why}; at ${block(values.event)} a block would keep the agent going: it goes on as it would)\n`, code: 0 };
  // Exit 2 with the reason on stderr blocks in every one of these agents (copilot-hooks.md: for
  // preToolUse); the agent's own deny JSON is printed too, for those that read stdout.
  const reason = `${problem} (${why})`;
  return { stdout: `${safeJson(denyOutput(format, values.event, reason))}\n`, stderr: `${reason}\n`, code: jsonBlockOnly(format, values.event) ? 0 : 2 };
}

/**
 * How much sooner than this process gives up hookbox is asked to answer (`Hookbox-Answer-By-Ms`),
 * for the answer's way back and its reading: 5 % of the wait left, at least 300 ms and at most 2 s
 * (forward.sh alike). hookbox counts the wait from the request's arrival.
 */
export function answerMarginMs(leftMs: number): number {
  return Math.max(300, Math.min(2_000, Math.floor(leftMs / 20)));
}

/**
 * Why an answer that is no decision says the line itself is wrong, or undefined where hookbox could
 * not decide. hookbox refuses a token that names no tenant (401) and tells its failure mode with every
 * other answer on /v1: one without it that is no gateway's trouble (a redirect, a 404 of another
 * server, a page) came from something else at that URL. A gateway's 429, 408 or 5xx is hookbox out
 * of reach: the failure mode decides.
 */
export function wrongLine(status: number, told: boolean): string | undefined {
  if (status === 401 || status === 403) return TOKEN_REFUSED;
  if (told || status === 408 || status === 429 || status >= 500 || status < 200) return undefined;
  return `answered ${status} ${NOT_HOOKBOX}`;
}

/** What both forwarders say of a refused token, and of an answer no hookbox gave (after "answered <status>"). */
export const TOKEN_REFUSED = "refused the token: check --token or HOOKBOX_TOKEN";
export const NOT_HOOKBOX = "without hookbox's Hookbox-On-Failure header: no hookbox at this --url (a wrong URL, or a proxy before hookbox answering for it)";

/**
 * What --url may be, read alike by both forwarders before anything is sent: http(s)://HOST[:PORT][/PATH]
 * in printable ASCII, a user name and password before the host aside — without a byte that curl
 * and Node's URL parser read apart (a backslash is a path's to Node, a user name's to curl: the
 * token would go to two hosts), nor `?` or `#` (the event's path goes after it). The host: a name
 * of letters, digits, dots and hyphens, or an IPv6 address in brackets; a port of at most 65535.
 */
export function urlProblem(url: string): string | undefined {
  if (!/^https?:\/\//i.test(url)) return "--url must be http:// or https://";
  if (/[^\x21-\x7e]|[\\"<>^`{|}?#]/.test(url)) return URL_BYTES;
  const after = url.slice(url.indexOf("://") + 3);
  const authority = after.split("/", 1)[0]!;
  const at = authority.lastIndexOf("@");
  // curl takes the first @ as the user name's end, Node the last: the token would go to two hosts
  if (authority.indexOf("@") !== at) return URL_USERINFO;
  // Node decodes a user name and password before it sends anything (%zz, or %ff of no UTF-8, fail
  // it): only escapes of ASCII, which both read alike.
  if (at !== -1 && /%(?!0[1-9A-Fa-f]|[1-7][0-9A-Fa-f])/.test(authority.slice(0, at))) return URL_HOST;
  const m = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::([0-9]{1,5}))?$/.exec(authority.slice(at + 1));
  if (!m || (m[2] !== undefined && !(Number(m[2]) >= 1 && Number(m[2]) <= 65535))) return URL_HOST;
  // A name that ends in a number is an IPv4 address to Node's URL parser (which refuses 999.1.1.1
  // and reads 1.2.3, 0x7f.1 or 127.0.0.1. its own way, where curl asks a resolver): taken as four
  // decimal numbers 0–255 only, as both read them. A label of punycode (xn--) Node may refuse, curl sends.
  if (/(?:^|\.)(?:[0-9]+|0[xX][0-9A-Fa-f]*)\.?$/.test(m[1]!) && !IPV4.test(m[1]!)) return URL_HOST;
  if (/(?:^|\.)xn--/i.test(m[1]!)) return URL_HOST;
  // What Node's URL parser still refuses (an IPv6 address of too few parts, say) is no URL it sends to.
  return URL.canParse(url) ? undefined : URL_HOST;
}
const OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])";
const IPV4 = new RegExp(`^(?:${OCTET}\\.){3}${OCTET}$`);
/** Why a --url is refused (forward.sh says the same). */
export const URL_BYTES = "--url holds a blank, a control or non-ASCII byte, or a character curl and Node read apart (a backslash, a quote or backquote, <, >, ^, a brace or |) or ? or # (the event's path goes after the URL)";
export const URL_HOST = "--url has no host (a name of letters, digits, dots and hyphens, no label starting xn-- — one that ends in a number an IPv4 address of four numbers 0–255 —, or [an IPv6 address]), a port outside 1–65535, or a user name or password with a % that is no escape of ASCII (%01–%7F)";
export const URL_USERINFO = "--url holds more than one @ (an @ in a user name or password is written %40)";
/** What --event may be: a name, as every agent's events are (never a path: no dot, no slash). */
export const EVENT_NAME = /^[A-Za-z0-9_-]{1,128}$/;
export const EVENT_NAME_PROBLEM = "--event must be a name of at most 128 letters, digits, _ and -";

export { TOKEN_NOT_SENDABLE };

/**
 * @default 300 KiB — the answer's headers in all (an interim 1xx answer's counted with the final
 * one's), and under 100 KiB one header line with its CRLF: what curl (forward.sh's) reads at most. A
 * proxy before hookbox may add some of its own, past Node's default of 16 KiB; past either, the
 * answer is none, in both.
 */
const MAX_HEADER_BYTES = 300 * 1024;
const MAX_HEADER_LINE_BYTES = 100 * 1024;

/**
 * What Node's HTTP parser refuses (HPE_…): an answer that is no HTTP as hookbox writes it — but
 * headers past MAX_HEADER_BYTES, which curl does not read either (the failure mode decides, in both).
 * (A header line ended by LF alone is one of these, where forward.sh reads the answer: Node blocks.)
 */
const isGarbled = (err: unknown) => {
  const code = (err as { code?: unknown }).code;
  return typeof code === "string" && code.startsWith("HPE_") && code !== "HPE_HEADER_OVERFLOW";
};

/** A status of fewer than three digits' worth (099, say): Node's parser takes it, curl refuses it as no HTTP. */
const noStatus = () => Object.assign(new Error("a status line without an HTTP status (under 100)"), { code: "HPE_INVALID_STATUS" });

/** The bytes of an answer's status line and header lines, with their CRLFs and the empty line after them. */
function headerBytes(res: { statusMessage?: string; rawHeaders: string[] }): number {
  let bytes = "HTTP/1.1 200 \r\n\r\n".length + (res.statusMessage?.length ?? 0);
  for (const part of res.rawHeaders) bytes += part.length + 2;
  return bytes;
}

/** The event did not arrive on stdin before the deadline. */
class StdinTooSlow extends Error {}

/**
 * All of stdin, or StdinTooSlow once `signal` aborts first; past MAX_STDIN_BYTES its first
 * MAX_STDIN_BYTES + 1 bytes, the rest not read: sent as they are, hookbox refuses them (413) with
 * the tenant's failure mode, as it does the whole event forward.sh streams. Read by its events: an
 * async iterator over it loads more of Node's stream machinery on every call of the command.
 */
function readAll(stdin: Readable, signal: AbortSignal): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    const settle = (err?: Error) => {
      signal.removeEventListener("abort", onAbort);
      stdin.off("data", onData).off("end", onEnd).off("error", onError);
      if (err) reject(err);
      else resolve(Buffer.concat(chunks));
    };
    const onAbort = () => settle(new StdinTooSlow());
    const onEnd = () => settle();
    const onError = (err: unknown) => settle(err instanceof Error ? err : new Error(String(err)));
    const onData = (c: Buffer | string) => {
      const b = typeof c === "string" ? Buffer.from(c) : c;
      bytes += b.length;
      if (bytes > MAX_STDIN_BYTES) {
        stdin.destroy();
        chunks.push(b.subarray(0, b.length - (bytes - MAX_STDIN_BYTES - 1)));
        return settle();
      }
      chunks.push(b);
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    stdin.on("data", onData).on("end", onEnd).on("error", onError);
  });
}

/**
 * Where curl (and so forward.sh) finds the certificate authorities it trusts when told none: the
 * system's bundle where each family of systems keeps it (its environment first: systemCaBundle).
 * Node 20 reads none of them (only its own roots and NODE_EXTRA_CA_CERTS): a hookbox behind an
 * organisation's own CA would be out of reach to `hookbox forward` alone — its failure mode never
 * learnt, every call let through.
 */
const SYSTEM_CA_FILES = ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/ca-bundle.pem", "/etc/ssl/cert.pem"];
/** @default 8 MiB — a CA bundle larger than this is not read (the system's is about 200 KiB) */
export const MAX_CA_BUNDLE_BYTES = 8 * 1024 * 1024;
/** A server certificate that no root Node trusts vouches for (the handshake failed before a byte of the request was sent). */
const UNTRUSTED_CERTIFICATE = new Set(["UNABLE_TO_VERIFY_LEAF_SIGNATURE", "UNABLE_TO_GET_ISSUER_CERT_LOCALLY", "UNABLE_TO_GET_ISSUER_CERT", "SELF_SIGNED_CERT_IN_CHAIN", "DEPTH_ZERO_SELF_SIGNED_CERT"]);

/** A regular file's text, if it is one of at most `maxBytes` (never a FIFO, which would hold the call; never more read than that). */
function regularFileText(file: string, maxBytes: number): string | undefined {
  const fs = process.getBuiltinModule("node:fs");
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    const st = fs.fstatSync(fd);
    if (!st.isFile() || st.size > maxBytes) return undefined;
    const buf = Buffer.alloc(st.size + 1);
    let got = 0;
    for (let n = 1; n > 0 && got < buf.length; got += n) n = fs.readSync(fd, buf, got, buf.length - got, null);
    // one that grew while it was read past what it said: not read
    return got > st.size ? undefined : buf.toString("latin1", 0, got);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * The certificate authorities curl trusts, as its command reads them: `CURL_CA_BUNDLE` alone where
 * it is set (one that cannot be read is none); else `SSL_CERT_FILE`, or the first of the system's
 * bundles, and the certificates of `SSL_CERT_DIR`'s folders (OpenSSL's hashed names) — at most
 * MAX_CA_BUNDLE_BYTES in all.
 */
function systemCaBundle(env: NodeJS.ProcessEnv): string[] | undefined {
  if (env.CURL_CA_BUNDLE) {
    const only = regularFileText(env.CURL_CA_BUNDLE, MAX_CA_BUNDLE_BYTES);
    return only === undefined ? undefined : [only];
  }
  const found: string[] = [];
  let left = MAX_CA_BUNDLE_BYTES;
  const take = (text: string | undefined) => {
    if (text === undefined) return false;
    found.push(text);
    left -= text.length;
    return true;
  };
  if (env.SSL_CERT_FILE) take(regularFileText(env.SSL_CERT_FILE, left));
  else SYSTEM_CA_FILES.some((file) => take(regularFileText(file, left)));
  for (const dir of env.SSL_CERT_DIR ? env.SSL_CERT_DIR.split(":") : []) {
    let names: string[];
    try {
      names = process.getBuiltinModule("node:fs").readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names.filter((n) => /^[0-9a-f]{8}\.\d+$/.test(n)).sort()) take(regularFileText(`${dir}/${name}`, left));
  }
  // each file apart: one that is no PEM hides none of the others (as OpenSSL reads a folder)
  return found.length > 0 ? found : undefined;
}

/**
 * One POST, its connection closed after the answer: node:http starts in a few milliseconds where
 * fetch (undici) takes tens to load, and no keep-alive socket holds the process after the answer.
 * A certificate Node's own roots do not vouch for is checked once more against the CAs curl would
 * trust (systemCaBundle) — read only then, so no call pays for it that does not need it.
 */
async function post(url: string, body: Buffer, onFailure: (mode: Mode) => void, onSent: () => void, headers: Record<string, string>, signal: AbortSignal, env: NodeJS.ProcessEnv): Promise<{ status: number; ok: boolean; body: string }> {
  try {
    return await postOnce(url, body, onFailure, onSent, headers, signal);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (signal.aborted || !/^https:/i.test(url) || code === undefined || !UNTRUSTED_CERTIFICATE.has(code)) throw err;
    const bundle = systemCaBundle(env);
    if (bundle === undefined) throw err;
    const { rootCertificates } = process.getBuiltinModule("node:tls");
    return await postOnce(url, body, onFailure, onSent, headers, signal, [...rootCertificates, ...bundle]);
  }
}

async function postOnce(url: string, body: Buffer, onFailure: (mode: Mode) => void, onSent: () => void, headers: Record<string, string>, signal: AbortSignal, ca?: string[]): Promise<{ status: number; ok: boolean; body: string }> {
  // Only the one the URL needs, loaded synchronously: no ES module loader in the bundled command.
  const { request } = /^https:/i.test(url) ? process.getBuiltinModule("node:https") : process.getBuiltinModule("node:http");
  return new Promise((resolve, reject) => {
    // The headers of every answer to this request, interim ones too, as curl counts them.
    let headersSeen = 0;
    const tooManyHeaders = (res: { statusMessage?: string; rawHeaders: string[] }) => {
      headersSeen += headerBytes(res);
      if (headersSeen > MAX_HEADER_BYTES) return new Error(`the answer's headers are larger than ${MAX_HEADER_BYTES} bytes`);
      // A header line curl would not read: no answer, and nothing it says is taken (forward.sh alike).
      const raw = res.rawHeaders;
      for (let i = 0; i + 1 < raw.length; i += 2) {
        if (raw[i]!.length + raw[i + 1]!.length + 4 >= MAX_HEADER_LINE_BYTES) return new Error(`a header line of the answer is ${MAX_HEADER_LINE_BYTES} bytes or longer`);
      }
      return undefined;
    };
    const req = request(url, { method: "POST", agent: false, signal, lookup: lookupWithin(signal) as never, maxHeaderSize: MAX_HEADER_BYTES, headers: { ...headers, "content-length": String(body.length) }, ...(ca ? { ca } : {}) }, (res) => {
      const over = tooManyHeaders(res);
      if (over) return req.destroy(over);
      if ((res.statusCode ?? 0) < 100) return req.destroy(noStatus());
      const mode = modeOf(res.headers["hookbox-on-failure"]);
      if (mode) onFailure(mode);
      const chunks: Buffer[] = [];
      let size = 0;
      // One that says it is larger than hookbox's answers ever are is not waited for (as forward.sh's curl does not).
      const status = res.statusCode ?? 0;
      // A page too large to read that is no hookbox's (another server's, a proxy's) is judged by its
      // status and headers alone, as forward.sh judges it: a wrong line, not hookbox out of reach.
      const tooLarge = () => {
        if (wrongLine(status, mode !== undefined)) resolve({ status, ok: false, body: "" });
        req.destroy(new Error(`hookbox's answer is larger than ${MAX_ANSWER_BYTES} bytes`));
      };
      if (Number(res.headers["content-length"] ?? 0) > MAX_ANSWER_BYTES) return tooLarge();
      res.on("data", (c: Buffer) => {
        size += c.length;
        if (size > MAX_ANSWER_BYTES) return tooLarge();
        chunks.push(c);
      });
      res.on("error", reject);
      res.on("end", () => {
        resolve({ status, ok: status >= 200 && status < 300, body: Buffer.concat(chunks).toString("utf8") });
      });
    });
    // A switch of protocols is no answer (without this, the request would never settle).
    req.on("upgrade", (res, socket) => {
      const mode = modeOf(res.headers["hookbox-on-failure"]);
      if (mode) onFailure(mode);
      socket.destroy();
      reject(new Error("hookbox answered 101 (a protocol switch), not a decision"));
    });
    req.on("information", (info) => {
      const over = tooManyHeaders(info);
      if (over) req.destroy(over);
      else if (info.statusCode < 100) req.destroy(noStatus());
    });
    req.on("error", reject);
    // Work that can wait for the answer is done while hookbox decides.
    req.on("finish", onSent);
    req.end(body);
  });
}

/** The environment, but the token (LOCALDOMAIN, RES_OPTIONS … still reach the resolver). */
const withoutToken = (env: NodeJS.ProcessEnv) => Object.fromEntries(Object.entries(env).filter(([k]) => k !== "HOOKBOX_TOKEN"));

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | { address: string; family: number }[], family?: number) => void;

/**
 * Name lookups for the one request, exactly as the system resolves names (/etc/hosts, the search
 * list and ndots, NSS) but able to give up: on Linux by `getent ahosts`, a process killed with the
 * request. getaddrinfo in this process cannot be cancelled, and one that waits on a DNS server that
 * never answers would hold the process long past its answer (libuv waits for its threads as the
 * process exits). Elsewhere, or without getent, getaddrinfo it is.
 */
const SYSTEM_GETENT = ["/usr/bin/getent", "/bin/getent"];
/** The loopback addresses, IPv4 first (as curl tries them). */
const LOOPBACK = [{ address: "127.0.0.1", family: 4 }, { address: "::1", family: 6 }];

function lookupWithin(signal: AbortSignal) {
  return (hostname: string, options: { family?: number | string; all?: boolean }, callback: LookupCallback): void => {
    const family = options.family === 4 || options.family === "IPv4" ? 4 : options.family === 6 || options.family === "IPv6" ? 6 : 0;
    const answer = (found: { address: string; family: number }[]) => (options.all ? callback(null, found) : callback(null, found[0]!.address, found[0]!.family));
    const fail = (err: NodeJS.ErrnoException) => callback(err, options.all ? [] : "");
    // localhost and every name under it are the loopback addresses (RFC 6761) where the system's
    // resolver knows no other (curl 7.85 and later read them so): forward.sh reaches hookbox there, and so this does.
    const local = /^(.*\.)?localhost$/i.test(hostname) ? LOOPBACK.filter((a) => family === 0 || a.family === family) : undefined;
    const system = () => process.getBuiltinModule("node:dns").lookup(hostname, { family, all: true }, (e, addresses) => (e ? (local ? answer(local) : fail(e)) : answer(addresses)));
    if (process.platform !== "linux") return system();
    const { isIP } = process.getBuiltinModule("node:net");
    const database = family === 4 ? "ahostsv4" : family === 6 ? "ahostsv6" : "ahosts";
    // The system's own getent, by its path: never one a folder on PATH (a repository's) puts first.
    const getent = SYSTEM_GETENT.find((p) => process.getBuiltinModule("node:fs").existsSync(p));
    if (getent === undefined) return system();
    process.getBuiltinModule("node:child_process").execFile(getent, [database, "--", hostname], { signal, killSignal: "SIGKILL", maxBuffer: 64 * 1024, env: withoutToken(process.env) }, (err, stdout) => {
      if (err && (err as NodeJS.ErrnoException).code === "ENOENT") return system();
      if (signal.aborted) return fail(Object.assign(new Error(`lookup of ${hostname} given up`), { code: "ECANCELLED" }));
      // getent: exit 2 is "not found"
      if (err && local && (err as { code?: unknown }).code === 2) return answer(local);
      if (err) return fail(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND", hostname }));
      const found: { address: string; family: number }[] = [];
      for (const line of stdout.split("\n")) {
        const address = line.split(/\s/, 1)[0] ?? "";
        const v = isIP(address);
        if (v !== 0 && !found.some((f) => f.address === address)) found.push({ address, family: v });
      }
      if (found.length === 0 && local) return answer(local);
      if (found.length === 0) return fail(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND", hostname }));
      answer(found);
    });
  };
}

/**
 * The failure mode a `Hookbox-On-Failure` header says, as forward.sh reads it: case aside, a list
 * (repeated headers) says block if any value does, else allow if any does.
 */
function modeOf(header: string | string[] | undefined): Mode | undefined {
  // (spaces and tabs around a value, as HTTP's own whitespace and forward.sh trim them: nothing else)
  const values = (Array.isArray(header) ? header.join(",") : (header ?? "")).split(",").map((v) => v.replace(/^[ \t]+|[ \t]+$/g, "").toLowerCase());
  return values.includes("block") ? "block" : values.includes("allow") ? "allow" : undefined;
}

/** An answer's exit code: a whole number 0–255, else 0 (as forward.sh reads it). */
function exitCodeOf(code: unknown): number {
  return typeof code === "number" && Number.isInteger(code) && code >= 0 && code <= 255 ? code : 0;
}

/**
 * What an error says: its message, else — an AggregateError of every address tried, which Node
 * gives with no message of its own — each of its errors' (once each), else its code.
 */
function errorText(e: Error): string {
  if (e.message) return e.message;
  const inner = e instanceof AggregateError ? [...new Set((e.errors as unknown[]).map((x) => (x instanceof Error ? x.message : String(x))))].join("; ") : "";
  return inner || String((e as NodeJS.ErrnoException).code ?? e.name);
}

/** hookbox answered, but with what is no answer (the failure mode decides). */
class NoAnswer extends Error {}

/** Whether the text holds `lines` line feeds or more (a body of more than `lines` lines). */
function linesPast(text: string, lines: number): boolean {
  let at = -1;
  for (let n = 0; n < lines; n++) if ((at = text.indexOf("\n", at + 1)) === -1) return false;
  return true;
}

/** Whether JSON text opens an array or object deeper than `levels`, outside its strings. */
function nestedPast(text: string, levels: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > levels) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The agent's own "deny" for a hook's stdout. */
export function denyOutput(format: AgentFormat, event: string, reason: string): Record<string, unknown> {
  switch (format) {
    // Copilot: exit 2 denies at preToolUse and permissionRequest only, and is a warning elsewhere
    // (copilot-hooks.md, "Exit code 2 is a warning for most events"): VS Code's prompt and post-tool
    // blocks are read from the JSON at exit 0 (jsonBlockOnly), in the shapes hookbox answers there
    // (engine/formats/copilot-json.ts). Before a tool VS Code reads hookSpecificOutput; at a
    // permission request the CLI reads `behavior`.
    case "copilot": {
      const e = asciiLower(event);
      if (e === "pretooluse") return { permissionDecision: "deny", permissionDecisionReason: reason, hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: reason } };
      if (e === "permissionrequest") return { behavior: "deny", message: reason, permissionDecision: "deny", permissionDecisionReason: reason };
      if (COPILOT_PROMPT_EVENTS.has(e)) return { continue: false, stopReason: reason, decision: "block", reason };
      if (e === "posttooluse") return { decision: "block", reason };
      return { permissionDecision: "deny", permissionDecisionReason: reason };
    }
    // Each event's own shape: a permissionDecision is valid on PreToolUse only, PermissionRequest
    // takes its decision object, the rest a top-level block. The event named as the agent names it
    // (Claude Code refuses a hookEventName of another spelling, and the block with it).
    case "claude":
    case "codex":
      if (asciiLower(event) === "pretooluse") return { decision: "block", reason, hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: reason } };
      // PermissionRequest ignores exit 2: a deny there is its decision object.
      if (asciiLower(event) === "permissionrequest") return { hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "deny", message: reason } } };
      // Codex's compaction and start answers take no decision field (it refuses the whole answer): its stop is the block.
      if (format === "codex" && CODEX_STOP_ONLY.has(asciiLower(event))) return { continue: false, stopReason: reason };
      return { decision: "block", reason };
    case "cosh": return { decision: "block", reason };
    // Gemini reads no decision before it picks tools: a block there leaves the model none.
    case "gemini": return picksTools(format, event) ? { decision: "block", reason, hookSpecificOutput: { toolConfig: { mode: "NONE", allowedFunctionNames: [] } } } : { decision: "block", reason };
    // Cursor: a prompt is stopped by continue: false, everything else by permission: deny — with no
    // agent_message where the event's answer takes none (CURSOR_NO_AGENT_MESSAGE).
    // (its names read in any letter case, as hookbox reads them)
    case "cursor":
      return asciiLower(event) === "beforesubmitprompt" ? { continue: false, user_message: reason }
        : CURSOR_NO_AGENT_MESSAGE.has(asciiLower(event)) ? { permission: "deny", user_message: reason }
        : { permission: "deny", user_message: reason, agent_message: reason };
    default: {
      const _exhaustive: never = format;
      return _exhaustive;
    }
  }
}

/**
 * The user's own cache folder: `$XDG_CACHE_HOME/hookbox`, else `$HOME/.cache/hookbox`. Only an
 * absolute one: a relative XDG_CACHE_HOME would be the repository's folder (an agent runs its hooks
 * there), and with no HOME a shared /tmp would let anyone plant the file. None: no cache.
 */
function cacheDirOf(env: NodeJS.ProcessEnv): string | undefined {
  // Spelled as forward.sh spells it (no normalising): both print the same path.
  const base = env.XDG_CACHE_HOME || (env.HOME ? `${env.HOME}/.cache` : undefined);
  return base !== undefined && isAbsolute(base) ? `${base}/hookbox` : undefined;
}

/** A folder or file of this user's own, not a link, of the kind asked for. */
function ownRegular(path: string, kind: "dir" | "file"): boolean {
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(path, { throwIfNoEntry: false });
  } catch {
    return false; // ENOTDIR, ELOOP, EACCES …: no cache there
  }
  if (!st || st.isSymbolicLink() || (kind === "dir" ? !st.isDirectory() : !st.isFile())) return false;
  return typeof process.getuid !== "function" || st.uid === process.getuid();
}

/** Of a failure-mode cache file, what is read: its first line is "allow" or "block" (NUL bytes aside, which the shell drops). */
const CACHE_READ_BYTES = 64 * 1024;

/**
 * The failure mode hookbox last told this forwarder, one small file per URL + token (hashed: the
 * token itself is never written) + event, so it still applies when hookbox cannot be reached at all.
 * Read and written only as a regular file of this user's, in a folder of this user's, never through
 * a link, never a FIFO (which would hold the call past the agent's deadline).
 */
function modeCache(dir: string | undefined, url: string, token: string | undefined, event: string) {
  let named: string | undefined;
  // Named when first needed (node:crypto takes milliseconds to load): by then the event is on its way.
  const fileName = () => (named ??= `${dir}/on-failure-${process.getBuiltinModule("node:crypto").createHash("sha256").update(`${url}\n${token ?? ""}\n${event}`).digest("hex").slice(0, 24)}`);
  return {
    /** The file's path (none without a cache folder), worked out ahead of load and save. */
    name(): string | undefined {
      return dir ? fileName() : undefined;
    },
    load(): { mode: Mode; from: string } | undefined {
      const file = this.name();
      if (!file || !ownRegular(dir!, "dir") || !ownRegular(file, "file")) return undefined;
      let fd: number | undefined;
      try {
        fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
        if (!fstatSync(fd).isFile()) return undefined;
        const buf = Buffer.alloc(CACHE_READ_BYTES);
        // its first line, exactly as forward.sh's IFS= read -r reads it: NUL bytes dropped
        const text = buf.subarray(0, readSync(fd, buf, 0, CACHE_READ_BYTES, 0)).toString("latin1").replaceAll("\0", "");
        const mode = text.split("\n", 1)[0];
        // the path is the environment's (XDG_CACHE_HOME, HOME): escaped for the terminal
        return mode === "allow" || mode === "block" ? { mode, from: `on_failure (the tenant's, as hookbox last said: ${block(file)})` } : undefined;
      } catch {
        return undefined;
      } finally {
        if (fd !== undefined) closeSync(fd);
      }
    },
    save(mode: Mode): void {
      const file = this.name();
      if (!file) return;
      let fd: number | undefined;
      try {
        if (this.load()?.mode === mode) return;
        mkdirSync(dir!, { recursive: true, mode: 0o700 });
        if (!ownRegular(dir!, "dir")) return;
        // Not through a link, not into a FIFO or a device: a file of this user's, or a new one.
        if (existsSync(file) && !ownRegular(file, "file")) return;
        fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o600);
        if (!fstatSync(fd).isFile()) return;
        ftruncateSync(fd, 0);
        writeSync(fd, `${mode}\n`, 0);
      } catch {
        // A read-only home: the mode is still used for this call.
      } finally {
        if (fd !== undefined) closeSync(fd);
      }
    },
  };
}
