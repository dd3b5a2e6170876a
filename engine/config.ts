/**
 * @module The server configuration: one TOML file (SERVICE.md §7). Beside cosh's `[hooks]` exactly
 * as cosh-hooks.md has it (a config written for cosh loads unchanged): `[server]`, `[[tenants]]`,
 * `[sandbox]`, `[policy]` (+ `[[policy.<Event>]]`), `[extensions]`. Every error names the file,
 * the line and what is wrong.
 */
import { createHash } from "node:crypto";
import { readFileSync, readdirSync, realpathSync, statSync, existsSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { z } from "zod";
import { ConfigError } from "./errors.js";
import { resolveEventName, unknownEventMessage } from "./events.js";
import { loadCoshTable } from "./formats/cosh-toml.js";
import { loadCopilotFile } from "./formats/copilot-json.js";
import { EXTENSION_FILE, loadExtension } from "./formats/cosh-extension.js";
import { blockKeepsGoing, configError, originOf, parseBytes, readJson, readToml, schemaError, type ParsedFile } from "./formats/shared.js";
import { mergeHookSets, type HookDef, type HookSet } from "./hooks.js";
import { DEFAULT_POOL, type PoolOptions } from "./run/warm-pool.js";
import { DEFAULT_TRACE_LIMITS, type TraceLimits } from "./trace-limits.js";
import { DEFAULT_IMAGE, DEFAULT_LIMITS, DEFAULT_MAX_TIMEOUT_MS, MIN_LIMITS, RUNTIMES, type Limits, type Runtime } from "./names.js";

/**
 * @default 12 days — the longest duration setting: hookbox waits on these with timers, some on two
 * added together, and Node fires a timer past 2^31 − 1 ms (24.8 days) at once, which would cut
 * every event short.
 */
export const MAX_TIMER_SETTING_MS = 1_036_800_000;
const TimerMs = z.number().int().max(MAX_TIMER_SETTING_MS, `at most ${MAX_TIMER_SETTING_MS} ms (12 days): a longer timer would fire at once`);

/**
 * `HOST:PORT` or `[IPv6]:PORT`, the host never empty (`:8080` would listen on every interface) and
 * the port 0–65535; undefined for anything else. The config's `listen` and `--listen` alike.
 */
export function parseListen(text: string): { hostname: string; port: number } | undefined {
  const m = /^([^\s:[\]]+|\[[0-9a-fA-F:.]+\]):(\d{1,5})$/.exec(text);
  if (!m || Number(m[2]) > 65535) return undefined;
  return { hostname: m[1]!.replace(/^\[|\]$/g, ""), port: Number(m[2]) };
}

/** at most 64 KiB — the most `[traces] capture_bytes` may keep of each stream */
export const MAX_CAPTURE_BYTES = 64 * 1024;

/**
 * The most `[traces] max_events` may keep per tenant: their summaries live in memory (up to about
 * 10 KiB each with every field at its cap: about 1 GiB a tenant at this count), and
 * `GET /v1/events?session_id=…` walks them all on the shared thread (about 10 ms of CPU at this count,
 * in slices of TRACE_LIST_SLICE with the event loop let in between).
 */
export const MAX_TRACE_EVENTS = 100_000;
/** @default 1000 — rotated audit files kept per tenant, at most (`[server] audit_keep`) */
export const MAX_AUDIT_KEEP = 1000;

/** Where container engines listen: never mounted into a hook's container. */
const ENGINE_SOCKETS = ["/var/run/docker.sock", "/run/docker.sock", "/run/containerd/containerd.sock", "/var/run/containerd/containerd.sock", "/run/podman/podman.sock"];

const Bytes = z.union([z.string(), z.number()]).refine((v) => parseBytes(v) !== undefined, 'expected a size such as "256m" or a number of bytes, more than zero');

const ServerSchema = z.strictObject({
  /** @default "127.0.0.1:8080" */
  listen: z.string().refine((v) => parseListen(v) !== undefined, 'expected "HOST:PORT" (a host, or [IPv6], and a port of 0–65535)').default("127.0.0.1:8080"),
  /** @default "./data" — workspaces, audit log; relative to the config file */
  data_dir: z.string().default("./data"),
  /** @default false — SERVICE.md §7: tool inputs and prompts are left out of the audit log unless asked for */
  audit_tool_input: z.boolean().default(false),
  /** @default "64m" — largest request body (workspace uploads) */
  max_body_bytes: Bytes.default("64m"),
  /** @default false — true: /metrics answers without a token (a cluster-internal scrape) */
  public_metrics: z.boolean().default(false),
  /** @default none — the one token /metrics then takes (an operator's scraper), as a SHA-256 digest; tenants' tokens no longer do */
  metrics_token_sha256: z.string().regex(/^[0-9a-f]{64}$/, "expected 64 lowercase hex digits").optional(),
  /** @default none — as metrics_token_sha256, the token read from this environment variable */
  metrics_token_env: z.string().min(1).optional(),
  /** @default 10000 — most entries a workspace archive may hold */
  max_workspace_entries: z.number().int().positive().default(10_000),
  /** @default 10 s — SIGTERM: how long running hooks may finish */
  shutdown_grace_ms: TimerMs.nonnegative().default(10_000),
  /** @default "64m" — each tenant's audit file (audit/<tenant>.jsonl) is rotated past this size */
  audit_max_bytes: Bytes.default("64m"),
  /** @default 5; at most MAX_AUDIT_KEEP — rotated audit files kept per tenant (<file>.1 … .N); each rotation renames every kept file in turn, while an event waits for its line */
  audit_keep: z.number().int().nonnegative().max(MAX_AUDIT_KEEP, `audit_keep is at most ${MAX_AUDIT_KEEP} (MAX_AUDIT_KEEP): each rotation renames every kept file while an event waits for its audit line`).default(5),
  /** @default "1g" — per tenant, all its workspaces together (unpacked); [[tenants]] may override */
  max_workspace_bytes: Bytes.default("1g"),
  /** @default 100 — workspaces per tenant; [[tenants]] may override */
  max_workspaces: z.number().int().positive().default(100),
  /** @default "1m" — largest repository hook file read (.claude/settings.json …) */
  max_hook_file_bytes: Bytes.default("1m"),
  /** @default 200 — most unpacked bytes per uploaded byte, checked once 1 MiB is unpacked */
  max_unpack_ratio: z.number().positive().default(200),
  /** @default 1000 — most hooks a workspace's files may declare */
  max_repository_hooks: z.number().int().positive().default(1000),
  /** @default 4096 — most client connections open at once; past it a new one is closed at once (the service's own files and engine socket keep their descriptors) */
  max_connections: z.number().int().positive().default(4096),
})
  .refine((t) => t.metrics_token_sha256 === undefined || t.metrics_token_env === undefined, "set at most one of metrics_token_sha256 and metrics_token_env")
  .refine((t) => !t.public_metrics || (t.metrics_token_sha256 === undefined && t.metrics_token_env === undefined), "public_metrics = true needs no metrics token: set one or the other");

const FailureModeSchema = z.enum(["allow", "block"]);
export type FailureMode = z.infer<typeof FailureModeSchema>;

const TenantSchema = z
  .strictObject({
    name: z.string().min(1),
    token_sha256: z.string().regex(/^[0-9a-f]{64}$/, "expected 64 lowercase hex digits").optional(),
    token_env: z.string().min(1).optional(),
    /** @default true */
    repository_hooks: z.boolean().default(true),
    /** @default false — true: this tenant's traces keep tool inputs and prompts (redacted) */
    trace_tool_input: z.boolean().default(false),
    /**
     * @default "allow" — what this tenant's agents get when hookbox cannot decide (unreachable, an
     * error, overload, the agent's own deadline): one mode, or one per event (`{ PreToolUse = "block", "*" = "allow" }`)
     */
    on_failure: z.union([FailureModeSchema, z.record(z.string(), FailureModeSchema)]).default("allow"),
    /** @default false — true: this tenant's repository hooks may change tool arguments (the change still passes policy) */
    repository_may_rewrite: z.boolean().default(false),
    /** @default [server] max_workspace_bytes */
    max_workspace_bytes: Bytes.optional(),
    /** @default [server] max_workspaces */
    max_workspaces: z.number().int().positive().optional(),
  })
  .refine((t) => (t.token_sha256 === undefined) !== (t.token_env === undefined), "set exactly one of token_sha256 and token_env");

const SandboxSchema = z.strictObject({
  /** @default "runc" */
  runtime: z.enum(RUNTIMES).default("runc"),
  image: z.string().min(1).default(DEFAULT_IMAGE),
  memory: Bytes.refine((v) => (parseBytes(v) ?? Infinity) >= MIN_LIMITS.memoryBytes, "memory is at least 6m (Docker's minimum)").default(DEFAULT_LIMITS.memoryBytes),
  cpus: z.number().min(MIN_LIMITS.cpus, `cpus is at least ${MIN_LIMITS.cpus}`).finite().default(DEFAULT_LIMITS.cpus),
  pids: z.number().int().positive().default(DEFAULT_LIMITS.pids),
  open_files: z.number().int().positive().default(DEFAULT_LIMITS.openFiles),
  max_output_bytes: z.number().int().positive().default(DEFAULT_LIMITS.maxOutputBytes),
  tmp_size: Bytes.refine((v) => (parseBytes(v) ?? Infinity) >= MIN_LIMITS.tmpBytes, "tmp_size is at least 1m").default(DEFAULT_LIMITS.tmpBytes),
  /** ms; every hook's timeout is clamped to it */
  max_timeout: TimerMs.positive().default(DEFAULT_MAX_TIMEOUT_MS),
  /** events running hooks at once, all tenants together */
  max_concurrency: z.number().int().positive().default(8),
  /** events of one tenant waiting for a slot before the service answers that tenant 429; each tenant has its own */
  max_queue: z.number().int().nonnegative().default(64),
  /** events of one tenant running hooks at once; @default half of max_concurrency, rounded up */
  max_tenant_concurrency: z.number().int().positive().optional(),
  /** containers running at once for one event, whatever `parallel` says */
  max_containers_per_event: z.number().int().positive().default(4),
  /** ms; all of one event's hooks, from its arrival: hooks not done by then are stopped (timed_out) */
  max_event_ms: TimerMs.positive().default(120_000),
  /** ms; the longest one container-engine call may take; a hook's run ends at most this long past its own timeout */
  engine_timeout_ms: TimerMs.positive().default(5_000),
  /** host folders mounted read-only at the same path in every container; relative to the config file */
  mounts: z.array(z.string().min(1)).default([]),
  /** pre-started single-use containers kept ready per container shape in use; 0 turns the warm pool off */
  pool_size: z.number().int().nonnegative().default(DEFAULT_POOL.size),
  /** all pre-started containers together */
  pool_max: z.number().int().positive().default(DEFAULT_POOL.maxTotal),
  /** ms; a shape not used this long loses its pre-started containers, and none waits longer */
  pool_idle_ms: z.number().int().positive().default(DEFAULT_POOL.idleMs),
});

const ExtensionsSchema = z.strictObject({ dirs: z.array(z.string()).default([]) });

const TracesSchema = z.strictObject({
  /** ms a trace is kept; @default 24 h */
  retention_ms: z.number().int().positive().default(DEFAULT_TRACE_LIMITS.retentionMs),
  /** @default 10000; at most MAX_TRACE_EVENTS — each tenant's summaries are kept in memory, and a filtered listing walks them all */
  max_events: z.number().int().positive().max(MAX_TRACE_EVENTS, `max_events is at most ${MAX_TRACE_EVENTS} (MAX_TRACE_EVENTS): every tenant's trace summaries are kept in memory, and a filtered listing walks them all on the shared thread`).default(DEFAULT_TRACE_LIMITS.maxEvents),
  /** @default "256m" */
  max_bytes: Bytes.default(DEFAULT_TRACE_LIMITS.maxBytes),
  /** of each hook's stdin, stdout and stderr; @default 4096 */
  // Each kept stream is redacted on the shared thread in steps (redact.ts STEP_MATCHES), but one pattern's search runs whole: about 0.1 s over 64 KiB of hostile text.
  capture_bytes: z.number().int().positive().max(MAX_CAPTURE_BYTES, `at most ${MAX_CAPTURE_BYTES} bytes (MAX_CAPTURE_BYTES)`).default(DEFAULT_TRACE_LIMITS.captureBytes),
});

const TOP_KEYS = ["server", "tenants", "sandbox", "policy", "extensions", "hooks", "traces"];

export interface Tenant {
  name: string;
  tokenSha256: string;
  repositoryHooks: boolean;
  traceToolInput: boolean;
  /** what its agents get when hookbox cannot decide, by canonical event point; "*" for the rest (SERVICE.md §8) */
  onFailure: Record<string, FailureMode>;
  /** its repositories' argument changes count (SERVICE.md §8) */
  repositoryMayRewrite: boolean;
  /** all its workspaces together, unpacked */
  maxWorkspaceBytes: number;
  maxWorkspaces: number;
}

export interface SandboxConfig {
  runtime: Runtime;
  image: string;
  limits: Limits;
  maxTimeoutMs: number;
  maxConcurrency: number;
  /** per tenant */
  maxQueue: number;
  maxTenantConcurrency: number;
  maxContainersPerEvent: number;
  maxEventMs: number;
  engineTimeoutMs: number;
  mounts: string[];
  pool: PoolOptions;
}

export interface Config {
  file: string;
  server: {
    listen: string;
    dataDir: string;
    auditToolInput: boolean;
    maxBodyBytes: number;
    maxWorkspaceEntries: number;
    shutdownGraceMs: number;
    publicMetrics: boolean;
    /** the SHA-256 of the one token /metrics takes, if set (tenants' tokens then do not) */
    metricsTokenSha256?: string;
    auditMaxBytes: number;
    auditKeep: number;
    maxHookFileBytes: number;
    maxUnpackRatio: number;
    maxRepositoryHooks: number;
    maxConnections: number;
  };
  tenants: Tenant[];
  sandbox: SandboxConfig;
  traces: TraceLimits;
  /** `[hooks] enabled` */
  hooksEnabled: boolean;
  policy: HookSet;
  service: HookSet;
  extension: HookSet;
  warnings: string[];
}

export function loadConfig(file: string, env: Record<string, string | undefined> = {}): Config {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new ConfigError(file, `cannot read: ${(err as Error).message}`);
  }
  return parseConfig(file, text, env);
}

