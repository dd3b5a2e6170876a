/**
 * @module A repository's own hooks, from an uploaded workspace (SERVICE.md §2): `.github/hooks/*.json`
 * (Copilot), `.copilot-shell/config.toml` (cosh), `.claude/settings.json` (Claude Code). They always
 * run in containers.
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { ConfigError } from "./errors.js";
import { loadClaudeSettings } from "./formats/claude-settings.js";
import { loadCoshTable } from "./formats/cosh-toml.js";
import { loadCopilotFile } from "./formats/copilot-json.js";
import { readJson, readToml, type LoadContext } from "./formats/shared.js";
import { mergeHookSets, type HookSet } from "./hooks.js";

export function loadRepositoryHooks(dir: string, maxTimeoutMs: number): HookSet {
  const ctx: LoadContext = { source: "repository", maxTimeoutMs };
  const read = (path: string) => {
    const text = readFileSync(path, "utf8");
    return { name: relative(dir, path), text };
  };
  const sets: HookSet[] = [];
  try {
    const hooksDir = join(dir, ".github/hooks");
    if (existsSync(hooksDir)) {
      for (const f of readdirSync(hooksDir).filter((n) => n.endsWith(".json")).sort()) {
        const { name, text } = read(join(hooksDir, f));
        sets.push(loadCopilotFile(readJson(name, text), ctx));
      }
    }
    const cosh = join(dir, ".copilot-shell/config.toml");
    if (existsSync(cosh)) {
      const { name, text } = read(cosh);
      const parsed = readToml(name, text);
      // A cosh config holds more than hooks; only [hooks] matters here.
      const table = (parsed.value as Record<string, unknown>).hooks;
      sets.push(loadCoshTable(parsed, ["hooks"], table, ctx, ["enabled", "parallel", "sequential"]));
    }
    const claude = join(dir, ".claude/settings.json");
    if (existsSync(claude)) {
      const { name, text } = read(claude);
      sets.push(loadClaudeSettings(readJson(name, text), ctx));
    }
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(relative(dir, dir) || ".", `cannot read the repository's hook files: ${(err as Error).message}`);
  }
  return mergeHookSets(sets);
}
