/**
 * @module How a pre-started container is handed its one hook: a wrapper reads on stdin a per-run
 * nonce, the working directory, the command, the hook's environment and the workspace as a tar
 * (workspace-archive.ts), unpacked into the container's own size-limited /workspace — then runs
 * `sh -c <command>` with the rest of stdin (the event) as the hook's stdin, and
 * prints `<nonce> <exit code> <oom kills>\n` on stdout and on stderr when it returns — one line, one
 * write, which no other writer's bytes can split (a process the hook leaves may still read its own
 * stdout back through /proc/self/fd and take the marks: that too changes only how its own run is
 * read — a failed start, the tenant's failure mode —, never another's). Before the hook starts it says so on stderr
 * (`<nonce> s\n`): the hook's timeout counts from there, as a cold run's counts from its container's
 * start — the hand-over and the unpacking of its workspace are not the hook's time. The nonce never enters the hook's environment or
 * command line (a hook, as the wrapper's user, may still read it from the wrapper's memory: it then
 * changes only how its own run is read — what it decides anyway — never another's, each container
 * running one hook; and its run ends MARKER_GRACE_MS after the first marker all the same).
 */
import { shellOf, type RunRequest } from "./types.js";
import { FIXED_ENV_NAMES } from "./hook-env.js";

/**
 * The workspace's tar, exactly `$la` bytes of stdin (GNU head reads no further — the event follows;
 * BusyBox's may, so the sh wrapper is never handed a workspace: container-runner.ts),
 * unpacked into /workspace — a tmpfs of tmp_size: the workspace and what the hook writes share it.
 */
const UNPACK = [
  "if [ \"$la\" -gt 0 ]; then",
  "  head -c \"$la\" | tar -x -p -f - -C /workspace --no-same-owner 2>/dev/null || { echo 'hookbox: the workspace could not be unpacked into /workspace' >&2; exit 95; }",
  "fi",
].join("\n");

/**
 * The hook: its environment is set in the subshell that becomes it (`exec`: one fork, as a plain
 * command would take), never in the wrapper — a variable the hook declares named `n`, `c` or `PATH`
 * cannot change the wrapper's nonce, the command that runs, or how the wrapper finds its tools.
 */
const RUN_HOOK = "(set -- \"$c\" \"/bin/$s\"; eval \"$e\"; exec \"$2\" -c \"$1\")";

/** The hook starts now (its workspace unpacked, its folder entered): said on stderr, ahead of anything the hook writes there. */
const STARTING = "printf '%s s\\n' \"$n\" >&2";

/**
 * An image without the shell the hook's agent runs it in (bash, say): the wrapper's own exit before
 * the hook, never the hook's exit 127 — which its agent would read as a hook that failed, passing.
 */
const HAS_SHELL = "[ -x \"/bin/$s\" ] || { echo \"hookbox: the image has no /bin/$s, the shell this hook's agent runs it in\" >&2; exit 94; }";

/**
 * The wrapper, in bash when the image has it: builtins only between the handover and the hook, so
 * the hook starts at once (a fork costs most under gVisor). Lengths are in bytes (LC_ALL=C while
 * reading).
 */
export const BASH_WRAPPER = [
  "export LC_ALL=C",
  "IFS=' ' read -r n ld lc le la s || exit 97",
  "d=; c=; e=",
  "if [ \"$ld\" -gt 0 ]; then IFS= read -r -N \"$ld\" d; fi",
  "IFS= read -r -N \"$lc\" c",
  "if [ \"$le\" -gt 0 ]; then IFS= read -r -N \"$le\" e; fi",
  "unset LC_ALL",
  UNPACK,
  "if [ -n \"$d\" ]; then cd -- \"$d\" || exit 96; fi",
  "unset ld lc le la d",
  HAS_SHELL,
  STARTING,
  RUN_HOOK,
  "r=$?",
  "o=0",
  "for f in /sys/fs/cgroup/memory/memory.oom_control /sys/fs/cgroup/memory.events; do",
  "  if [ -r \"$f\" ]; then while read -r k v; do if [ \"$k\" = oom_kill ]; then o=$v; fi; done < \"$f\"; fi",
  "done",
  "printf '%s %s %s\\n' \"$n\" \"$r\" \"$o\"",
  "printf '%s %s %s\\n' \"$n\" \"$r\" \"$o\" >&2",
  "exit \"$r\"",
].join("\n");