export function parseConfig(file: string, text: string, env: Record<string, string | undefined> = {}): Config {
  const parsed = readToml(file, text);
  const doc = parsed.value as Record<string, unknown>;
  const base = dirname(resolve(file));
  for (const key of Object.keys(doc)) if (!TOP_KEYS.includes(key)) throw configError(parsed, [key], `unknown section (expected one of ${TOP_KEYS.join(", ")})`);
  const section = <T extends z.ZodType>(schema: T, key: string): z.infer<T> => {
    const r = schema.safeParse(doc[key] ?? {});
    if (!r.success) throw schemaError(parsed, r.error, [key]);
    return r.data;
  };
  const server = section(ServerSchema, "server");
  const sandbox = section(SandboxSchema, "sandbox");
  const extensions = section(ExtensionsSchema, "extensions");
  const traces = section(TracesSchema, "traces");
  const tenantsParsed = z.array(TenantSchema).safeParse(doc.tenants ?? []);
  if (!tenantsParsed.success) throw schemaError(parsed, tenantsParsed.error, ["tenants"]);
  const tenantWarnings: string[] = [];
  const tenants = tenantsParsed.data.map((t, i) => tenantOf(parsed, t, i, env, server, tenantWarnings));
  const names = new Set<string>();
  const tokens = new Map<string, string>();
  tenants.forEach((t, i) => {
    if (names.has(t.name)) throw configError(parsed, ["tenants", i, "name"], `tenant "${t.name}" is defined twice`);
    names.add(t.name);
    // One token, two tenants: the first would be chosen, and the second's holders would act as it.
    const other = tokens.get(t.tokenSha256);
    if (other !== undefined) throw configError(parsed, ["tenants", i], `tenant "${t.name}" has the same token as tenant "${other}"`);
    tokens.set(t.tokenSha256, t.name);
  });
  const metricsTokenSha256 = server.metrics_token_env !== undefined ? sha256Hex(envToken(parsed, ["server", "metrics_token_env"], env, server.metrics_token_env)) : server.metrics_token_sha256;
  // A tenant's token for it would show that tenant every other tenant's figures.
  const holder = metricsTokenSha256 === undefined ? undefined : tokens.get(metricsTokenSha256);
  if (holder !== undefined) throw configError(parsed, ["server", server.metrics_token_env !== undefined ? "metrics_token_env" : "metrics_token_sha256"], `the metrics token is tenant "${holder}"'s token: /metrics shows every tenant's figures, so it takes a token of its own`);
  if (metricsTokenSha256 === undefined && !server.public_metrics && tenants.length > 1) {
    tenantWarnings.push(`${originOf(parsed, ["tenants", 1])}: every tenant's token reads /metrics, whose figures are all tenants' together: set metrics_token_sha256 (or metrics_token_env) for a scraper of the operator's own`);
  }
  // Mounted read-only into every container, a repository's hooks' too: never hookbox's own data
  // (every tenant's workspaces, traces and audit), nor the container engine's socket.
  // Where a path really is, even one not made yet (a data_dir created at start-up): its deepest
  // existing folder resolved, the rest as written.
  const real = (p: string): string => {
    try {
      return realpathSync(p);
    } catch {
      const parent = dirname(p);
      return parent === p ? p : join(real(parent), basename(p));
    }
  };
  // The engine's socket where DOCKER_HOST names one, and each known one where it really is.
  const dockerHost = env.DOCKER_HOST?.startsWith("unix://") ? [env.DOCKER_HOST.slice("unix://".length)] : [];
  const sockets = [...new Set([...ENGINE_SOCKETS, ...dockerHost].flatMap((sock) => [sock, real(sock)]))];
  const dataDir = real(resolve(base, server.data_dir));
  /** A folder mounted into containers (a `[sandbox] mounts` entry, an extension's folder), judged at the key that names it. */
  const mountable = (at: Path, m: string, who: string) => {
    const path = real(resolve(base, m));
    const inside = (a: string, b: string) => a === b || a.startsWith(b.endsWith("/") ? b : `${b}/`);
    if (inside(dataDir, path) || inside(path, dataDir)) throw configError(parsed, at, `mount ${JSON.stringify(m)} would show hookbox's data_dir (${dataDir}) to ${who}`);
    for (const socket of sockets) if (inside(socket, path)) throw configError(parsed, at, `mount ${JSON.stringify(m)} would hand ${who} the container engine's socket (${socket})`);
  };
  sandbox.mounts.forEach((m, i) => mountable(["sandbox", "mounts", i], m, "every hook"));

  const maxTimeoutMs = sandbox.max_timeout;
  const hooks = loadCoshTable(parsed, ["hooks"], doc.hooks, { source: "service", maxTimeoutMs }, ["enabled", "parallel", "sequential"]);
  // Policy hooks run on the host, in the config file's folder, so relative commands work as written.
  const policyTable = loadCoshTable(parsed, ["policy"], doc.policy, { source: "policy", maxTimeoutMs, cwd: base }, ["dirs", "parallel", "sequential"]);
  const policyFiles = policyTable.dirs.flatMap((d, i) => jsonFilesIn(parsed, ["policy", "dirs", i], resolve(base, d)));
  const policy = mergeHookSets([policyTable, ...policyFiles.map(({ file: f, at }) => loadCopilotFile(readJson(f, readText(parsed, at, f)), { source: "policy", maxTimeoutMs }))]);
  const extension = mergeHookSets(
    extensions.dirs.flatMap((d, i) => extensionDirs(parsed, ["extensions", "dirs", i], resolve(base, d))).map(({ file: dir, at }) => {
      // Its folder is mounted into each of its hooks' containers: judged as a [sandbox] mount is.
      mountable(at, dir, "its hooks");
      const f = join(dir, EXTENSION_FILE);
      return loadExtension(readJson(f, readText(parsed, at, f)), dir, { source: "extension", maxTimeoutMs });
    }),
  );
  return {
    file,
    server: {
      listen: server.listen,
      dataDir: resolve(base, server.data_dir),
      auditToolInput: server.audit_tool_input,
      maxBodyBytes: parseBytes(server.max_body_bytes)!,
      maxWorkspaceEntries: server.max_workspace_entries,
      publicMetrics: server.public_metrics,
      ...(metricsTokenSha256 !== undefined ? { metricsTokenSha256 } : {}),
      shutdownGraceMs: server.shutdown_grace_ms,
      auditMaxBytes: parseBytes(server.audit_max_bytes)!,
      auditKeep: server.audit_keep,
      maxHookFileBytes: parseBytes(server.max_hook_file_bytes)!,
      maxUnpackRatio: server.max_unpack_ratio,
      maxRepositoryHooks: server.max_repository_hooks,
      maxConnections: server.max_connections,
    },
    tenants,
    sandbox: {
      runtime: sandbox.runtime,
      image: sandbox.image,
      limits: {
        memoryBytes: parseBytes(sandbox.memory)!,
        cpus: sandbox.cpus,
        pids: sandbox.pids,
        openFiles: sandbox.open_files,
        maxOutputBytes: sandbox.max_output_bytes,
        tmpBytes: parseBytes(sandbox.tmp_size)!,
      },
      maxTimeoutMs,
      maxConcurrency: sandbox.max_concurrency,
      maxQueue: sandbox.max_queue,
      maxTenantConcurrency: sandbox.max_tenant_concurrency ?? Math.ceil(sandbox.max_concurrency / 2),
      maxContainersPerEvent: sandbox.max_containers_per_event,
      maxEventMs: sandbox.max_event_ms,
      engineTimeoutMs: sandbox.engine_timeout_ms,
      mounts: sandbox.mounts.map((m) => resolve(base, m)),
      pool: { size: sandbox.pool_size, maxTotal: sandbox.pool_max, idleMs: sandbox.pool_idle_ms, maxStarting: DEFAULT_POOL.maxStarting },
    },
    traces: { retentionMs: traces.retention_ms, maxEvents: traces.max_events, maxBytes: parseBytes(traces.max_bytes)!, captureBytes: traces.capture_bytes },
    hooksEnabled: !hooks.disableAll,
    policy: { ...shownOrigins(base, policy), disableAll: false },
    service: shownOrigins(base, hooks),
    extension: shownOrigins(base, extension),
    // For the operator's log: the files where they are.
    warnings: [...tenantWarnings, ...settingWarnings(parsed, sandbox, [...policy.hooks, ...hooks.hooks, ...extension.hooks]), ...hooks.warnings, ...policy.warnings, ...extension.warnings],
  };
}

