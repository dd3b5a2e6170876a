/**
 * Tolerant loading, strict reporting (SERVICE.md §8): one repository hook file that cannot be read
 * is skipped with a warning naming its file, line and why — every other file still loads, a Copilot
 * guard beside it included — and only a bound on all of a workspace's files together refuses the
 * upload. Each agent's file is skipped whole, or one entry of it alone, as that agent does; a hook
 * past one of hookbox's own limits is skipped alone, never run unbounded. Pure: files in, hook set out.
 */
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../engine/errors.js";
import { resolveEventName } from "../../engine/events.js";
import { emptyHookSet, type HookSet } from "../../engine/hooks.js";
import { selectHooks } from "../../engine/match.js";
import { MAX_LOCATED_CHILDREN, MAX_LOCATED_VALUES, tomlLocator } from "../../engine/formats/locate.js";
import { effectiveDecisions } from "../../engine/formats/registry.js";
import { WorkspaceLimitError } from "../../engine/formats/shared.js";
import { execFormCommand, MAX_EXEC_COMMAND_BYTES } from "../../engine/formats/claude-settings.js";
import { loadRepositoryHooks, loadRepositoryHooksSync } from "../../engine/repository.js";

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "hookbox-tolerant-"));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

/** The service's reading and `hookbox check`'s, which must agree. */
async function load(files: Record<string, string>): Promise<HookSet> {
  const dir = tree(files);
  const set = await loadRepositoryHooks(dir, 60_000);
  const checked = loadRepositoryHooksSync(dir, 60_000);
  expect(checked.warnings).toEqual(set.warnings);
  expect(checked.hooks.map((h) => h.command)).toEqual(set.hooks.map((h) => h.command));
  return set;
}

const GUARD = { ".github/hooks/guard.json": JSON.stringify({ version: 1, hooks: { preToolUse: [{ type: "command", bash: "guard.sh" }] } }) };
const SKIPPED = "; the file is skipped: none of its hooks are read";
const lines = (...l: string[]) => l.join("\n");

