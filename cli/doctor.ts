/**
 * @module `hookbox doctor [DIR]`: proves the guard is wired. Finds every agent's hook configuration
 * in the repository (and in the user's home for that agent), checks each hookbox line, and runs it
 * exactly as the agent would with a marked canary event: hookbox answers the canary with a block
 * (no hook runs; it is recorded as a canary, never as a decision), and the doctor checks that the
 * block comes out of the line in a form the agent obeys. Exit 0 when every guard is live; 1 with
 * the reason of each one that is not. The files checked are the repository's, so hostile: the doctor
 * runs a line only when it is a plain `hookbox forward …` argv (never through a shell), or a plain
 * `sh …/forward.sh …` whose script is exactly the one this hookbox prints, expands in
 * an HTTP hook's headers only the variables it lists in `allowedEnvVars`, and escapes what it prints.
 */
import { spawn } from "node:child_process";
import { accessSync, closeSync, constants, existsSync, fstatSync, mkdtempSync, openSync, readdirSync, readSync, realpathSync, rmSync, statSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { basename, delimiter, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { parseArgs } from "node:util";
import { parse as parseToml } from "smol-toml";
import { resolveEventName } from "../engine/events.js";
import type { Decision, EventPoint } from "../engine/events.js";
import { CLAUDE_EVENTS, claudeEffective } from "../engine/formats/claude-settings.js";
import { CODEX_EVENTS } from "../engine/formats/codex-hooks.js";
import { COPILOT_EVENTS, copilotEffective } from "../engine/formats/copilot-json.js";
import { COSH_EVENTS, coshEffective } from "../engine/formats/cosh-toml.js";
import { CURSOR_EVENTS, cursorEffective } from "../engine/formats/cursor-hooks.js";
import { GEMINI_EVENTS, geminiEffective } from "../engine/formats/gemini-settings.js";
import { agentDeadlineS, asciiLower } from "../engine/agents.js";
import { mapLimited } from "../engine/map-limited.js";
import { CODEX_STOP_ONLY, EVENT_NAME, EVENT_NAME_PROBLEM, FORWARD_OPTIONS, lineFormat, MAX_ANSWER_BYTES, urlProblem as lineUrlProblem } from "./forward.js";
import { FORWARD_SCRIPT } from "./forward-script.js";
import { AnswerTooLarge, readText } from "./read-answer.js";
import { oneLine, safeJson } from "./terminal.js";

type Agent = "claude" | "copilot" | "cosh" | "codex" | "gemini" | "cursor";

const AGENT_NAME: Record<Agent, string> = { claude: "Claude Code", copilot: "Copilot CLI", cosh: "cosh", codex: "Codex", gemini: "Gemini CLI", cursor: "Cursor" };

/** What `hookbox/service/routes/events.ts` puts in a canary's reason. */
const CANARY_MARK = "hookbox canary";

interface Entry {
  agent: Agent;
  file: string;
  event: string;
  /** where in the file, for messages */
  where: string;
  command?: string;
  http?: { url: string; headers: Record<string, string>; allowed: string[] };
  /** the agent's own timeout for this hook, in seconds, when the file sets one */
  timeoutS?: number;
  /** why the agent never runs this hook (a switch in its file, another handler type), if so */
  off?: string;
  /** the group's matcher: the agent runs the hook only for what it matches */
  matcher?: string;
  /** Claude Code's `if`: the hook runs only for the tool calls it takes */
  if?: string;
  /** Claude Code's exec form: the program and its arguments, run without a shell */
  argv?: string[];
  /** what of the hook's own settings keeps the check from proving it (a Copilot hook's `cwd`, its `env`) */
  unproven?: string;
  /** Gemini CLI: the name its `disabled` lists know the hook by (its name, else its command) */
  named?: string;
}

interface Finding {
  entry: Entry;
  ok: boolean;
  message: string;
}

export const DOCTOR_USAGE = "usage: hookbox doctor [DIR] [--home DIR] [--url URL] [--json]   (token: HOOKBOX_TOKEN, as the agents' lines read it; URL: your hookbox, default HOOKBOX_URL or http://127.0.0.1:8080)";

/** @default 256 — hookbox lines checked in one run; more are named, not run. */
export const MAX_DOCTOR_LINES = 256;
/** Lines checked at once. */
const LINES_AT_ONCE = 4;
/** @default 512 — Copilot hook files read from one folder (the engine's MAX_REPOSITORY_HOOK_FILES); more are named, not read. */
export const MAX_DOCTOR_FOLDER_FILES = 512;
/** @default 16 MiB — configuration read in one run, all files together; past it the rest are named, not read. */
export const MAX_DOCTOR_READ_BYTES = 16 * 1024 * 1024;
/** @default 10 s — how long the canary an HTTP hook's URL is sent may take to be answered */
const HTTP_CHECK_MS = 10_000;
/** @default 16384 — hook entries kept from all files (hookbox lines or not); past it the rest are named, not read. */
export const MAX_DOCTOR_ENTRIES = 16_384;

export async function doctor(argv: string[], env: NodeJS.ProcessEnv): Promise<{ stdout: string; stderr: string; code: number }> {
  let parsed: { values: { home?: string; url?: string; json?: boolean; help?: boolean }; positionals: string[] };
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { home: { type: "string" }, url: { type: "string" }, json: { type: "boolean", default: false }, help: { type: "boolean", short: "h" } } });
  } catch (err) {
    return { stdout: "", stderr: `hookbox doctor: ${(err as Error).message}\n${DOCTOR_USAGE}\n`, code: 64 };
  }
  const { values, positionals } = parsed;
  if (values.help) return { stdout: `${DOCTOR_USAGE}\n`, stderr: "", code: 0 };
  const dir = positionals[0] ?? ".";
  const home = values.home ?? env.HOME ?? homedir();
  // The one hookbox the doctor talks to: a line aimed anywhere else is named, never contacted (it
  // would get the token, and could answer the canary with whatever it likes).
  let origin: string;
  try {
    origin = new URL(values.url ?? env.HOOKBOX_URL ?? "http://127.0.0.1:8080").origin;
  } catch {
    return { stdout: "", stderr: `hookbox doctor: --url / HOOKBOX_URL is not a URL\n`, code: 64 };
  }
  let entries: Entry[];
  const problems: string[] = [];
  const files = [...configsIn(dir, "repository", problems), ...configsIn(home, "home", problems)];
  try {
    // A repository of many large files, each of many entries, holds no more than these bounds.
    const budget = { bytes: MAX_DOCTOR_READ_BYTES, entries: MAX_DOCTOR_ENTRIES };
    entries = [];
    for (const [i, c] of files.entries()) {
      if (budget.bytes <= 0 || budget.entries <= 0) {
        problems.push(`${files.length - i} more hook configuration file(s), from ${c.file} on: not read (past ${MAX_DOCTOR_READ_BYTES} bytes, MAX_DOCTOR_READ_BYTES, or ${MAX_DOCTOR_ENTRIES} hook entries, MAX_DOCTOR_ENTRIES, in the files before)`);
        break;
      }
      try {
        // A repository's file that is a link out of it (to ~/.aws/credentials, /proc/self/environ) is not read.
        if (c.scope === "repository" && !within(c.root, c.file)) {
          problems.push(`${c.file}: a link out of ${c.root}: not read`);
          continue;
        }
        const found = entriesOf(c.agent, c.file, problems, budget);
        if (found.length > budget.entries) problems.push(`${c.file}: more than ${MAX_DOCTOR_ENTRIES} hook entries (MAX_DOCTOR_ENTRIES): the rest not read`);
        entries.push(...found.slice(0, Math.max(0, budget.entries)));
        budget.entries -= found.length;
      } catch (err) {
        // The parser's own message may quote the file: only where it failed.
        problems.push(`${c.file}: cannot read: ${parseProblem(err)}`);
      }
    }
  } catch (err) {
    return { stdout: "", stderr: `hookbox doctor: ${oneLine((err as Error).message)}\n`, code: 1 };
  }
  // The switches are read from the files read above only: never through a link out of the repository.
  entries = switchedOff(entries, files.filter((c) => c.scope !== "repository" || within(c.root, c.file)));
  const all = entries.filter((e) => /\bhookbox\b|\bforward\.sh\b/.test(e.argv?.join(" ") ?? e.command ?? "") || /\/v1\/hooks\//.test(e.http?.url ?? ""));
  const guards = all.slice(0, MAX_DOCTOR_LINES);
  if (guards.some((e) => e.agent === "gemini")) {
    const envProblem = geminiEnvProblem(dir);
    if (envProblem) problems.push(envProblem);
  }
  if (all.length > guards.length) problems.push(`${all.length} hookbox lines: only the first ${MAX_DOCTOR_LINES} were checked (MAX_DOCTOR_LINES)`);
  const notes = toolListNotes(entries, all, dir);
  // A line's forwarder may run only the canary's checks; and the PATH it gets has nothing of the repository.
  const lineEnv = { ...env, PATH: safePath(env.PATH, [dir]) };
  const findings = await mapLimited(guards, LINES_AT_ONCE, (e) => check(e, dir, env, lineEnv, origin));
  const show = (p: string) => (p.startsWith(home) ? `~/${relative(home, p)}` : relative(dir, p) || p);
  if (values.json) return { stdout: `${safeJson({ findings: findings.map((f) => ({ ...f.entry, file: show(f.entry.file), ok: f.ok, message: f.message })), problems, notes: notes.map((n) => ({ ...n.entry, file: show(n.entry.file), message: n.message })) }, 2)}\n`, stderr: "", code: findings.length > 0 && findings.every((f) => f.ok) && problems.length === 0 ? 0 : 1 };
  // Event names, places and messages come from the repository's files: escaped for the terminal.
  const lines = findings.map((f) => `${f.ok ? "ok  " : "FAIL"}  ${AGENT_NAME[f.entry.agent].padEnd(11)}  ${oneLine(f.entry.event).padEnd(17)}  ${oneLine(show(f.entry.file))} ${oneLine(f.entry.where)}\n      ${oneLine(f.message)}`);
  for (const p of problems) lines.push(`FAIL  ${oneLine(p)}`);
  for (const n of notes) lines.push(`note  ${AGENT_NAME[n.entry.agent].padEnd(11)}  ${oneLine(n.entry.event).padEnd(17)}  ${oneLine(show(n.entry.file))} ${oneLine(n.entry.where)}\n      ${oneLine(n.message)}`);
  if (guards.length === 0) lines.push(`FAIL  no hookbox line in any agent's hook configuration under ${oneLine(dir)} or ${oneLine(home)}: nothing reaches hookbox`);
  const ok = guards.length > 0 && findings.every((f) => f.ok) && problems.length === 0;
  lines.push(ok ? `every guard is live (${findings.length})` : `${findings.filter((f) => !f.ok).length + problems.length + (guards.length === 0 ? 1 : 0)} problem(s): a block from hookbox would not reach the agent there`);
  return { stdout: `${lines.join("\n")}\n`, stderr: "", code: ok ? 0 : 1 };
}

