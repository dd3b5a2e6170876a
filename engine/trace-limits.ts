/**
 * @module How much of each event a trace keeps, and for how long (`[traces]`). The numbers live in
 * the engine, beside the rest of the configuration; the store that applies them is the service's.
 */

export interface TraceLimits {
  /** @default 24 h */
  retentionMs: number;
  /** @default 10 000 */
  maxEvents: number;
  /** @default 256 MiB */
  maxBytes: number;
  /** of each hook's stdin, stdout and stderr; @default 4 KiB */
  captureBytes: number;
}

export const DEFAULT_TRACE_LIMITS: TraceLimits = { retentionMs: 24 * 3600_000, maxEvents: 10_000, maxBytes: 256 * 1024 * 1024, captureBytes: 4096 };