describe("one .claude/settings.json that cannot be read, beside a Copilot guard", () => {
  it.each<[string, string, RegExp]>([
    ["a // comment", lines("{", "  // the team's guards", '  "hooks": { "PreToolUse": [ { "hooks": [ { "type": "command", "command": "claude.sh" } ] } ] }', "}"), /^\.claude\/settings\.json:2:3: invalid JSON: comments are not JSON/],
    ["nesting deeper than 64 levels in an unrelated key", lines("{", `  "permissions": ${"[".repeat(70)}${"]".repeat(70)},`, '  "hooks": { "PreToolUse": [ { "hooks": [ { "type": "command", "command": "claude.sh" } ] } ] }', "}"), /^\.claude\/settings\.json:2:\d+: nested deeper than 64 levels/],
    ['"timeout": "30" (a string)', lines("{", '  "hooks": { "PreToolUse": [ { "hooks": [', '    { "type": "command", "command": "claude.sh" },', '    { "type": "command", "command": "slow.sh", "timeout": "30" }', "  ] } ] }", "}"), /^\.claude\/settings\.json:4:\d+: hooks\.PreToolUse\[0\]\.hooks\[1\]\.timeout: /],
    ["a handler with no command", lines("{", '  "hooks": { "PreToolUse": [ { "hooks": [', '    { "type": "command", "command": "claude.sh" },', '    { "type": "command" }', "  ] } ] }", "}"), /^\.claude\/settings\.json:4:\d+: hooks\.PreToolUse\[0\]\.hooks\[1\]: a "command" hook needs "command"/],
    ["an event whose value is an object, not a list", lines("{", '  "hooks": {', '    "Stop": [ { "hooks": [ { "type": "command", "command": "claude.sh" } ] } ],', '    "PreToolUse": { "hooks": [ { "type": "command", "command": "x.sh" } ] }', "  }", "}"), /^\.claude\/settings\.json:4:\d+: hooks\.PreToolUse: /],
  ])("skips the settings file whole for %s, as Claude Code skips a file with errors; the guard still loads", async (_what, settings, warning) => {
    const set = await load({ ".claude/settings.json": settings, ...GUARD });
    expect(set.hooks.map((h) => h.command)).toEqual(["guard.sh"]);
    expect(set.warnings).toEqual([expect.stringMatching(warning)]);
    expect(set.warnings[0]).toMatch(new RegExp(`${SKIPPED.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`));
  });

  it("reads a settings file that opens with a UTF-8 byte-order mark, as Claude Code's CLI does, its lines and columns as written", async () => {
    const settings = lines("\uFEFF{", '  "hooks": { "PreToolUse": [ { "matcher": "Bash", "hooks": [', '    { "type": "command", "command": "claude.sh", "colour": "red" }', "  ] } ] }", "}");
    const set = await load({ ".claude/settings.json": settings, ...GUARD });
    expect(set.hooks.map((h) => [h.command, h.origin])).toEqual([["guard.sh", ".github/hooks/guard.json:1"], ["claude.sh", ".claude/settings.json:3"]]);
    expect(set.warnings).toEqual(['.claude/settings.json:3: hooks.PreToolUse[0].hooks[0].colour: unknown key "colour"; skipped']);
  });

  it("skips a command of about 100 KB alone (MAX_COMMAND_BYTES), never running it: the file's other hooks and the guard load", async () => {
    const settings = lines("{", '  "hooks": { "PreToolUse": [ { "hooks": [', '    { "type": "command", "command": "claude.sh" },', `    { "type": "command", "command": "true #${"x".repeat(100_000)}" }`, "  ] } ] }", "}");
    const set = await load({ ".claude/settings.json": settings, ...GUARD });
    expect(set.hooks.map((h) => h.command)).toEqual(["guard.sh", "claude.sh"]);
    expect(set.warnings).toEqual([expect.stringMatching(/^\.claude\/settings\.json:4: hooks\.PreToolUse\[0\]\.hooks\[1\]\.command: a command longer than 98304 bytes cannot be run \(MAX_COMMAND_BYTES.*; skipped \(the file's other hooks load\)$/)]);
  });

  it(`loads an exec-form hook whose program and arguments, quoted for sh, come to MAX_EXEC_COMMAND_BYTES (${MAX_EXEC_COMMAND_BYTES}), and skips one a byte longer at its args`, async () => {
    // the bytes around the argument in `exec prog 'xx…'`
    const around = Buffer.byteLength(execFormCommand("prog", [""]));
    const entry = (n: number) => JSON.stringify({ type: "command", command: "prog", args: ["x".repeat(n)] });
    const settings = (n: number) => lines("{", '  "hooks": { "PreToolUse": [ { "hooks": [', '    { "type": "command", "command": "claude.sh" },', `    ${entry(n)}`, "  ] } ] }", "}");
    const at = await load({ ".claude/settings.json": settings(MAX_EXEC_COMMAND_BYTES - around), ...GUARD });
    expect(at.warnings).toEqual([]);
    expect(at.hooks.map((h) => Buffer.byteLength(h.command))).toEqual([8, 9, MAX_EXEC_COMMAND_BYTES]);
    expect(at.warnings).toEqual([]);
    const past = await load({ ".claude/settings.json": settings(MAX_EXEC_COMMAND_BYTES - around + 1), ...GUARD });
    expect(past.hooks.map((h) => h.command)).toEqual(["guard.sh", "claude.sh"]);
    expect(past.warnings).toEqual([expect.stringMatching(/^\.claude\/settings\.json:4: hooks\.PreToolUse\[0\]\.hooks\[1\]\.args: .*MAX_EXEC_COMMAND_BYTES.*skipped/)]);
  });

  it("skips the hooks of a regex matcher over 512 characters (MAX_MATCHER_CHARS): never run for every call, the other groups and the guard load", async () => {
    const settings = lines("{", '  "hooks": { "PreToolUse": [', `    { "matcher": "(${"a|".repeat(300)}b)", "hooks": [ { "type": "command", "command": "long.sh" } ] },`, '    { "matcher": "Bash", "hooks": [ { "type": "command", "command": "claude.sh" } ] }', "  ] }", "}");
    const set = await load({ ".claude/settings.json": settings, ...GUARD });
    expect(set.hooks.map((h) => h.command)).toEqual(["guard.sh", "claude.sh"]);
    expect(set.warnings).toEqual([expect.stringMatching(/^\.claude\/settings\.json:3: hooks\.PreToolUse\[0\]\.matcher: matcher past hookbox's limits .*longer than 512 characters — the hooks it selects are not run; skipped/)]);
  });

  it("skips a file past max_hook_file_bytes unread: the guard loads", async () => {
    const dir = tree({ ".claude/settings.json": `{"hooks": {}, "pad": "${"x".repeat(2048)}"}`, ...GUARD });
    const set = await loadRepositoryHooks(dir, 60_000, { maxHookFileBytes: 1024, maxHooks: 1000 });
    expect(set.hooks.map((h) => h.command)).toEqual(["guard.sh"]);
    expect(set.warnings).toEqual([`.claude/settings.json: the file is larger than 1024 bytes (server.max_hook_file_bytes)${SKIPPED}`]);
  });

  it("skips a hook folder reached through a link (.github/hooks -> elsewhere) unread: the other agents' files load", async () => {
    const dir = tree({ ".claude/settings.json": JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: "command", command: "claude.sh" }] }] } }), "elsewhere/g.json": GUARD[".github/hooks/guard.json"] });
    mkdirSync(join(dir, ".github"));
    symlinkSync("../elsewhere", join(dir, ".github/hooks"));
    for (const set of [await loadRepositoryHooks(dir, 60_000), loadRepositoryHooksSync(dir, 60_000)]) {
      expect(set.hooks.map((h) => h.command)).toEqual(["claude.sh"]);
      expect(set.warnings).toEqual([".github/hooks: .github/hooks is a symbolic link: repository hook files are read only as regular files, never through a link; the folder is skipped: none of its hook files are read"]);
    }
  });

  it("gives back what a skipped file counted of max_repository_hooks: its hooks run nowhere", async () => {
    const handlers = (n: number) => Array.from({ length: n }, (_, i) => ({ type: "command", command: `c${i}.sh` }));
    // the guard, then two hooks of the Claude file before its fault, then two of Gemini's: three at most
    const dir = tree({
      ".claude/settings.json": JSON.stringify({ hooks: { PreToolUse: [{ hooks: [...handlers(2), { type: "command" }] }] } }),
      ".gemini/settings.json": JSON.stringify({ hooks: { BeforeTool: [{ hooks: [{ type: "command", command: "g0.sh" }, { type: "command", command: "g1.sh" }] }] } }),
      ...GUARD,
    });
    const set = await loadRepositoryHooks(dir, 60_000, { maxHookFileBytes: 1 << 20, maxHooks: 3 });
    expect(set.hooks.map((h) => h.command)).toEqual(["guard.sh", "g0.sh", "g1.sh"]);
  });
});

describe("what still refuses the upload: bounds on all of a workspace's files together", () => {
  it("more hooks than max_repository_hooks across its files is a WorkspaceLimitError (400 workspace_hooks_invalid), at the hook past it", async () => {
    const dir = tree({ ".claude/settings.json": JSON.stringify({ hooks: { PreToolUse: [{ hooks: [{ type: "command", command: "a.sh" }] }] } }), ...GUARD });
    const err = await loadRepositoryHooks(dir, 60_000, { maxHookFileBytes: 1 << 20, maxHooks: 1 }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(WorkspaceLimitError);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(/^\.claude\/settings\.json:1:\d+: hooks\.PreToolUse\[0\]\.hooks\[0\]: the repository declares more than 1 hooks \(server\.max_repository_hooks\)$/);
    expect(() => loadRepositoryHooksSync(dir, 60_000, { maxHookFileBytes: 1 << 20, maxHooks: 1 })).toThrow(WorkspaceLimitError);
  });

  it("its hook files together past 4 × max_hook_file_bytes refuse it", async () => {
    const file = (i: number) => JSON.stringify({ version: 1, hooks: { preToolUse: [{ type: "command", bash: `g${i}.sh` }] }, pad: "x".repeat(900) });
    const dir = tree(Object.fromEntries([0, 1, 2, 3, 4].map((i) => [`.github/hooks/h${i}.json`, file(i)])));
    await expect(loadRepositoryHooks(dir, 60_000, { maxHookFileBytes: 1024, maxHooks: 1000 })).rejects.toThrow(WorkspaceLimitError);
  });
});

describe("each agent's file skipped whole, or one entry of it alone, as that agent does", () => {
  const bad = (format: string): Record<string, string> => {
    switch (format) {
      case "copilot": return { ".github/hooks/a.json": JSON.stringify({ version: 1, hooks: { preToolUse: [{ type: "command", bash: "bad.sh", timeoutSec: "30" }, { type: "command", bash: "ok.sh" }] } }) };
      case "gemini": return { ".gemini/settings.json": JSON.stringify({ hooks: { BeforeTool: [{ hooks: [{ type: "command", command: "bad.sh", timeout: "30" }, { type: "command", command: "ok.sh" }] }] } }) };
      case "cosh": return { ".copilot-shell/config.toml": '[[hooks.PreToolUse]]\nname = "bad"\ncommand = "bad.sh"\ntimeout = "30"\n\n[[hooks.PreToolUse]]\nname = "ok"\ncommand = "ok.sh"\n' };
      case "cursor": return { ".cursor/hooks.json": JSON.stringify({ version: 1, hooks: { preToolUse: [{ command: "bad.sh", timeout: "30" }, { command: "ok.sh" }] } }) };
      case "codex": return { ".codex/hooks.json": JSON.stringify({ hooks: { PreToolUse: [{ hooks: [{ type: "command", command: "bad.sh", timeout: "30" }, { type: "command", command: "ok.sh" }] }] } }) };
      default: return { ".codex/config.toml": '[[hooks.PreToolUse]]\n[[hooks.PreToolUse.hooks]]\ntype = "command"\ncommand = "bad.sh"\ntimeout = "30"\n[[hooks.PreToolUse.hooks]]\ntype = "command"\ncommand = "ok.sh"\n' };
    }
  };
  it.each([
    ["copilot", ["ok.sh", "guard.sh"], /^\.github\/hooks\/a\.json:1: hooks\.preToolUse\[0\]\.timeoutSec: .*; skipped \(the file's other hooks load\)$/],
    ["cosh", ["guard.sh", "ok.sh"], /^\.copilot-shell\/config\.toml:4: hooks\.PreToolUse\[0\]\.timeout: .*; skipped \(the file's other hooks load\)$/],
    ["gemini", ["guard.sh", "ok.sh"], /^\.gemini\/settings\.json:1: hooks\.BeforeTool\[0\]\.hooks\[0\]\.timeout: .*; skipped \(the file's other hooks load\)$/],
    ["cursor", ["guard.sh"], /^\.cursor\/hooks\.json:1:\d+: hooks\.preToolUse\[0\]\.timeout: .*; the file is skipped/],
    ["codex", ["guard.sh"], /^\.codex\/hooks\.json:1:\d+: hooks\.PreToolUse\[0\]\.hooks\[0\]\.timeout: .*; the file is skipped/],
    ["codex-toml", ["guard.sh"], /^\.codex\/config\.toml:5:1: hooks\.PreToolUse\[0\]\.hooks\[0\]\.timeout: .*; the file is skipped/],
  ])("%s: a hook whose timeout is a string", async (format, commands, warning) => {
    const set = await load({ ...bad(format), ...GUARD });
    expect(set.hooks.map((h) => h.command)).toEqual(commands);
    expect(set.warnings).toEqual([expect.stringMatching(warning)]);
  });

  it("skips an event that is not a list in cosh's config.toml alone, as in Copilot's and Gemini's files", async () => {
    const set = await load({ ".copilot-shell/config.toml": '[hooks]\nStop = 3\n\n[[hooks.PreToolUse]]\nname = "ok"\ncommand = "ok.sh"\n' });
    expect(set.hooks.map((h) => h.command)).toEqual(["ok.sh"]);
    expect(set.warnings).toEqual([".copilot-shell/config.toml:2: hooks.Stop: expected an array of hooks; skipped"]);
  });

  it("skips a cosh hook whose limit Docker would read as none alone: never run unbounded", async () => {
    const set = await load({ ".copilot-shell/config.toml": '[[hooks.PreToolUse]]\nname = "x"\ncommand = "x.sh"\ncpus = 0\n' });
    expect(set.hooks).toEqual([]);
    expect(set.warnings).toEqual([expect.stringMatching(/^\.copilot-shell\/config\.toml:4: hooks\.PreToolUse\[0\]\.cpus: cpus is at least 0\.01; skipped/)]);
  });
});

describe("Claude Code handler keys", () => {
  it("warns of each unknown key with file, line and key; the handler's documented keys pass unwarned", async () => {
    const settings = lines("{", '  "hooks": { "PreToolUse": [ { "hooks": [', '    { "type": "command", "command": "a.sh", "statusMessage": "checking", "once": false,', '      "comand": "typo.sh" }', "  ] } ] }", "}");
    const set = await load({ ".claude/settings.json": settings });
    expect(set.hooks.map((h) => h.command)).toEqual(["a.sh"]);
    expect(set.warnings).toEqual(['.claude/settings.json:4: hooks.PreToolUse[0].hooks[0].comand: unknown key "comand"; skipped']);
  });

  const rewake = lines("{", '  "hooks": { "PreToolUse": [ { "hooks": [', '    { "type": "command", "command": "deny.sh", "asyncRewake": true },', '    { "type": "command", "command": "inline.sh", "asyncRewake": false }', "  ] } ] }", "}");
  it('skips an "asyncRewake": true handler in .claude/settings.json, as "async": never run inline where its JSON could decide', async () => {
    const set = await load({ ".claude/settings.json": rewake });
    expect(set.hooks.map((h) => h.command)).toEqual(["inline.sh"]);
    expect(set.warnings).toEqual(['.claude/settings.json:3: hooks.PreToolUse[0].hooks[0]: "asyncRewake": true hooks decide nothing in Claude Code; skipped']);
  });

  it("runs a .codex/hooks.json handler whatever keys of Claude Code's it holds — Codex reads none of them, nor disableAllHooks — and reads a timeout of 0 as 1 s", async () => {
    const set = await load({ ".codex/hooks.json": rewake });
    expect(set.hooks.map((h) => h.command)).toEqual(["deny.sh", "inline.sh"]);
    expect(set.warnings).toEqual([expect.stringMatching(/^\.codex\/hooks\.json:3: .*unknown key "asyncRewake"/), expect.stringMatching(/^\.codex\/hooks\.json:4: .*unknown key "asyncRewake"/)]);
    const others = JSON.stringify({ disableAllHooks: "no", hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "block-rm.sh" }, { type: "command", command: "x.sh", once: "yes", args: "--fix", onFailure: "abort", shell: 1, timeout: 0 }] }] } });
    const read = await load({ ".codex/hooks.json": others });
    // (the default bounded by the loader's max_timeout, 60 s here)
    expect(read.hooks.map((h) => [h.command, h.timeoutMs])).toEqual([["block-rm.sh", 60_000], ["x.sh", 1000]]);
    expect(read.disableAll).toBe(false);
    // nulls where Codex reads an Option, and a group with no hooks, as Codex reads them
    const nulls = JSON.stringify({ hooks: { PreToolUse: [{ matcher: null, hooks: [{ type: "command", command: "guard.sh", timeout: null, statusMessage: null }] }, { matcher: "Bash" }] } });
    const kept = await load({ ".codex/hooks.json": nulls });
    expect(kept.hooks.map((h) => [h.command, h.timeoutMs])).toEqual([["guard.sh", 60_000]]);
    expect(kept.warnings).toEqual([]);
  });
});

describe("Claude Code's DirectoryAdded", () => {
  it("is a known Claude event, matched on how the directory was added (source), deciding nothing", async () => {
    expect(resolveEventName("DirectoryAdded")).toEqual({ point: "DirectoryAdded", dialect: "snake" });
    const set = await load({ ".claude/settings.json": JSON.stringify({ hooks: { DirectoryAdded: [{ matcher: "slash_command", hooks: [{ type: "command", command: "added.sh" }] }, { hooks: [{ type: "command", command: "any.sh" }] }] } }) });
    expect(set.warnings).toEqual([]);
    const point = resolveEventName("DirectoryAdded")!.point;
    const run = (source: string) => selectHooks({ policy: emptyHookSet(), service: emptyHookSet(), extension: emptyHookSet(), repository: set }, point, undefined, { hooksEnabled: true, repositoryHooks: true }, { hook_event_name: "DirectoryAdded", directory: "/repo/other", source }).map((h) => h.command);
    expect(run("slash_command")).toEqual(["added.sh", "any.sh"]);
    expect(run("register_repo_root")).toEqual(["any.sh"]);
    expect(effectiveDecisions(point, "claude").size).toBe(0);
  });

  it("is not an event another agent fires: in .cursor/hooks.json it is skipped, warned", async () => {
    const set = await load({ ".cursor/hooks.json": JSON.stringify({ version: 1, hooks: { DirectoryAdded: [{ command: "x.sh" }] } }) });
    expect(set.hooks).toEqual([]);
    expect(set.warnings).toEqual([expect.stringMatching(/"DirectoryAdded" is not an event Cursor fires/)]);
  });
});

describe("TOML lines past multi-line strings and comments", () => {
  it("reports an unknown key after a command whose multi-line string holds a line starting with [ at its own line", async () => {
    const toml = lines(
      "[[hooks.PreToolUse]]", //                 1
      'name = "guard"', //                       2
      'command = """', //                        3
      "[ -f .env ] && exit 2", //                4
      "[[ -d .git ]] || exit 2", //              5
      "exit 0", //                               6
      '"""', //                                  7
      'colour = "red"', //                       8
    );
    const set = await load({ ".copilot-shell/config.toml": toml });
    expect(set.warnings).toEqual(['.copilot-shell/config.toml:8: hooks.PreToolUse[0].colour: unknown key "colour"; skipped']);
    expect(set.hooks.map((h) => h.origin)).toEqual([".copilot-shell/config.toml:1"]);
  });

  it("does not shift later hooks' lines for a literal [[hooks.PreToolUse]] inside a string, nor for one in a comment or an array", async () => {
    const toml = lines(
      "# [[hooks.PreToolUse]] in a comment", //  1
      "[[hooks.PreToolUse]]", //                 2
      'name = "a"', //                           3
      "command = '''", //                        4
      "[[hooks.PreToolUse]]", //                 5
      "name = 'fake'", //                        6
      "'''", //                                  7
      "[[hooks.PreToolUse]]", //                 8
      'name = "b"', //                           9
      'command = "b.sh" # [x]', //               10
      "env = { A = \"[\" }", //                  11
      "[[hooks.PreToolUse]]", //                 12
      'name = "c"', //                           13
      'command = """say \\"""', //               14: an escaped quote does not close it
      "[y]", //                                  15
      '"""', //                                  16
      "timeout = 1000", //                       17
      "nope = [", //                             18
      "  [1, 2],", //                            19
      "]", //                                    20
    );
    const set = await load({ ".copilot-shell/config.toml": toml });
    expect(set.hooks.map((h) => [h.name, h.origin])).toEqual([["a", ".copilot-shell/config.toml:2"], ["b", ".copilot-shell/config.toml:8"], ["c", ".copilot-shell/config.toml:12"]]);
    expect(set.warnings).toEqual(['.copilot-shell/config.toml:18: hooks.PreToolUse[2].nope: unknown key "nope"; skipped']);
    const locate = tomlLocator(toml);
    expect(locate(["hooks", "PreToolUse", 2, "timeout"])).toEqual({ line: 17, column: 1 });
    expect(locate(["y"])).toBeUndefined();
  });

  it(`indexes at most MAX_LOCATED_CHILDREN (${MAX_LOCATED_CHILDREN}) keys of a table, the rest located at its header, and at most MAX_LOCATED_VALUES (${MAX_LOCATED_VALUES}) headers and keys in all, what stands past them at the nearest table indexed`, () => {
    const keys = (n: number, dotted = false) => Array.from({ length: n }, (_, i) => (dotted ? `a.k${i} = 1` : `k${i} = 1`)).join("\n");
    // [hooks.x] at line 1, its keys from line 2
    const wide = tomlLocator(`[hooks.x]\n${keys(MAX_LOCATED_CHILDREN + 5, true)}\n`, ["hooks"]);
    expect(wide(["hooks", "x", "a", `k${MAX_LOCATED_CHILDREN - 1}`])).toEqual({ line: MAX_LOCATED_CHILDREN + 1, column: 1 });
    expect(wide(["hooks", "x", "a", `k${MAX_LOCATED_CHILDREN}`])).toEqual({ line: 1, column: 1 });
    // tables of 1000 keys each, past MAX_LOCATED_VALUES in all: the last table's header is no longer read
    const tables = Math.ceil(MAX_LOCATED_VALUES / 1001) + 1;
    const text = Array.from({ length: tables }, (_, t) => `[hooks.t${t}]\n${keys(1000)}`).join("\n");
    const many = tomlLocator(text, ["hooks"]);
    expect(many(["hooks", "t0", "k999"])).toEqual({ line: 1001, column: 1 });
    const last = Math.floor(MAX_LOCATED_VALUES / 1001);
    expect(many(["hooks", `t${last - 1}`, "k0"])).toEqual({ line: (last - 1) * 1001 + 2, column: 1 });
    expect(many(["hooks", `t${tables - 1}`, "k0"])).toBeUndefined();
    // the headers of tables not kept count for nothing: [hooks] after as many of them is still found
    const others = Array.from({ length: MAX_LOCATED_VALUES + 1 }, (_, i) => `[mcp_servers.s${i}]`).join("\n");
    expect(tomlLocator(`${others}\n[[hooks.PreToolUse]]\nname = "n"\n`, ["hooks"])(["hooks", "PreToolUse", 0, "name"])).toEqual({ line: MAX_LOCATED_VALUES + 3, column: 1 });
  });

  it("reads a mebibyte of quotes, brackets and hashes in linear time", () => {
    for (const piece of ['"""', "'''", "[", '"\\', "#", 'a = """\n']) {
      const text = piece.repeat(Math.ceil((1024 * 1024) / piece.length));
      const t0 = performance.now();
      tomlLocator(text)(["hooks", "x"]);
      expect(performance.now() - t0, JSON.stringify(piece)).toBeLessThan(500);
    }
  });
});