/**
 * Gemini CLI joins the tool lists of all its `BeforeToolSelection` hooks (its hook aggregator): a
 * hook of its own settings there beside a hookbox line adds the tools it names to those hookbox
 * passes on from a repository's hooks — its list is no bound on theirs (SECURITY.md). Said, not
 * failed: a block (no tool) still reaches the agent.
 */
function toolListNotes(entries: Entry[], guards: Entry[], dir: string): { entry: Entry; message: string }[] {
  const at = (e: Entry) => e.agent === "gemini" && e.event === "BeforeToolSelection" && e.off === undefined;
  if (!guards.some(at)) return [];
  // a set: a hostile repository's file may hold thousands of entries, and as many hookbox lines
  const isGuard = new Set(guards);
  const others = entries.filter((e) => at(e) && !isGuard.has(e));
  const joined = "Gemini CLI joins the tool lists of all its BeforeToolSelection hooks, so the tools it names are added to those a repository's hooks leave the model through hookbox — its list does not bound theirs";
  const notes = others.slice(0, MAX_DOCTOR_LINES).map((entry) => ({
    entry,
    message: within(dir, entry.file)
      ? `a hook Gemini CLI runs itself, on this machine, beside a hookbox line at this event (hookbox runs this repository's copy too, sandboxed, where its workspace is pushed): ${joined}`
      : `a hook of your own that Gemini CLI runs, beside a hookbox line at this event (hookbox never sees it): ${joined}`,
  }));
  const last = notes[notes.length - 1];
  if (last && others.length > notes.length) last.message += `; and ${others.length - notes.length} more such hooks, not listed (MAX_DOCTOR_LINES ${MAX_DOCTOR_LINES})`;
  return notes;
}

/**
 * A name dotenv reads as one a value is given to: at a line's start (after blanks and an `export`),
 * `NAME=`, `NAME =`, `NAME: `, the `=` perhaps on a later line. Each match starts at a line's
 * start and looks no further than its own line for the name: linear.
 */
const DOTENV_NAME = /^[^\S\n]*(?:export[^\S\n]+)?([\w.-]+)(?=\s*(?:=|:\s))/gm;

/**
 * Gemini CLI loads the project's `.gemini/.env`, else its `.env`, into its own environment, which
 * every hook it runs inherits: one that sets what redirects or takes over the forwarder (REDIRECTING_ENV)
 * decides that for every Gemini CLI hookbox line, whatever the line says.
 */
function geminiEnvProblem(dir: string): string | undefined {
  for (const rel of [".gemini/.env", ".env"]) {
    const file = join(dir, rel);
    if (!existsSync(file)) continue;
    if (!within(dir, file)) return `${file}: a link out of ${dir}: not read, but Gemini CLI loads it into the environment of every hook it runs`;
    let text: string;
    try {
      text = readBounded(file, MAX_CONFIG_BYTES);
    } catch {
      return `${file}: cannot be read, but Gemini CLI loads it into the environment of every hook it runs`;
    }
    const names = [...new Set([...text.matchAll(DOTENV_NAME)].map((m) => m[1]!))].filter(redirects);
    // Only plain names are shown: text that is not one may be a value (a key) dotenv would read as a name.
    const plain = names.filter((n) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(n));
    const others = names.length - plain.length;
    const said = [...plain.slice(0, 8), ...(others > 0 ? [`${others} name(s) that are no plain variable name (not shown)`] : [])].join(", ");
    return names.length > 0 ? `${file}: sets ${said}: Gemini CLI loads it into its environment, and so into every hook's — it decides where and how hookbox lines send events, or what runs in them: drop it` : undefined;
  }
  return undefined;
}

