/**
 * @module The Cursor format: a repository's `.cursor/hooks.json` — `{"version":1,"hooks":{<event>:
 * [{"command","timeout","matcher","failClosed","type"}]}}` with Cursor's camelCase event names
 * (`beforeShellExecution`, `beforeMCPExecution`, `beforeReadFile`, `preToolUse`, `stop` …) and
 * snake_case payloads (Cursor hooks documentation). Here: loading, its matcher, its exit-code and
 * output rules (`permission`, `user_message` / `agent_message`, `failClosed`), where decisions
 * count, and its answers.
 */
import { basename } from "node:path";
import { z } from "zod";
import type { Folded } from "../aggregate.js";
import { CURSOR_NO_AGENT_MESSAGE } from "../agents.js";
import { ALL, ALLOW_BLOCK, NONE, type Decision, type EventPoint } from "../events.js";
import { compileRegex, type HookDef, type HookSet, type Matcher } from "../hooks.js";
import type { RunResult } from "../run/types.js";
import type { Verdict } from "../verdict.js";
import { type Answer, askDenyReason, badEntry, configError, hookTimeout, countHook, defined, describeFailure, eventOf, type FormatModule, hookCalled, isStopPoint, knownKeys, type LoadContext, PAST_LIMIT, readMatcher, originOf, type ParsedFile, readDecision, pastBounds, readOutput, schemaError, shown, skipOtherType, str, warn, withContext, withReason, CommandSchema } from "./shared.js";

/** @default 30 s — hookbox's choice, as Copilot's: the Cursor document leaves it to the agent */
export const CURSOR_DEFAULT_TIMEOUT_MS = 30_000;

/**
 * @default 5 — the follow-ups a stop hook may send when its `loop_limit` is unset (Cursor hooks
 * documentation: "default limit is 5 auto follow-ups per script, configurable via loop_limit";
 * null for none): past it, counted by the event's `loop_count`, its `followup_message` is not sent.
 */
export const CURSOR_LOOP_LIMIT = 5;

const HookSchema = z.strictObject({
  type: z.string().optional(),
  command: CommandSchema.optional(),
  /** seconds */
  timeout: z.number().positive().optional(),
  matcher: z.string().optional(),
  /** Cursor: a failure of this hook (crash, timeout, bad output) blocks instead of letting the action through */
  failClosed: z.boolean().optional(),
  /** a number, or null for no limit */
  loop_limit: z.number().nullable().optional(),
});
const HOOK_KEYS = Object.keys(HookSchema.shape);
const FileSchema = z.strictObject({ version: z.number().optional(), hooks: z.record(z.string(), z.array(z.unknown())) });
const FILE_KEYS = Object.keys(FileSchema.shape);

/**
 * What a Cursor matcher is tested against where the event has no tool name (Cursor hooks
 * documentation, "Available matchers by hook"): the shell events' command; the file events' tool
 * type (`Read`, `TabRead`; `Write`, `TabWrite` — the tool's name when the event carries one);
 * subagents' type; and a fixed word for the prompt, stop and response events.
 */
const MATCH_FIELD: Partial<Record<string, HookDef["matchOn"]>> = {
  BeforeShellExecution: { field: "command" },
  AfterShellExecution: { field: "command" },
  BeforeReadFile: { field: "tool_name", otherwise: "Read" },
  AfterFileEdit: { field: "tool_name", otherwise: "Write" },
  BeforeTabFileRead: { field: "tool_name", otherwise: "TabRead" },
  AfterTabFileEdit: { field: "tool_name", otherwise: "TabWrite" },
  SubagentStart: { field: "subagent_type" },
  SubagentStop: { field: "subagent_type" },
  UserPromptSubmit: { value: "UserPromptSubmit" },
  Stop: { value: "Stop" },
  AfterAgentResponse: { value: "AgentResponse" },
  AfterAgentThought: { value: "AgentThought" },
};

/** The events Cursor fires (Cursor hooks documentation): a hook under any other name never runs. */
export const CURSOR_EVENTS: ReadonlySet<string> = new Set([
  "sessionStart", "sessionEnd", "preToolUse", "postToolUse", "postToolUseFailure", "subagentStart", "subagentStop",
  "beforeShellExecution", "afterShellExecution", "beforeMCPExecution", "afterMCPExecution", "beforeReadFile", "afterFileEdit",
  "beforeSubmitPrompt", "preCompact", "stop", "afterAgentResponse", "afterAgentThought", "beforeTabFileRead", "afterTabFileEdit",
]);

