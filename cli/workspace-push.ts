/**
 * @module `hookbox workspace push DIR`: uploads a repository's hook files (or, with --all, the whole
 * folder) as a tar.gz and prints the workspace id.
 */
import { createHash } from "node:crypto";
import { existsSync, lstatSync, readFileSync, readdirSync, realpathSync, statSync } from "node:fs";
import { basename, join, relative, resolve, sep } from "node:path";
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

/** A file to send: its name in the archive and where its bytes are read from. */
interface Sent {
  name: string;
  from: string;
}

/** Whether `path` (already resolved through its links) lies inside the real folder `root`. */
const inside = (root: string, path: string) => path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);

/**
 * Regular files under `at`; FIFOs, sockets and devices are skipped with a warning (reading a FIFO
 * would hang). A repository is hostile input on the developer's own machine: a link is never
 * followed out of the folder (`.claude/settings.json -> ~/.claude/settings.json` would upload the
 * user's own settings), and a folder reached through a link is skipped. A link to a regular file
 * inside the folder is sent as that file's bytes under the link's name, so a hook script kept
 * elsewhere in the repository still runs.
 */
function files(root: string, real: string, at: string, out: Sent[], warnings: string[]): void {
  const st = lstatSync(at);
  const name = relative(root, at);
  if (st.isDirectory()) {
    for (const entry of readdirSync(at).sort()) if (!SKIP.has(entry)) files(root, real, join(at, entry), out, warnings);
  } else if (st.isFile()) out.push({ name, from: at });
  else if (st.isSymbolicLink()) {
    let target: string | undefined;
    try {
      target = realpathSync(at);
    } catch {
      warnings.push(`warning: ${oneLine(name)} is a link to nothing: skipped\n`);
      return;
    }
    if (!inside(real, target)) warnings.push(`warning: ${oneLine(name)} is a link out of ${oneLine(root)}: skipped\n`);
    else if (!statSync(target).isFile()) warnings.push(`warning: ${oneLine(name)} is a link to a folder or a special file: skipped\n`);
    else out.push({ name, from: target });
  } else if (st.isFIFO() || st.isSocket() || st.isCharacterDevice() || st.isBlockDevice()) {
    const kind = st.isFIFO() ? "a FIFO" : st.isSocket() ? "a socket" : "a device";
    warnings.push(`warning: ${oneLine(name)} is ${kind}: skipped\n`);
  }
}

/**
 * The hook paths present under `root`, each checked to be reached without passing through a link
 * (`.claude -> ~/.claude` would make `.claude/settings.json` the user's own file).
 */
function hookPaths(root: string, warnings: string[]): string[] {
  const found: string[] = [];
  const links = new Set<string>();
  for (const p of HOOK_PATHS) {
    const parts = p.split("/");
    let through: string | undefined;
    for (let i = 1; i < parts.length && through === undefined; i++) {
      const folder = parts.slice(0, i).join("/");
      try {
        if (lstatSync(join(root, folder)).isSymbolicLink()) through = folder;
      } catch {
        break; // not there: nothing to send under it
      }
    }
    if (through !== undefined) {
      if (!links.has(through)) warnings.push(`warning: ${oneLine(through)} is a link: nothing under it is sent\n`);
      links.add(through);
      continue;
    }
    if (lstatExists(join(root, p))) found.push(p);
  }
  return found;
}

function lstatExists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

async function tarGz(sent: Sent[]): Promise<Buffer> {
  const p = pack();
  const chunks: Buffer[] = [];
  p.on("data", (c: unknown) => chunks.push(c as Buffer));
  const ended = new Promise<void>((r) => p.on("end", () => r()));
  for (const { name, from } of sent) {
    const mode = statSync(from).mode & 0o777;
    await new Promise<void>((res, rej) => p.entry({ name, mode }, readFileSync(from), (e) => (e ? rej(e) : res())));
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
  const names: Sent[] = [];
  const skipped: string[] = [];
  const real = realpathSync(dir);
  if (values.all) files(dir, real, dir, names, skipped);
  else for (const p of hookPaths(dir, skipped)) files(dir, real, join(dir, p), names, skipped);
  if (names.length === 0) return { stdout: "", stderr: `${skipped.join("")}hookbox: no hook files in ${dir} (looked for ${HOOK_PATHS.join(", ")}; --all sends the whole folder)\n`, code: 65 };
  const archive = await tarGz(names);
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