/** Each agent's hook files: in a repository, and in the user's home. */
function configsIn(root: string, scope: "repository" | "home", problems: string[]): { agent: Agent; file: string; root: string; scope: "repository" | "home" }[] {
  const out: { agent: Agent; file: string; root: string; scope: "repository" | "home" }[] = [];
  const add = (agent: Agent, ...parts: string[]) => {
    const file = join(root, ...parts);
    if (existsSync(file)) out.push({ agent, file, root, scope });
  };
  add("claude", ".claude", "settings.json");
  if (scope === "repository") add("claude", ".claude", "settings.local.json");
  add("cosh", ".copilot-shell", "config.toml");
  add("codex", ".codex", "hooks.json");
  // Codex reads inline [hooks] tables of its config.toml too, beside hooks.json.
  add("codex", ".codex", "config.toml");
  add("gemini", ".gemini", "settings.json");
  add("cursor", ".cursor", "hooks.json");
  const copilot = join(root, scope === "repository" ? ".github/hooks" : ".copilot/hooks");
  let names: string[] = [];
  try {
    names = readdirSync(copilot);
  } catch {
    // none there, or not a folder (a file, a FIFO): no hook files for Copilot to read either
  }
  const json = names.filter((n) => n.endsWith(".json")).sort();
  if (json.length > MAX_DOCTOR_FOLDER_FILES) problems.push(`${copilot}: ${json.length} hook files: only the first ${MAX_DOCTOR_FOLDER_FILES} read (MAX_DOCTOR_FOLDER_FILES)`);
  for (const f of json.slice(0, MAX_DOCTOR_FOLDER_FILES)) out.push({ agent: "copilot", file: join(copilot, f), root, scope });
  // Copilot's inline hooks and its disableAllHooks: in the repository's settings files, and the user's.
  if (scope === "repository") {
    add("copilot", ".github", "copilot", "settings.json");
    add("copilot", ".github", "copilot", "settings.local.json");
  } else add("copilot", ".copilot", "settings.json");
  return out;
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const num = (v: unknown): number | undefined => (typeof v === "number" && v > 0 ? v : undefined);

/**
 * The hook entries of one file, whatever their command, each with what keeps its agent from running
 * it: the file's own switch (`disableAllHooks`, Gemini CLI's `enabled: false` and `disabled` list,
 * cosh's `[hooks] enabled = false`), or a handler of another type than a command. (`off` on one of
 * the agent's files at once: Claude Code's settings.local.json and its other files are weighed in
 * `switchedOff`.)
 */
function entriesOf(agent: Agent, file: string, problems: string[], budget: { bytes: number }): Entry[] {
  const text = readBounded(file, MAX_CONFIG_BYTES);
  budget.bytes -= text.length;
  const out: Entry[] = [];
  if (agent === "cosh") {
    const doc = obj(parseToml(text, { integersAsBigInt: "asNeeded" }));
    const hooks = obj(doc.hooks);
    const off = hooks.enabled === false ? `[hooks] enabled = false in ${file}: cosh runs none of its hooks` : undefined;
    for (const [event, list] of Object.entries(hooks)) {
      arr(list).forEach((h, i) => {
        const hook = obj(h);
        // cosh-hooks.md: "Hook definitions without a name field are skipped".
        const unnamed = typeof hook.name !== "string" || hook.name === "" ? "it has no \"name\": cosh skips a hook without one" : undefined;
        const why = off ?? unnamed;
        if (typeof hook.command === "string") out.push({ agent, file, event, where: `[[hooks.${event}]] #${i + 1}`, command: hook.command, timeoutS: num(hook.timeout) !== undefined ? num(hook.timeout)! / 1000 : undefined, ...(why ? { off: why } : {}), ...matcherOf(hook.matcher) });
      });
    }
    return out;
  }
  const doc = obj(file.endsWith(".toml") ? parseToml(text, { integersAsBigInt: "asNeeded" }) : JSON.parse(text));
  // Codex: `[features] hooks = false` (or its older name `codex_hooks`) turns every hook off, hooks.json's too.
  if (agent === "codex" && file.endsWith(".toml")) {
    const features = obj(doc.features);
    const said = features.hooks === false ? "hooks" : features.codex_hooks === false ? "codex_hooks" : undefined;
    if (said) problems.push(`${file}: [features] ${said} = false: Codex runs none of its hooks`);
  }
  // Claude Code gives a settings file's "env" to every session, and so to every hook it runs: one
  // that says where a forwarder sends events, with whose token, or through what, decides that for
  // every hookbox line, whatever the line says.
  if (agent === "claude") {
    const redirecting = Object.keys(obj(doc.env)).filter(redirects);
    if (redirecting.length > 0) problems.push(`${file}: "env" sets ${redirecting.slice(0, 8).join(", ")}: Claude Code gives it to every hook, so it decides where hookbox lines send events and with whose token: drop it`);
  }
  // Gemini CLI: `enabled: false` under hooksConfig or hooks switches all off; the two `disabled` lists together.
  const switches = [obj(doc.hooksConfig), obj(doc.hooks)];
  const fileOff =
    doc.disableAllHooks === true && SAYS_DISABLE_ALL.has(agent) ? `"disableAllHooks": true in ${file}: ${AGENT_NAME[agent]} runs none of its hooks`
    : agent === "gemini" && switches.some((x) => x.enabled === false) ? `"enabled": false in ${file}: Gemini CLI runs none of its hooks`
    : undefined;
  const disabled = agent === "gemini" ? switches.flatMap((x) => arr(x.disabled)).filter((v): v is string => typeof v === "string") : [];
  for (const [event, list] of Object.entries(obj(doc.hooks))) {
    arr(list).forEach((g, i) => {
      const group = obj(g);
      // Copilot and Cursor: flat entries, timeout in seconds.
      if (agent === "copilot" || agent === "cursor") {
        const command = typeof group.bash === "string" ? group.bash : typeof group.command === "string" ? group.command : undefined;
        const off = fileOff ?? (group.type !== undefined && group.type !== "command" ? `its "type" is ${JSON.stringify(group.type)}, not "command": ${AGENT_NAME[agent]} does not run it as a command` : undefined);
        const unproven = agent === "copilot" ? copilotUnproven(group) : undefined;
        if (command) out.push({ agent, file, event, where: `hooks.${event}[${i}]`, command, timeoutS: num(group.timeoutSec) ?? num(group.timeout), ...(off ? { off } : {}), ...(unproven ? { unproven } : {}), ...matcherOf(group.matcher) });
        return;
      }
      arr(group.hooks).forEach((h, j) => {
        const hook = obj(h);
        const where = `hooks.${event}[${i}].hooks[${j}]`;
        // Claude and Codex: timeout in seconds; Gemini CLI: in milliseconds.
        const timeoutS = num(hook.timeout) !== undefined ? (agent === "gemini" ? num(hook.timeout)! / 1000 : num(hook.timeout)) : undefined;
        // Gemini CLI names a hook by its name, or its command when it has none (an empty name is none).
        const named = typeof hook.name === "string" && hook.name !== "" ? hook.name : typeof hook.command === "string" ? hook.command : undefined;
        const off = fileOff ?? (named !== undefined && disabled.includes(named) ? `${JSON.stringify(named)} is in the "disabled" list of ${file}: Gemini CLI does not run it` : undefined);
        // Gemini CLI starts a hook with its own `env` on top of everything else (CommandHookConfig env).
        const geminiEnv = agent === "gemini" ? Object.keys(obj(hook.env)).filter(redirects) : [];
        const unproven = geminiEnv.length > 0 ? `its "env" sets ${geminiEnv.slice(0, 8).join(", ")}: it decides where and how the line sends events, or what runs in it — drop it` : undefined;
        const extra = { ...(off ? { off } : {}), ...(unproven ? { unproven } : {}), ...matcherOf(group.matcher), ...(agent === "gemini" && named !== undefined ? { named } : {}) };
        if (hook.type === "http" && typeof hook.url === "string") {
          const headers = Object.fromEntries(Object.entries(obj(hook.headers)).filter(([, v]) => typeof v === "string")) as Record<string, string>;
          // Claude Code expands only the variables a hook lists in allowedEnvVars; so does the doctor.
          const allowed = arr(hook.allowedEnvVars).filter((v): v is string => typeof v === "string");
          out.push({ agent, file, event, where, http: { url: hook.url, headers, allowed }, timeoutS, ...extra });
        } else if (typeof hook.command === "string") {
          // Claude Code's exec form: `command` is the program itself, `args` its arguments, no shell.
          const args = agent === "claude" && Array.isArray(hook.args) ? hook.args : undefined;
          const argv = args && args.every((a): a is string => typeof a === "string") ? [hook.command, ...args] : undefined;
          if (args && !argv) return void problems.push(`${file}: ${where}.args: not a list of strings: Claude Code cannot run it`);
          const rule = agent === "claude" && typeof hook.if === "string" && hook.if.trim() !== "" ? { if: hook.if } : {};
          const notCommand = hook.type !== "command" ? `its "type" is ${JSON.stringify(hook.type ?? null)}, not "command": ${AGENT_NAME[agent]} does not run it as a command`
            : hook.async === true && (agent === "claude" || agent === "codex") ? `"async": true: ${AGENT_NAME[agent]} ${agent === "codex" ? "skips it" : "lets its answer decide nothing"}` : undefined;
          out.push({ agent, file, event, where, command: hook.command, timeoutS, ...extra, ...rule, ...(argv ? { argv } : {}), ...(!off && notCommand ? { off: notCommand } : {}) });
        }
      });
    });
  }
  return out;
}

/**
 * Variables that change where, how or as whom a forwarder sends an event, or what runs in it: its
 * own settings, the proxies, curl's and the TLS library's, what the dynamic loader preloads, what
 * Node, sh and bash run first, where names resolve, where the cache and the home are.
 */
const REDIRECTING_ENV = /^(?:HOOKBOX_\w*|PATH|HOME|ENV|BASH_ENV|SHELLOPTS|BASHOPTS|IFS|HOSTALIASES|RES_OPTIONS|LOCALDOMAIN|XDG_\w*|CURL_\w*|SSL_\w*|OPENSSL_\w*|GLIBC_TUNABLES|NODE_\w*|LD_\w*|DYLD_\w*|GCONV_PATH|LOCPATH|\w*_proxy)$/i;

/**
 * A Copilot hook runs in its `cwd` (the repository's root, or a folder of it) with its `env` on top of
 * the agent's: the doctor runs every line from the root with the user's own environment, so a line
 * that says otherwise is not proven — one whose cwd holds another `.hookbox/forward.sh`, or whose env
 * preloads a script into node, would answer what the doctor never saw.
 */
function copilotUnproven(group: Json): string | undefined {
  const cwd = group.cwd;
  if (cwd !== undefined && !(typeof cwd === "string" && (cwd === "" || cwd === "." || cwd === "./"))) return `its "cwd" ${JSON.stringify(cwd)}: Copilot runs the line there, the doctor checks it from the repository's root — drop the cwd`;
  const redirecting = Object.keys(obj(group.env)).filter(redirects);
  if (redirecting.length > 0) return `its "env" sets ${redirecting.slice(0, 8).join(", ")}: it decides where and how the line sends events, or what runs in it — drop it`;
  return undefined;
}

/**
 * Whether setting the variable `name` can change what a line runs or where it sends events: a
 * REDIRECTING_ENV name, or any name that is not a plain identifier (bash reads `BASH_FUNC_sh%%` as
 * a function named `sh`).
 */
const redirects = (name: string): boolean => REDIRECTING_ENV.test(name) || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) || name.startsWith("BASH_FUNC_");