/** All a matcher is ever tested against at these events: one that matches none of them never fires. */
const MATCH_WORDS: Partial<Record<string, readonly string[]>> = {
  BeforeReadFile: ["Read", "TabRead"],
  BeforeTabFileRead: ["Read", "TabRead"],
  AfterFileEdit: ["Write", "TabWrite"],
  AfterTabFileEdit: ["Write", "TabWrite"],
  UserPromptSubmit: ["UserPromptSubmit"],
  Stop: ["Stop"],
  AfterAgentResponse: ["AgentResponse"],
  AfterAgentThought: ["AgentThought"],
};

function loadCursorHooks(parsed: ParsedFile, ctx: LoadContext): HookSet {
  const set: HookSet = { hooks: [], warnings: [], disableAll: false };
  const file = FileSchema.safeParse(knownKeys(parsed, [], parsed.value, FILE_KEYS, ctx, set.warnings));
  if (!file.success) throw schemaError(parsed, file.error);
  for (const [event, entries] of Object.entries(file.data.hooks)) {
    const resolved = eventOf(parsed, ["hooks", event], event, ctx, set.warnings, { agent: "Cursor", names: CURSOR_EVENTS });
    if (!resolved) continue;
    entries.forEach((raw, i) => {
      const path = ["hooks", event, i];
      if (skipOtherType(parsed, path, raw, ctx, set.warnings)) return;
      const entry = HookSchema.safeParse(knownKeys(parsed, path, raw, HOOK_KEYS, ctx, set.warnings));
      // Cursor refuses a hooks.json its schema does not take ("could not be loaded"): the file is
      // skipped whole (repository.ts) — but for a limit of hookbox's own, which skips this hook alone.
      if (!entry.success) return badEntry(parsed, entry.error, path, ctx, set.warnings, false);
      const e = entry.data;
      if (!e.command) throw configError(parsed, path, 'a command hook needs "command"');
      const pattern = e.matcher;
      // A regex found anywhere in what the event is matched on (MATCH_FIELD).
      const matcher = pattern === undefined || pattern === "" || pattern === "*"
        ? undefined
        : readMatcher(parsed, [...path, "matcher"], ctx, set.warnings, (): Matcher => ({ source: pattern, test: compileRegex(pattern, { anchored: false }) }));
      if (matcher === PAST_LIMIT) return;
      // A matcher tested against a fixed word (`Stop`) or a tool type (`Read`) that it cannot match:
      // the hook never runs, in Cursor as here — said, since a path or a prompt pattern was meant.
      const words = MATCH_WORDS[resolved.point];
      if (matcher && words && !words.some((w) => matcher.test(w)))
        warn(set.warnings, () => `${originOf(parsed, [...path, "matcher"])}: hooks.${event}[${i}].matcher: Cursor tests it against ${words.map((w) => JSON.stringify(w)).join(" or ")} at ${event}, which it does not match: this hook never runs`);
      countHook(parsed, path, ctx);
      set.hooks.push({
        name: `${basename(parsed.file)}:${event}[${i}]`,
        source: ctx.source,
        format: "cursor",
        point: resolved.point,
        eventName: event,
        dialect: "snake", // Cursor's payloads are snake_case whatever the event's spelling
        matcher,
        ...(matcher && MATCH_FIELD[resolved.point] ? { matchOn: MATCH_FIELD[resolved.point] } : {}),
        command: e.command,
        ...hookTimeout(e.timeout !== undefined ? e.timeout * 1000 : CURSOR_DEFAULT_TIMEOUT_MS, ctx),
        env: {},
        failOpen: e.failClosed !== true,
        ...(e.loop_limit !== undefined ? { loopLimit: e.loop_limit } : {}),
        limits: {},
        mounts: [],
        origin: originOf(parsed, path),
      });
    });
  }
  return set;
}

/**
 * Cursor's rules: exit 0 reads `permission` (at a permission hook one its schema does not take
 * blocks); exit 2 denies; other failures — and, with `failClosed`, no output at all — let the action
 * through unless `failClosed`. At `stop` and `subagentStop` only a `followup_message` does anything: there
 * is no action for a deny, an exit 2 or a failure to hold back.
 */