/**
 * The operator's hooks with their origin as every tenant sees it in decisions and traces: the file
 * named from the config file's folder (`policy.d/guard.json:3`), or by its name alone when it lies
 * elsewhere — never the host's paths.
 */
function shownOrigins<T extends HookSet>(base: string, set: T): T {
  const prefix = base.endsWith("/") ? base : `${base}/`;
  const shown = (origin: string) => (origin.startsWith(prefix) ? origin.slice(prefix.length) : basename(origin));
  return { ...set, hooks: set.hooks.map((h) => ({ ...h, origin: shown(h.origin) })) };
}

/**
 * Settings that load but do not do what they say, each at its line: limits that cannot hold
 * together, and a hook's own limits the sandbox's override (a hook may lower them, never raise them)
 * or that mean nothing on the host.
 */
function settingWarnings(parsed: ParsedFile, sandbox: z.infer<typeof SandboxSchema>, all: HookDef[]): string[] {
  const out: string[] = [];
  const at = (path: Path, text: string) => out.push(`${originOf(parsed, path)}: ${path.join(".")}: ${text}`);
  if (sandbox.max_tenant_concurrency !== undefined && sandbox.max_tenant_concurrency > sandbox.max_concurrency)
    at(["sandbox", "max_tenant_concurrency"], `${sandbox.max_tenant_concurrency} is more than max_concurrency (${sandbox.max_concurrency}): a tenant runs at most ${sandbox.max_concurrency} events at once`);
  if (sandbox.max_event_ms < sandbox.max_timeout)
    at(["sandbox", "max_event_ms"], `${sandbox.max_event_ms} ms is less than max_timeout (${sandbox.max_timeout} ms): a hook given more than max_event_ms is cut by it, and the tenant's on_failure answers`);
  if (sandbox.pool_max < sandbox.pool_size)
    at(["sandbox", "pool_max"], `${sandbox.pool_max} is less than pool_size (${sandbox.pool_size}): the pool keeps at most ${sandbox.pool_max} containers`);
  const memory = parseBytes(sandbox.memory)!;
  for (const h of all) {
    if (h.source === "policy") {
      const unused = (["memoryBytes", "cpus", "pids"] as const).filter((k) => h.limits[k] !== undefined);
      if (h.image !== undefined || unused.length > 0) out.push(`${h.origin}: policy hook ${JSON.stringify(h.name)}: ${[...(h.image !== undefined ? ["image"] : []), ...unused.map((k) => (k === "memoryBytes" ? "memory" : k))].join(", ")} mean nothing for a hook that runs on the host: ignored`);
    } else {
      if (h.limits.memoryBytes !== undefined && h.limits.memoryBytes > memory) out.push(`${h.origin}: hook ${JSON.stringify(h.name)}: memory is more than [sandbox] memory (${sandbox.memory}): a hook may lower the sandbox's limits, never raise them — it gets ${sandbox.memory}`);
      if (h.limits.cpus !== undefined && h.limits.cpus > sandbox.cpus) out.push(`${h.origin}: hook ${JSON.stringify(h.name)}: cpus is more than [sandbox] cpus (${sandbox.cpus}): it gets ${sandbox.cpus}`);
      if (h.limits.pids !== undefined && h.limits.pids > sandbox.pids) out.push(`${h.origin}: hook ${JSON.stringify(h.name)}: pids is more than [sandbox] pids (${sandbox.pids}): it gets ${sandbox.pids}`);
    }
  }
  return out;
}

