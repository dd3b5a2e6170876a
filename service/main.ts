/**
 * @module hookbox service entry: parse arguments and environment → config → logger → engine →
 * serve → SIGTERM drain. The only file that reads process.env and handles signals.
 *
 *   node dist/service/main.js [--config FILE] [--listen HOST:PORT]
 */
import { serve } from "@hono/node-server";
import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { setMaxListeners } from "node:events";
import { mkdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import pino from "pino";
import {
  ConfigError, ContainerRunner, createEngine, HostRunner, loadConfig, parseListen, startReaper, WorkspaceStore, type Config,
} from "../engine/index.js";
import { visibleJson } from "../engine/visible-text.js";
import { TenantAuditLogs } from "./records/audit-log.js";
import { TraceStore } from "./records/trace-store.js";
import { createApp } from "./app.js";
import { UPLOAD_MAX_MS } from "./routes/workspaces.js";
import { Sessions } from "./records/sessions.js";
import { dataDirIdentity, lockDataDir } from "./data-dir-lock.js";
import type { Readiness } from "./context.js";
import { Metrics } from "./metrics.js";
import { sharedCheck } from "./shared-check.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
/** @default the example configuration in the repository */
const DEFAULT_CONFIG = join(ROOT, "hookbox.example.toml");
/** @default 1 MiB — an event body is what a hook reads on stdin */
const MAX_EVENT_BYTES = 1024 * 1024;
/** Log lines waiting for stdout, at most; past it lines are dropped (and counted). @default 16 MiB */
export const LOG_BUFFER_BYTES = 16 * 1024 * 1024;
/** How long a client may take to send a request's headers (its first: from the connection's start). @default 10 s */
export const HEADERS_TIMEOUT_MS = 10_000;
/** Past UPLOAD_MAX_MS, before Node ends a request still arriving: hookbox's own 408 comes first. @default 30 s */
const REQUEST_TIMEOUT_MARGIN_MS = 30_000;
/** After the grace period, how long killed events and late requests get to answer before the process exits. @default 5 s */
const SHUTDOWN_AFTER_KILL_MS = 5_000;
/** File descriptors max_connections should leave to the service's own files, pipes and engine sockets. @default 1024 */
export const RESERVED_DESCRIPTORS = 1024;
/** How long a GET's or HEAD's body (chunked: a proxy may send one for none) may go on arriving after its answer, before the connection is closed. @default 500 ms, as the adapter gives every other method's */
export const GET_BODY_DRAIN_MS = 500;
/** A connection idle longer than `max_event_ms` plus this is closed. @default 30 s */
const SOCKET_IDLE_MARGIN_MS = 30_000;

/** The soft limit of open files (Linux: /proc/self/limits), if it can be read. */
function openFilesLimit(): number | undefined {
  try {
    const m = /^Max open files\s+(\d+)/m.exec(readFileSync("/proc/self/limits", "utf8"));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

export async function main(argv = process.argv.slice(2)): Promise<void> {
  let args;
  try {
    args = parseArgs({ args: argv, options: { config: { type: "string" }, listen: { type: "string" }, help: { type: "boolean" } } }).values;
  } catch (err) {
    // A flag it does not take: a usage error, as for every command (EX_USAGE).
    console.error(`hookbox: ${(err as Error).message}\nusage: hookbox serve [--config FILE] [--listen HOST:PORT]`);
    process.exit(64);
  }
  if (args.help) {
    console.log("usage: hookbox serve [--config FILE] [--listen HOST:PORT]");
    return;
  }
  const configFile = resolve(args.config ?? process.env.HOOKBOX_CONFIG ?? DEFAULT_CONFIG);
  let config: Config;
  try {
    config = loadConfig(configFile, process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      // EX_CONFIG: the configuration names the file, line and key at fault.
      console.error(`hookbox: configuration error: ${err.message}`);
      process.exit(78);
    }
    throw err;
  }
  const listen = args.listen ?? config.server.listen;
  const where = parseListen(listen);
  if (!where) {
    console.error(`hookbox: --listen wants HOST:PORT (a host, or [IPv6], and a port of 0–65535), got ${JSON.stringify(listen)}`);
    process.exit(64);
  }
  const { hostname, port } = where;

  // Log lines go out asynchronously: a synchronous write per line held the event loop on every
  // request. What is still buffered is written before any exit (`exit` below).
  const level = process.env.HOOKBOX_LOG_LEVEL ?? "info";
  if (!LOG_LEVELS.includes(level)) {
    console.error(`hookbox: HOOKBOX_LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}, got ${JSON.stringify(level.slice(0, 64))}`);
    process.exit(78);
  }
  const logOut = logDestination();
  const logger = pino({
    level,
    redact: { paths: ["req.headers.authorization", "*.tool_input", "*.toolArgs", "*.prompt"], censor: "[redacted]" },
    // A path or a name a client sent, its C1 controls and bidi overrides escaped: the log is read in terminals.
    hooks: { streamWrite: visibleJson },
  }, logOut);
  process.on("exit", () => {
    try {
      logOut.flushSync();
    } catch {
      // nothing more can be said
    }
  });
  for (const warning of config.warnings) logger.warn({ warning }, "configuration warning");

  const dataDir = config.server.dataDir;
  mkdirSync(join(dataDir, "workspaces"), { recursive: true, mode: 0o700 });
  mkdirSync(join(dataDir, "scratch"), { recursive: true, mode: 0o711 });
  // Before the lock, after which this process starts containers (until a handler is set, the kernel
  // ends the process at once): a stop asked for while it starts (a rollout) is taken up once it is
  // up — drained and cleaned up as any stop — never the default exit, which would leave its
  // pre-started containers and its lock behind.
  const stopping: { asked?: string; now?: (signal: string) => void } = {};
  const onSignal = (signal: string) => (stopping.now ? stopping.now(signal) : (stopping.asked ??= signal));
  process.on("SIGTERM", () => onSignal("SIGTERM"));
  process.on("SIGINT", () => onSignal("SIGINT"));
  // One service per data_dir: a second one would take the first one's containers for leftovers.
  const lock = lockDataDir(dataDir, {
    // Another service took this data_dir over (its holder looked gone): two on one data_dir remove
    // each other's containers — this one stops.
    onLost: (by) => {
      logger.fatal({ dataDir, pid: by }, "the data_dir lock is now another process's: stopping");
      process.exit(2);
    },
  });
  if (!lock.ok) {
    console.error(`hookbox: data_dir ${dataDir} is in use by another hookbox process (pid ${lock.heldBy}, lock file ${lock.file}); stop it or give this one another data_dir`);
    process.exit(2);
  }
  if (lock.tookOverFrom !== undefined) logger.warn({ dataDir, pid: lock.tookOverFrom }, "took over the data_dir lock of a process that is gone");
  const container = new ContainerRunner({
    scratchDir: join(dataDir, "scratch"),
    defaultImage: config.sandbox.image,
    defaultRuntime: config.sandbox.runtime,
    // Containers of this owner another process made are its predecessor's leftovers (reaped at start-up).
    owner: createHash("sha256").update(dataDirIdentity(dataDir)).digest("hex").slice(0, 16),
    pool: config.sandbox.pool,
    maxTimeoutMs: config.sandbox.maxTimeoutMs,
    engineTimeoutMs: config.sandbox.engineTimeoutMs,
    warn: (fields, message) => logger.warn(fields, message),
  });
  const host = new HostRunner(process.env);
  if (host.isolation !== "pid-namespace") {
    logger.warn({ isolation: host.isolation }, "no PID namespace for policy hooks here (unshare --pid refused): a policy hook's process that calls setsid can outlive its deadline");
  }
  const engine = createEngine({ config, runners: { host, container }, poolReady: () => container.poolStats().ready });
  // What an earlier process of this service left (after kill -9): its containers, then its scratch layers.
  // Only now, holding the data_dir lock, may another instance's containers count as leftovers.
  const reapedAtStart = await container.reap(Date.now(), { orphans: true }).catch(() => 0);
  if (reapedAtStart > 0) logger.warn({ count: reapedAtStart }, "removed leftover hook containers");
  await container.clearScratch();
  const scratchProblem = await container.scratchProblem();
  if (scratchProblem) logger.error({ problem: scratchProblem }, "writes to /workspace cannot be bounded here: container hooks with a workspace will fail to start");
  const reaper = startReaper(container, {
    onReaped: (count) => logger.warn({ count }, "removed leftover hook containers"),
    onError: (err) => logger.debug({ err }, "reaper could not reach the container engine"),
  });

  const images = [...new Set([config.sandbox.image, ...[...config.service.hooks, ...config.extension.hooks].flatMap((h) => (h.image ? [h.image] : []))])];
  // /readyz answers anyone: one engine check a second at most, shared by every request that waits on it.
  const readiness = sharedCheck(async (): Promise<Readiness> => {
    const s = await container.status(images, [config.sandbox.runtime]);
    return { ready: s.ok, problems: s.problems };
  }, 1_000);

  const shutdown = new AbortController();
  // Every event in flight listens on it (and stops listening when done): as many listeners as events.
  setMaxListeners(0, shutdown.signal);
  let draining = false;
  const inflight = new Set<Promise<unknown>>();
  const audit = new TenantAuditLogs(join(dataDir, "audit"), { maxBytes: config.server.auditMaxBytes, keep: config.server.auditKeep });
  const traces = new TraceStore(join(dataDir, "traces"), config.traces, (err) => logger.error({ err }, "trace not written"));
  // The names now, the files in the background: the port opens without waiting for them.
  await traces.startLoading();
  void traces.whenLoaded().then(() => logger.debug("stored traces read"));
  setInterval(() => void traces.sweep().catch((err: unknown) => logger.error({ err }, "trace sweep failed")), 60_000).unref();
  const workspaces = new WorkspaceStore(join(dataDir, "workspaces"), {
    maxEntries: config.server.maxWorkspaceEntries, maxUnpackedBytes: 4 * config.server.maxBodyBytes, maxUnpackRatio: config.server.maxUnpackRatio,
    maxHookFileBytes: config.server.maxHookFileBytes, maxHooks: config.server.maxRepositoryHooks, maxTimeoutMs: config.sandbox.maxTimeoutMs, tenants: config.tenants,
  });
  // What a crash left in the tenants' folders is put right now, not at each one's next upload.
  void workspaces.sweep((folder, err) => logger.error({ err, folder }, "a tenant's workspaces could not be put right")).catch((err: unknown) => logger.error({ err }, "workspace sweep failed"));
  const metrics = new Metrics(() => engine.stats(), () => workspaces.heldBytes);
  logOut.on("drop", () => metrics.logDrops.inc());
  const app = createApp({
    engine,
    workspaces,
    tenants: config.tenants,
    audit,
    traces,
    sessions: new Sessions(),
    metrics,
    logger,
    readiness,
    limits: { maxEventBytes: MAX_EVENT_BYTES, maxUploadBytes: config.server.maxBodyBytes },
    auditToolInput: config.server.auditToolInput,
    publicMetrics: config.server.publicMetrics,
    ...(config.server.metricsTokenSha256 !== undefined ? { metricsTokenSha256: config.server.metricsTokenSha256 } : {}),
    shutdown: shutdown.signal,
    draining: () => draining,
    inflight: {
      add(p) {
        inflight.add(p);
        void p.finally(() => inflight.delete(p)).catch(() => undefined);
      },
    },
  });

  // Containers for the common shape (no workspace) are started before the first event asks.
  container.prewarm({ limits: config.sandbox.limits, image: config.sandbox.image, runtime: config.sandbox.runtime, mounts: config.sandbox.mounts });
  const initial = await readiness();
  if (!initial.ready) logger.error({ problems: initial.problems }, "not ready: container hooks will fail until this is fixed");
  if (config.tenants.length === 0) logger.warn("no [[tenants]] configured: every /v1 request will be refused");

  // A client has HEADERS_TIMEOUT_MS to send its request's headers (Node's default is a minute),
  // checked every second (Node's default: every 30 s): a connection that trickles them holds a
  // socket and a parser for no one. A whole request may take what an upload may (UPLOAD_MAX_MS; an
  // event's body has EVENT_BODY_READ_MS): Node's own 5 minutes would cut an upload short with a bare 408.
  const serverOptions = { headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: UPLOAD_MAX_MS + REQUEST_TIMEOUT_MARGIN_MS, connectionsCheckingInterval: 1_000 };
  const server = serve({ fetch: app.fetch, hostname, port, serverOptions }, (info) => {
    logger.info({ listen: `${info.address}:${info.port}`, config: configFile, runtime: config.sandbox.runtime }, "hookbox listening");
  });
  // A connection on which nothing moves for longer than any event can take (a client that never
  // reads its answer, say) is closed: it holds a socket, and perhaps a file, for no one.
  server.setTimeout(config.sandbox.maxEventMs + SOCKET_IDLE_MARGIN_MS);
  // A GET or HEAD whose body is still arriving once its answer is out: Node reads it on for the next
  // request for as long as it trickles in. It has GET_BODY_DRAIN_MS to end, as the adapter gives every
  // other method's unread body; then the connection is closed.
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== "GET" && req.method !== "HEAD") return;
    res.once("finish", () => {
      if (req.readableEnded) return;
      setTimeout(() => {
        if (!req.readableEnded) req.socket.destroy();
      }, GET_BODY_DRAIN_MS).unref();
    });
  });
  // Connections past max_connections are closed as they come: a flood of them (no token needed to
  // open one) is refused before it takes the descriptors the service's own files and the engine's
  // socket need — which would fail every tenant's events, not just new connections.
  server.maxConnections = config.server.maxConnections;
  let droppedSaid = 0;
  server.on("drop", () => {
    metrics.connectionsDropped.inc();
    // said once a minute at most: a flood writes no flood of lines
    if (Date.now() - droppedSaid >= 60_000) {
      droppedSaid = Date.now();
      logger.warn({ maxConnections: config.server.maxConnections }, "max_connections are open: new connections are closed as they come (hookbox_connections_dropped_total counts them)");
    }
  });
  const descriptors = openFilesLimit();
  if (descriptors !== undefined && config.server.maxConnections > descriptors - RESERVED_DESCRIPTORS) {
    logger.warn({ maxConnections: config.server.maxConnections, openFilesLimit: descriptors }, `max_connections leaves fewer than ${RESERVED_DESCRIPTORS} of the process's file descriptors (ulimit -n) to its own files and the engine: raise the limit or lower max_connections`);
  }
  server.on("error", (err) => {
    logger.fatal({ err }, "cannot listen");
    process.exit(1);
  });

  const stop = async (signal: string) => {
    if (draining) return;
    draining = true;
    logger.info({ signal, inflight: inflight.size, graceMs: config.server.shutdownGraceMs }, "stopping: no new events; running hooks may finish");
    // While running hooks finish, new requests still get an answer — 503 with Retry-After and the
    // tenant's failure mode — rather than a refused connection; the port closes after.
    // Until nothing is in flight — what was let in before the drain began and arrives late included.
    const settled = async () => {
      while (inflight.size > 0) await Promise.allSettled([...inflight]);
    };
    const after = (ms: number) => new Promise((r) => setTimeout(r, ms).unref());
    await Promise.race([settled(), after(config.server.shutdownGraceMs)]);
    server.close();
    if (inflight.size > 0) {
      logger.warn({ inflight: inflight.size }, "grace period over: killing running hooks");
      shutdown.abort(new Error("shutting down"));
      // Killed hooks end at once; an upload still arriving is not waited for past this.
      await Promise.race([settled(), after(SHUTDOWN_AFTER_KILL_MS)]);
    }
    reaper.stop();
    await container.drain({ close: true });
    await container.reap().catch(() => 0);
    // A creation the engine had not answered in time may still land: wait for it, boundedly.
    const unseen = await container.reapAbandoned(config.sandbox.engineTimeoutMs);
    if (unseen > 0) logger.warn({ count: unseen }, "container creations the engine never answered: if it makes them later, the next start on this data_dir removes them");
    await audit.close();
    await traces.flush();
    lock.release();
    logger.info("stopped");
    process.exit(0);
  };
  stopping.now = (signal) => void stop(signal);
  if (stopping.asked !== undefined) {
    logger.info({ signal: stopping.asked }, "a stop was asked for while starting");
    stopping.now(stopping.asked);
  }
}

/**
 * Where log lines go: asynchronously (a synchronous write per line held the event loop on every
 * request), and bounded — a stdout that does not drain (a stalled log shipper) drops lines past
 * `maxBytes` waiting, each drop a "drop" event (counted in hookbox_log_lines_dropped_total),
 * rather than hold them in memory without end.
 */
export function logDestination(maxBytes = LOG_BUFFER_BYTES, fd = 1): ReturnType<typeof pino.destination> {
  return pino.destination({ fd, sync: false, maxLength: maxBytes });
}

/** pino's levels, as HOOKBOX_LOG_LEVEL may name them. */
const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    // What went wrong, in a line; the stack only when asked for (HOOKBOX_LOG_LEVEL=debug or trace).
    const debug = process.env.HOOKBOX_LOG_LEVEL === "debug" || process.env.HOOKBOX_LOG_LEVEL === "trace";
    console.error(`hookbox: fatal: ${debug ? String((err as Error)?.stack ?? err) : String((err as Error)?.message ?? err)}`);
    process.exit(1);
  });
}
