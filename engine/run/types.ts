/**
 * @module The runner seam: what a hook run is asked to do and what comes back, for both the
 * host runner (policy hooks) and the container runner (everything else).
 */
import type { Limits, Runtime } from "../names.js";

export interface RunRequest {
  /** Run as `sh -c <command>` (`bash -c` with `shell`). Event data never goes here: stdin only (SERVICE.md §3). */
  command: string;
  /** the shell the command is run in: bash; absent, /bin/sh (`shellOf`) */
  shell?: "bash";
  /** The event, as the hook's registration expects it. */
  stdin: Uint8Array;
  /** Variables the hook declared; the runner adds its allow-list and nothing else. */
  env: Record<string, string>;
  timeoutMs: number;
  limits: Limits;
  /** Container runner: image and runtime. */
  image?: string;
  runtime?: Runtime;
  /** Host directory seen by the hook at /workspace, copy-on-write (SERVICE.md §3). */
  workspaceDir?: string;
  /** the stored workspace's upload: its cached archive is known by it (a re-upload's folder may reuse the inode, and ctime) */
  workspaceVersion?: string;
  /** a repository hook's: whether `workspaceDir` still holds the workspace its hooks were read from */
  workspaceCurrent?: () => boolean;
  /** Host directories mounted read-only at their own path (container runner). */
  mounts?: readonly string[];
  /** Working directory: on the host for the host runner; relative to /workspace in a container. */
  cwd?: string;
  /** Cancels the run (the client went away, the service is stopping). */
  signal?: AbortSignal;
  /** Tags the container for tracing (label). */
  eventId?: string;
  /** Whose run (the tenant): each takes its share of the warm pool. */
  party?: string;
  /**
   * False: never from (or into) the warm pool — a repository hook that sets limits of its own. The
   * pool is shared by every tenant; a shape per lowered limit would let one repository fill it.
   */
  poolable?: boolean;
}

export interface RunBase {
  stdout: string;
  stderr: string;
  /** from the start of the hook's process to its end */
  durationMs: number;
  /** set-up before the hook started: container create/attach/start, or spawn; a pre-started container's hand-over (its workspace unpacked) */
  startMs: number;
  /** the container was pre-started by the warm pool */
  warm?: boolean;
  /** container removal before the answer (cold runs); a pooled container is removed after it */
  removeMs?: number;
  /** what hookbox's own preparation (a workspace's archive, a failed hand-over) took of the hook's timeout */
  preparedMs?: number;
}

export type RunResult =
  | (RunBase & { outcome: "exited"; exitCode: number })
  | (RunBase & { outcome: "timed_out"; exitCode: null })
  | (RunBase & { outcome: "output_truncated"; exitCode: null; stream: "stdout" | "stderr" })
  | (RunBase & { outcome: "oom_killed"; exitCode: number | null })
  | (RunBase & { outcome: "failed_to_start"; exitCode: null; error: string })
  | (RunBase & { outcome: "cancelled"; exitCode: null });

export type Outcome = RunResult["outcome"];

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** A result before the runner adds output and timings. */
export type RunEnd = DistributiveOmit<RunResult, keyof RunBase>;

export interface Runner {
  readonly kind: "host" | "container";
  run(request: RunRequest): Promise<RunResult>;
}

/** Why a repository hook did not run: its workspace changed under the event. */
export const STALE_WORKSPACE_ERROR = "the workspace was replaced or deleted while the event waited: its hooks were read from the one before";

/** The shell a request's command runs in, by its path (the hook image and the host have both). */
export function shellOf(request: Pick<RunRequest, "shell">): "/bin/sh" | "/bin/bash" {
  return request.shell === "bash" ? "/bin/bash" : "/bin/sh";
}
