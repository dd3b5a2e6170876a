/**
 * @module `hookbox workspace push DIR`: uploads a repository's hook files (or, with --all, the whole
 * folder) as a tar.gz and prints the workspace id.
 */
import { createHash } from "node:crypto";
import { existsSync, lstatSync, readFileSync, readdirSync } from "node:fs";
import { basename, join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { pack } from "tar-stream";
import { oneLine } from "./terminal.js";

/**
 * What a repository's hooks are declared in (the engine's format registry reads these), and the
 * folders their scripts usually sit in.
 */
export const HOOK_PATHS = [".github/hooks", ".github/copilot", ".copilot-shell", ".claude/settings.json", ".claude/settings.local.json", ".claude/hooks", ".cursor", ".codex", ".gemini/settings.json", ".gemini/hooks"];
const SKIP = new Set([".git", "node_modules"]);

/** Regular files under `at`; FIFOs, sockets and devices are skipped with a warning (reading a FIFO would hang). */
function files(root: string, at: string, out: string[], warnings: string[]): void {
  const st = lstatSync(at);
  if (st.isDirectory()) {
    for (const name of readdirSync(at).sort()) if (!SKIP.has(name)) files(root, join(at, name), out, warnings);
  } else if (st.isFile()) out.push(relative(root, at));
  else if (st.isFIFO() || st.isSocket() || st.isCharacterDevice() || st.isBlockDevice()) {
    const kind = st.isFIFO() ? "a FIFO" : st.isSocket() ? "a socket" : "a device";
    warnings.push(`warning: ${oneLine(relative(root, at))} is ${kind}: skipped\n`);
  }
}

async function tarGz(root: string, names: string[]): Promise<Buffer> {
  const p = pack();
  const chunks: Buffer[] = [];
  p.on("data", (c: unknown) => chunks.push(c as Buffer));
  const ended = new Promise<void>((r) => p.on("end", () => r()));
  for (const name of names) {
    const mode = lstatSync(join(root, name)).mode & 0o777;
    await new Promise<void>((res, rej) => p.entry({ name, mode }, readFileSync(join(root, name)), (e) => (e ? rej(e) : res())));
  }
  p.finalize();
  await ended;
  return gzipSync(Buffer.concat(chunks));
}

export async function workspacePush(argv: string[], env: NodeJS.ProcessEnv): Promise<{ stdout: string; stderr: string; code: number }> {
  const { values, positionals } = parseArgs({
    args: argv, allowPositionals: true,
    options: { url: { type: "string", default: env.HOOKBOX_URL ?? "http://127.0.0.1:8080" }, token: { type: "string" }, id: { type: "string" }, all: { type: "boolean", default: false } },
  });
  const dir = resolve(positionals[0] ?? ".");
  if (!existsSync(dir)) return { stdout: "", stderr: `hookbox: no folder ${dir}\n`, code: 66 };
  const names: string[] = [];
  const skipped: string[] = [];
  if (values.all) files(dir, dir, names, skipped);
  else for (const p of HOOK_PATHS) if (existsSync(join(dir, p))) files(dir, join(dir, p), names, skipped);
  if (names.length === 0) return { stdout: "", stderr: `${skipped.join("")}hookbox: no hook files in ${dir} (looked for ${HOOK_PATHS.join(", ")}; --all sends the whole folder)\n`, code: 65 };
  const archive = await tarGz(dir, names);
  const id = values.id ?? `${basename(dir).replace(/[^A-Za-z0-9._-]/g, "-").replace(/^[^A-Za-z0-9]+/, "") || "ws"}-${createHash("sha256").update(archive).digest("hex").slice(0, 12)}`;
  const token = values.token ?? env.HOOKBOX_TOKEN;
  const res = await fetch(`${values.url.replace(/\/+$/, "")}/v1/workspaces/${encodeURIComponent(id)}`, {
    method: "PUT", body: archive, headers: { "content-type": "application/gzip", ...(token ? { authorization: `Bearer ${token}` } : {}) },
  }).catch((err: Error) => err);
  if (res instanceof Error) return { stdout: "", stderr: `hookbox: cannot reach ${values.url}: ${res.message}\n`, code: 69 };
  const answer: unknown = await res.json().catch(() => undefined);
  const body = (typeof answer === "object" && answer !== null ? answer : {}) as { hooks?: unknown; warnings?: unknown; error?: { message?: unknown } };
  if (!res.ok) return { stdout: "", stderr: `${skipped.join("")}hookbox: upload refused (${res.status}): ${oneLine(String(body.error?.message ?? `${res.statusText}`))}\n`, code: 65 };
  // What the service skipped in the hook files (unknown keys, events, hook types), with file and
  // line: the repository's own text, escaped for the terminal.
  const served = (Array.isArray(body.warnings) ? body.warnings : []).map((w) => `warning: ${oneLine(String(w))}\n`).join("");
  return { stdout: `${id}\n`, stderr: `${skipped.join("")}${served}uploaded ${names.length} files, ${Array.isArray(body.hooks) ? body.hooks.length : 0} repository hooks\n`, code: 0 };
}