/** A token from the environment variable `name`, which `at` in the file names. */
function envToken(parsed: ParsedFile, at: (string | number)[], env: Record<string, string | undefined>, name: string): string {
  const token = env[name];
  if (!token) throw configError(parsed, at, `environment variable ${name} is not set`);
  // A client sends a token as one word after "Bearer ": one with a blank or a control character in
  // it (a secret file's trailing newline) could never be sent, and every call would be refused.
  if (/\s/.test(token) || [...token].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)) throw configError(parsed, at, `environment variable ${name} holds a blank or a control character (a trailing newline?): no client can send it as a token`);
  return token;
}

function tenantOf(parsed: ParsedFile, t: z.infer<typeof TenantSchema>, i: number, env: Record<string, string | undefined>, server: z.infer<typeof ServerSchema>, warnings: string[]): Tenant {
  let sha = t.token_sha256;
  if (t.token_env !== undefined) sha = sha256Hex(envToken(parsed, ["tenants", i, "token_env"], env, t.token_env));
  return {
    name: t.name,
    tokenSha256: sha!,
    repositoryHooks: t.repository_hooks,
    traceToolInput: t.trace_tool_input,
    repositoryMayRewrite: t.repository_may_rewrite,
    onFailure: failureModes(parsed, i, t.on_failure, warnings),
    maxWorkspaceBytes: parseBytes(t.max_workspace_bytes ?? server.max_workspace_bytes)!,
    maxWorkspaces: t.max_workspaces ?? server.max_workspaces,
  };
}

