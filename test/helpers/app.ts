/**
 * The service in-process: `createApp(...)` with the real engine, stores and metrics, and fakes of
 * the two runners — no container, no port, no build. For the HTTP edge (status codes, error bodies,
 * auth, tenant scoping, limits); what runs in a container is proven against the real engine elsewhere.
 */
import { createHash } from "node:crypto";
import { setMaxListeners } from "node:events";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { createEngine, parseConfig, WorkspaceStore, type RunRequest, type RunResult, type Runner } from "../../engine/index.js";
import { createApp } from "../../service/app.js";
import { eventMemoryBudget } from "../../service/read-body.js";
import { Metrics } from "../../service/metrics.js";
import { AuditLog, type AuditSink } from "../../service/records/audit-log.js";
import { Sessions } from "../../service/records/sessions.js";
import { TraceStore } from "../../service/records/trace-store.js";
import { TOKEN_A, TOKEN_B } from "./service.js";

const sha = (t: string) => createHash("sha256").update(t).digest("hex");

/**
 * What the fake runners answer: a hook whose command names a verdict prints it (`say <json>` prints
 * the JSON); `hang` waits until
 * `release()` (or its cancel). Event data is read from stdin, as a real hook's would be.
 */
function fakeRunner(kind: Runner["kind"], held: Set<() => void>, ran: RunRequest[]): Runner {
  return {
    kind,
    async run(request): Promise<RunResult> {
      ran.push(request);
      const base = { stderr: "", durationMs: 1, startMs: 0 };
      if (request.command === "hang") {
        await new Promise<void>((resolve) => {
          held.add(resolve);
          request.signal?.addEventListener("abort", () => resolve(), { once: true });
        });
        return { ...base, outcome: "exited", exitCode: 0, stdout: "{}" };
      }
      // `hang-say <json>`: waits until `release()` (or its cancel), then prints the JSON — a verdict that comes late.
      if (request.command.startsWith("hang-say ")) {
        await new Promise<void>((resolve) => {
          held.add(resolve);
          request.signal?.addEventListener("abort", () => resolve(), { once: true });
        });
        return { ...base, outcome: "exited", exitCode: 0, stdout: request.command.slice(9) };
      }
      // `prep-timeout`: timed out after hookbox's preparation took 500 ms of its time.
      if (request.command === "prep-timeout") return { ...base, outcome: "timed_out", exitCode: null, stdout: "", preparedMs: 500 };
      // `expect-event <Name>`: blocks, saying what it read, unless its stdin names the event <Name>.
      if (request.command.startsWith("expect-event ")) {
        const said = (JSON.parse(Buffer.from(request.stdin).toString()) as { hook_event_name?: unknown }).hook_event_name;
        return { ...base, outcome: "exited", exitCode: 0, stdout: said === request.command.slice(13) ? "{}" : JSON.stringify({ decision: "block", reason: `read ${String(said)}` }) };
      }
      // `oom`: killed at the sandbox's memory limit.
      if (request.command === "oom") return { ...base, outcome: "oom_killed", exitCode: 137, stdout: "" };
      // `timeout`: ran out of its own time (the timeout it was given).
      if (request.command === "timeout") return { ...base, outcome: "timed_out", exitCode: null, stdout: "" };
      // `unknown-decision <n>`: a decision no format knows, n characters of backslashes long.
      if (request.command.startsWith("unknown-decision ")) return { ...base, outcome: "exited", exitCode: 0, stdout: JSON.stringify({ decision: "\\".repeat(Number(request.command.slice(17))) }) };
      // `noise <n>`: decides nothing and says much — a reason, a message and context of n NUL
      // characters each (six bytes apiece once written as JSON).
      if (request.command.startsWith("noise ")) {
        const nul = "\u0000".repeat(Number(request.command.slice(6)));
        return { ...base, outcome: "exited", exitCode: 0, stdout: JSON.stringify({ reason: nul, systemMessage: nul, hookSpecificOutput: { additionalContext: nul } }) };
      }
      // `wide <n>`: a block with n empty arrays beside it (past MAX_EVENT_CONTAINERS, an answer hookbox does not read).
      if (request.command.startsWith("wide ")) return { ...base, outcome: "exited", exitCode: 0, stdout: `{"decision":"block","reason":"wide","pad":[${"[],".repeat(Number(request.command.slice(5)) - 1)}[]]}` };
      // `deep-args <n>`: allows, with arguments changed to a JSON string of n nested arrays (past every parser's stack).
      if (request.command.startsWith("deep-args ")) {
        const n = Number(request.command.slice(10));
        return { ...base, outcome: "exited", exitCode: 0, stdout: JSON.stringify({ permissionDecision: "allow", modifiedArgs: `${"[".repeat(n)}${"]".repeat(n)}` }) };
      }
      // `say <json>`: prints the JSON, whatever the event.
      if (request.command.startsWith("say ")) return { ...base, outcome: "exited", exitCode: 0, stdout: request.command.slice(4) };
      const stdin = Buffer.from(request.stdin).toString();
      if (request.command === "guard" && stdin.includes("rm -rf")) {
        return { ...base, outcome: "exited", exitCode: 0, stdout: JSON.stringify({ decision: "block", reason: "Dangerous rm -rf command" }) };
      }
      return { ...base, outcome: "exited", exitCode: 0, stdout: "{}" };
    },
  };
}

