/**
 * @module The bench's real-traffic rows: an agent's forwarder end to end (Node and shell) next to
 * `node -e 0` and `curl`; a repository hook round-robin over many workspaces at a steady arrival
 * rate, never waiting for the pool; a sustained arrival rate above what the engine churns, for a
 * minute: latency, 429s and the service's memory.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { pack } from "tar-stream";
import { FORWARD_SCRIPT } from "../cli/forward-script.js";
import { get, post, unboundedAgent } from "./http-client.js";
import { startService, TOKEN } from "./service-process.js";
import { percentiles, type Figures } from "./stats.js";

const log = (s: string) => process.stderr.write(`[bench] ${s}\n`);

/** Runs a command with `input` on stdin; resolves its wall time in ms. */
function spawnTimed(file: string, args: string[], input: string, env: NodeJS.ProcessEnv = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(file, args, { env: { PATH: process.env.PATH ?? "", ...env }, stdio: ["pipe", "ignore", "ignore"] });
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(performance.now() - t0) : reject(new Error(`${file} exited ${code}`))));
    child.stdin.end(input);
  });
}

async function times(n: number, fn: () => Promise<number>): Promise<number[]> {
  for (let i = 0; i < Math.min(5, n); i++) await fn();
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(await fn());
  return out;
}

export interface ForwarderRows {
  nodeStart: Figures;
  curl: Figures;
  nodeForward: Figures;
  shellForward: Figures;
  rows: Figures[];
}

/**
 * What an agent pays per tool call: `hookbox forward` and the shell forwarder end to end (process
 * start, post, answer), for an event matching no hook and one with a policy hook, next to the
 * start of `node -e 0` and `curl` posting the same event.
 */
export async function forwarderRows(url: string, n: number, events: { noHook: string; policy: string }): Promise<ForwarderRows> {
  const dir = mkdtempSync(join(tmpdir(), "hookbox-bench-forward-"));
  const script = join(dir, "forward.sh");
  writeFileSync(script, FORWARD_SCRIPT);
  const env = { HOOKBOX_TOKEN: TOKEN, XDG_CACHE_HOME: dir };
  const node = (event: string, body: string) => () => spawnTimed(process.execPath, ["dist/cli/hookbox.cjs", "forward", "--url", url, "--event", event, "--format", "claude"], body, env);
  const shell = (event: string, body: string) => () => spawnTimed("/bin/sh", [script, "--url", url, "--event", event, "--format", "claude"], body, env);
  log("forwarders: node -e 0, curl, hookbox forward, forward.sh");
  const nodeStart = percentiles("baseline: node -e 0", await times(n, () => spawnTimed(process.execPath, ["-e", "0"], "")));
  const curlArgs = ["-sS", "-o", "/dev/null", "-X", "POST", "--data-binary", "@-", "-H", "content-type: application/json", "-H", `authorization: Bearer ${TOKEN}`, `${url}/v1/events/SessionStart?format=claude`];
  const curl = percentiles("baseline: curl posting an event matching no hook", await times(n, () => spawnTimed("curl", curlArgs, events.noHook)));
  const nodeForward = percentiles("forwarder: hookbox forward, event matching no hook", await times(n, node("SessionStart", events.noHook)));
  const shellForward = percentiles("forwarder: forward.sh, event matching no hook", await times(n, shell("SessionStart", events.noHook)));
  const nodePolicy = percentiles("forwarder: hookbox forward, one policy hook", await times(n, node("PreToolUse", events.policy)));
  const shellPolicy = percentiles("forwarder: forward.sh, one policy hook", await times(n, shell("PreToolUse", events.policy)));
  return { nodeStart, curl, nodeForward, shellForward, rows: [nodeStart, curl, nodeForward, shellForward, nodePolicy, shellPolicy] };
}