/** The same in POSIX sh, for images without bash: the fields come base64, one a line. */
export const SH_WRAPPER = [
  "IFS= read -r h || exit 97",
  "n=${h%% *}",
  "la=${h##* }",
  "s=${h#* }",
  "s=${s%% *}",
  "IFS= read -r d",
  "IFS= read -r c",
  "IFS= read -r e",
  UNPACK,
  "if [ -n \"$d\" ]; then cd -- \"$(printf %s \"$d\" | base64 -d)\" || exit 96; fi",
  // Without base64 (or with one that fails) the command would be empty, and run as one that passes.
  "c=\"$(printf %s \"$c\" | base64 -d)\" && [ -n \"$c\" ] || exit 98",
  "e=\"$(printf %s \"$e\" | base64 -d)\" || exit 98",
  "unset d h la",
  HAS_SHELL,
  STARTING,
  RUN_HOOK,
  "r=$?",
  "o=$(cat /sys/fs/cgroup/memory/memory.oom_control /sys/fs/cgroup/memory.events 2>/dev/null | sed -n 's/^oom_kill //p' | head -n 1)",
  "printf '%s %s %s\\n' \"$n\" \"$r\" \"${o:-0}\"",
  "printf '%s %s %s\\n' \"$n\" \"$r\" \"${o:-0}\" >&2",
  "exit \"$r\"",
].join("\n");

/**
 * Whether `head -c` reads no further than it is asked (GNU's does; BusyBox's, say, reads ahead and
 * would take the event with the workspace): one byte of two, the other left for `read`, through a
 * plain pipe as the hand-over comes (a here-string may be a file, which a C library can seek back in
 * on exit; process substitution is refused in bash's POSIX mode). Run once, when the container
 * starts, never per hook.
 */
const EXACT_HEAD = "printf ab | { head -c 1 >/dev/null 2>&1; IFS= read -r -N 1 x; [ \"$x\" = b ]; }";

/**
 * Picks the wrapper before any hook is known; tells the host which handover format to write. bash
 * only with a `head` that reads exactly what it is asked; else the sh wrapper, which is never handed
 * a workspace (container-runner.ts).
 */
export const HANDOVER_SCRIPT = `if [ -x /bin/bash ]; then exec /bin/bash -c '${`if ${EXACT_HEAD}; then echo bash >&2
${BASH_WRAPPER}
fi
echo sh >&2
${SH_WRAPPER}`.replace(/'/g, `'\\''`)}'; fi
echo sh >&2
${SH_WRAPPER}`;

/** Room past the output cap for the end marker; also what MarkerWatch keeps of a stream's end between chunks (longer than any marker). */
export const MARKER_SLACK_BYTES = 64;
/**
 * @default 1 s — how long the second end marker may follow the first: the wrapper writes them one
 * after the other. Past it the run is read as its first marker says and the container removed:
 * a hook that prints a marker of its own (the nonce read from the wrapper's memory) or stops the
 * wrapper between the two would otherwise hold its run to its timeout, its output past the marker
 * uncounted by the cap.
 */
export const MARKER_GRACE_MS = 1_000;

const b64 = (s: string) => Buffer.from(s).toString("base64");
const quote = (v: string) => `'${v.replace(/'/g, "'\\''")}'`;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `env` as `export NAME='value'` lines, for a shell to eval: each value quoted, each name a shell name (else an error). */
export function exportLines(env: Readonly<Record<string, string | undefined>>): string {
  return Object.entries(env)
    .filter((kv): kv is [string, string] => kv[1] !== undefined)
    .map(([k, v]) => {
      if (!NAME.test(k)) throw new Error(`environment variable name ${JSON.stringify(k)} is not valid`);
      return `export ${k}=${quote(v)}`;
    })
    .join("\n");
}

/**
 * The bytes written to a pre-started container's stdin for `request`, in its wrapper's format, as
 * chunks in order: the workspace's archive (megabytes, shared by every run of the workspace) is
 * passed as it is, never copied per run.
 */