export const EDGE_CONFIG = `
[sandbox]
max_concurrency = 1
max_tenant_concurrency = 1
max_queue = 0

[[hooks.PreToolUse]]
name = "guard"
command = "guard"
matcher = "shell|bash|Bash"

[[hooks.Stop]]
name = "slow"
command = "hang"
`;

export interface EdgeApp {
  app: ReturnType<typeof createApp>;
  request(path: string, init?: RequestInit & { token?: string | null }): Promise<Response>;
  /** lets every `hang` hook finish */
  release(): void;
  /** what the fake runners were asked to run */
  ran: RunRequest[];
  metrics: Metrics;
  /** the traces, to wait for (`flush`) before the folder they are written to goes */
  traces: TraceStore;
  /** the stored workspaces (a test may make one's reading fail) */
  workspaces: WorkspaceStore;
  drain(): void;
}

export function edgeApp(opts: {
  config?: string; publicMetrics?: boolean;
  /** more lines of its [server] section */
  server?: string; maxEventBytes?: number; maxUploadBytes?: number; eventBodyReadMs?: number; uploadIdleMs?: number; uploadMaxMs?: number;
  /** team-b's on_failure, as TOML (default "block") */
  onFailureB?: string;
  /** where the audit log goes (default: the data folder) */
  auditFile?: string;
  /** in place of the audit file: a disk that stalls, say */
  audit?: AuditSink;
  /** the service's shutdown signal, for the test to fire */
  shutdown?: AbortController;
  /** what the engine check finds wrong (default: nothing) */
  problems?: string[];
  /** TENANT_EVENT_MEMORY_BYTES unless given */
  eventMemoryBytes?: number;
  /** how long reading a stored workspace takes (as a large one's, or one read first after a restart) */
  workspaceReadMs?: number;
  /** METRICS_RENDER_EVERY_MS unless given (0: every scrape renders anew) */
  metricsRenderEveryMs?: number;
} = {}): EdgeApp {
  const dir = mkdtempSync(join(tmpdir(), "hookbox-edge-"));
  const toml = `[server]\ndata_dir = "${dir}"\n${opts.server ?? ""}\n\n[[tenants]]\nname = "team-a"\ntoken_sha256 = "${sha(TOKEN_A)}"\n\n` +
    `[[tenants]]\nname = "team-b"\ntoken_sha256 = "${sha(TOKEN_B)}"\non_failure = ${opts.onFailureB ?? '"block"'}\n\n${opts.config ?? EDGE_CONFIG}`;
  const config = parseConfig(join(dir, "hookbox.toml"), toml);
  const held = new Set<() => void>();
  const ran: RunRequest[] = [];
  const engine = createEngine({ config, runners: { host: fakeRunner("host", held, ran), container: fakeRunner("container", held, ran) } });
  const metrics = new Metrics(() => engine.stats(), undefined, opts.metricsRenderEveryMs);
  let draining = false;
  // As main.ts: every running event listens to the shutdown signal.
  const shutdownSignal = (opts.shutdown ?? new AbortController()).signal;
  setMaxListeners(0, shutdownSignal);
  const workspaces = new WorkspaceStore(join(dir, "workspaces"), {
    maxEntries: config.server.maxWorkspaceEntries, maxUnpackedBytes: 4 * (opts.maxUploadBytes ?? config.server.maxBodyBytes), maxUnpackRatio: config.server.maxUnpackRatio,
    maxHookFileBytes: config.server.maxHookFileBytes, maxHooks: config.server.maxRepositoryHooks, maxTimeoutMs: config.sandbox.maxTimeoutMs, tenants: config.tenants,
  });
  if (opts.workspaceReadMs !== undefined) {
    const get = workspaces.get.bind(workspaces);
    const readMs = opts.workspaceReadMs;
    workspaces.get = async (tenant, id) => {
      await new Promise((r) => setTimeout(r, readMs));
      return get(tenant, id);
    };
  }
  const traces = new TraceStore(join(dir, "traces"), config.traces);
  const app = createApp({
    engine,
    workspaces,
    tenants: config.tenants,
    audit: opts.audit ?? new AuditLog(opts.auditFile ?? join(dir, "audit.jsonl")),
    traces,
    sessions: new Sessions(),
    metrics,
    logger: pino({ level: "silent" }),
    readiness: async () => ({ ready: (opts.problems ?? []).length === 0, problems: opts.problems ?? [] }),
    limits: { maxEventBytes: opts.maxEventBytes ?? 1024 * 1024, maxUploadBytes: opts.maxUploadBytes ?? config.server.maxBodyBytes, eventBodyReadMs: opts.eventBodyReadMs, uploadIdleMs: opts.uploadIdleMs, uploadMaxMs: opts.uploadMaxMs },
    auditToolInput: false,
    publicMetrics: opts.publicMetrics ?? config.server.publicMetrics,
    ...(config.server.metricsTokenSha256 !== undefined ? { metricsTokenSha256: config.server.metricsTokenSha256 } : {}),
    shutdown: shutdownSignal,
    draining: () => draining,
    inflight: { add: () => undefined },
    ...(opts.eventMemoryBytes !== undefined ? { eventMemory: eventMemoryBudget(opts.eventMemoryBytes) } : {}),
  });
  return {
    app,
    ran,
    metrics,
    traces,
    workspaces,
    request(path, init = {}) {
      const { token = TOKEN_A, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (token !== null && !headers.has("authorization")) headers.set("authorization", `Bearer ${token}`);
      return Promise.resolve(app.request(path, { ...rest, headers }));
    },
    release() {
      for (const go of held) go();
      held.clear();
    },
    drain() {
      draining = true;
    },
  };
}
