/**
 * @module Pieces the container runner and its pre-started containers share: how a stopped run
 * ends, stream sinks, engine error messages, and the handle a pre-started container is driven by
 * (so that only docker-client.ts talks to the engine).
 */
import type { Duplex } from "node:stream";
import { Writable } from "node:stream";
import type { OutputCapture } from "./output-capture.js";
import type { StopReason } from "./run-guard.js";
import type { RunEnd } from "./types.js";

/** A created, attached container, as the engine-free code sees it. */
export interface ContainerHandle {
  stream: Duplex;
  /** resolves when the engine closes the attach stream (the container is gone) */
  streamDone: Promise<void>;
  demux(stdout: Writable, stderr: Writable): void;
  /** SIGKILL to the whole container; never throws */
  kill(): Promise<void>;
  /** how the container ended; rejects past `signal` or the engine timeout */
  state(signal?: AbortSignal): Promise<{ running: boolean; oomKilled: boolean; exitCode: number }>;
  /** removes the container, its workspace volume and layers; never throws */
  cleanup(): Promise<void>;
}

export function stoppedEnd(reason: StopReason, capture: OutputCapture): RunEnd {
  switch (reason) {
    case "timed_out": return { outcome: "timed_out", exitCode: null };
    // The run's deadline passed while the engine said nothing more: the hook's time is what ran out.
    case "deadline": return { outcome: "timed_out", exitCode: null };
    case "cancelled": return { outcome: "cancelled", exitCode: null };
    case "output_truncated": return { outcome: "output_truncated", exitCode: null, stream: capture.overflowedStream ?? "stdout" };
    default: {
      const _exhaustive: never = reason;
      return _exhaustive;
    }
  }
}

export function sink(onChunk: (chunk: Buffer) => void): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, callback) {
      onChunk(chunk);
      callback();
    },
  });
}

export function describeError(err: unknown): string {
  if (err && typeof err === "object" && "json" in err) {
    const json = (err as { json?: { message?: string } }).json;
    if (json?.message) return json.message;
  }
  return err instanceof Error ? err.message : String(err);
}
