/**
 * @module Copilot hook files (copilot-hooks.md): `{"version":1,"hooks":{<event>:[{"type":"command",
 * "bash"|"command", "timeoutSec", "cwd", "env"}]}}` — administrators' policy files and a
 * repository's `.github/hooks/*.json`. Also Copilot's exit-code and output rules.
 */
import { basename, dirname, posix, resolve } from "node:path";
import { z } from "zod";
import type { HookDef, HookSet } from "../hooks.js";
import type { RunResult } from "../run/types.js";
import type { Verdict } from "../verdict.js";
import {
  configError, configEvent, describeFailure, originOf, readDecision, readOutput, schemaError, str, type LoadContext, type ParsedFile,
} from "./shared.js";

/** @default 30 s — the Copilot CLI hooks reference's default `timeoutSec` */
export const COPILOT_DEFAULT_TIMEOUT_MS = 30_000;

const CopilotHookSchema = z
  .strictObject({
    type: z.literal("command", { error: 'only "command" hooks can run here' }),
    bash: z.string().min(1).optional(),
    command: z.string().min(1).optional(),
    powershell: z.string().optional(),
    cwd: z.string().optional(),
    env: z.record(z.string(), z.string()).optional(),
    timeoutSec: z.number().positive().optional(),
    comment: z.string().optional(),
  })
  .refine((h) => h.bash !== undefined || h.command !== undefined, 'a command hook needs "bash" or "command"');

const CopilotFileSchema = z.strictObject({
  version: z.literal(1, { error: "version must be 1" }),
  hooks: z.record(z.string(), z.array(CopilotHookSchema)),
  disableAllHooks: z.boolean().optional(),
});

export function loadCopilotFile(parsed: ParsedFile, ctx: LoadContext): HookSet {
  const file = CopilotFileSchema.safeParse(parsed.value);
  if (!file.success) throw schemaError(parsed, file.error);
  const hooks: HookDef[] = [];
  for (const [event, entries] of Object.entries(file.data.hooks)) {
    const resolved = configEvent(parsed, ["hooks", event], event);
    entries.forEach((entry, i) => {
      const path = ["hooks", event, i];
      hooks.push({
        name: `${basename(parsed.file)}:${event}[${i}]`,
        source: ctx.source,
        format: "copilot",
        point: resolved.point,
        // copilot-hooks.md: "preToolUse receives toolName and toolArgs … PreToolUse receives snake_case fields"
        dialect: resolved.dialect,
        command: (entry.bash ?? entry.command)!,
        timeoutMs: Math.min(entry.timeoutSec !== undefined ? entry.timeoutSec * 1000 : COPILOT_DEFAULT_TIMEOUT_MS, ctx.maxTimeoutMs),
        env: entry.env ?? {},
        failOpen: true,
        limits: {},
        cwd: hookCwd(parsed, path, entry.cwd, ctx),
        mounts: [],
        origin: originOf(parsed, path),
      });
    });
  }
  return { hooks, warnings: [], disableAll: file.data.disableAllHooks === true };
}

/** Policy hooks run on the host beside their file; other hooks under /workspace, never outside it. */
function hookCwd(parsed: ParsedFile, path: (string | number)[], cwd: string | undefined, ctx: LoadContext): string | undefined {
  if (ctx.source === "policy") return resolve(dirname(parsed.file), cwd ?? ".");
  if (cwd === undefined) return undefined;
  const normal = posix.normalize(cwd);
  if (posix.isAbsolute(normal) || normal.startsWith("..")) throw configError(parsed, [...path, "cwd"], "cwd must be a path inside the repository");
  return normal;
}

const EXIT_2_DENIES = new Set(["PreToolUse", "PermissionRequest"]);

/** Copilot's rules (copilot-hooks.md "Fail open or fail closed", "Denying a tool call"). */
export function interpretCopilot(run: RunResult, hook: HookDef): Verdict {
  const pre = hook.point === "PreToolUse";
  // copilot-hooks.md: "The exception is preToolUse, which is fail-closed: a crash or other non-zero exit denies"
  const failure = (error: string, rule: string): Verdict =>
    pre
      ? { decision: "block", reason: `hook ${hook.name} failed: ${error}`, error, rule: `${rule}; copilot: a crash or non-zero exit on preToolUse denies (fail-closed)` }
      : { decision: null, error, rule: `${rule}; copilot: logged and the run continues` };
  // copilot-hooks.md: "A timeout kills the hook, logs it and continues - fail-open for every event"
  if (run.outcome === "timed_out") return { decision: null, error: "timed out", rule: "copilot: a timeout is fail-open for every event, policy hooks included" };
  if (run.outcome !== "exited") return failure(describeFailure(run), "copilot: the hook crashed");
  if (run.exitCode === 2) {
    const stderr = run.stderr.trim();
    // copilot-hooks.md: "For preToolUse and permissionRequest it is a deny, even if the hook's output claims allow"
    if (EXIT_2_DENIES.has(hook.point))
      return { decision: "block", reason: stderr || `denied by hook ${hook.name} (exit 2)`, error: null, rule: "copilot: exit 2 denies preToolUse and permissionRequest" };
    // copilot-hooks.md: "Exit code 2 is a warning for most events, with standard error shown to you"
    return { decision: null, warning: stderr || `hook ${hook.name} exited 2`, error: null, rule: "copilot: exit 2 is a warning" };
  }
  if (run.exitCode !== 0) return failure(describeFailure(run), "copilot: non-zero exit");
  // copilot-hooks.md: "Exit code 0 is success, and standard output is parsed as the hook's JSON"
  const out = readOutput(run.stdout);
  if (out.kind === "empty") return { decision: null, error: null, rule: "copilot: returning {} makes no decision; it does not approve" };
  if (out.kind === "invalid") return failure(out.error, "copilot: output is not a JSON object");
  const o = out.value;
  const raw = o.permissionDecision ?? o.decision;
  const decision = readDecision(raw);
  if (decision === "invalid") return failure(`unknown decision ${JSON.stringify(raw)}`, "copilot: unknown permissionDecision");
  const reason = str(o.permissionDecisionReason) ?? str(o.reason);
  const verdict: Verdict = {
    decision,
    reason,
    systemMessage: str(o.systemMessage),
    additionalContext: str(o.additionalContext),
    ...(o.modifiedArgs !== undefined ? { modifiedArgs: o.modifiedArgs } : {}),
    error: null,
    rule: decision ? `copilot: permissionDecision "${String(raw)}" from stdout` : "copilot: no permissionDecision",
  };
  // copilot-hooks.md: "permissionDecisionReason is required with a deny" — the deny stands (fail-closed), flagged
  if (decision === "block" && !reason) {
    verdict.error = "permissionDecisionReason is required with deny";
    verdict.reason = `denied by hook ${hook.name}`;
  }
  return verdict;
}
