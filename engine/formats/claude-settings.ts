/**
 * @module Claude Code hooks in a repository's `.claude/settings.json`: event → matcher groups →
 * `{"type":"command","command","timeout"}` handlers, and `disableAllHooks`. Also Claude Code's rules:
 * exit 2 blocks with stderr, other non-zero exits do not block, `hookSpecificOutput.permissionDecision`.
 */
import { basename } from "node:path";
import { z } from "zod";
import { compileMatcher, type HookDef, type HookSet, type Matcher } from "../hooks.js";
import type { RunResult } from "../run/types.js";
import type { Verdict } from "../verdict.js";
import {
  configError, configEvent, describeFailure, originOf, readDecision, readOutput, schemaError, str, type LoadContext, type ParsedFile,
} from "./shared.js";

/** @default 60 s — Claude Code's default command-hook timeout */
export const CLAUDE_DEFAULT_TIMEOUT_MS = 60_000;

const HandlerSchema = z.looseObject({
  type: z.string(),
  command: z.string().min(1).optional(),
  /** seconds */
  timeout: z.number().positive().optional(),
});
const GroupSchema = z.strictObject({ matcher: z.string().optional(), hooks: z.array(HandlerSchema) });
// settings.json holds much else (permissions, env, model …): only the hook keys are read.
const SettingsSchema = z.looseObject({
  hooks: z.record(z.string(), z.array(GroupSchema)).optional(),
  disableAllHooks: z.boolean().optional(),
});

export function loadClaudeSettings(parsed: ParsedFile, ctx: LoadContext): HookSet {
  const settings = SettingsSchema.safeParse(parsed.value);
  if (!settings.success) throw schemaError(parsed, settings.error);
  const set: HookSet = { hooks: [], warnings: [], disableAll: settings.data.disableAllHooks === true };
  for (const [event, groups] of Object.entries(settings.data.hooks ?? {})) {
    const resolved = configEvent(parsed, ["hooks", event], event);
    groups.forEach((group, g) => {
      let matcher: Matcher | undefined;
      try {
        matcher = compileMatcher(group.matcher);
      } catch (err) {
        throw configError(parsed, ["hooks", event, g, "matcher"], `matcher is not a valid regular expression (RE2 syntax): ${(err as Error).message}`);
      }
      group.hooks.forEach((handler, h) => {
        const path = ["hooks", event, g, "hooks", h];
        if (handler.type !== "command") {
          set.warnings.push(`${originOf(parsed, path)}: "${handler.type}" hooks are not run by hookbox; skipped`);
          return;
        }
        if (!handler.command) throw configError(parsed, path, 'a "command" hook needs "command"');
        set.hooks.push({
          name: `${basename(parsed.file)}:${event}[${g}].hooks[${h}]`,
          source: ctx.source,
          format: "claude",
          point: resolved.point,
          dialect: "snake",
          matcher,
          command: handler.command,
          timeoutMs: Math.min(handler.timeout !== undefined ? handler.timeout * 1000 : CLAUDE_DEFAULT_TIMEOUT_MS, ctx.maxTimeoutMs),
          env: {},
          failOpen: true,
          limits: {},
          mounts: [],
          origin: originOf(parsed, path),
        });
      });
    });
  }
  return set;
}

/** Claude Code's rules: exit 0 reads JSON; exit 2 blocks with stderr; other failures do not block. */
export function interpretClaude(run: RunResult, hook: HookDef): Verdict {
  if (run.outcome === "timed_out") return { decision: null, error: "timed out", rule: "claude: a timeout does not block" };
  if (run.outcome !== "exited") return { decision: null, error: describeFailure(run), rule: "claude: a failed hook does not block" };
  if (run.exitCode === 2)
    return { decision: "block", reason: run.stderr.trim() || `blocked by hook ${hook.name} (exit 2)`, error: null, rule: "claude: exit 2 blocks with stderr as the reason" };
  if (run.exitCode !== 0) return { decision: null, error: describeFailure(run), rule: "claude: a non-zero exit other than 2 does not block" };
  const out = readOutput(run.stdout);
  if (out.kind === "empty") return { decision: null, error: null, rule: "claude: no JSON output makes no decision" };
  if (out.kind === "invalid") return { decision: null, error: out.error, rule: "claude: output that is not a JSON object is an error of the hook" };
  const o = out.value;
  const specific = (o.hookSpecificOutput ?? {}) as Record<string, unknown>;
  const raw = specific.permissionDecision ?? o.decision;
  // Claude Code's older `decision: "approve"` means allow.
  let decision = readDecision(raw, { approve: "allow" });
  if (decision === "invalid") return { decision: null, error: `unknown decision ${JSON.stringify(raw)}`, rule: "claude: an unknown decision is an error of the hook" };
  let rule = decision ? `claude: ${specific.permissionDecision !== undefined ? "hookSpecificOutput.permissionDecision" : "decision"} "${String(raw)}"` : "claude: no decision";
  // Claude Code: `"continue": false` stops the agent, with `stopReason`.
  if (o.continue === false) {
    decision = "block";
    rule = "claude: continue = false stops";
  }
  return {
    decision,
    reason: str(specific.permissionDecisionReason) ?? str(o.reason) ?? str(o.stopReason),
    systemMessage: str(o.systemMessage),
    additionalContext: str(specific.additionalContext),
    ...(specific.updatedInput !== undefined ? { modifiedArgs: specific.updatedInput } : {}),
    error: null,
    rule,
  };
}