/** A workspace as `hookbox workspace push` sends it: a Copilot hook file (running `hook`) and a README. */
function workspaceArchive(hook: string, id: number): Promise<Buffer> {
  const tar = pack();
  const hookFile = JSON.stringify({ version: 1, hooks: { preToolUse: [{ type: "command", bash: hook }] } });
  tar.entry({ name: ".github/hooks/bench.json" }, hookFile);
  tar.entry({ name: "README.md" }, `workspace ${id}\n`);
  tar.finalize();
  const chunks: Buffer[] = [];
  return new Promise((resolve, reject) => {
    tar.on("data", (c: unknown) => chunks.push(c as Buffer));
    tar.on("end", () => resolve(gzipSync(Buffer.concat(chunks))));
    tar.on("error", reject);
  });
}

/** Fires `count` calls of `fn` at `ratePerS`, each at its time whether or not the earlier ones are done. */
async function openLoop<T>(count: number, ratePerS: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const t0 = performance.now();
  const pending: Promise<T>[] = [];
  for (let i = 0; i < count; i++) {
    const wait = t0 + (i * 1000) / ratePerS - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    pending.push(fn(i));
  }
  return Promise.all(pending);
}

export interface WorkspaceRow extends Figures {
  workspaces: number;
  warmShare: number;
}

/**
 * A repository hook (in each workspace's files) over 1, 10, 100 and 1000 workspaces — round-robin
 * where a row has an event for each, else each event on a workspace no earlier event used — at a
 * steady `ratePerS` below the engine's churn rate; requests never wait for the pool.
 */
export async function workspaceRows(port: number, hook: string, event: string, ratePerS: number, perRow: number): Promise<WorkspaceRow[]> {
  const counts = [1, 10, 100, 1000];
  const svc = await startService("[sandbox]\npool_size = 2\npool_max = 16\n", port, "max_workspaces = 2000");
  try {
    log(`workspaces: uploading ${counts.at(-1)}`);
    for (let i = 0; i < counts.at(-1)!; i++) {
      const res = await fetch(`${svc.url}/v1/workspaces/ws-${i}`, { method: "PUT", headers: { authorization: `Bearer ${TOKEN}` }, body: await workspaceArchive(hook, i) });
      if (!res.ok) throw new Error(`upload ws-${i}: ${res.status} ${await res.text()}`);
    }
    const rows: WorkspaceRow[] = [];
    /** ws-0 … ws-(touched - 1) have had events (their archives are cached) */
    let touched = 0;
    for (const count of counts) {
      // Round-robin where the row has an event for each workspace; else every event on a workspace
      // of its own that no earlier row used: a row over 1000 never measures the 100 already warm.
      const spread = perRow < count;
      const workspaceOf = (i: number) => (spread ? touched + Math.floor((i * (count - touched)) / perRow) : i % count);
      log(`workspaces: repository hook over ${count} at ${ratePerS.toFixed(1)}/s`);
      const results = await openLoop(perRow, ratePerS, async (i) => {
        const t0 = performance.now();
        const res = await post(`${svc.url}/v1/events?workspace=ws-${workspaceOf(i)}`, event, TOKEN);
        const ms = performance.now() - t0;
        const body = JSON.parse(res.body) as { event_id?: string; hooks?: Array<{ source?: string }> };
        if (res.status !== 200 || !body.event_id || !body.hooks?.some((h) => h.source === "repository")) throw new Error(`workspace event: ${res.status} ${res.body}`);
        return { ms, id: body.event_id };
      });
      // Whether each ran in a pre-started container: its trace says (`warm`), read once the row is done.
      const warm: boolean[] = [];
      for (const r of results) {
        const text = await get(`${svc.url}/v1/events/${r.id}`, TOKEN);
        let trace: { hooks?: Array<{ source?: string; warm?: boolean }> } | undefined;
        try {
          trace = JSON.parse(text) as typeof trace;
        } catch {
          // an error page, not a trace: below
        }
        const hook = trace?.hooks?.find((h) => h.source === "repository");
        // A trace that is gone or says nothing of the hook would count as a cold run: the row would lie.
        if (typeof hook?.warm !== "boolean") throw new Error(`trace of ${r.id}: no repository hook's warm in ${text.slice(0, 300)}`);
        warm.push(hook.warm);
      }
      const warmShare = warm.filter(Boolean).length / warm.length;
      const how = spread ? `each event on one of ws-${touched}…ws-${count - 1} no event used before` : "round-robin";
      const figures = percentiles(`hookbox: repository hook, ${count} workspace${count > 1 ? "s" : ""}`, results.map((r) => r.ms), `${how}; ${ratePerS.toFixed(1)}/s steady, ${(warmShare * 100).toFixed(0)} % warm`);
      rows.push({ ...figures, workspaces: count, warmShare });
      touched = Math.max(touched, spread ? count : Math.min(count, perRow));
    }
    return rows;
  } finally {
    await svc.stop();
  }
}

