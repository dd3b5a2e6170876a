/**
 * @module Each agent's own deadline for one hook, in seconds: past it the agent gives up on the hook
 * and goes on — a silent allow. The forwarders (`hookbox forward`, forward.sh) and the native HTTP
 * hook endpoints answer with the tenant's failure mode before it; `hookbox doctor` checks a line's
 * `--deadline` against it. Claude Code and Codex 600 s (Claude Code: less at a few events, below), Copilot CLI and Cursor 30 s, cosh 5 s per
 * hook (cosh-hooks.md: "Hook timeout (default 5000ms) is treated as pass-through"), Gemini CLI 60 s.
 */
export const AGENT_DEADLINE_S = { claude: 600, codex: 600, copilot: 30, cursor: 30, cosh: 5, gemini: 60 } as const;

export type Agent = keyof typeof AGENT_DEADLINE_S;

/**
 * Claude Code's shorter defaults at some events (hooks reference, "Common fields"): 30 s at
 * `UserPromptSubmit`, `PreModelSwitch` and `PostModelSwitch`, 10 s at `MessageDisplay`, and 1.5 s
 * that `SessionEnd` hooks share. By the event's name in lower case, however the caller spells it.
 */
export const CLAUDE_EVENT_DEADLINE_S: Readonly<Record<string, number>> = { userpromptsubmit: 30, premodelswitch: 30, postmodelswitch: 30, messagedisplay: 10, sessionend: 1.5 };

/**
 * `name` with its ASCII capitals in lower case, and nothing else: as forward.sh's `LC_ALL=C tr` folds
 * it (JavaScript's toLowerCase folds the Kelvin sign to a "k", say: the two forwarders would read
 * one event name apart).
 */
export function asciiLower(name: string): string {
  return name.replace(/[A-Z]+/g, (c) => c.toLowerCase());
}

/** The agent's own deadline for one hook of `event`, in seconds. */
export function agentDeadlineS(agent: Agent, event: string): number {
  const key = asciiLower(event);
  const own = agent === "claude" && Object.hasOwn(CLAUDE_EVENT_DEADLINE_S, key) ? CLAUDE_EVENT_DEADLINE_S[key] : undefined;
  return own ?? AGENT_DEADLINE_S[agent];
}

/**
 * Cursor's events whose answer has no `agent_message`, in lower case (its hooks documentation:
 * subagentStart and beforeReadFile answer `permission` and `user_message`, beforeTabFileRead
 * `permission`): the service's answers and both forwarders' own denies leave it out there.
 */
export const CURSOR_NO_AGENT_MESSAGE: ReadonlySet<string> = new Set(["subagentstart", "beforereadfile", "beforetabfileread"]);