/** The agents whose hook files take `disableAllHooks`. */
const SAYS_DISABLE_ALL: ReadonlySet<Agent> = new Set(["claude", "codex", "copilot"]);

/** A matcher that filters (not "", "*" or none): the agent runs the hook only for what it matches. */
const matcherOf = (m: unknown): { matcher?: string } => (typeof m === "string" && m.trim() !== "" && m.trim() !== "*" ? { matcher: m } : {});

/** What a Gemini CLI settings file says of `enabled` (under hooksConfig or hooks; false if either is), or undefined. */
function geminiEnabledIn(file: string | undefined): boolean | undefined {
  if (!file) return undefined;
  try {
    const doc = obj(JSON.parse(readBounded(file, MAX_CONFIG_BYTES)));
    const said = [obj(doc.hooksConfig).enabled, obj(doc.hooks).enabled].filter((v): v is boolean => typeof v === "boolean");
    return said.length === 0 ? undefined : !said.includes(false);
  } catch {
    return undefined;
  }
}

/** The names a Gemini CLI settings file's `disabled` lists hold (under hooksConfig or hooks). */
function geminiDisabledIn(file: string): string[] {
  try {
    const doc = obj(JSON.parse(readBounded(file, MAX_CONFIG_BYTES)));
    return [obj(doc.hooksConfig), obj(doc.hooks)].flatMap((x) => arr(x.disabled)).filter((v): v is string => typeof v === "string");
  } catch {
    return [];
  }
}

/** Why a Copilot hooks file switches all of Copilot's hooks off, if it does (a file with no hooks of its own too). */
function copilotSwitchedOffIn(file: string | undefined): string | undefined {
  if (!file) return undefined;
  try {
    return obj(JSON.parse(readBounded(file, MAX_CONFIG_BYTES))).disableAllHooks === true ? `"disableAllHooks": true in ${file}: Copilot runs none of its hooks` : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Claude Code's `disableAllHooks` is one setting, merged across its files: the most local file that
 * sets it decides (settings.local.json over the project's settings.json over the user's), and off,
 * it is off for every hook of every file.
 */
function switchedOff(entries: Entry[], files: { agent: Agent; file: string; scope: "repository" | "home" }[]): Entry[] {
  const order = (f: string) => (f.endsWith("settings.local.json") ? 0 : 1);
  const claudeFiles = files.filter((f) => f.agent === "claude").sort((a, b) => (a.scope === b.scope ? order(a.file) - order(b.file) : a.scope === "repository" ? -1 : 1));
  let decided: { off: boolean; file: string } | undefined;
  for (const f of claudeFiles) {
    try {
      const value = obj(JSON.parse(readBounded(f.file, MAX_CONFIG_BYTES))).disableAllHooks;
      if (typeof value === "boolean") {
        decided = { off: value, file: f.file };
        break;
      }
    } catch {
      // unreadable: named elsewhere
    }
  }
  // Copilot: one file's disableAllHooks switches off every hook of the agent. Gemini CLI layers its
  // settings, the project's over the user's: the `enabled` of the project's file if it says one,
  // else the user's, holds for the hooks of both.
  const copilotOff = files.filter((f) => f.agent === "copilot").map((f) => copilotSwitchedOffIn(f.file)).find((why) => why !== undefined);
  const gemini = (scope: "repository" | "home") => files.find((f) => f.agent === "gemini" && f.scope === scope)?.file;
  const geminiSays = [gemini("repository"), gemini("home")].map((file) => ({ file, enabled: geminiEnabledIn(file) })).find((g) => g.enabled !== undefined);
  const isEnabledSwitch = (off: string | undefined) => off?.startsWith('"enabled": false') === true;
  // Gemini CLI merges the `disabled` lists of all its settings files (a union): a name the
  // project's file lists switches off the user's hook of that name too.
  const geminiDisabled = new Map<string, string>();
  for (const f of files.filter((x) => x.agent === "gemini")) for (const name of geminiDisabledIn(f.file)) if (!geminiDisabled.has(name)) geminiDisabled.set(name, f.file);
  return entries.map((e) => {
    if (e.agent === "gemini" && e.off === undefined && e.named !== undefined && geminiDisabled.has(e.named))
      return { ...e, off: `${JSON.stringify(e.named)} is in the "disabled" list of ${geminiDisabled.get(e.named)!}: Gemini CLI does not run it` };
    if (e.agent === "copilot" && copilotOff !== undefined && e.off === undefined) return { ...e, off: copilotOff };
    if (e.agent === "gemini" && geminiSays !== undefined) {
      if (geminiSays.enabled === false && (e.off === undefined || isEnabledSwitch(e.off))) return { ...e, off: `"enabled": false in ${geminiSays.file}: Gemini CLI runs none of its hooks` };
      if (geminiSays.enabled === true && isEnabledSwitch(e.off)) {
        const { off: _outweighed, ...rest } = e;
        return rest;
      }
    }
    if (e.agent !== "claude" || decided === undefined) return e;
    if (decided.off) return { ...e, off: `"disableAllHooks": true in ${decided.file}: Claude Code runs none of its hooks` };
    // A file's own true is outweighed by a more local false.
    const { off, ...rest } = e;
    return off?.startsWith('"disableAllHooks"') ? rest : e;
  });
}

/** The flags both forwarders take, each with a value. */
const FORWARD_FLAGS = new Set(Object.entries(FORWARD_OPTIONS).filter(([, o]) => o.type === "string").map(([name]) => name));

/**
 * A line's flags, read so that both forwarders — Node's parseArgs and forward.sh's pairs — can
 * only read them the same way: each `--name value` or `--name=value` once, a known name, a value
 * of its own (not the next flag). Anything else is the reason the doctor cannot vouch for it.
 */
function lineFlags(words: string[]): Map<string, string> | string {
  const flags = new Map<string, string>();
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    const m = /^--([a-z-]+)(?:=([\s\S]*))?$/.exec(word);
    if (!m || !FORWARD_FLAGS.has(m[1]!)) return `"${word}" is not a flag of hookbox forward`;
    let value = m[2];
    if (value === undefined) {
      value = words[++i];
      if (value === undefined || value.startsWith("-")) return `--${m[1]} has no value of its own (the forwarders would read "${value ?? ""}" differently)`;
    }
    if (flags.has(m[1]!)) return `--${m[1]} is given twice (the forwarders could read different ones)`;
    flags.set(m[1]!, value);
  }
  return flags;
}

/**
 * What makes a URL both forwarders take (forward.ts's urlProblem, checked first) read one way by the
 * doctor and another by curl: a user name or password, a single quote, brackets but an IPv6 host's.
 */
function urlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "is not a URL";
  }
  if (parsed.username || parsed.password || url.includes("@")) return "carries a user name or an @";
  if (url.includes("'")) return "holds a quote curl and the doctor could read differently";
  if (/[[\]]/.test(url.replace(/^https?:\/\/\[[0-9a-fA-F:.]+\]/i, ""))) return "holds brackets outside an IPv6 host";
  return undefined;
}

/** What forward.sh runs by name besides its shell (`hookbox` itself runs as `#!/usr/bin/env node`). */
const FORWARD_SH_PROGRAMS = ["curl", "awk", "head", "od", "tr", "cat", "mkdir", "sha256sum", "shasum"];

/** @default 1 s — the least a line may give hookbox (`--deadline`, `--timeout`) to answer an event */
export const MIN_GUARD_WAIT_S = 1;

/** Which `--format` each agent's line must ask for. */
const FORMAT_OF: Record<Agent, string> = { claude: "claude", copilot: "copilot", cosh: "cosh", codex: "codex", gemini: "gemini", cursor: "cursor" };