export function handover(nonce: string, request: RunRequest, wrapper: "bash" | "sh", archive: Uint8Array = new Uint8Array()): Uint8Array[] {
  // Where the project is and where it runs are the container's own (hookEnv): never a hook's to move.
  const exports = exportLines(Object.fromEntries(Object.entries(request.env).filter(([k]) => !FIXED_ENV_NAMES.has(k))));
  const dir = request.cwd ? `/workspace/${request.cwd}` : "";
  // the shell the hook runs in (/bin/sh or /bin/bash), by its name in /bin
  const shell = shellOf(request).slice("/bin/".length);
  let head: Buffer;
  if (wrapper === "bash") {
    const [d, c, e] = [dir, request.command, exports].map((s) => Buffer.from(s));
    head = Buffer.concat([Buffer.from(`${nonce} ${d!.length} ${c!.length} ${e!.length} ${archive.length} ${shell}\n`), d!, c!, e!]);
  } else {
    head = Buffer.from([`${nonce} ${shell} ${archive.length}`, dir ? b64(dir) : "", b64(request.command), b64(exports)].join("\n") + "\n");
  }
  return [head, archive, request.stdin];
}

/**
 * Watches both streams for the end marker of one run. The marker may be followed by more bytes —
 * a background process the hook left writes on until the container goes — so it is looked for
 * anywhere in what arrives, and what follows it is not the hook's (a cold run's container ends
 * with its hook, and those bytes with it).
 */
export class MarkerWatch {
  private readonly tails = { stdout: "", stderr: "" };
  private readonly seen = { stdout: "", stderr: "" };
  private readonly pattern: RegExp;
  private readonly startLine: string;
  /** stderr before the start line: the wrapper's own (a `cd` that failed), never the hook's; its last bytes only */
  private before = "";
  exitCode: number | undefined;
  /** OOM kills the container's memory cgroup counted */
  oomKills = 0;
  /** the wrapper said its hook starts */
  started = false;

  /** `onStart`: called once, as the wrapper's start line is read — the hook runs from then. */
  constructor(nonce: string, private readonly onStart: () => void = () => undefined) {
    this.pattern = new RegExp(`${nonce} (\\d+) (\\d+)\\n`);
    this.startLine = `${nonce} s\n`;
  }

  /** Whether `stream` has shown the marker. */
  seenOn(stream: "stdout" | "stderr"): boolean {
    return this.seen[stream] !== "";
  }

  /** Both streams have shown the marker. */
  get done(): boolean {
    return this.seen.stdout !== "" && this.seen.stderr !== "";
  }

  /**
   * Feeds a chunk; returns the part of it that belongs to the run: all of it before the marker,
   * up to the marker's end with it, nothing after it.
   */
  take(stream: "stdout" | "stderr", chunk: Buffer): Buffer {
    if (stream === "stderr" && !this.started) {
      const text = this.before + chunk.toString("latin1");
      const at = text.indexOf(this.startLine);
      if (at < 0) {
        this.before = text.slice(-MARKER_SLACK_BYTES);
        return chunk.subarray(0, 0);
      }
      this.started = true;
      this.before = "";
      this.onStart();
      // What follows the start line in the same chunk is the hook's (its end marker too, maybe).
      return this.take(stream, Buffer.from(text.slice(at + this.startLine.length), "latin1"));
    }
    if (this.seen[stream]) return chunk.subarray(0, 0);
    const tail = this.tails[stream];
    // latin1: one character a byte, so positions in the text are positions in the bytes
    const text = tail + chunk.toString("latin1");
    const m = this.pattern.exec(text);
    if (!m) {
      this.tails[stream] = text.slice(-MARKER_SLACK_BYTES);
      return chunk;
    }
    this.seen[stream] = m[0];
    this.exitCode = Number(m[1]);
    this.oomKills = Number(m[2]);
    // The marker was not whole before this chunk, so it ends inside it.
    return chunk.subarray(0, m.index + m[0].length - tail.length);
  }

  /** The stream's bytes without the marker (ASCII: as many bytes as characters). */
  strip(stream: "stdout" | "stderr", bytes: Buffer): Buffer {
    const marker = this.seen[stream];
    return marker && bytes.subarray(-marker.length).equals(Buffer.from(marker, "latin1")) ? bytes.subarray(0, bytes.length - marker.length) : bytes;
  }
}