export function interpretCursor(run: RunResult, hook: HookDef, event: Readonly<Record<string, unknown>> = {}): Verdict {
  const stopPoint = isStopPoint(hook.point);
  const failure = (error: string, rule: string): Verdict =>
    hook.failOpen || stopPoint
      ? { decision: null, error, rule: `${rule}; cursor: a failed hook lets the action through` }
      : { decision: "block", reason: `${hookCalled(hook)} failed: ${error}`, error, rule: `${rule}; cursor: failClosed = true turns the failure into a block` };
  if (run.outcome === "timed_out") return failure("timed out", "cursor: timeout");
  if (run.outcome !== "exited") return failure(describeFailure(run), "cursor: the hook crashed");
  if (run.exitCode === 2 && stopPoint) return { decision: null, error: null, rule: "cursor: exit 2 at stop holds nothing back (only followup_message counts there)" };
  if (run.exitCode === 2)
    return { decision: "block", reason: run.stderr.trim() || `blocked by ${hookCalled(hook)} (exit 2)`, error: null, rule: "cursor: exit 2 blocks, as permission deny" };
  if (run.exitCode !== 0) return failure(describeFailure(run), "cursor: non-zero exit");
  const out = readOutput(run.stdout);
  // Nothing at all from a failClosed hook is a failure, as Cursor reads it ("returned no output"); `{}` is an answer.
  if (out.kind === "empty" && run.stdout.trim() === "" && !hook.failOpen) return failure("returned no output", "cursor: a failClosed hook printed nothing");
  if (out.kind === "empty") return { decision: null, error: null, rule: "cursor: no output makes no decision" };
  // Cursor hooks, exit codes: for a permission hook "invalid JSON or a schema mismatch blocks the
  // action", failClosed or not; elsewhere it is a failure like any other.
  const mismatch = (error: string, rule: string): Verdict =>
    PERMISSION_POINTS.has(hook.point)
      ? { decision: "block", reason: `${hookCalled(hook)} answered what Cursor cannot read: ${error}`, error, rule: `${rule}; cursor: a permission hook's unreadable answer blocks the action` }
      : failure(error, rule);
  // Past hookbox's bounds: hookbox not deciding — but a failClosed hook blocks, as past max_output_bytes.
  if (out.kind === "invalid" && out.limit) return hook.failOpen ? pastBounds(out, "cursor") : { ...failure(out.error, pastBounds(out, "cursor").rule), limit: "output_shape" };
  if (out.kind === "invalid") return mismatch(out.error, "cursor: output that is not a JSON object");
  const o = out.value;
  // A permission hook's `permission` outside its schema ("", null, "Deny", `ask` at a file read) is a
  // response that does not match it: Cursor blocks the action, failClosed or not.
  if (PERMISSION_POINTS.has(hook.point) && o.permission !== undefined && !takesPermission(hook.point, o.permission))
    return mismatch(`unknown permission ${shown(o.permission)} (${hook.eventName ?? hook.point} takes ${permissionWords(hook.point).join(", ")})`, "cursor: unknown permission");
  // beforeSubmitPrompt reads `continue` (and `user_message`) only; the stops `followup_message`.
  const raw = stopPoint || hook.point === "UserPromptSubmit" ? undefined : (o.permission ?? o.decision);
  let decision = readDecision(raw);
  // Only `permission` is Cursor's own key: an unknown value of the `decision` also read is the hook's failure.
  if (decision === "invalid") return (o.permission !== undefined ? mismatch : failure)(`unknown permission ${shown(raw)}`, "cursor: unknown permission");
  let rule = decision ? `cursor: permission "${String(raw)}"` : "cursor: no permission";
  const userMessage = str(o.user_message) ?? str(o.userMessage);
  let reason = str(o.agent_message) ?? str(o.agentMessage) ?? str(o.reason) ?? userMessage;
  // beforeSubmitPrompt: `continue: false` stops the prompt (the one event that reads it).
  if (o.continue === false && hook.point === "UserPromptSubmit") {
    decision = "block";
    rule = "cursor: continue = false stops the prompt";
  }
  // stop / subagentStop: a `followup_message` sends the agent another turn — Stop's block — but
  // past the hook's loop_limit (the event's loop_count says how many it sent), and at subagentStop
  // when the subagent did not complete ("Only consumed when status is completed").
  const followup = str(o.followup_message);
  if (followup && stopPoint) {
    const limit = hook.loopLimit === undefined ? CURSOR_LOOP_LIMIT : hook.loopLimit;
    const count = event.loop_count;
    if (limit !== null && typeof count === "number" && count >= limit) rule = `cursor: followup_message not sent: loop_count ${count} has reached the hook's loop_limit ${limit}`;
    else if (hook.point === "SubagentStop" && typeof event.status === "string" && event.status !== "completed") rule = `cursor: followup_message not sent: the subagent's status is ${shown(event.status)}, and Cursor takes one only when it is "completed"`;
    else {
      decision = "block";
      reason = followup;
      rule = "cursor: followup_message sends the agent on";
    }
  }
  // Read where Cursor reads them: `updated_input` before a tool (preToolUse), `additional_context`
  // after one and at a session's start.
  const updated = hook.point === "PreToolUse" ? (o.updated_input ?? o.updatedInput) : undefined;
  // postToolUse: `updated_mcp_tool_output` "replaces the tool output seen by the model" (MCP tools only).
  const replaced = hook.point === "PostToolUse" && o.updated_mcp_tool_output !== undefined && o.updated_mcp_tool_output !== null ? o.updated_mcp_tool_output : undefined;
  return {
    decision,
    reason,
    systemMessage: userMessage,
    additionalContext: CONTEXT_POINTS.has(hook.point) ? (str(o.additional_context) ?? str(o.additionalContext)) : undefined,
    ...(updated !== undefined ? { modifiedArgs: updated } : {}),
    ...(replaced !== undefined ? { updatedOutput: replaced } : {}),
    error: null,
    rule,
  };
}