async function check(entry: Entry, dir: string, env: NodeJS.ProcessEnv, lineEnv: NodeJS.ProcessEnv, origin: string): Promise<Finding> {
  const fail = (message: string): Finding => ({ entry, ok: false, message });
  if (entry.off) return fail(`${entry.off}: a block from hookbox never reaches it`);
  if (entry.unproven) return fail(entry.unproven);
  if (!resolveEventName(entry.event)) return fail(`"${entry.event}" is not an event hookbox knows: this hook never fires for hookbox`);
  // Another agent's name for the event (Gemini's BeforeTool in a Claude file, Claude's PreToolUse in Cursor's): never fired.
  if (!FIRES[entry.agent].has(entry.event)) return fail(`"${entry.event}" is not an event ${AGENT_NAME[entry.agent]} fires (another agent's name for it): this hook never runs`);
  // An event whose block the agent never reads (its hooks reference): a guard there stops nothing, whatever hookbox answers.
  if (!readsBlock(entry.agent, entry.event)) return fail(`${AGENT_NAME[entry.agent]} reads no block at ${entry.event} (a hook there adds context at most): a guard there stops nothing — guard an event whose block ${AGENT_NAME[entry.agent]} reads`);
  const elsewhere = (url: string) => `the line sends events to ${url}, not to your hookbox at ${origin} (--url or HOOKBOX_URL): not contacted`;
  if (entry.http) {
    if (!/^https?:\/\//i.test(entry.http.url)) return fail(`${entry.http.url} is not an http:// or https:// URL`);
    if (originOf(entry.http.url) !== origin) return fail(elsewhere(entry.http.url));
    return checkHttp(entry, env);
  }
  const command = entry.command!;
  // The doctor runs a repository's line only when it is a plain argv (no shell, so a line that also
  // runs something else is never run by the check, and cannot be proven) of `hookbox forward …`, or
  // of `sh …/forward.sh …` whose script is byte for byte the one this hookbox prints.
  const argv = entry.argv ?? plainArgv(command);
  const script = argv && forwardScriptOf(argv, dir, lineEnv);
  if (typeof script === "string") return fail(`${script}: ${command}`);
  if (!script && entry.argv && !/(^|\/)hookbox$/.test(entry.argv[0]!))
    return fail(`with "args", ${AGENT_NAME[entry.agent]} runs ${JSON.stringify(entry.argv[0])} itself as the program (exec form, no shell), not hookbox: the hook fails or runs something else, and hookbox doctor cannot prove a block gets through`);
  if (!script && !entry.argv && !/\bhookbox\s+forward\b/.test(command)) return fail(`the line runs hookbox but not "hookbox forward": ${command}`);
  // The agent's kernel follows links before "..", the doctor's join() would not: no ".." at all.
  if (!script && argv && argv[0]!.split("/").includes("..")) return fail(`${argv[0]!} climbs out with "..": give hookbox's path without it, or its name on PATH`);
  if (!script && (!argv || !/(^|\/)hookbox$/.test(argv[0]!) || argv[1] !== "forward"))
    return fail(`the line is more than a plain "hookbox forward …" or "sh .hookbox/forward.sh …" (shell syntax, or another command): hookbox doctor does not run it, and cannot prove a block gets through: ${command}`);
  // The programs the line runs by name are found on the PATH the agent gives its hooks — the user's
  // own, which may name a folder of the repository (direnv's PATH_add, a relative entry): one the
  // repository holds would run in place of the system's, whatever the doctor's own run shows.
  for (const tool of script ? [argv![0]!, ...FORWARD_SH_PROGRAMS] : ["node"]) {
    if (tool.includes("/")) continue;
    const found = hookboxOf(tool, dir, env);
    if (found?.inside) return fail(`${tool} is found in the repository (${found.path}) on the PATH ${AGENT_NAME[entry.agent]} gives its hooks: the repository's own program would run in the line, not the system's`);
    // BusyBox's awk finds a character of a string in time that grows with the string: forward.sh
    // reads an answer of a few hundred KB (a hook's long message) for seconds, past the agent's
    // deadline — which lets the call through.
    if (tool === "awk" && found && isBusybox(found.path, dir, env))
      return fail(`awk on the PATH ${AGENT_NAME[entry.agent]} gives its hooks is BusyBox's (${found.path}), which reads a large answer too slowly for the agent's deadline — a hook's long message would let the call through: install mawk or gawk, or use hookbox forward`);
  }
  // Without a hasher forward.sh keeps no failure mode: hookbox out of reach would pass calls through
  // where the tenant's is block (hookbox forward keeps it with Node's own).
  if (script && !hookboxOf("sha256sum", dir, env) && !hookboxOf("shasum", dir, env))
    return fail(`neither sha256sum nor shasum is on the PATH ${AGENT_NAME[entry.agent]} gives its hooks: forward.sh keeps no failure mode hookbox told, and passes calls through when hookbox is out of reach — install one (coreutils, or perl's shasum), or use hookbox forward`);
  const flags = lineFlags(script ? script.args : argv!.slice(2));
  if (typeof flags === "string") return fail(`${flags}: hookbox doctor cannot prove what the line does: ${command}`);
  const flag = (name: string) => flags.get(name);
  // A token written in the line sends the events to that token's tenant — whoever's it is — with
  // its policy and its failure mode, and the canary is answered there just the same.
  if (flag("token") !== undefined) return fail(`the line gives its own --token: its events would go to that token's tenant, not to the one HOOKBOX_TOKEN names: drop --token (and set HOOKBOX_TOKEN where the agent runs)`);
  const url = flag("url");
  const event = flag("event");
  if (!url || !event) return fail(`the line needs --url and --event: ${command}`);
  // As both forwarders take it: Gemini's wherever the line names BeforeToolSelection.
  const named = flag("format") ?? "cosh";
  const format = lineFormat(named, event) ?? named;
  // forward.sh hands --url to curl, which speaks far more than HTTP (gopher, dict, smtp, file …).
  if (!/^https?:\/\//i.test(url)) return fail(`--url ${url} is not an http:// or https:// URL`);
  // What both forwarders refuse as a wrong line (it blocks every call): said as theirs.
  const wrong = lineUrlProblem(url) ?? (EVENT_NAME.test(event) ? undefined : EVENT_NAME_PROBLEM);
  if (wrong) return fail(`${wrong}: the line blocks every call`);
  const odd = urlProblem(url);
  if (odd) return fail(`--url ${url} ${odd}: not contacted`);
  if (originOf(url) !== origin) return fail(elsewhere(url));
  if (flag("on-unreachable") === "allow") return fail(`--on-unreachable allow: whenever hookbox is slow or down this line lets the call through, whatever the tenant's on_failure: drop it`);
  if (format !== FORMAT_OF[entry.agent]) return fail(`--format ${format}, but ${AGENT_NAME[entry.agent]} reads --format ${FORMAT_OF[entry.agent]} answers`);
  if (resolveEventName(event)?.point !== resolveEventName(entry.event)?.point) return fail(`registered under ${entry.event} but forwards --event ${event}: hookbox would judge another event`);
  // The agent gives up on the hook after its `timeout`, or its own default: a silent allow.
  const agentS = entry.timeoutS ?? agentDeadlineS(entry.agent, entry.event);
  const givesUp = `${AGENT_NAME[entry.agent]} gives up on this hook after ${agentS} s`;
  const deadlineS = Number(flag("deadline") ?? agentDeadlineS(entry.agent, event));
  if (!(deadlineS <= agentS)) return fail(`${givesUp}, but the forwarder waits up to ${flag("deadline") ?? deadlineS} s: add --deadline ${agentS}`);
  const timeoutMs = flag("timeout");
  // The forwarder's own margin before a deadline (min(deadline − 0.5 s, 90 %)): a request that waits
  // to the agent's last moment answers after it, whatever the answer.
  const latestMs = Math.min(agentS * 1000 - 500, agentS * 900);
  if (timeoutMs !== undefined && !(Number(timeoutMs) <= latestMs)) return fail(`${givesUp}, but --timeout ${timeoutMs} lets the request wait past ${latestMs} ms, too late for the forwarder to answer in time: drop it, or lower it`);
  // A canary needs no time; a real event's hooks do. Too short a wait answers every slower event
  // with a failure mode the forwarder may not even know yet (it learns it from answers): an allow.
  const shortS = deadlineS < MIN_GUARD_WAIT_S ? `--deadline ${flag("deadline")!}` : timeoutMs !== undefined && Number(timeoutMs) < MIN_GUARD_WAIT_S * 1000 ? `--timeout ${timeoutMs}` : undefined;
  if (shortS) return fail(`${shortS} leaves hookbox less than ${MIN_GUARD_WAIT_S} s to run the event's hooks: a slower one is answered with the failure mode, which the forwarder may not know yet (then an allow): give at least ${MIN_GUARD_WAIT_S} s`);
  let runArgv: string[];
  let note = "";
  if (script) runArgv = script.argv;
  else {
    const found = hookboxOf(argv![0]!, dir, env);
    if (!found) return fail(`${AGENT_NAME[entry.agent]} would not find ${argv![0]} (from ${dir}, on PATH): the line fails, a silent allow`);
    // The repository's own program (or a link in it, to anything) is what the agent would run:
    // not hookbox, whatever it says — never run, and never vouched for.
    if (found.inside) return fail(`${argv![0]} is the repository's own file (${found.path}), not an installed hookbox: ${AGENT_NAME[entry.agent]} would run it, and hookbox doctor cannot vouch for what it does (not run): use hookbox from PATH, or sh .hookbox/forward.sh`);
    // hookbox is a Node script started through `env node`: without node on the hooks' PATH it never starts (exit 127), a silent allow.
    if (startsWithEnvNode(found.path) && !hookboxOf("node", dir, env)) return fail(`${argv![0]} (${found.path}) starts with "#!/usr/bin/env node", and node is not on the PATH ${AGENT_NAME[entry.agent]} gives its hooks: the line never starts (exit 127), a silent allow — put node on that PATH, or use sh .hookbox/forward.sh`);
    // The program the agent would run must be this hookbox (or print its forwarder's script, byte
    // for byte): another program of that name — a stub that exits 0, an older install — would let
    // every call through while the canary, run by this hookbox's forwarder, said the line was live.
    // (asked with the PATH the line runs with: no folder of the repository's in it)
    const other = await otherHookbox(found.path, { ...env, PATH: safePath(env.PATH, [dir]) });
    if (other) return fail(`${argv![0]} (${found.path}) is not this hookbox: ${other}; ${AGENT_NAME[entry.agent]} runs that program, which this doctor cannot vouch for — run its own doctor ("${found.path} doctor"), or put this hookbox first on the PATH`);
    // Whatever an installed name leads to, the doctor runs only this hookbox's own forwarder with the line's flags.
    runArgv = [process.execPath, process.argv[1]!, ...argv!.slice(1)];
  }
  if (entry.matcher !== undefined) note += `; ${AGENT_NAME[entry.agent]} runs it only for what its matcher ${JSON.stringify(entry.matcher)} matches`;
  if (entry.if !== undefined) note += `; ${AGENT_NAME[entry.agent]} runs it only for the tool calls its if ${JSON.stringify(entry.if)} takes`;
  const t0 = performance.now();
  const run = await runLine(runArgv, dir, canaryPayload(entry), lineEnv);
  const tookMs = performance.now() - t0;
  if (tookMs >= agentS * 1000) return fail(`${givesUp}, but the line took ${Math.round(tookMs)} ms to answer: raise the hook's timeout`);
  // The forwarder waits as long as the agent does (Claude Code's 600 s): the doctor, not as long.
  if (run.stopped) return fail(`the line gave no answer within ${LINE_TIMEOUT_MS / 1000} s (LINE_TIMEOUT_MS) and was stopped: hookbox at ${url} did not answer the canary in that time (${givesUp}; a slow hook or a stalled service holds every call that long)`);
  const text = `${run.stdout}\n${run.stderr}`;
  const blocked = blocks(entry.agent, entry.event, run);
  if (blocked && text.includes(CANARY_MARK)) return { entry, ok: true, message: `a block from hookbox at ${url} reaches ${AGENT_NAME[entry.agent]} (${blocked})${note}` };
  const said = run.stderr.trim().split("\n").filter(Boolean).at(-1) ?? "";
  // A token of no tenant: the line blocks every call (a wrong line lets nothing through), never a canary's block.
  const refused = /refused the token[^(]*\((\d{3}):/.exec(said);
  if (refused) return fail(`hookbox at ${url} refused the token (${refused[1]}): set HOOKBOX_TOKEN to this tenant's token — until then the line blocks every call`);
  if (/the token holds a character no header can carry/.test(said)) return fail(`HOOKBOX_TOKEN holds a character no header can carry (a space, a control character — a CR from a CRLF file, say): fix it — until then the line blocks every call`);
  if (/without hookbox's Hookbox-On-Failure header/.test(said)) return fail(`${url} is not hookbox's address (its answer carries no Hookbox-On-Failure header; a proxy before hookbox may be answering for it): fix --url — until then the line blocks every call`);
  if (blocked) return fail(`the line blocks, but not with hookbox's answer: ${said || run.stdout.trim()}`);
  if (/unreachable/.test(said)) return fail(`hookbox is unreachable at ${url}: ${said}`);
  return fail(`a block never reaches ${AGENT_NAME[entry.agent]} through this line (exit ${run.code ?? "killed"}, stdout ${JSON.stringify(run.stdout.trim().slice(0, 200))})${said ? `: ${said}` : ""}`);
}

async function checkHttp(entry: Entry, env: NodeJS.ProcessEnv): Promise<Finding> {
  const { url } = entry.http!;
  const { allowed } = entry.http!;
  // A token written in the file (not a variable of the user's): the events go to that token's tenant.
  const auth = Object.entries(entry.http!.headers).find(([k]) => k.toLowerCase() === "authorization")?.[1];
  if (auth !== undefined && /\S/.test(auth.replace(/^\s*Bearer\s+/i, "").replace(/\$\{?[A-Za-z_][A-Za-z0-9_]*\}?/g, "")))
    return { entry, ok: false, message: `its Authorization header holds a token written in ${entry.file}: the events would go to that token's tenant, not yours: write "Bearer $HOOKBOX_TOKEN" and list HOOKBOX_TOKEN in allowedEnvVars` };
  const headers = Object.fromEntries(
    Object.entries(entry.http!.headers).map(([k, v]) => [k, v.replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (_m, name: string) => (allowed.includes(name) ? (env[name] ?? "") : ""))]),
  );
  // A value with a byte no header may hold is refused here, unsent and unshown: the HTTP client's
  // own error repeats the value, and with it a variable (the token, a cloud key) filled into it.
  const bad = Object.entries(headers).find(([, v]) => !/^[\t\x20-\x7e\x80-\xff]*$/.test(v));
  if (bad) return { entry, ok: false, message: `its header ${JSON.stringify(bad[0])}, its variables filled in, holds a character no HTTP header may (the value is not shown: it may hold one of them)` };
  // The event the URL names is the one hookbox judges and answers in the JSON of: another than the
  // one the hook is registered under is answered in a shape its agent refuses for this event.
  const named = /\/v1\/hooks\/[A-Za-z]+\/([A-Za-z]+)\/?$/.exec(new URL(url).pathname)?.[1];
  if (named !== undefined && resolveEventName(named)?.point !== resolveEventName(entry.event)?.point)
    return { entry, ok: false, message: `registered under ${entry.event} but its URL names ${named}: hookbox would judge another event, and answer in its JSON` };
  // The native endpoint answers by its agent's default deadline, or sooner by Hookbox-Answer-By-Ms:
  // a hook with a shorter timeout of its own must say so, or the agent gives up first (a silent allow).
  if (entry.timeoutS !== undefined) {
    const header = Object.entries(headers).find(([k]) => k.toLowerCase() === "hookbox-answer-by-ms")?.[1];
    const agentMs = agentDeadlineS(entry.agent, entry.event) * 1000;
    const defaultMs = Math.min(agentMs - 500, agentMs * 0.9);
    const byMs = Math.min(defaultMs, header !== undefined && /^[0-9]+$/.test(header) ? Number(header) : Infinity);
    if (byMs >= entry.timeoutS * 1000)
      return { entry, ok: false, message: `${AGENT_NAME[entry.agent]} gives up on this HTTP hook after ${entry.timeoutS} s, but hookbox answers it by ${byMs / 1000} s: add the header "Hookbox-Answer-By-Ms": "${Math.round(entry.timeoutS * 900)}"` };
  }
  try {
    const res = await fetch(url, { method: "POST", redirect: "error", headers: { "content-type": "application/json", ...headers, "hookbox-canary": "block" }, body: JSON.stringify(canaryPayload(entry)), signal: AbortSignal.timeout(HTTP_CHECK_MS) });
    // No more than the forwarders read of an answer: a server that answers without end holds no memory.
    const text = await readText(res, MAX_ANSWER_BYTES);
    // hookbox answers a token of no tenant with a block in the agent's JSON (a 401 would be a silent allow)
    if (res.status === 401 || (!res.headers.has("hookbox-on-failure") && text.includes("hookbox refused the token")))
      return { entry, ok: false, message: `hookbox at ${url} refused the token: check the Authorization header and its variables — until then the hook blocks every call` };
    if (!res.ok) return { entry, ok: false, message: `hookbox at ${url} answered ${res.status}: ${text.slice(0, 200)}` };
    const blocked = blocks(entry.agent, entry.event, { code: 0, stdout: text, stderr: "" });
    return blocked && text.includes(CANARY_MARK)
      ? { entry, ok: true, message: `a block from hookbox at ${url} reaches ${AGENT_NAME[entry.agent]} (${blocked}, HTTP hook)${named === undefined ? `; name the event in the URL (…/${entry.event}) so that a body hookbox cannot read is still answered in this event's JSON` : ""}` }
      : { entry, ok: false, message: `hookbox answered, but not with a block ${AGENT_NAME[entry.agent]} obeys: ${text.slice(0, 200)}` };
  } catch (err) {
    // The connection's own failure (its cause: refused, no such host, a timeout), never a message
    // that may repeat what the request was made of.
    // An answer past the cap is hookbox's own words, and says how large.
    if (err instanceof AnswerTooLarge) return { entry, ok: false, message: `hookbox at ${url}: ${err.message}` };
    const cause = (err as { cause?: { code?: unknown } }).cause;
    const why = (err as Error).name === "TimeoutError" ? "no answer within 10 s" : typeof cause?.code === "string" ? cause.code : "the request could not be made";
    return { entry, ok: false, message: `hookbox is unreachable at ${url}: ${why}` };
  }
}

/** Larger than any forward script hookbox prints: a bigger file is not one, and is not read whole. */
const MAX_SCRIPT_BYTES = 64 * 1024;
/** Larger than any agent's hook configuration: the same cap as a repository's hook file. */
const MAX_CONFIG_BYTES = 1024 * 1024;

/**
 * A file's text, read only when it is a regular file of at most `maxBytes`: never a FIFO, a device
 * or a /proc file that blocks or never ends, wherever a link points.
 */
function readBounded(file: string, maxBytes: number): string {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new Error("not a regular file");
    // As large as the file says it is (one byte more, to see it grow), never more than the cap.
    const buf = Buffer.alloc(Math.min(st.size, maxBytes) + 1);
    let n = 0;
    for (let got = -1; got !== 0 && n < buf.length; n += got) got = readSync(fd, buf, n, buf.length - n, null);
    if (n > maxBytes) throw new Error(`larger than ${maxBytes} bytes`);
    if (n === buf.length) throw new Error("it grew while it was read");
    return buf.toString("utf8", 0, n);
  } finally {
    closeSync(fd);
  }
}

/** Whether `path` is `dir` or below it, links resolved. */
function within(dir: string, path: string): boolean {
  const rel = relative(realpathSync(dir), realpathSync(path));
  return rel === "" || (!isAbsolute(rel) && rel !== ".." && !rel.startsWith(`..${sep}`));
}

/**
 * Whether `path` is BusyBox (an applet of it by a link, or a hard link to the busybox on `env`'s PATH):
 * its awk finds a character of a string in time that grows with the string.
 */
function isBusybox(path: string, dir: string, env: NodeJS.ProcessEnv): boolean {
  let real = path;
  try {
    real = realpathSync(path);
  } catch {
    // unreadable: judged by its name alone
  }
  if (basename(real) === "busybox") return true;
  const box = hookboxOf("busybox", dir, env);
  if (!box) return false;
  try {
    const [a, b] = [statSync(real), statSync(box.path)];
    return a.ino === b.ino && a.dev === b.dev;
  } catch {
    return false;
  }
}

/**
 * The `hookbox` a line runs, found as the agent finds it from the repository's root: a path from
 * there, a bare name on PATH (an empty or relative PATH entry is the repository's root too).
 * `inside`: it is a file of the repository. Undefined when there is none to run.
 */
function hookboxOf(word: string, dir: string, env: NodeJS.ProcessEnv): { path: string; inside: boolean } | undefined {
  const candidates = word.includes("/") ? [isAbsolute(word) ? word : join(dir, word)] : (env.PATH ?? "").split(delimiter).map((p) => join(isAbsolute(p) ? p : join(dir, p), word));
  for (const path of candidates) {
    try {
      // A folder is no program (a shell's search passes over it), whatever its mode says.
      if (!statSync(path).isFile()) continue;
      accessSync(path, constants.X_OK);
      // Named by a path in the repository (or lying in it, or leading out of it by a link there):
      // the repository's own program, whatever it leads to.
      const lexically = relative(resolve(dir), resolve(path));
      return { path, inside: within(dir, path) || (!isAbsolute(lexically) && !lexically.startsWith("..")) };
    } catch {
      // not there, or not executable: the next PATH entry
    }
  }
  return undefined;
}

/**
 * A `sh PATH/forward.sh …` (or `PATH/forward.sh …`) line: the argv the doctor runs, with the script
 * resolved from the repository's root — or why it will not run it (a string), or undefined when the
 * line is no such line. The script comes from the repository, so it is only compared with the
 * script this hookbox prints, and on a match the doctor runs its own copy of that text (never the
 * file, which could change in between); an older hookbox's or an edited one is named instead.
 */
function forwardScriptOf(argv: string[], dir: string, env: NodeJS.ProcessEnv): { argv: string[]; args: string[] } | string | undefined {
  const shell = /^(?:\/usr\/bin\/|\/bin\/)?(?:sh|dash|bash)$/.test(argv[0]!) ? 1 : 0;
  const path = argv[shell];
  if (!path || !/(^|\/)forward\.sh$/.test(path)) return undefined;
  // The shell the agent would run, found as it would find it: a missing one fails the line (exit 127, a silent allow).
  const sh = shell ? hookboxOf(argv[0]!, dir, env) : undefined;
  if (shell && !sh) return `the agent would not find ${argv[0]!} (on PATH, or at that path): the line fails, a silent allow`;
  if (sh?.inside) return `${argv[0]!} is found in the repository (${sh.path}), not the system's shell: the repository's own program would run`;
  // The agent's kernel follows links before "..", the doctor's join() would not: no ".." at all.
  if (path.split("/").includes("..")) return `${path} climbs out with "..": give the script's path from the repository's root`;
  if (!shell && !path.includes("/")) return `${path} without sh is looked up on PATH, not in the repository: write "sh ${path}"`;
  const file = isAbsolute(path) ? path : join(dir, path);
  let text: string;
  try {
    text = readBounded(file, MAX_SCRIPT_BYTES);
  } catch (err) {
    return `${path} cannot be read from ${dir} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): the agent cannot run it`;
  }
  if (text !== FORWARD_SCRIPT)
    return `${path} differs from the script this hookbox prints (an older hookbox's, or edited): hookbox doctor runs only that script; write it again with "hookbox forward --print-script > ${path}"`;
  if (!shell) {
    try {
      accessSync(file, constants.X_OK);
    } catch {
      return `${path} is not executable, and the line runs it without sh: the agent cannot run it`;
    }
  }
  return { argv: [sh?.path ?? "/bin/sh", "-c", FORWARD_SCRIPT, path, ...argv.slice(shell + 1)], args: argv.slice(shell + 1) };
}

/** The event as the agent would pipe it, marked as the doctor's. */
function canaryPayload(entry: Entry): Json {
  // Cursor names its events in camelCase but sends snake_case payloads.
  const camel = resolveEventName(entry.event)?.dialect === "camel" && entry.agent !== "cursor";
  return camel
    ? { sessionId: "hookbox-doctor", timestamp: Date.now(), cwd: process.cwd(), toolName: "hookbox_doctor", toolArgs: "{}" }
    : { session_id: "hookbox-doctor", cwd: process.cwd(), hook_event_name: entry.event, tool_name: "hookbox_doctor", tool_input: {} };
}

/** How the agent would read the line's result: a block, and in what form — or undefined. */
function blocks(agent: Agent, event: string, run: { code: number | null; stdout: string; stderr: string }): string | undefined {
  if (run.code === 2 && !(agent === "gemini" && event === "BeforeToolSelection")) return "exit 2";
  if (run.code !== 0) return undefined;
  let out: Json;
  try {
    out = obj(JSON.parse(run.stdout));
  } catch {
    return undefined;
  }
  const specific = obj(out.hookSpecificOutput);
  if (agent === "copilot" && out.permissionDecision === "deny") return "permissionDecision deny";
  if ((agent === "claude" || agent === "codex") && specific.permissionDecision === "deny") return "hookSpecificOutput.permissionDecision deny";
  // PermissionRequest: the deny is its decision object (exit 2 is not read there by Claude Code).
  if ((agent === "claude" || agent === "codex") && obj(specific.decision).behavior === "deny") return "hookSpecificOutput.decision.behavior deny";
  if (agent === "cursor") return out.permission === "deny" ? "permission deny" : out.continue === false ? "continue false" : undefined;
  // Codex at a session's or subagent's start and before compaction: the stop (continue: false) is its block there.
  if (agent === "codex" && CODEX_STOP_ONLY.has(asciiLower(event)) && out.continue === false) return "continue false";
  // Gemini before it picks tools reads no decision: a block there is no tool left, or none.
  if (agent === "gemini" && event === "BeforeToolSelection") return obj(specific.toolConfig).mode === "NONE" ? "hookSpecificOutput.toolConfig mode NONE" : undefined;
  if (out.decision === "block") return "decision block";
  return undefined;
}

/** Which decisions each agent reads at an event (the engine's table, from each agent's hooks reference). */
const EFFECTIVE: Record<Agent, (point: EventPoint) => ReadonlySet<Decision>> = { claude: claudeEffective, codex: claudeEffective, copilot: copilotEffective, cosh: coshEffective, cursor: cursorEffective, gemini: geminiEffective };

/**
 * Whether the agent reads a block at the event at all: where it does not, a line there can add
 * context, never stop anything. Gemini's BeforeToolSelection takes its block as no tool left, Codex's
 * starts as a stop, VS Code's prompt and post-tool events a Copilot CLI's do not.
 */
function readsBlock(agent: Agent, event: string): boolean {
  const point = resolveEventName(event)?.point;
  if (point === undefined) return true;
  if (agent === "gemini" && event === "BeforeToolSelection") return true;
  if (agent === "codex" && CODEX_STOP_ONLY.has(asciiLower(event))) return true;
  // VS Code's names of Copilot's events (its hook files share the folder): it reads a block at its
  // prompt (continue: false) and after a tool (decision: "block"), where the CLI reads none.
  if (agent === "copilot" && (event === "UserPromptSubmit" || event === "PostToolUse")) return true;
  return EFFECTIVE[agent](point).has("block");
}

/** Whether a program file starts with `#!/usr/bin/env node` (npm's bin of this package does). */
function startsWithEnvNode(path: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    const head = Buffer.alloc(64);
    const n = readSync(fd, head, 0, head.length, 0);
    return /^#!\s*\S*\/env\s+(-\S+\s+)*node\b/.test(head.subarray(0, n).toString("latin1"));
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The events each agent fires, by the names its files use (as the engine reads a repository's files). */
const FIRES: Record<Agent, ReadonlySet<string>> = { claude: CLAUDE_EVENTS, codex: CODEX_EVENTS, copilot: COPILOT_EVENTS, cosh: COSH_EVENTS, cursor: CURSOR_EVENTS, gemini: GEMINI_EVENTS };

/**
 * The words of a plain command line — words, single- or double-quoted words — or undefined when it
 * holds anything a shell would do more with (`;`, `|`, `&`, `$`, backquotes, redirections, …). A
 * first word that assigns a variable (`X=…`, quoted or not) makes it no plain command: the shell
 * sets the variable and runs the next word — an option, a repository's file — never hookbox.
 */
export function plainArgv(command: string): string[] | undefined {
  const words: string[] = [];
  // Blanks are spaces and tabs, as the shell's: other whitespace, controls and invisible characters
  // (a newline, a no-break space, a zero-width joiner) make a line that is not plain.
  // eslint-disable-next-line no-control-regex -- controls are what it looks for
  if (/[\u0000-\u0008\u000a-\u001f\u007f-\u00a0\u00ad\u061c\u1680\u180e\u2000-\u200f\u2028-\u202f\u205f-\u206f\u3000\ufeff]/.test(command)) return undefined;
  // One word: single-quoted, double-quoted without expansions, or bare without shell syntax (globs included).
  const word = /[ \t]*(?:'([^']*)'|"([^"$`\\]*)"|([^ \t'"`$;&|<>(){}\\*?~#![\]]+))(?=[ \t]|$)/y;
  const text = command.replace(/[ \t]+$/, "");
  for (let at = 0; at < text.length; at = word.lastIndex) {
    word.lastIndex = at;
    const m = word.exec(text);
    if (!m) return undefined;
    words.push(m[1] ?? m[2] ?? m[3]!);
  }
  if (words.length === 0 || /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0]!)) return undefined;
  return words;
}

/** How long the doctor waits for one line; then its whole process group is killed. @default 30 s */
export const LINE_TIMEOUT_MS = 30_000;
/** What the doctor keeps of each stream of a line. */
const MAX_LINE_OUTPUT_CHARS = 64 * 1024;

/**
 * Runs the line as the agent would: from the repository's root, the canary event on stdin. In a
 * process group of its own, killed whole at the timeout: a child left behind (forward.sh's curl and
 * awk) holds no pipe open after it.
 */
/** @default 10 s — asking an installed hookbox for its forwarder's script (`otherHookbox`). */
export const PROBE_TIMEOUT_MS = 10_000;
const probes = new Map<string, Promise<string | undefined>>();

/**
 * Why the program at `path` (found on the user's PATH, outside the repository) is not this hookbox,
 * or undefined when it is: the same file as this command's entry (links followed), or one that prints
 * this hookbox's forwarder script, byte for byte, to `forward --print-script` — a shim or a wrapper of
 * a version manager does. Asked once per program, in an empty folder with the user's PATH and HOME
 * alone: no file of the repository's, no variable a hook file set, reaches it.
 */
function otherHookbox(path: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  let real: string;
  try {
    real = realpathSync(path);
    // this command's entry: the bundle, or main.js beside it
    const self = process.argv[1]!;
    if ([self, join(dirname(self), "hookbox.cjs")].some((p) => existsSync(p) && realpathSync(p) === real)) return Promise.resolve(undefined);
  } catch {
    return Promise.resolve("it cannot be resolved");
  }
  let probe = probes.get(real);
  if (!probe) {
    probe = (async () => {
      const cwd = mkdtempSync(join(tmpdir(), "hookbox-doctor-probe-"));
      try {
        const r = await runLine([path, "forward", "--print-script"], cwd, {}, { PATH: env.PATH ?? "", HOME: env.HOME ?? cwd }, PROBE_TIMEOUT_MS, FORWARD_SCRIPT.length + 1);
        if (r.stdout === FORWARD_SCRIPT) return undefined;
        if (r.stopped) return `asked for its forwarder's script ("hookbox forward --print-script"), it gave none within ${PROBE_TIMEOUT_MS / 1000} s (PROBE_TIMEOUT_MS)`;
        return `asked for its forwarder's script ("hookbox forward --print-script"), it ${r.stdout === "" ? `printed none (exit ${r.code ?? "killed"})` : "printed another (an older or another hookbox's)"}`;
      } finally {
        rmSync(cwd, { recursive: true, force: true });
      }
    })();
    probes.set(real, probe);
  }
  return probe;
}

function runLine(argv: string[], cwd: string, payload: Json, env: NodeJS.ProcessEnv, timeoutMs = LINE_TIMEOUT_MS, keepChars = MAX_LINE_OUTPUT_CHARS): Promise<{ code: number | null; stdout: string; stderr: string; stopped?: true }> {
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd, env: { ...env, HOOKBOX_CANARY: "1" }, stdio: ["pipe", "pipe", "pipe"], detached: true });
    let stdout = "";
    let stderr = "";
    const keep = (text: string, c: string) => (text.length < keepChars ? text + c : text);
    // decoded as a whole: a character split between two reads is still one
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    const done = (code: number | null) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    };
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
      child.stdout.destroy();
      child.stderr.destroy();
      resolve({ code: null, stdout, stderr, stopped: true });
    }, timeoutMs);
    child.stdout.on("data", (c: string) => (stdout = keep(stdout, c)));
    child.stderr.on("data", (c: string) => (stderr = keep(stderr, c)));
    child.stdin.on("error", () => undefined);
    child.stdin.end(JSON.stringify(payload));
    child.on("error", (err) => {
      clearTimeout(timer);
      resolve({ code: 127, stdout, stderr: `${stderr}${err.message}` });
    });
    child.on("close", done);
  });
}

/** The origin of a URL, or the text when it is none. */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/** What a parser said went wrong, without the text it quotes from the file. */
function parseProblem(err: unknown): string {
  const e = err as Error & { line?: number; column?: number };
  if (e instanceof SyntaxError) return "not valid JSON";
  if (typeof e.line === "number") return `not valid TOML (line ${e.line}, column ${e.column ?? 0})`;
  return (e.message ?? String(err)).split("\n")[0]!.slice(0, 200);
}

/** PATH for the lines the doctor runs: absolute entries only, none inside the repository. */
function safePath(path: string | undefined, roots: string[]): string {
  const inside = (p: string) => roots.some((r) => {
    try {
      return within(r, p);
    } catch {
      return false;
    }
  });
  return (path ?? "").split(delimiter).filter((p) => isAbsolute(p) && !inside(p)).join(delimiter);
}
