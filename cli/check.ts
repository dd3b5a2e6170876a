/**
 * @module `hookbox check CONFIG [--workspace DIR]`: validates a configuration (and a repository's hook
 * files) and lists, per event, the hooks it would run in order.
 */
import { statSync } from "node:fs";
import { parseArgs } from "node:util";
import { ConfigError, EVENT_NAMES, loadConfig, loadRepositoryHooksSync, resolveEventName, type HookDef } from "../engine/index.js";
import { oneLine } from "./terminal.js";

export function check(argv: string[], env: NodeJS.ProcessEnv): { stdout: string; stderr: string; code: number } {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { workspace: { type: "string" } } });
  const file = positionals[0];
  if (!file) return { stdout: "", stderr: "usage: hookbox check CONFIG [--workspace DIR]\n", code: 64 };
  // A folder that is not there holds no hooks: said, never an "ok" for a repository never read.
  if (values.workspace !== undefined && !statSync(values.workspace, { throwIfNoEntry: false })?.isDirectory())
    return { stdout: "", stderr: `hookbox: --workspace ${oneLine(values.workspace)} is not a folder\n`, code: 66 };
  try {
    const config = loadConfig(file, env);
    const repositorySet = values.workspace ? loadRepositoryHooksSync(values.workspace, config.sandbox.maxTimeoutMs) : undefined;
    const repository = repositorySet?.hooks ?? [];
    const all: HookDef[] = [...config.policy.hooks, ...(config.hooksEnabled ? [...config.service.hooks, ...config.extension.hooks, ...repository] : [])];
    const lines = [`${oneLine(file)}: ok — ${config.tenants.length} tenant(s), runtime ${config.sandbox.runtime}, image ${oneLine(config.sandbox.image)}`];
    if (!config.hooksEnabled) lines.push("[hooks] enabled = false: only policy hooks run");
    const points = [...new Set(EVENT_NAMES.map((n) => resolveEventName(n)!.point as string))];
    for (const point of points) {
      const hooks = all.filter((h) => h.point === point);
      if (hooks.length === 0) continue;
      lines.push(`${point}:`);
      hooks.forEach((h, i) =>
        // Names, matchers and places come from the files, a repository's among them: escaped for the terminal.
        lines.push(oneLine(`  ${i + 1}. ${h.name}  [${h.source}, ${h.source === "policy" ? "host" : "container"}, ${h.format} rules${h.matcher ? `, matcher ${h.matcher.source}` : ""}, timeout ${h.timeoutMs} ms${h.batch ? ", parallel" : ""}]  ${h.origin}`)),
      );
    }
    // A repository's unknown keys, events and hook types, and the files it cannot read: what was skipped, with file and line (SERVICE.md §8).
    for (const w of [...config.warnings, ...(repositorySet?.warnings ?? [])]) lines.push(`warning: ${oneLine(w)}`);
    return { stdout: `${lines.join("\n")}\n`, stderr: "", code: 0 };
  } catch (err) {
    if (err instanceof ConfigError) return { stdout: "", stderr: `hookbox: configuration error: ${oneLine(err.message)}\n`, code: 1 };
    throw err;
  }
}
