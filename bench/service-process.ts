/** Starts the built service with a configuration made for one measurement. */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const TOKEN = "bench-token";

export interface Running {
  url: string;
  /** the service's process id (its memory is read from /proc) */
  pid: number;
  stop(): Promise<void>;
}

/** `server`: more lines of its [server] section (max_workspaces = …, say). */
export async function startService(toml: string, port: number, server = ""): Promise<Running> {
  const dir = mkdtempSync(join(tmpdir(), "hookbox-bench-"));
  const file = join(dir, "hookbox.toml");
  const sha = createHash("sha256").update(TOKEN).digest("hex");
  writeFileSync(file, `[server]\ndata_dir = "./data"\n${server}\n\n[[tenants]]\nname = "bench"\ntoken_sha256 = "${sha}"\n\n${toml}`);
  const proc: ChildProcess = spawn(process.execPath, ["dist/service/main.js", "--config", file, "--listen", `127.0.0.1:${port}`], {
    env: { PATH: process.env.PATH ?? "", HOOKBOX_LOG_LEVEL: "warn" },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    if (await fetch(`${url}/healthz`).then((r) => r.ok, () => false)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    pid: proc.pid ?? 0,
    stop: () =>
      new Promise((resolve) => {
        proc.once("exit", () => resolve());
        proc.kill("SIGTERM");
      }),
  };
}