function failureModes(parsed: ParsedFile, i: number, value: FailureMode | Record<string, FailureMode>, warnings: string[]): Record<string, FailureMode> {
  if (typeof value === "string") return { "*": value };
  // "*" only as the tenant says it (failureModeFor defaults to allow): a name that is no known event
  // takes an explicit "*", else the strictest mode.
  const out: Record<string, FailureMode> = value["*"] !== undefined ? { "*": value["*"] } : {};
  for (const [name, mode] of Object.entries(value)) {
    if (name === "*") continue;
    const resolved = resolveEventName(name);
    if (!resolved) throw configError(parsed, ["tenants", i, "on_failure", name], unknownEventMessage(name));
    // Where a block keeps the agent going, hookbox's failure lets it go on as it would: said here, not found out later.
    if (mode === "block" && blockKeepsGoing(resolved.point))
      warnings.push(`${originOf(parsed, ["tenants", i, "on_failure", name])}: tenants[${i}].on_failure.${name} = "block" has no effect: at ${name} a block would keep the agent going, and when hookbox cannot decide the agent goes on as it would`);
    // Two spellings of one event (PreToolUse and preToolUse): which one holds would depend on the order of the keys.
    const earlier = Object.keys(value).find((other) => other !== name && other !== "*" && resolveEventName(other)?.point === resolved.point);
    if (earlier !== undefined && Object.hasOwn(out, resolved.point))
      throw configError(parsed, ["tenants", i, "on_failure", name], `${name} and ${earlier} name the same event (${resolved.point}): set it once`);
    out[resolved.point] = mode;
  }
  return out;
}