/**
 * Cursor hooks documentation: which events gate an action. An ask counts where Cursor asks
 * (the shell and MCP events); at `preToolUse` Cursor takes it but does not enforce it, and at
 * `subagentStart` it treats it as a deny — there hookbox keeps it (an ask is never loosened) and
 * answers it as a deny (cursorAnswer).
 */
export function cursorEffective(point: EventPoint): ReadonlySet<Decision> {
  switch (point) {
    case "PreToolUse":
    case "SubagentStart":
    case "BeforeShellExecution":
    case "BeforeMCPExecution": return ALL; // permission allow | deny | ask
    case "BeforeReadFile": // permission allow | deny
    case "BeforeTabFileRead":
    case "UserPromptSubmit": // beforeSubmitPrompt: continue false
    case "Stop": // followup_message
    case "SubagentStop": return ALLOW_BLOCK;
    default: return NONE;
  }
}

/**
 * Where Cursor reads `additional_context` (hooks documentation, "Hook events"): postToolUse's, "injected
 * into the conversation after the tool result", and sessionStart's; no other event's answer has it.
 */
const CONTEXT_POINTS: ReadonlySet<string> = new Set(["PostToolUse", "SessionStart"]);

/**
 * Cursor: `permission`, `user_message` (every hook's message, joined) and `agent_message` (the reason)
 * — where the event takes no agent_message (subagentStart, the file reads) a deny's reason joins
 * `user_message`; `continue` and `followup_message` where those events take them; `updated_input`
 * on preToolUse; `additional_context` after a tool and at a session's start — elsewhere, where
 * Cursor would drop it, it joins `user_message`.
 */
function cursorAnswer(point: EventPoint, folded: Folded): Answer {
  // Context with no place of its own at this event: the user's to read.
  const context = CONTEXT_POINTS.has(point) ? undefined : folded.additionalContext;
  const f = context === undefined ? folded : { ...folded, systemMessage: withContext(folded.systemMessage, context), additionalContext: undefined };
  // The user reads why an action was stopped, or why they are asked. An ask is the user's to answer:
  // its reason is always there, beside every hook's message — else one hook's message (an untrusted
  // repository's, say) would be all the user reads of a question a policy hook asked.
  // (a repository's reason comes marked as its messages are: answerFor)
  const user_message = withContext(f.decision === "ask" ? withReason(folded.systemMessage, f.reason) : (folded.systemMessage ?? (f.decision === "block" ? f.reason : undefined)), context);
  if (point === "UserPromptSubmit") return { output: defined({ continue: f.decision === "block" ? false : undefined, user_message }), exit_code: 0 };
  if (isStopPoint(point)) return { output: defined({ followup_message: f.decision === "block" ? f.reason : undefined }), exit_code: 0 };
  if (cursorEffective(point).size === 0) {
    // postToolUse's `updated_mcp_tool_output` replaces what the model sees of an MCP tool's output;
    // of any other tool's Cursor takes none: its user is told, never left to think a redaction happened.
    const replaced = point === "PostToolUse" ? f.updatedOutput : undefined;
    const told = replaced !== undefined ? withContext(f.systemMessage, MCP_ONLY_REPLACEMENT) : f.systemMessage;
    return { output: defined({ additional_context: f.additionalContext, updated_mcp_tool_output: replaced, user_message: told }), exit_code: 0 };
  }
  // An ask Cursor would not ask (preToolUse takes it and lets the call run; subagentStart reads
  // it as a deny): said as the deny it must be, the reason saying a hook asked.
  const askAsDeny = f.decision === "ask" && !ASKING_POINTS.has(point);
  // Cursor takes updated_input before a tool only (preToolUse). Elsewhere (beforeMCPExecution) the
  // change is not said, and nor is an allow given with it (the fold keeps no other allow beside a
  // change): that allow was for the changed call, never for the call as sent — which the engine
  // makes an ask (changeNotTakenAt). An ask stays an ask — the user answers it — told that the
  // change was not applied: the user is asked about the call as sent.
  const untaken = f.modifiedArgs !== undefined && point !== "PreToolUse" && f.decision !== "block" && !askAsDeny;
  const permission = f.decision === "block" || askAsDeny ? "deny" : untaken && f.decision === "allow" ? undefined : (f.decision ?? undefined);
  const reason = askAsDeny ? askDenyReason(f.reason, "Cursor") : f.reason;
  // subagentStart and the file reads take no agent_message: why they are denied is the user's to read.
  if (CURSOR_NO_AGENT_MESSAGE.has(point.toLowerCase())) {
    const denied = permission === "deny" ? (askAsDeny ? askDenyReason(f.reason, "Cursor") : f.reason) : undefined;
    return { output: defined({ permission, user_message: withReason(f.systemMessage, denied) }), exit_code: 0 };
  }
  return {
    output: defined({
      permission,
      user_message: untaken ? withContext(user_message, "hookbox: a hook changed the arguments, and Cursor takes a change only before a tool (preToolUse): the change was not applied") : (user_message ?? (askAsDeny ? reason : undefined)),
      agent_message: permission !== undefined ? reason : undefined,
      updated_input: point === "PreToolUse" ? f.modifiedArgs : undefined,
    }),
    exit_code: 0,
  };
}

