/**
 * @module `hookbox forward`: the one-line hook an agent runs. Reads the event on stdin, posts it to
 * hookbox, prints the agent-native answer and exits with the agent-native code. On a block it also
 * writes the reason to stderr (Codex and Gemini CLI read it; the others ignore it on exit 0).
 */
import { parseArgs } from "node:util";

/** Agent dialects the forwarder speaks; codex and gemini ride on claude's and cosh's answers. */
const FORMATS = { cosh: "cosh", copilot: "copilot", claude: "claude", codex: "claude", gemini: "cosh" } as const;
type AgentFormat = keyof typeof FORMATS;

export const FORWARD_USAGE = `usage: hookbox forward --url URL --event NAME [--format cosh|copilot|claude|codex|gemini]
       [--workspace ID] [--token T | env HOOKBOX_TOKEN] [--on-unreachable allow|block] [--timeout MS]
       [--interactive true|false]`;

export async function forward(argv: string[], io: { stdin: AsyncIterable<Uint8Array>; env: NodeJS.ProcessEnv }): Promise<{ stdout: string; stderr: string; code: number }> {
  const { values } = parseArgs({
    args: argv,
    options: {
      url: { type: "string" }, event: { type: "string" }, format: { type: "string", default: "cosh" },
      workspace: { type: "string" }, token: { type: "string" }, "on-unreachable": { type: "string", default: "allow" },
      timeout: { type: "string", default: "30000" }, interactive: { type: "string" },
    },
  });
  const format = values.format as AgentFormat;
  const onUnreachable = values["on-unreachable"];
  if (!values.url || !values.event || !(format in FORMATS) || (onUnreachable !== "allow" && onUnreachable !== "block"))
    return { stdout: "", stderr: `${FORWARD_USAGE}\n`, code: 64 };
  const token = values.token ?? io.env.HOOKBOX_TOKEN;
  const chunks: Buffer[] = [];
  for await (const c of io.stdin) chunks.push(Buffer.from(c));
  const body = Buffer.concat(chunks);

  const query = new URLSearchParams({ format: FORMATS[format] });
  if (values.workspace) query.set("workspace", values.workspace);
  if (values.interactive) query.set("interactive", values.interactive);
  const url = `${values.url.replace(/\/+$/, "")}/v1/events/${encodeURIComponent(values.event)}?${query}`;
  let problem: string;
  try {
    const res = await fetch(url, {
      method: "POST",
      body,
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      signal: AbortSignal.timeout(Number(values.timeout)),
    });
    const answer = (await res.json().catch(() => ({}))) as { output?: unknown; exit_code?: number; decision?: string; reason?: string; error?: { message?: string } };
    if (res.ok && answer.output !== undefined) {
      const blocked = answer.decision === "block";
      const reason = answer.reason ?? "blocked by hookbox";
      return {
        stdout: `${JSON.stringify(answer.output)}\n`,
        stderr: blocked ? `${reason}\n` : "",
        // Codex reads a block from exit code 2 with the reason on stderr.
        code: blocked && format === "codex" ? 2 : (answer.exit_code ?? 0),
      };
    }
    problem = `hookbox answered ${res.status}: ${answer.error?.message ?? "no decision"}`;
  } catch (err) {
    problem = `hookbox unreachable at ${values.url}: ${(err as Error).message}`;
  }
  if (onUnreachable === "allow") return { stdout: "{}\n", stderr: `${problem} (passing through: --on-unreachable allow)\n`, code: 0 };
  // Exit 2 with the reason on stderr blocks in every one of these agents (copilot-hooks.md: for preToolUse).
  return { stdout: "", stderr: `${problem} (blocking: --on-unreachable block)\n`, code: 2 };
}