/** Resident memory of a process, in MiB. */
function rssMiB(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(m?.[1] ?? 0) / 1024;
}

export interface OverloadRows {
  answered: Figures;
  refused: Figures;
  rssStartMiB: number;
  rssEndMiB: number;
  rssMaxMiB: number;
}

/**
 * Events with one container hook arriving at `ratePerS` (above the engine's churn rate) for
 * `durationMs`: what is answered, what is refused (429), and the service's memory along the way.
 */
export async function overloadRows(port: number, toml: string, event: string, ratePerS: number, durationMs: number): Promise<OverloadRows> {
  const svc = await startService(toml, port);
  try {
    log(`overload: ${ratePerS.toFixed(1)}/s for ${(durationMs / 1000).toFixed(0)} s`);
    const rss: number[] = [];
    const sampler = setInterval(() => rss.push(rssMiB(svc.pid)), 1_000);
    const count = Math.round((durationMs / 1000) * ratePerS);
    const t0 = performance.now();
    const results = await openLoop(count, ratePerS, async () => {
      const s = performance.now();
      const res = await post(`${svc.url}/v1/events`, event, TOKEN, unboundedAgent);
      return { status: res.status, ms: performance.now() - s };
    });
    const seconds = (performance.now() - t0) / 1000;
    clearInterval(sampler);
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 429);
    const other = results.length - ok.length - refused.length;
    const third = (k: number) => rss[Math.min(rss.length - 1, Math.floor((k * rss.length) / 3))]?.toFixed(0);
    const note = `${ratePerS.toFixed(1)}/s offered for ${(durationMs / 1000).toFixed(0)} s; service RSS ${third(0)} → ${third(1)} → ${third(2)} → ${rss.at(-1)?.toFixed(0)} MiB${other ? `; ${other} other statuses` : ""}`;
    return {
      answered: { ...percentiles("overload: answered (200), one container hook", ok.map((r) => r.ms), note), rate: ok.length / seconds },
      refused: { ...percentiles("overload: refused (429)", refused.map((r) => r.ms), `${refused.length} of ${results.length}`), rate: refused.length / seconds },
      rssStartMiB: rss[Math.min(4, rss.length - 1)] ?? 0,
      rssEndMiB: rss.at(-1) ?? 0,
      rssMaxMiB: Math.max(0, ...rss),
    };
  } finally {
    await svc.stop();
  }
}

/** p50 of an event matching no hook with Node's fetch as the client (its own keep-alive pool). */
export async function fetchRow(url: string, body: string, n: number): Promise<Figures> {
  const once = async () => {
    const t0 = performance.now();
    const res = await fetch(`${url}/v1/events`, { method: "POST", body, headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" } });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`status ${res.status}`);
    return performance.now() - t0;
  };
  for (let i = 0; i < 200; i++) await once();
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(await once());
  return percentiles("hookbox: event matching no hook, client fetch", out);
}