/**
 * Cursor's permission hooks (hooks documentation, exit codes: "beforeShellExecution,
 * beforeMCPExecution, beforeReadFile, subagentStart, preToolUse" and the Tab read): there an answer
 * Cursor cannot read blocks the action.
 */
const PERMISSION_POINTS: ReadonlySet<string> = new Set(["PreToolUse", "SubagentStart", "BeforeShellExecution", "BeforeMCPExecution", "BeforeReadFile", "BeforeTabFileRead"]);

/**
 * The `permission` words a permission hook's schema takes (hooks documentation, "Hook events"):
 * `allow`, `deny` and `ask` — which preToolUse accepts without enforcing it and subagentStart reads
 * as a deny —, but at the file reads (beforeReadFile, beforeTabFileRead) `allow` and `deny` only.
 */
const FILE_READ_POINTS: ReadonlySet<string> = new Set(["BeforeReadFile", "BeforeTabFileRead"]);
const permissionWords = (point: EventPoint): readonly string[] => (FILE_READ_POINTS.has(point) ? ["allow", "deny"] : ["allow", "deny", "ask"]);
const takesPermission = (point: EventPoint, value: unknown): boolean => typeof value === "string" && permissionWords(point).includes(value);

/** Where Cursor asks its user on `permission: "ask"`. */
const ASKING_POINTS: ReadonlySet<string> = new Set(["BeforeShellExecution", "BeforeMCPExecution"]);

/** Said beside a replaced tool output: Cursor takes `updated_mcp_tool_output` for an MCP tool's output only. */
const MCP_ONLY_REPLACEMENT = "hookbox: a hook replaced the tool's output; Cursor takes the replacement for an MCP tool only — of any other tool the model sees the output as the tool gave it";

export const cursorFormat: FormatModule = {
  format: "cursor",
  agent: "Cursor",
  interpret: interpretCursor,
  // postToolUse's updated_mcp_tool_output (cursorAnswer)
  replacesOutput: true,
  effective: cursorEffective,
  answer: cursorAnswer,
  // hooks documentation: updated_input is preToolUse's alone. beforeMCPExecution and
  // beforeShellExecution ask (ASKING_POINTS); beforeReadFile cannot, and an ask there is its deny.
  changeNotTakenAt: new Set<EventPoint>(["BeforeMCPExecution", "BeforeShellExecution", "BeforeReadFile"] as EventPoint[]),
  // The permission hooks' deny and beforeSubmitPrompt's `continue: false`, together: the deny alone
  // lets a prompt through. Neither key is read where the other is; at `stop` neither (the agent stops).
  blockAnyEvent: (reason) => ({ output: { ...cursorAnswer("PreToolUse" as EventPoint, { decision: "block", reason, notifications: [] }).output, continue: false }, exit_code: 0 }),
  repository: [{ path: ".cursor/hooks.json", syntax: "json", load: loadCursorHooks }],
};
