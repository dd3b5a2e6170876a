/**
 * @module What the routes are given (createApp's dependencies) and what a request carries.
 */
import type { Context } from "hono";
import type { Logger } from "pino";
import type { Engine, Tenant, WorkspaceStore } from "../engine/index.js";
import type { AuditSink } from "./records/audit-log.js";
import type { Sessions } from "./records/sessions.js";
import type { TraceStore } from "./records/trace-store.js";
import type { Metrics } from "./metrics.js";
import type { BodyBudget } from "./read-body.js";

export interface Readiness {
  ready: boolean;
  problems: string[];
}

export interface AppDeps {
  engine: Engine;
  workspaces: WorkspaceStore;
  tenants: readonly Tenant[];
  audit: AuditSink;
  traces: TraceStore;
  /** when hookbox last heard from each session */
  sessions: Sessions;
  metrics: Metrics;
  logger: Logger;
  readiness: () => Promise<Readiness>;
  /** eventBodyReadMs: EVENT_BODY_READ_MS unless given; uploadIdleMs: UPLOAD_IDLE_MS unless given; uploadMaxMs: UPLOAD_MAX_MS unless given */
  limits: { maxEventBytes: number; maxUploadBytes: number; eventBodyReadMs?: number; uploadIdleMs?: number; uploadMaxMs?: number };
  /** event bodies arriving, per tenant (createApp makes one when none is given) */
  bodies?: BodyBudget;
  /** what events being handled hold, per tenant (createApp makes one when none is given) */
  eventMemory?: BodyBudget;
  /** traces and lists being sent, per tenant: TRACE_READS_PER_TENANT (createApp makes one when none is given) */
  answers?: BodyBudget;
  auditToolInput: boolean;
  /** /metrics without a token */
  publicMetrics: boolean;
  /** the SHA-256 of the one token /metrics takes ([server] metrics_token_sha256), if set */
  metricsTokenSha256?: string;
  /** aborts every running event when the service stops */
  shutdown: AbortSignal;
  /** true once SIGTERM came: no new work */
  draining: () => boolean;
  /** counts events in flight, for the drain */
  inflight: { add(p: Promise<unknown>): void };
}

export interface Env {
  /** event: the event's name as the request gives it (path, else body), once read — for a failure answer */
  Variables: { tenant: Tenant; log: Logger; event?: string };
}

/**
 * 413 before the body was read. The HTTP adapter then reads and discards what is still coming for a
 * moment (at most 64 MiB, 500 ms) before it closes the connection, so the client reads this answer
 * instead of a reset; nothing of it is kept.
 */
export function tooLarge(c: Context<Env>, message: string): Response {
  return c.json({ error: { code: "too_large", message } }, 413);
}
