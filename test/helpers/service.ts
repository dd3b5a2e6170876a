/**
 * Starts the real service process (`node dist/service/main.js`) with a configuration written for
 * the test, on a free loopback port, and speaks HTTP to it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { auditFileName } from "../../service/records/audit-log.js";

export const TOKEN_A = "token-of-team-a";
export const TOKEN_B = "token-of-team-b";
const sha = (t: string) => createHash("sha256").update(t).digest("hex");

export function tenantsToml(): string {
  return `[[tenants]]\nname = "team-a"\ntoken_sha256 = "${sha(TOKEN_A)}"\n\n[[tenants]]\nname = "team-b"\ntoken_env = "HOOKBOX_TEST_TOKEN_B"\n`;
}

export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

export interface Service {
  url: string;
  proc: ChildProcess;
  dir: string;
  dataDir: string;
  logs: () => string;
  /** POST an event as tenant A unless told otherwise */
  event(body: unknown, opts?: { path?: string; token?: string | null; query?: string; headers?: Record<string, string> }): Promise<Response>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** the lines of a tenant's audit file (team-a's unless named) */
  auditLines(tenant?: string): Array<Record<string, unknown>>;
  /** a tenant's audit file, or its `i`-th rotated one */
  auditFile(tenant?: string, i?: number): string;
  rssKb(): number;
}

/** `opts.wrap`: the command the service is started under (`prlimit --nofile=…`, say), which execs it. */
export async function startService(configToml: string, opts: { dir?: string; env?: Record<string, string>; server?: string; tenants?: string; wrap?: string[] } = {}): Promise<Service> {
  if (!existsSync("dist/service/main.js")) throw new Error("run `npm run build` first (npm test does)");
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), "hookbox-svc-"));
  const configFile = join(dir, "hookbox.toml");
  writeFileSync(configFile, `[server]\ndata_dir = "./data"\n${opts.server?.includes("shutdown_grace_ms") ? "" : "shutdown_grace_ms = 1000\n"}${opts.server ?? ""}\n\n${opts.tenants ?? tenantsToml()}\n${configToml}`);
  const port = await freePort();
  let out = "";
  const [command, ...args] = [...(opts.wrap ?? []), process.execPath, "dist/service/main.js", "--config", configFile, "--listen", `127.0.0.1:${port}`];
  const proc = spawn(command!, args, {
    env: { PATH: process.env.PATH ?? "", HOOKBOX_TEST_TOKEN_B: TOKEN_B, HOOKBOX_SECRET_OF_THE_SERVER: "do-not-leak", ...opts.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  proc.stdout!.on("data", (c: Buffer) => (out += c.toString()));
  proc.stderr!.on("data", (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((r) => proc.once("exit", (code) => r(code)));
  for (let i = 0; i < 200 && !out.includes("hookbox listening"); i++) {
    if (proc.exitCode !== null) throw new Error(`service exited ${proc.exitCode}:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  if (!out.includes("hookbox listening")) throw new Error(`service did not start:\n${out}`);
  const url = `http://127.0.0.1:${port}`;
  const dataDir = join(dir, "data");
  return {
    url, proc, dir, dataDir,
    logs: () => out,
    event(body, o = {}) {
      const token = o.token === undefined ? TOKEN_A : o.token;
      return fetch(`${url}${o.path ?? "/v1/events"}${o.query ? `?${o.query}` : ""}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}), ...o.headers },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
    },
    async stop(signal = "SIGTERM") {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return exited;
    },
    auditFile(tenant = "team-a", i = 0) {
      const file = join(dataDir, "audit", auditFileName(tenant));
      return i === 0 ? file : `${file}.${i}`;
    },
    auditLines(tenant = "team-a") {
      const file = join(dataDir, "audit", auditFileName(tenant));
      if (!existsSync(file)) return [];
      return readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    },
    rssKb() {
      const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${proc.pid}/status`, "utf8"));
      return Number(m![1]);
    },
  };
}
