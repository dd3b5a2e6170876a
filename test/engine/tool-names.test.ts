/**
 * Gemini BeforeToolSelection tool lists through the whole engine, with a runner that answers by
 * command: what one event holds of its hooks' lists is bounded (MAX_EVENT_TOOL_NAMES).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createEngine, type EventRequest, type RunRequest, type RunResult, type Runner } from "../../engine/index.js";
import { parseConfig } from "../../engine/config.js";
import { loadRepositoryHooks } from "../../engine/repository.js";
import { MAX_EVENT_TOOL_NAMES, MAX_TOOL_NAMES } from "../../engine/verdict.js";

/** `list-K-N`: a toolConfig of N names, t<K>_0 … (each list its own names) */
const runner = (kind: Runner["kind"]): Runner => ({
  kind,
  run(request: RunRequest): Promise<RunResult> {
    const [, k, n] = /^list-(\d+)-(\d+)$/.exec(request.command)!;
    const toolConfig = { mode: "AUTO", allowedFunctionNames: Array.from({ length: Number(n) }, (_, i) => `t${k}_${String(i).padStart(4, "0")}`) };
    return Promise.resolve({ outcome: "exited", exitCode: 0, stdout: JSON.stringify({ hookSpecificOutput: { toolConfig } }), stderr: "", durationMs: 1, startMs: 0 });
  },
});

/** `lists(i)`: whose names hook i lists (its own by default) */
async function listing(count: number, names = MAX_TOOL_NAMES, lists = (i: number) => i): Promise<EventRequest> {
  const dir = mkdtempSync(join(tmpdir(), "hookbox-tools-"));
  mkdirSync(join(dir, ".gemini"));
  const hooks = Array.from({ length: count }, (_, i) => ({ type: "command", name: `list-${i}`, command: `list-${lists(i)}-${names}` }));
  writeFileSync(join(dir, ".gemini/settings.json"), JSON.stringify({ hooks: { BeforeToolSelection: [{ hooks }] } }));
  const body = { session_id: "s", hook_event_name: "BeforeToolSelection", llm_request: { model: "m", messages: [], config: {} } };
  return { body, raw: Buffer.from(JSON.stringify(body)), tenant: { name: "t", repositoryHooks: true }, interactive: true, format: "gemini", workspace: { dir, hooks: await loadRepositoryHooks(dir, 60_000) } };
}

describe(`an event's hooks' tool lists, held together to MAX_EVENT_TOOL_NAMES (${MAX_EVENT_TOOL_NAMES})`, () => {
  const engine = createEngine({ config: parseConfig("test.toml", "[sandbox]\nmax_containers_per_event = 64\n"), runners: { host: runner("host"), container: runner("container") } });
  const cuts = (r: { hooks: { name: string; rule: string }[] }) => r.hooks.filter((h) => /MAX_EVENT_TOOL_NAMES/.test(h.rule)).map((h) => /its list cut at (\d+) names: the event's hooks that finished before it listed (\d+)/.exec(h.rule)?.slice(1).join(" of "));

  it("keeps every list of hooks that list exactly that many names", async () => {
    const r = await engine.handleEvent(await listing(MAX_EVENT_TOOL_NAMES / MAX_TOOL_NAMES));
    expect(cuts(r)).toEqual([]);
    expect((r.output as { hookSpecificOutput: { toolConfig: { allowedFunctionNames: string[] } } }).hookSpecificOutput.toolConfig.allowedFunctionNames).toHaveLength(MAX_TOOL_NAMES);
  });

  it("cuts the lists past it to what is left, saying so in each hook's record — a list cut to no name adds no tool to its tier's join", async () => {
    const r = await engine.handleEvent(await listing(MAX_EVENT_TOOL_NAMES / MAX_TOOL_NAMES + 2));
    expect(cuts(r)).toEqual([`0 of ${MAX_EVENT_TOOL_NAMES}`, `0 of ${MAX_EVENT_TOOL_NAMES}`]);
    const names = (r.output as { hookSpecificOutput: { toolConfig: { mode: string; allowedFunctionNames: string[] } } }).hookSpecificOutput.toolConfig;
    expect(names.mode).toBe("AUTO");
    expect(names.allowedFunctionNames).toHaveLength(MAX_TOOL_NAMES);
  });

  it("cuts the one list that passes it to the names left, saying how many came before it", async () => {
    const per = 1000;
    const r = await engine.handleEvent(await listing(Math.ceil(MAX_EVENT_TOOL_NAMES / per), per));
    expect(r.hooks).toHaveLength(17);
    const before = Math.floor(MAX_EVENT_TOOL_NAMES / per) * per;
    expect(cuts(r)).toEqual([`${MAX_EVENT_TOOL_NAMES - before} of ${before}`]);
  });

  it("answers no name a cut list lost: seventeen lists of the same 1000 names use up the room, and an eighteenth list's new names are not allowed", async () => {
    const r = await engine.handleEvent(await listing(18, 1000, (i) => (i < 17 ? 0 : 1)));
    expect(cuts(r)).toEqual([`384 of 16000`, `0 of ${MAX_EVENT_TOOL_NAMES}`]);
    const allowed = (r.output as { hookSpecificOutput: { toolConfig: { allowedFunctionNames: string[] } } }).hookSpecificOutput.toolConfig.allowedFunctionNames;
    // the join has room for 24 more (MAX_TOOL_NAMES): uncut, the last list's first names would fill it
    expect(allowed).toHaveLength(1000);
    expect(allowed.filter((n) => n.startsWith("t1_"))).toEqual([]);
  });
});