/**
 * The failure mode of a tenant for an event as a client names it (any dialect). A request that
 * names no event may be for any: the strictest of its modes (strictestFailureMode). A name that is
 * no known event (`pretooluse` on a native URL, say) may be any event too: the tenant's own "*" if
 * it set one, else the strictest of its modes.
 */
export function failureModeFor(tenant: Partial<Pick<Tenant, "onFailure">>, eventName: string | undefined): FailureMode {
  if (eventName === undefined) return strictestFailureMode(tenant);
  const point = resolveEventName(eventName)?.point;
  const modes = tenant.onFailure ?? {};
  if (point === undefined) return modes["*"] ?? strictestFailureMode(tenant);
  return modes[point] ?? modes["*"] ?? "allow";
}

/**
 * The failure mode when the event cannot be known (a native hook's body that could not be read, on
 * a URL that does not name its event): block if the tenant blocks on failure at any event.
 */
export function strictestFailureMode(tenant: Partial<Pick<Tenant, "onFailure">>): FailureMode {
  return Object.values(tenant.onFailure ?? {}).includes("block") ? "block" : "allow";
}

type Path = (string | number)[];

/** What the file system said, as a config error at the key that named the path (never a stack trace). */
function fsProblem(parsed: ParsedFile, at: Path, what: string, err: unknown): ConfigError {
  return configError(parsed, at, `${what}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
}

function readText(parsed: ParsedFile, at: Path, file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    throw fsProblem(parsed, at, `cannot read ${file}`, err);
  }
}

/** A policy folder's `*.json` files (regular files, in name order), each with the key that named its folder. */
function jsonFilesIn(parsed: ParsedFile, at: Path, dir: string): { file: string; at: Path }[] {
  if (!existsSync(dir)) throw configError(parsed, at, `policy directory ${dir} does not exist`);
  try {
    if (!statSync(dir).isDirectory()) throw configError(parsed, at, `policy directory ${dir} is not a folder`);
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.name.endsWith(".json"))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((e) => {
        const file = join(dir, e.name);
        if (!statSync(file).isFile()) throw configError(parsed, at, `${file} in the policy directory is not a file`);
        return { file, at };
      });
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw fsProblem(parsed, at, `cannot read policy directory ${dir}`, err);
  }
}

/** An extensions folder's extensions: its subfolders that hold an extension file. */
function extensionDirs(parsed: ParsedFile, at: Path, dir: string): { file: string; at: Path }[] {
  if (!existsSync(dir)) throw configError(parsed, at, `extensions directory ${dir} does not exist`);
  try {
    if (!statSync(dir).isDirectory()) throw configError(parsed, at, `extensions directory ${dir} is not a folder`);
    return readdirSync(dir)
      .sort()
      .map((name) => join(dir, name))
      // a link whose target is gone is no extension
      .filter((d) => statSync(d, { throwIfNoEntry: false })?.isDirectory() === true && existsSync(join(d, EXTENSION_FILE)))
      .map((file) => ({ file, at }));
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw fsProblem(parsed, at, `cannot read extensions directory ${dir}`, err);
  }
}


function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
