/**
 * @module How a pre-started container is handed its one hook: a wrapper (`sh`) reads four lines on
 * stdin — a per-run nonce, the working directory, the command and the hook's environment (each
 * base64) — then runs `sh -c <command>` with the rest of stdin (the event) as the hook's stdin, and
 * prints `\n<nonce> <exit code> <oom kills>\n` on stdout and on stderr when it returns. The nonce never enters
 * the hook's environment or command line.
 */
import type { RunRequest } from "./types.js";

export const HANDOVER_SCRIPT = [
  "IFS= read -r n || exit 97",
  "IFS= read -r d",
  "IFS= read -r c",
  "IFS= read -r e",
  'eval "$(printf %s "$e" | base64 -d)"',
  'if [ -n "$d" ]; then cd -- "$(printf %s "$d" | base64 -d)" || exit 96; fi',
  'c="$(printf %s "$c" | base64 -d)"',
  'unset d e',
  '/bin/sh -c "$c"',
  "r=$?",
  // The memory cgroup's OOM-kill count (cgroup v1, else v2): a hook killed for memory is reported so.
  "o=$(cat /sys/fs/cgroup/memory/memory.oom_control /sys/fs/cgroup/memory.events 2>/dev/null | sed -n 's/^oom_kill //p' | head -n 1)",
  "printf '\\n%s %s %s\\n' \"$n\" \"$r\" \"${o:-0}\"",
  "printf '\\n%s %s %s\\n' \"$n\" \"$r\" \"${o:-0}\" >&2",
].join("\n");

/** Room past the output cap for the end marker. */
export const MARKER_SLACK_BYTES = 64;

const b64 = (s: string) => Buffer.from(s).toString("base64");
const quote = (v: string) => `'${v.replace(/'/g, "'\\''")}'`;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The bytes written to a pre-started container's stdin for `request`. */
export function handover(nonce: string, request: RunRequest): Buffer {
  const exports = Object.entries(request.env)
    .map(([k, v]) => {
      if (!NAME.test(k)) throw new Error(`environment variable name ${JSON.stringify(k)} is not valid`);
      return `export ${k}=${quote(v)}`;
    })
    .join("\n");
  const dir = request.cwd ? `/workspace/${request.cwd}` : "";
  const head = [nonce, dir ? b64(dir) : "", b64(request.command), b64(exports)].join("\n") + "\n";
  return Buffer.concat([Buffer.from(head), Buffer.from(request.stdin)]);
}

/** Watches both streams for the end marker of one run. */
export class MarkerWatch {
  private readonly tails = { stdout: "", stderr: "" };
  private readonly seen = { stdout: "", stderr: "" };
  private readonly pattern: RegExp;
  exitCode: number | undefined;
  /** OOM kills the container's memory cgroup counted */
  oomKills = 0;

  constructor(nonce: string) {
    this.pattern = new RegExp(`\\n${nonce} (\\d+) (\\d+)\\n$`);
  }

  /** Feeds a chunk; true once both streams have shown the marker. */
  feed(stream: "stdout" | "stderr", chunk: Buffer): boolean {
    if (!this.seen[stream]) {
      this.tails[stream] = (this.tails[stream] + chunk.toString("latin1")).slice(-96);
      const m = this.pattern.exec(this.tails[stream]);
      if (m) {
        this.seen[stream] = m[0];
        this.exitCode = Number(m[1]);
        this.oomKills = Number(m[2]);
      }
    }
    return this.seen.stdout !== "" && this.seen.stderr !== "";
  }

  /** The stream's text without the marker. */
  strip(stream: "stdout" | "stderr", text: string): string {
    const marker = this.seen[stream];
    return marker && text.endsWith(marker) ? text.slice(0, -marker.length) : text;
  }
}
