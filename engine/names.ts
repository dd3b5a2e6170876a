/**
 * @module One source of truth for names and numbers that cross files: labels on containers,
 * image tags, the hooks' user, default limits.
 */

/** Image built by scripts/setup.sh from images/runtime (keep the tag in step with HOOKBOX_IMAGE there). */
export const DEFAULT_IMAGE = "hookbox/runtime:latest";

/** The hooks' user inside containers; images/runtime/Dockerfile creates it with this uid. */
export const HOOK_UID = 1000;
export const HOOK_GID = 1000;
export const HOOK_HOME = "/home/hook";

/** Where a hook sees the workspace; also its working directory. */
export const WORKSPACE_PATH = "/workspace";

/** Labels on every container and volume hookbox creates; the reaper finds them by LABEL_MANAGED. */
export const LABEL_MANAGED = "dev.hookbox.managed";
/** Epoch milliseconds after which the object is a leftover. */
export const LABEL_DEADLINE = "dev.hookbox.deadline";
export const LABEL_RUN_ID = "dev.hookbox.run";
export const LABEL_EVENT_ID = "dev.hookbox.event";
/** Which service made it (its data_dir): a restarted service removes what its predecessor left. */
export const LABEL_OWNER = "dev.hookbox.owner";
/** Which process made it. */
export const LABEL_INSTANCE = "dev.hookbox.instance";
/** The making process as the machine knows it, "<host>/<boot id>/<pid>/<start ticks>": a reaper on the same machine leaves a live one's containers alone. */
export const LABEL_PROCESS = "dev.hookbox.process";

export const RUNTIMES = ["runc", "runsc"] as const;
export type Runtime = (typeof RUNTIMES)[number];

/** @default 5 s — cosh-hooks.md: "Hook timeout (default 5000ms)" */
export const DEFAULT_TIMEOUT_MS = 5_000;
/** @default 60 s — SERVICE.md §7 `max_timeout` */
export const DEFAULT_MAX_TIMEOUT_MS = 60_000;

export interface Limits {
  /** memory of the container; swap is set equal, so none is added */
  memoryBytes: number;
  cpus: number;
  pids: number;
  openFiles: number;
  /** per stream: stdout and stderr each; past it the hook is killed (`output_truncated`) */
  maxOutputBytes: number;
  /** size of the tmpfs at /tmp (and of $HOME, a quarter of it) */
  tmpBytes: number;
}

/**
 * The least a limit may be, in the server's config and in a repository's hook: Docker reads a zero
 * memory, CPU or tmpfs size as "no limit", so a value that rounds to zero would lift the limit it
 * meant to lower. Memory: Docker's own minimum (6 MiB); CPUs: a hundredth; /tmp: 1 MiB.
 */
export const MIN_LIMITS = { memoryBytes: 6 * 1024 * 1024, cpus: 0.01, tmpBytes: 1024 * 1024 } as const;

/** SERVICE.md §7 example values. */
export const DEFAULT_LIMITS: Limits = {
  memoryBytes: 256 * 1024 * 1024,
  cpus: 1,
  pids: 128,
  openFiles: 1024,
  maxOutputBytes: 1024 * 1024,
  tmpBytes: 64 * 1024 * 1024,
};

/** Extra time, past a run's deadline, before the reaper counts its container as a leftover. */
export const REAP_GRACE_MS = 5_000;

/** The lock file in data_dir that keeps a second service off it (it names the holder's pid). */
export const DATA_DIR_LOCK = "hookbox.lock";

/** Variables every sandboxed hook sees (SERVICE.md §5); the project dirs all point at /workspace. */
export const PROJECT_DIR_VARS = [
  "CLAUDE_PROJECT_DIR",
  "GEMINI_PROJECT_DIR",
  // Gemini CLI's hook runner sets and expands it too (its working folder: the project's, here)
  "GEMINI_CWD",
  "COPILOT_SHELL_PROJECT_DIR",
  "QWEN_PROJECT_DIR",
] as const;

/**
 * @default 16 384 — keys of one object in an event body, a hook's answer, a repository's hook file
 * (a table of its TOML too). An object of a hundred thousand keys fits in a mebibyte, and each step
 * over it — the parse, the copy that renames the event for a hook, the trace's, a schema's check —
 * costs several times what as many keys spread over smaller objects do (V8 keeps so large an object
 * as a dictionary). No event, answer or hook file needs as many in one object.
 */
export const MAX_OBJECT_KEYS = 16_384;

/**
 * @default 16 384 — comments in a repository's JSON-with-comments hook file (Gemini CLI's
 * settings.json). Each costs the parser's scan and the blanking that makes the text JSON, and a
 * mebibyte holds 350 000 of them (`//` and a line break): a third of a second of the loop that serves
 * everyone. A settings file commented line by line holds a few hundred.
 */
export const MAX_JSONC_COMMENTS = 16_384;
