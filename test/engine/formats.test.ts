/**
 * Loading hook configurations of every format from real files: the source documents' own examples
 * load unchanged; a malformed file of each format fails with the file, the line and the reason.
 */
import { createHash } from "node:crypto";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig, MAX_CAPTURE_BYTES, MAX_TIMER_SETTING_MS, parseConfig } from "../../engine/config.js";
import { MAX_MATCHER_CHARS } from "../../engine/hooks.js";
import { ConfigError } from "../../engine/errors.js";
import { resolveEventName } from "../../engine/events.js";
import { jsonLocator, MAX_LOCATED_CHILDREN, MAX_TOML_LOOKUP_STEPS, MAX_TOML_NAME_CHARS, tomlLocator } from "../../engine/formats/locate.js";
import { parseTomlOffThread, TomlSyntaxError } from "../../engine/formats/parse-off-thread.js";
import { loadRepositoryHooks, loadRepositoryHooksSync } from "../../engine/repository.js";
import { REPOSITORY_SOURCES } from "../../engine/formats/registry.js";
import { claudeMatcher, execFormCommand } from "../../engine/formats/claude-settings.js";
import { HOOK_PATHS, HOOK_TABLES, isHookFile } from "../../cli/workspace-push.js";

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "hookbox-formats-"));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

function configErrorOf(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error("expected a ConfigError");
}

async function configErrorOfAsync(fn: () => Promise<unknown>): Promise<ConfigError> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error("expected a ConfigError");
}

/**
 * A repository whose one hook file cannot be read: the file is skipped whole with one warning (its
 * file, line, why), by the service's loader and `hookbox check`'s alike; the warning, its hooks none.
 */
async function skippedFileWarning(dir: string, limits?: Parameters<typeof loadRepositoryHooks>[2]): Promise<string> {
  const sets = [await loadRepositoryHooks(dir, 60_000, limits), loadRepositoryHooksSync(dir, 60_000, limits)];
  for (const set of sets) {
    expect(set.hooks).toEqual([]);
    expect(set.warnings.filter((w) => w.endsWith("; the file is skipped: none of its hooks are read")), set.warnings.join("\n")).toHaveLength(1);
  }
  expect(sets[1]!.warnings).toEqual(sets[0]!.warnings);
  return sets[0]!.warnings.find((w) => w.endsWith("; the file is skipped: none of its hooks are read"))!;
}

describe("cosh TOML", () => {
  it("loads the cosh document's example config unchanged", () => {
    const config = loadConfig("test/fixtures/cosh-doc-example.toml");
    expect(config.hooksEnabled).toBe(true);
    expect(config.service.hooks.map((h) => [h.name, h.point, h.command, h.timeoutMs, h.format, h.dialect])).toEqual([
      ["security-check", "PreToolUse", "/usr/local/bin/my-security-hook", 5000, "cosh", "snake"],
      ["context-loader", "SessionStart", "/usr/local/bin/load-context", 3000, "cosh", "snake"],
    ]);
  });

  it("skips a service or policy hook without a name with a warning at its line, as cosh skips it (SERVICE.md §2)", () => {
    for (const table of ["hooks", "policy"] as const) {
      const config = parseConfig("c.toml", `[[${table}.PreToolUse]]\ncommand = "a"\n\n[[${table}.PreToolUse]]\nname = "b"\ncommand = "b"\n`);
      expect(config[table === "hooks" ? "service" : "policy"].hooks.map((h) => h.name)).toEqual(["b"]);
      expect(config.warnings).toContainEqual(expect.stringMatching(/^c\.toml:1: hook without a name skipped .*: it never runs$/));
      // … but a misspelt name is an unknown key of the server's own config: refused at its line.
      expect(configErrorOf(() => parseConfig("c.toml", `[[${table}.PreToolUse]]\nnmae = "guard"\ncommand = "a"\n`)).message).toMatch(/^c\.toml:2:\d+: .*nmae/);
    }
  });

  it("takes audit_keep up to MAX_AUDIT_KEEP (each rotation renames every kept file while an event waits), refusing more at its line", () => {
    expect(parseConfig("c.toml", "[server]\naudit_keep = 1000\n").server.auditKeep).toBe(1000);
    expect(configErrorOf(() => parseConfig("c.toml", "[server]\naudit_keep = 1001\n")).message).toMatch(/^c\.toml:2:\d+: .*audit_keep is at most 1000 \(MAX_AUDIT_KEEP\)/);
  });

  it("takes [traces] max_events up to MAX_TRACE_EVENTS (summaries in memory, walked by a filtered listing), refusing more at its line", () => {
    expect(parseConfig("c.toml", "[traces]\nmax_events = 100000\n").traces.maxEvents).toBe(100_000);
    expect(configErrorOf(() => parseConfig("c.toml", "[traces]\nmax_events = 100001\n")).message).toMatch(/^c\.toml:2:\d+: .*max_events is at most 100000 \(MAX_TRACE_EVENTS\)/);
  });

  it("clamps timeouts to max_timeout, defaults to 5000 ms, reads hookbox's extra fields", () => {
    const config = parseConfig("c.toml", [
      "[sandbox]", "max_timeout = 2000", "",
      "[[hooks.PreToolUse]]", 'name = "a"', 'command = "a"', "timeout = 9000", 'matcher = "shell|bash"', "fail_open = false", 'memory = "64m"', 'env = { A = "1" }', "",
      "[[hooks.Stop]]", 'name = "b"', 'command = "b"',
    ].join("\n"));
    const [a, b] = config.service.hooks;
    expect(a).toMatchObject({ timeoutMs: 2000, failOpen: false, env: { A: "1" }, limits: { memoryBytes: 64 * 1024 * 1024 } });
    expect(a!.matcher!.test("shell")).toBe(true);
    expect(a!.matcher!.test("shells")).toBe(false);
    expect(b!.timeoutMs).toBe(2000);
    expect(parseConfig("c.toml", '[[hooks.Stop]]\nname = "b"\ncommand = "b"\n').service.hooks[0]!.timeoutMs).toBe(5000);
  });

  it.each([
    ["a TOML syntax error", '[hooks]\nenabled = true\n[[hooks.PreToolUse]]\nname = "x\n', /^c\.toml:4:\d+: /],
    ["a typo in a hook's field", '[[hooks.PreToolUse]]\nname = "x"\ncomand = "y"\n', /^c\.toml:3:1: hooks\.PreToolUse\[0\]\.comand: Unrecognized key/],
    ["a wrong type", '[[hooks.PreToolUse]]\nname = "x"\ncommand = "y"\ntimeout = "5s"\n', /^c\.toml:4:1: hooks\.PreToolUse\[0\]\.timeout: .*number/],
    ["an unknown event", '[[hooks.PreTooluse]]\nname = "x"\ncommand = "y"\n', /^c\.toml:1:1: hooks\.PreTooluse: unknown event "PreTooluse" \(did you mean "PreToolUse"\?\)/],
    ["a memory that rounds to zero", '[sandbox]\nmemory = "0.4"\n', /^c\.toml:2:1: sandbox\.memory: .*more than zero/],
    ["a memory under Docker's minimum", '[sandbox]\nmemory = "1m"\n', /^c\.toml:2:1: sandbox\.memory: memory is at least 6m/],
    ["cpus of nearly nothing", "[sandbox]\ncpus = 0.001\n", /^c\.toml:2:1: sandbox\.cpus: cpus is at least 0\.01/],
    ["a tmp_size of zero", '[sandbox]\ntmp_size = "0k"\n', /^c\.toml:2:1: sandbox\.tmp_size: .*more than zero/],
    ["a bad matcher", '[[hooks.PreToolUse]]\nname = "x"\ncommand = "y"\nmatcher = "("\n', /^c\.toml:4:1: hooks\.PreToolUse\[0\]\.matcher: matcher is not a valid regular expression/],
    ["an unknown section", "[sandbx]\nruntime = \"runc\"\n", /^c\.toml:1:1: sandbx: unknown section/],
    ["an unknown runtime", '[sandbox]\nruntime = "crun"\n', /^c\.toml:2:1: sandbox\.runtime: /],
    ["a second hook's error", '[[hooks.Stop]]\nname = "a"\ncommand = "a"\n\n[[hooks.Stop]]\nname = "b"\ncommand = 3\n', /^c\.toml:7:1: hooks\.Stop\[1\]\.command: /],
    ["a tenant without a token", '[[tenants]]\nname = "a"\n', /^c\.toml:1:1: tenants\[0\]: set exactly one of token_sha256 and token_env/],
    ["a timer setting past what a timer can wait", "[sandbox]\nmax_event_ms = 3000000000\n", /^c\.toml:2:1: sandbox\.max_event_ms: at most 1036800000 ms/],
    ["an engine timeout past what a timer can wait", "[sandbox]\nengine_timeout_ms = 3000000000\n", /^c\.toml:2:1: sandbox\.engine_timeout_ms: at most/],
    ["a timer setting one past MAX_TIMER_SETTING_MS", `[server]\nshutdown_grace_ms = ${MAX_TIMER_SETTING_MS + 1}\n`, /^c\.toml:2:1: server\.shutdown_grace_ms: at most 1036800000 ms/],
    ["capture_bytes one past MAX_CAPTURE_BYTES", `[traces]\ncapture_bytes = ${MAX_CAPTURE_BYTES + 1}\n`, /^c\.toml:2:1: traces\.capture_bytes: at most 65536 bytes \(MAX_CAPTURE_BYTES\)/],
    ["a matcher one past MAX_MATCHER_CHARS", `[[hooks.PreToolUse]]\nname = "x"\ncommand = "y"\nmatcher = "${"a".repeat(MAX_MATCHER_CHARS + 1)}"\n`, /^c\.toml:4:1: hooks\.PreToolUse\[0\]\.matcher: .*longer than 512 characters/],
    ["two tenants with one token", `[[tenants]]\nname = "a"\ntoken_sha256 = "${"a".repeat(64)}"\n\n[[tenants]]\nname = "b"\ntoken_sha256 = "${"a".repeat(64)}"\n`, /^c\.toml:5:1: tenants\[1\]: tenant "b" has the same token as tenant "a"/],
    ["a mount that shows the data_dir", '[server]\ndata_dir = "/srv/hookbox/data"\n\n[sandbox]\nmounts = ["/srv/hookbox"]\n', /^c\.toml:5:1: sandbox\.mounts\[0\]: mount "\/srv\/hookbox" would show hookbox's data_dir/],
    ["a mount that hands over the engine's socket", '[sandbox]\nmounts = ["/var/run"]\n', /^c\.toml:2:1: sandbox\.mounts\[0\]: mount "\/var\/run" would hand every hook the container engine's socket/],
    ["a mount that will hold the data_dir made at start-up", '[server]\ndata_dir = "/tmp/hookbox-not-made-yet/x/data"\n\n[sandbox]\nmounts = ["/tmp/hookbox-not-made-yet"]\n', /^c\.toml:5:1: sandbox\.mounts\[0\]: mount .* would show hookbox's data_dir/],
    ["two spellings of one event in on_failure", `[[tenants]]\nname = "a"\ntoken_sha256 = "${"a".repeat(64)}"\non_failure = { PreToolUse = "block", preToolUse = "allow" }\n`, /^c\.toml:\d+:\d+: tenants\[0\]\.on_failure\.preToolUse: preToolUse and PreToolUse name the same event \(PreToolUse\): set it once/],
    ["a listen address without a host (every interface)", '[server]\nlisten = ":8080"\n', /^c\.toml:2:1: server\.listen: expected "HOST:PORT"/],
    ["a listen port past 65535", '[server]\nlisten = "127.0.0.1:99999"\n', /^c\.toml:2:1: server\.listen: expected "HOST:PORT"/],
    ["both metrics token settings", `[server]\nmetrics_token_sha256 = "${"b".repeat(64)}"\nmetrics_token_env = "M"\n`, /^c\.toml:1:1: server: set at most one of metrics_token_sha256 and metrics_token_env/],
    ["a metrics token beside public_metrics", `[server]\npublic_metrics = true\nmetrics_token_sha256 = "${"b".repeat(64)}"\n`, /^c\.toml:1:1: server: public_metrics = true needs no metrics token/],
    ["a metrics token that is a tenant's", `[server]\nmetrics_token_sha256 = "${"a".repeat(64)}"\n\n[[tenants]]\nname = "a"\ntoken_sha256 = "${"a".repeat(64)}"\n`, /^c\.toml:2:1: server\.metrics_token_sha256: the metrics token is tenant "a"'s token/],
    ["a policy directory that is a file", '[policy]\ndirs = ["package.json"]\n', /^c\.toml:2:1: policy\.dirs\[0\]: policy directory .* is not a folder/],
  ])("fails on %s with file, line and reason", (_what, text, message) => {
    expect(configErrorOf(() => parseConfig("c.toml", text)).message).toMatch(message);
  });

  it("takes each of those settings at its limit", () => {
    const c = parseConfig("c.toml", `[server]\nshutdown_grace_ms = ${MAX_TIMER_SETTING_MS}\n\n[traces]\ncapture_bytes = ${MAX_CAPTURE_BYTES}\n\n[[hooks.PreToolUse]]\nname = "x"\ncommand = "y"\nmatcher = "[${"abcdefghij".repeat(51)}]"\n`);
    expect(c.server.shutdownGraceMs).toBe(MAX_TIMER_SETTING_MS);
    expect(c.traces.captureBytes).toBe(MAX_CAPTURE_BYTES);
    expect(c.service.hooks.find((h) => h.name === "x")?.matcher?.source.length).toBe(MAX_MATCHER_CHARS);
  });

  it("fails on a token_env whose value holds a blank or a control character (a secret file's newline): no client could send it", () => {
    for (const token of ["abc\n", "abc def", " ", "Bearer x", "a\tb"]) {
      const err = configErrorOf(() => parseConfig("c.toml", '[[tenants]]\nname = "a"\ntoken_env = "T"\n', { T: token }));
      expect(err.message, JSON.stringify(token)).toMatch(/^c\.toml:3:1: tenants\[0\]\.token_env: environment variable T holds a blank or a control character/);
    }
    expect(parseConfig("c.toml", '[[tenants]]\nname = "a"\ntoken_env = "T"\n', { T: "abc" }).tenants[0]!.name).toBe("a");
  });

  it("reads a metrics token from the environment as a tenant's, and warns where every tenant's token reads /metrics", () => {
    const two = `[[tenants]]\nname = "a"\ntoken_sha256 = "${"a".repeat(64)}"\n\n[[tenants]]\nname = "b"\ntoken_sha256 = "${"c".repeat(64)}"\n`;
    const open = parseConfig("c.toml", two);
    expect(open.server.metricsTokenSha256).toBeUndefined();
    expect(open.warnings).toContainEqual(expect.stringMatching(/^c\.toml:5: every tenant's token reads \/metrics, whose figures are all tenants' together: set metrics_token_sha256/));
    const own = parseConfig("c.toml", `[server]\nmetrics_token_env = "M"\n\n${two}`, { M: "scraper" });
    expect(own.server.metricsTokenSha256).toBe(createHash("sha256").update("scraper").digest("hex"));
    expect(own.warnings.filter((w) => w.includes("/metrics"))).toEqual([]);
    expect(parseConfig("c.toml", `[server]\npublic_metrics = true\n\n${two}`).warnings.filter((w) => w.includes("/metrics"))).toEqual([]);
    expect(configErrorOf(() => parseConfig("c.toml", `[server]\nmetrics_token_env = "M"\n`, { M: "a b" })).message).toMatch(/^c\.toml:2:1: server\.metrics_token_env: environment variable M holds a blank/);
    expect(configErrorOf(() => parseConfig("c.toml", `[server]\nmetrics_token_env = "M"\n`, {})).message).toMatch(/^c\.toml:2:1: server\.metrics_token_env: environment variable M is not set/);
  });

  it("warns of an on_failure block where a block would keep the agent going (a stop, TeammateIdle, TaskCompleted): it has no effect there", () => {
    const config = parseConfig("c.toml", `[[tenants]]\nname = "a"\ntoken_sha256 = "${"a".repeat(64)}"\non_failure = { Stop = "block", PreToolUse = "block", TeammateIdle = "block" }\n`);
    expect(config.warnings).toEqual([
      expect.stringMatching(/^c\.toml:\d+: tenants\[0\]\.on_failure\.Stop = "block" has no effect: at Stop a block would keep the agent going/),
      expect.stringMatching(/tenants\[0\]\.on_failure\.TeammateIdle = "block" has no effect/),
    ]);
  });

  it("reads [[policy.<Event>]] as host policy hooks and Copilot files from policy dirs", () => {
    const dir = tree({
      "policy.d/10-guard.json": JSON.stringify({ version: 1, hooks: { preToolUse: [{ type: "command", bash: "./guard.sh", timeoutSec: 2 }] } }),
      "hookbox.toml": '[policy]\ndirs = ["policy.d"]\n\n[[policy.PreToolUse]]\nname = "org-guard"\ncommand = "/bin/true"\n',
    });
    const config = loadConfig(join(dir, "hookbox.toml"));
    expect(config.policy.hooks.map((h) => [h.name, h.source, h.format, h.timeoutMs])).toEqual([
      ["org-guard", "policy", "cosh", 5000],
      ["10-guard.json:preToolUse[0]", "policy", "copilot", 2000],
    ]);
    expect(config.policy.hooks[1]!.cwd).toBe(join(dir, "policy.d"));
    // What every tenant sees of where a hook comes from: named from the config's folder, no host path.
    expect(config.policy.hooks.map((h) => h.origin)).toEqual(["hookbox.toml:4", "policy.d/10-guard.json:1"]);
  });
});

describe("Copilot JSON", () => {
  it("loads the Copilot document's audit.json example unchanged", async () => {
    const set = await loadRepositoryHooks("test/fixtures/repo-copilot", 60_000);
    expect(set.hooks).toHaveLength(1);
    expect(set.hooks[0]).toMatchObject({ format: "copilot", point: "PreToolUse", dialect: "camel", command: "node .github/hooks/log-tool-use.cjs", timeoutMs: 10_000, source: "repository" });
  });

  it("gives a PascalCase alias the snake_case payload (copilot-hooks.md)", async () => {
    const dir = tree({ ".github/hooks/a.json": JSON.stringify({ version: 1, hooks: { PreToolUse: [{ type: "command", bash: "x" }] } }) });
    expect((await loadRepositoryHooks(dir, 60_000)).hooks[0]).toMatchObject({ point: "PreToolUse", dialect: "snake", timeoutMs: 30_000 });
  });

  it.each([
    ["a JSON syntax error", '{\n  "version": 1,\n  "hooks": {\n    "preToolUse": [\n      { "type": "command" "bash": "x" }\n    ]\n  }\n}\n', /^\.github\/hooks\/bad\.json:5:27: invalid JSON: expected ',' or '}'/],
    ["a wrong version", '{ "version": 2, "hooks": {} }', /^\.github\/hooks\/bad\.json:1:\d+: version: version must be 1/],
  ])("skips a file of %s whole, with file, line and reason", async (_what, text, message) => {
    expect(await skippedFileWarning(tree({ ".github/hooks/bad.json": text }))).toMatch(message);
  });

  it.each(["../..", "/opt/guards", ".."])("keeps a hook whose cwd (%s) is outside the repository, warned with file and line, to fail at each event — never dropped, its guard unseen", async (cwd) => {
    const set = await loadRepositoryHooks(tree({ ".github/hooks/bad.json": `{ "version": 1, "hooks": { "preToolUse": [\n{ "type": "command", "bash": "x",\n "cwd": ${JSON.stringify(cwd)} },\n{ "type": "command", "bash": "y" }] } }` }), 60_000);
    expect(set.hooks.map((h) => [h.command, h.cwd, h.unrunnable])).toEqual([["x", undefined, expect.stringMatching(/is outside the repository/)], ["y", undefined, undefined]]);
    expect(set.warnings).toEqual([expect.stringMatching(/^\.github\/hooks\/bad\.json:3: hooks\.preToolUse\[0\]\.cwd: cwd is outside the repository: hookbox cannot run the hook there — it fails to start at each event/)]);
    // a folder whose name starts with two dots is inside
    const inside = await loadRepositoryHooks(tree({ ".github/hooks/ok.json": '{ "version": 1, "hooks": { "preToolUse": [{ "type": "command", "bash": "x", "cwd": "..tools" }] } }' }), 60_000);
    expect(inside.hooks.map((h) => [h.cwd, h.unrunnable])).toEqual([["..tools", undefined]]);
  });
});

describe("repository files are read tolerantly, reported strictly (SERVICE.md §8)", () => {
  // Once refusals of the whole workspace; now warnings naming file and line, the rest still loads.
  it.each([
    ["a typo in a field", '{\n  "version": 1,\n  "hooks": {\n    "preToolUse": [\n      { "type": "command", "bash": "x", "timeoutSecs": 3 }\n    ]\n  }\n}\n', /^\.github\/hooks\/bad\.json:5: hooks\.preToolUse\[0\]\.timeoutSecs: unknown key "timeoutSecs"; skipped$/, 1],
    ["an unknown event", '{ "version": 1,\n "hooks": { "preToolUsed": [] } }', /^\.github\/hooks\/bad\.json:2: hooks\.preToolUsed: unknown event "preToolUsed" \(did you mean "[pP]reToolUse"\?\); skipped$/, 0],
    ["an http hook", '{ "hooks": { "PreToolUse": [\n{ "type": "http", "url": "https://example.com/hook" },\n{ "type": "command", "command": "x" }] } }', /^\.github\/hooks\/bad\.json:2: hooks\.PreToolUse\[0\]: "http" hooks are not run by hookbox; skipped$/, 1],
    ["a file that is not a hook file", '{ "$schema": "x", "name": "not hooks" }', /^\.github\/hooks\/bad\.json: no "hooks" object: not a hook file; skipped$/, 0],
    ["a hook without a command", '{ "version": 1, "hooks": { "preToolUse": [\n{ "type": "command" }] } }', /^\.github\/hooks\/bad\.json:2: hooks\.preToolUse\[0\]: a command hook needs "bash" or "command"; skipped$/, 0],
  ])("warns on %s with file, line and what was skipped", async (_what, text, warning, hooks) => {
    const set = await loadRepositoryHooks(tree({ ".github/hooks/bad.json": text }), 60_000);
    expect(set.warnings).toEqual([expect.stringMatching(warning)]);
    expect(set.hooks).toHaveLength(hooks);
  });

  it("loads VS Code's form of the Copilot file: no version, command + timeout in seconds, PascalCase events", async () => {
    const vscode = { hooks: { PreToolUse: [{ type: "command", command: "./scripts/validate-tool.sh", timeout: 15 }], PostToolUse: [{ type: "command", command: "npx prettier --write .", windows: "x.cmd" }] } };
    const set = await loadRepositoryHooks(tree({ ".github/hooks/format.json": JSON.stringify(vscode, null, 2) }), 60_000);
    expect(set.warnings).toEqual([]);
    expect(set.hooks.map((h) => [h.point, h.dialect, h.command, h.timeoutMs, h.format])).toEqual([
      ["PreToolUse", "snake", "./scripts/validate-tool.sh", 15_000, "copilot"],
      ["PostToolUse", "snake", "npx prettier --write .", 30_000, "copilot"],
    ]);
  });

  it("reads the Copilot CLI's matcher: a regex the whole tool name (notification type) must match; VS Code's form and other events ignore it, warned", async () => {
    const { selectHooks } = await import("../../engine/match.js");
    const { emptyHookSet } = await import("../../engine/hooks.js");
    const file = { version: 1, hooks: {
      preToolUse: [{ type: "command", bash: "bash-only.sh", matcher: "bash" }, { type: "command", bash: "edits.sh", matcher: "edit|create" }],
      permissionRequest: [{ type: "command", bash: "perm.sh", matcher: "^bash$" }],
      notification: [{ type: "command", bash: "idle.sh", matcher: "idle_.*" }],
      sessionStart: [{ type: "command", bash: "start.sh", matcher: "new" }],
      PreToolUse: [{ type: "command", command: "vscode.sh", matcher: "Write" }],
    } };
    const set = await loadRepositoryHooks(tree({ ".github/hooks/m.json": JSON.stringify(file, null, 2) }), 60_000);
    expect(set.warnings).toEqual([
      expect.stringMatching(/^\.github\/hooks\/m\.json:\d+: hooks\.sessionStart\[0\]\.matcher: read by the Copilot CLI at preToolUse, postToolUse, postToolUseFailure, permissionRequest and notification only; ignored here \(the hook runs for every call\)$/),
      expect.stringMatching(/^\.github\/hooks\/m\.json:\d+: hooks\.PreToolUse\[0\]\.matcher: a PascalCase event is VS Code's form, and VS Code ignores matchers; ignored here \(the hook runs for every call\)$/),
    ]);
    const run = (event: string, tool: string | undefined, body: Record<string, unknown> = {}) =>
      selectHooks({ policy: emptyHookSet(), service: emptyHookSet(), extension: emptyHookSet(), repository: set }, resolveEventName(event)!.point, tool, { hooksEnabled: true, repositoryHooks: true }, body).map((h) => h.command);
    expect(run("preToolUse", "bash")).toEqual(["bash-only.sh", "vscode.sh"]);
    expect(run("preToolUse", "github-bash")).toEqual(["vscode.sh"]);
    expect(run("preToolUse", "create")).toEqual(["edits.sh", "vscode.sh"]);
    expect(run("preToolUse", "create_file")).toEqual(["vscode.sh"]);
    expect(run("permissionRequest", "bash")).toEqual(["perm.sh"]);
    expect(run("permissionRequest", "view")).toEqual([]);
    expect(run("notification", undefined, { notification_type: "idle_prompt" })).toEqual(["idle.sh"]);
    expect(run("notification", undefined, { notification_type: "shell_done" })).toEqual([]);
    expect(run("sessionStart", undefined, { source: "resume" })).toEqual(["start.sh"]);
    // A tool event that names no tool runs the hook (a guard is never skipped by leaving it out).
    expect(run("preToolUse", undefined)).toEqual(["bash-only.sh", "edits.sh", "vscode.sh"]);
    // A pattern RE2 does not take: warned, and the hook runs for every call; the file's other hooks load.
    const bad = await loadRepositoryHooks(tree({ ".github/hooks/m.json": JSON.stringify({ version: 1, hooks: { preToolUse: [{ type: "command", bash: "x.sh", matcher: "(a" }, { type: "command", bash: "y.sh", matcher: "bash" }] } }) }), 60_000);
    expect(bad.warnings).toEqual([expect.stringMatching(/^\.github\/hooks\/m\.json:1: hooks\.preToolUse\[0\]\.matcher: matcher is not a valid regular expression \(RE2 syntax\): .*; the hook runs for every call$/)]);
    expect(bad.hooks.map((h) => [h.command, h.matcher?.source])).toEqual([["x.sh", undefined], ["y.sh", "bash"]]);
  });

  it("says why a matcher of a PascalCase tool event is ignored: VS Code's form in .github/hooks, the CLI's alias in the inline settings", async () => {
    // A real-shaped file: `version: 1`, PascalCase events, `command` + `timeout`, Claude-style matchers.
    const file = { version: 1, hooks: {
      PreToolUse: [{ matcher: "Read|read_file|Edit|Write|write_file|replace", type: "command", command: "bash .github/hooks/scripts/protect-secrets.sh", timeout: 10 }],
      PostToolUse: [{ matcher: "Edit|Write|write_file|replace", type: "command", command: "bash .github/hooks/scripts/auto-format.sh", timeout: 30 }],
    } };
    const set = await loadRepositoryHooks(tree({ ".github/hooks/hooks.json": JSON.stringify(file, null, 2) }), 60_000);
    expect(set.warnings).toEqual([
      expect.stringMatching(/^\.github\/hooks\/hooks\.json:\d+: hooks\.PreToolUse\[0\]\.matcher: a PascalCase event is VS Code's form, and VS Code ignores matchers; ignored here \(the hook runs for every call\)$/),
      expect.stringMatching(/^\.github\/hooks\/hooks\.json:\d+: hooks\.PostToolUse\[0\]\.matcher: a PascalCase event is VS Code's form, and VS Code ignores matchers; ignored here/),
    ]);
    expect(set.hooks.map((h) => [h.point, h.timeoutMs, h.matcher])).toEqual([["PreToolUse", 10_000, undefined], ["PostToolUse", 30_000, undefined]]);
    const inline = await loadRepositoryHooks(tree({ ".github/copilot/settings.json": JSON.stringify({ hooks: { PreToolUse: [{ type: "command", bash: "a.sh", matcher: "bash" }] } }) }), 60_000);
    expect(inline.warnings).toEqual([expect.stringMatching(/hooks\.PreToolUse\[0\]\.matcher: read under the event's camelCase name only; ignored here \(the hook runs for every call\)$/)]);
  });

  it("reads the inline hooks of .github/copilot/settings.json and settings.local.json (copilot-hooks.md Where hooks live)", async () => {
    const set = await loadRepositoryHooks(tree({
      ".github/copilot/settings.json": JSON.stringify({ model: "x", hooks: { preToolUse: [{ type: "command", bash: "a.sh" }] } }),
      ".github/copilot/settings.local.json": JSON.stringify({ hooks: { sessionStart: [{ type: "command", bash: "b.sh" }] } }),
    }), 60_000);
    expect(set.hooks.map((h) => [h.origin.split(":")[0], h.point, h.command])).toEqual([
      [".github/copilot/settings.json", "PreToolUse", "a.sh"],
      [".github/copilot/settings.local.json", "SessionStart", "b.sh"],
    ]);
  });

  it("reads a PascalCase event of the inline settings as the CLI's alias: VS Code reads no .github/copilot/settings*.json (its hook file locations), .github/hooks/*.json it does", async () => {
    const { vscodeReads } = await import("../../engine/formats/copilot-json.js");
    const set = await loadRepositoryHooks(tree({
      ".github/hooks/guard.json": JSON.stringify({ hooks: { PreToolUse: [{ type: "command", command: "g.sh" }] } }),
      ".github/copilot/settings.json": JSON.stringify({ hooks: { PreToolUse: [{ type: "command", command: "a.sh" }] } }),
      ".github/copilot/settings.local.json": JSON.stringify({ hooks: { UserPromptSubmit: [{ type: "command", command: "b.sh" }] } }),
    }), 60_000);
    expect(set.hooks.map((h) => [h.command, h.dialect, vscodeReads(h)])).toEqual([
      ["g.sh", "snake", true],
      ["a.sh", "snake", false],
      ["b.sh", "snake", false],
    ]);
  });

  it("takes a cosh config's per-hook sequential and a Claude hook's if, and skips an unknown Claude event", async () => {
    const set = await loadRepositoryHooks(tree({
      ".copilot-shell/config.toml": '[[hooks.PreToolUse]]\nname = "guard"\ncommand = "g.sh"\nsequential = true\n',
      ".claude/settings.json": JSON.stringify({ hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "c.sh", if: "Bash(git push*)" }] }], OnLunchBreak: [{ hooks: [{ type: "command", command: "t.sh" }] }] } }, null, 2),
    }), 60_000);
    expect(set.hooks.map((h) => h.command)).toEqual(["g.sh", "c.sh"]);
    expect(set.warnings).toEqual([
      expect.stringMatching(/^\.copilot-shell\/config\.toml:4: hooks\.PreToolUse\[0\]\.sequential: unknown key "sequential"; skipped$/),
      expect.stringMatching(/^\.claude\/settings\.json:\d+: hooks\.OnLunchBreak: unknown event "OnLunchBreak"; skipped$/),
    ]);
    expect(set.hooks[1]!.condition!.test({ tool_name: "Bash", tool_input: { command: "git push origin" } })).toBe(true);
    expect(set.hooks[1]!.condition!.test({ tool_name: "Bash", tool_input: { command: "git status" } })).toBe(false);
  });

  it("ignores an if on a Claude group (Claude Code reads it on hooks only) and runs a hook whose if cannot be read, each warned", async () => {
    const set = await loadRepositoryHooks(tree({
      ".claude/settings.json": JSON.stringify({ hooks: { PreToolUse: [
        { matcher: "Bash", if: "Bash(git push*)", hooks: [{ type: "command", command: "group.sh" }] },
        { matcher: "Bash", hooks: [{ type: "command", command: "odd.sh", if: "tool_input.command matches 'git push'" }] },
      ] } }, null, 2),
    }), 60_000);
    expect(set.hooks.map((h) => [h.command, h.condition])).toEqual([["group.sh", undefined], ["odd.sh", undefined]]);
    expect(set.warnings).toEqual([
      expect.stringMatching(/hooks\.PreToolUse\[0\]\.if: "if" is read on a hook, not on its group; ignored/),
      expect.stringMatching(/hooks\.PreToolUse\[1\]\.hooks\[0\]\.if: cannot read the condition .*; the hook runs for every matching tool/),
    ]);
  });

  it("reads .cursor/hooks.json and .codex/hooks.json as repository sources", async () => {
    const set = await loadRepositoryHooks(tree({
      ".cursor/hooks.json": JSON.stringify({ version: 1, hooks: { beforeShellExecution: [{ command: "./hooks/guard.sh", failClosed: true, timeout: 5 }], afterAgentThought: [{ type: "prompt", prompt: "x" }] } }),
      ".codex/hooks.json": JSON.stringify({ hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "python3 .codex/guard.py", timeout: 10 }] }] } }),
    }), 60_000);
    expect(set.hooks.map((h) => [h.format, h.point, h.dialect, h.failOpen, h.timeoutMs])).toEqual([
      ["cursor", "BeforeShellExecution", "snake", false, 5_000],
      ["codex", "PreToolUse", "snake", true, 10_000],
    ]);
    expect(set.warnings).toEqual([expect.stringMatching(/^\.cursor\/hooks\.json:1: hooks\.afterAgentThought\[0\]: "prompt" hooks are not run by hookbox; skipped$/)]);
  });

  it("reads the inline [hooks] of .codex/config.toml next to .codex/hooks.json (Codex loads both), and nothing else of that file", async () => {
    const set = await loadRepositoryHooks(tree({
      ".codex/hooks.json": JSON.stringify({ hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "from-json.sh" }] }] } }),
      ".codex/config.toml": [
        'model = "o4"',
        'approval_policy = "on-request"',
        "[mcp_servers.docs]",
        'command = "docs-server"',
        'env = { API_KEY = "not-a-hook" }',
        "[[hooks.PreToolUse]]",
        'matcher = "Bash"',
        "[[hooks.PreToolUse.hooks]]",
        'type = "command"',
        'command = "echo no >&2; exit 2"',
        "timeout = 5",
        "[[hooks.BeforeTool]]",
        "[[hooks.BeforeTool.hooks]]",
        'type = "command"',
        'command = "never.sh"',
      ].join("\n"),
    }), 60_000);
    expect(set.hooks.map((h) => [h.format, h.point, h.command, h.timeoutMs, h.origin])).toEqual([
      ["codex", "PreToolUse", "from-json.sh", 60_000, expect.stringMatching(/^\.codex\/hooks\.json:1/)],
      ["codex", "PreToolUse", "echo no >&2; exit 2", 5_000, ".codex/config.toml:8"],
    ]);
    expect(set.hooks[1]!.matcher!.test("Bash")).toBe(true);
    expect(set.warnings).toEqual([expect.stringMatching(/^\.codex\/config\.toml:12: .*"BeforeTool" is not an event Codex fires/)]);
    // A config.toml with no [hooks] holds no hooks, and says nothing — an i64 setting past 2^53 in it, which Codex takes, included.
    const none = await loadRepositoryHooks(tree({ ".codex/config.toml": 'model = "o4"\nmax_bytes = 9223372036854775807\n[features]\nweb_search = true\n' }), 60_000);
    expect([none.hooks, none.warnings]).toEqual([[], []]);
  });

  it("skips, with a warning, hooks a repository's Copilot or Codex file files under another agent's event name: that agent never runs them", async () => {
    const set = await loadRepositoryHooks(tree({
      ".github/hooks/a.json": JSON.stringify({ version: 1, hooks: { BeforeTool: [{ type: "command", bash: "gemini-name.sh" }], stop: [{ type: "command", bash: "cursor-name.sh" }], preToolUse: [{ type: "command", bash: "camel.sh" }], PreToolUse: [{ type: "command", bash: "pascal.sh" }], Stop: [{ type: "command", bash: "stop.sh" }] } }),
      ".codex/hooks.json": JSON.stringify({ hooks: { preToolUse: [{ hooks: [{ type: "command", command: "copilot-name.sh" }] }], BeforeTool: [{ hooks: [{ type: "command", command: "gemini-name.sh" }] }], PostCompact: [{ hooks: [{ type: "command", command: "post-compact.sh" }] }] } }),
    }), 60_000);
    expect(set.hooks.map((h) => [h.format, h.point, h.command])).toEqual([
      ["copilot", "PreToolUse", "camel.sh"],
      ["copilot", "PreToolUse", "pascal.sh"],
      ["copilot", "Stop", "stop.sh"],
      ["codex", "PostCompact", "post-compact.sh"],
    ]);
    expect(set.warnings).toEqual([
      expect.stringMatching(/^\.github\/hooks\/a\.json:1: .*"BeforeTool" is not an event Copilot fires/),
      expect.stringMatching(/^\.github\/hooks\/a\.json:1: .*"stop" is not an event Copilot fires/),
      expect.stringMatching(/^\.codex\/hooks\.json:1: .*"preToolUse" is not an event Codex fires/),
      expect.stringMatching(/^\.codex\/hooks\.json:1: .*"BeforeTool" is not an event Codex fires/),
    ]);
  });

  it("keeps the server's own Copilot policy files strict", () => {
    const dir = tree({
      "policy.d/a.json": '{ "version": 1, "hooks": { "preToolUse": [\n{ "type": "command", "bash": "x", "timeoutSecs": 3 }] } }',
      "hookbox.toml": '[policy]\ndirs = ["policy.d"]\n',
    });
    expect(configErrorOf(() => loadConfig(join(dir, "hookbox.toml"))).message).toMatch(/policy\.d\/a\.json:2:\d+: hooks\.preToolUse\[0\]\.timeoutSecs: Unrecognized key/);
  });
});

describe("Claude Code settings.json", () => {
  it("runs a SessionEnd hook at most 60 s, its own longer timeout as Claude Code cuts it (the hooks share a budget raised up to 60 s); 1.5 s by default", async () => {
    const hook = (timeout?: number) => ({ type: "command", command: "end.sh", ...(timeout !== undefined ? { timeout } : {}) });
    const dir = tree({ ".claude/settings.json": JSON.stringify({ hooks: { SessionEnd: [{ hooks: [hook(120), hook(), hook(30)] }], Stop: [{ hooks: [hook(120)] }] } }) });
    const set = await loadRepositoryHooks(dir, 600_000);
    expect(set.hooks.map((h) => [h.point, h.timeoutMs])).toEqual([["SessionEnd", 60_000], ["SessionEnd", 1_500], ["SessionEnd", 30_000], ["Stop", 120_000]]);
  });

  it("loads matcher groups of command hooks and skips other hook types with a warning", async () => {
    const dir = tree({
      ".claude/settings.json": JSON.stringify({
        permissions: { allow: ["Bash(ls)"] },
        hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "check.sh", timeout: 3 }, { type: "prompt", prompt: "x" }] }] },
      }),
    });
    const set = await loadRepositoryHooks(dir, 60_000);
    expect(set.hooks).toHaveLength(1);
    expect(set.hooks[0]).toMatchObject({ format: "claude", dialect: "snake", command: "check.sh", timeoutMs: 3000 });
    expect(set.hooks[0]!.matcher!.test("Bash")).toBe(true);
    expect(set.warnings).toEqual([expect.stringMatching(/"prompt" hooks are not run/)]);
  });

  it("skips a file with a malformed group whole, as Claude Code does, with file, line and reason", async () => {
    const dir = tree({ ".claude/settings.json": '{\n  "hooks": {\n    "PreToolUse": [\n      { "matcher": "Bash", "hook": [] }\n    ]\n  }\n}\n' });
    expect(await skippedFileWarning(dir)).toMatch(/^\.claude\/settings\.json:4:\d+: hooks\.PreToolUse\[0\]/);
  });

  it("skips a command or a cwd holding a NUL byte alone, at its line: no process could be given it", async () => {
    const claude = await loadRepositoryHooks(tree({ ".claude/settings.json": '{\n  "hooks": {\n    "PreToolUse": [\n      { "hooks": [{ "type": "command", "command": "ok.sh\\u0000; rm -rf /" }, { "type": "command", "command": "kept.sh" }] }\n    ]\n  }\n}\n' }), 60_000);
    expect(claude.hooks.map((h) => h.command)).toEqual(["kept.sh"]);
    expect(claude.warnings).toEqual([expect.stringMatching(/^\.claude\/settings\.json:4: hooks\.PreToolUse\[0\]\.hooks\[0\]\.command: a command cannot hold a NUL byte; skipped/)]);
    const copilot = await loadRepositoryHooks(tree({ ".github/hooks/h.json": JSON.stringify({ version: 1, hooks: { preToolUse: [{ type: "command", bash: "true", cwd: "a\u0000b" }] } }) }), 60_000);
    expect(copilot.hooks).toEqual([]);
    expect(copilot.warnings).toEqual([expect.stringMatching(/hooks\.preToolUse\[0\]\.cwd: a path cannot hold a NUL byte; skipped/)]);
  });

  it("warns of a matcher RE2 cannot read (lookaround) with file, line and the reason, and runs its hook for every tool: never a guard that silently never fires", async () => {
    const dir = tree({ ".claude/settings.json": '{\n  "hooks": {\n    "PreToolUse": [\n      { "matcher": "^(?!Read).*", "hooks": [{ "type": "command", "command": "g.sh" }] }\n    ]\n  }\n}\n' });
    const set = await loadRepositoryHooks(dir, 60_000);
    expect(set.warnings).toEqual([expect.stringMatching(/^\.claude\/settings\.json:4: hooks\.PreToolUse\[0\]\.matcher: .*RE2.*\(\?!.*; the hook runs for every call$/)]);
    expect(set.hooks.map((h) => [h.command, h.matcher])).toEqual([["g.sh", undefined]]);
  });
});

describe("Claude Code matchers, per the field each event compares (hooks reference, Matchers)", () => {
  it("a matcher where the event takes none is not even compiled; one RE2 does not take (a lookahead) is warned and runs the hook for every tool; the workspace's other hooks load", async () => {
    const { selectHooks } = await import("../../engine/match.js");
    const { emptyHookSet } = await import("../../engine/hooks.js");
    const set = await loadRepositoryHooks(tree({
      ".claude/settings.json": JSON.stringify({ hooks: {
        Stop: [{ matcher: "*.py", hooks: [{ type: "command", command: "stop.sh" }] }],
        UserPromptSubmit: [{ matcher: "(?!x)", hooks: [{ type: "command", command: "prompt.sh" }] }],
        PreToolUse: [{ matcher: "^(?!Read$).*", hooks: [{ type: "command", command: "not-read.sh" }] }],
      } }),
      ".cursor/hooks.json": JSON.stringify({ version: 1, hooks: { beforeShellExecution: [{ command: "cur.sh", matcher: "(?<=a)b" }] } }),
      ".gemini/settings.json": JSON.stringify({ hooks: { BeforeTool: [{ matcher: "(?=x)", hooks: [{ type: "command", command: "gem.sh" }] }] } }),
      ".github/hooks/guard.json": JSON.stringify({ version: 1, hooks: { preToolUse: [{ type: "command", bash: "guard.sh" }] } }),
    }), 60_000);
    expect(set.hooks.map((h) => h.command).sort()).toEqual(["cur.sh", "gem.sh", "guard.sh", "not-read.sh", "prompt.sh", "stop.sh"]);
    expect(set.warnings.filter((w) => /the hook runs for every call$/.test(w))).toHaveLength(3);
    expect(set.warnings.join("\n")).toMatch(/^\.claude\/settings\.json:1: hooks\.PreToolUse\[0\]\.matcher: matcher is not a valid regular expression \(RE2 syntax\)/m);
    const run = (event: string, tool: string | undefined, body: Record<string, unknown> = {}) =>
      selectHooks({ policy: emptyHookSet(), service: emptyHookSet(), extension: emptyHookSet(), repository: set }, resolveEventName(event)!.point, tool, { hooksEnabled: true, repositoryHooks: true }, body).map((h) => h.command);
    expect(run("PreToolUse", "Read")).toContain("not-read.sh");
    expect(run("Stop", undefined)).toEqual(["stop.sh"]);
    // A pattern past hookbox's own limit for one matcher skips its hooks, naming it: never run for every call.
    const heavy = await loadRepositoryHooks(tree({ ".claude/settings.json": JSON.stringify({ hooks: { PreToolUse: [{ matcher: "\\pL{999}".repeat(50), hooks: [{ type: "command", command: "x" }] }, { matcher: "Bash", hooks: [{ type: "command", command: "y" }] }] } }) }), 60_000);
    expect(heavy.hooks.map((h) => h.command)).toEqual(["y"]);
    expect(heavy.warnings).toEqual([expect.stringMatching(/^\.claude\/settings\.json:1: hooks\.PreToolUse\[0\]\.matcher: matcher past hookbox's limits .*too complex.* — the hooks it selects are not run; skipped/)]);
  });
  it("compares PostCompact, ConfigChange, InstructionsLoaded, StopFailure and Elicitation matchers with their own field, FileChanged with the file's name, and ignores one where the event takes none", async () => {
    const { selectHooks } = await import("../../engine/match.js");
    const { emptyHookSet } = await import("../../engine/hooks.js");
    const group = (matcher: string, command: string) => [{ matcher, hooks: [{ type: "command", command }] }];
    const set = await loadRepositoryHooks(tree({
      ".claude/settings.json": JSON.stringify({ hooks: {
        PostCompact: group("manual", "compact.sh"),
        ConfigChange: group("project_settings|local_settings", "config.sh"),
        InstructionsLoaded: group("nested_traversal", "rules.sh"),
        StopFailure: group("rate_limit", "fail.sh"),
        Elicitation: group("github", "elicit.sh"),
        FileChanged: group("Makefile|package_json", "file.sh"),
        TaskCreated: group("anything", "task.sh"),
      } }),
    }), 60_000);
    const run = (event: string, body: Record<string, unknown>) =>
      selectHooks({ policy: emptyHookSet(), service: emptyHookSet(), extension: emptyHookSet(), repository: set }, resolveEventName(event)!.point, undefined, { hooksEnabled: true, repositoryHooks: true }, body).map((h) => h.command);
    expect(run("PostCompact", { trigger: "manual" })).toEqual(["compact.sh"]);
    expect(run("PostCompact", { trigger: "auto" })).toEqual([]);
    expect(run("ConfigChange", { source: "project_settings" })).toEqual(["config.sh"]);
    expect(run("ConfigChange", { source: "user_settings" })).toEqual([]);
    expect(run("InstructionsLoaded", { load_reason: "nested_traversal" })).toEqual(["rules.sh"]);
    expect(run("InstructionsLoaded", { load_reason: "session_start" })).toEqual([]);
    expect(run("StopFailure", { error: "rate_limit" })).toEqual(["fail.sh"]);
    expect(run("StopFailure", { error: "billing_error" })).toEqual([]);
    expect(run("Elicitation", { mcp_server_name: "github" })).toEqual(["elicit.sh"]);
    expect(run("Elicitation", { mcp_server_name: "slack" })).toEqual([]);
    expect(run("FileChanged", { file_path: "/home/dev/repo/Makefile" })).toEqual(["file.sh"]);
    expect(run("FileChanged", { file_path: "C:\\repo\\Makefile" })).toEqual(["file.sh"]);
    expect(run("FileChanged", { file_path: "/home/dev/Makefile/notes.md" })).toEqual([]);
    expect(run("TaskCreated", { task_subject: "x" })).toEqual(["task.sh"]);
  });

  it("reads a hyphen, a space or a comma as a regex at FileChanged and StopFailure, as an exact list elsewhere", () => {
    const point = (name: string) => resolveEventName(name)!.point;
    expect(claudeMatcher("a-b", point("StopFailure"))!.test("xa-by")).toBe(true);
    expect(claudeMatcher("a-b", point("SessionEnd"))!.test("xa-by")).toBe(false);
    expect(claudeMatcher("a-b", point("SessionEnd"))!.test("a-b")).toBe(true);
    expect(claudeMatcher("Makefile, go_mod", point("FileChanged"))!.test("Makefile")).toBe(false);
    expect(claudeMatcher("Makefile, go_mod", point("SessionEnd"))!.test("Makefile")).toBe(true);
    expect(claudeMatcher("Makefile|go_mod", point("FileChanged"))!.test("Makefile.bak")).toBe(false);
  });
});

describe("cosh-extension.json", () => {
  it("loads groups, substitutes ${extensionPath} and ${workspacePath}, mounts the folder", () => {
    const dir = tree({
      "ext/guard/cosh-extension.json": JSON.stringify({
        name: "guard", version: "1.0.0",
        hooks: {
          PreToolUse: [{ matcher: "shell", sequential: false, hooks: [
            { type: "command", name: "a", command: "${extensionPath}/a.sh ${workspacePath}", timeout: 1000 },
            { type: "command", name: "b", command: "${extensionPath}/b.sh" },
            { type: "command", command: "nameless" },
            // a draft without a name: skipped before anything else of it is read, as cosh skips it
            { type: "command", description: "draft" },
          ] }],
        },
      }),
      "hookbox.toml": '[extensions]\ndirs = ["ext"]\n',
    });
    const config = loadConfig(join(dir, "hookbox.toml"));
    const ext = join(dir, "ext/guard");
    expect(config.extension.hooks.map((h) => [h.name, h.command, h.timeoutMs, h.mounts, h.format])).toEqual([
      ["guard/a", `${ext}/a.sh /workspace`, 1000, [ext], "cosh"],
      ["guard/b", `${ext}/b.sh`, 5000, [ext], "cosh"],
    ]);
    expect(config.extension.hooks[0]!.batch).toBeDefined();
    expect(config.extension.hooks[0]!.batch).toBe(config.extension.hooks[1]!.batch);
    expect(config.warnings).toEqual([expect.stringMatching(/cosh-extension\.json:\d+: hook without a name skipped/), expect.stringMatching(/cosh-extension\.json:\d+: hook without a name skipped/)]);
  });

  it("refuses an extension whose folder, mounted into its hooks' containers, would show the data_dir", () => {
    const dir = tree({
      "ext/guard/cosh-extension.json": JSON.stringify({ name: "guard", hooks: { PreToolUse: [{ hooks: [{ type: "command", name: "a", command: "true" }] }] } }),
      "hookbox.toml": '[server]\ndata_dir = "ext/guard/data"\n\n[extensions]\ndirs = ["ext"]\n',
    });
    expect(configErrorOf(() => loadConfig(join(dir, "hookbox.toml"))).message).toMatch(/hookbox\.toml:5:1: extensions\.dirs\[0\]: mount ".*ext\/guard" would show hookbox's data_dir/);
  });

  it("warns of settings that load but do not do what they say, each at its line", () => {
    const config = parseConfig("c.toml", [
      "[sandbox]", "max_concurrency = 2", "max_tenant_concurrency = 4", "max_timeout = 60000", "max_event_ms = 30000", "pool_size = 4", "pool_max = 2", 'memory = "256m"', "",
      "[[policy.PreToolUse]]", 'name = "p"', 'command = "true"', 'memory = "64m"', "",
      "[[hooks.PreToolUse]]", 'name = "big"', 'command = "true"', 'memory = "1g"', "",
    ].join("\n"));
    expect(config.warnings).toEqual([
      expect.stringMatching(/^c\.toml:3: sandbox\.max_tenant_concurrency: 4 is more than max_concurrency \(2\)/),
      expect.stringMatching(/^c\.toml:5: sandbox\.max_event_ms: 30000 ms is less than max_timeout/),
      expect.stringMatching(/^c\.toml:7: sandbox\.pool_max: 2 is less than pool_size \(4\)/),
      expect.stringMatching(/^c\.toml:10: policy hook "p": memory mean nothing for a hook that runs on the host/),
      expect.stringMatching(/^c\.toml:15: hook "big": memory is more than \[sandbox\] memory \(256m\): a hook may lower the sandbox's limits, never raise them/),
    ]);
  });

  it("fails on a malformed manifest with file, line and reason", () => {
    const dir = tree({
      "ext/bad/cosh-extension.json": '{\n  "name": "bad",\n  "hooks": {\n    "PreToolUse": [\n      { "hooks": [ { "name": "a", "command": 5 } ] }\n    ]\n  }\n}\n',
      "hookbox.toml": '[extensions]\ndirs = ["ext"]\n',
    });
    expect(configErrorOf(() => loadConfig(join(dir, "hookbox.toml"))).message).toMatch(/ext\/bad\/cosh-extension\.json:5:\d+: hooks\.PreToolUse\[0\]\.hooks\[0\]\.command: /);
  });
});

describe("repository hook files are hostile input", () => {
  const claude = (hooks: number) =>
    JSON.stringify({ hooks: { PreToolUse: [{ matcher: "Bash", hooks: Array.from({ length: hooks }, (_, i) => ({ type: "command", command: `./scripts/check-${i}.sh --policy org --verbose ${"x".repeat(40)}` })) }] } }, null, 2);

  it.each([
    [".claude/settings.json", "a link to a host file", (dir: string) => symlinkSync("/etc/hostname", join(dir, ".claude/settings.json")), /^\.claude\/settings\.json: \.claude\/settings\.json is a symbolic link/],
    [".copilot-shell/config.toml", "a link on its path", (dir: string) => symlinkSync("/etc", join(dir, ".copilot-shell")), /^\.copilot-shell\/config\.toml: \.copilot-shell is a symbolic link/],
    [".github/hooks/a.json", "a link in the hooks folder", (dir: string) => symlinkSync("/dev/zero", join(dir, ".github/hooks/a.json")), /^\.github\/hooks\/a\.json: \.github\/hooks\/a\.json is a symbolic link/],
  ])("skips %s through %s with a warning, reading nothing through it", async (_file, _what, plant, message) => {
    const dir = tree({ ".claude/x": "", ".github/hooks/x": "" });
    plant(dir);
    expect(await skippedFileWarning(dir)).toMatch(message);
  });

  it.each([
    ["[hooks] of 16,385 keys", `[hooks]\n${Array.from({ length: 16_385 }, (_, i) => `k${i} = 1`).join("\n")}\n`, /^\.copilot-shell\/config\.toml:1:1: hooks: holds more than 16384 keys \(MAX_OBJECT_KEYS\)$/],
    ["a hook's env of 16,385 keys", `[[hooks.PreToolUse]]\nname = "x"\ncommand = "true"\n[hooks.PreToolUse.env]\n${Array.from({ length: 16_385 }, (_, i) => `K${i} = "v"`).join("\n")}\n`, /^\.copilot-shell\/config\.toml:4:1: hooks\.PreToolUse\[0\]\.env: holds more than 16384 keys/],
  ])("skips a config.toml with %s (MAX_OBJECT_KEYS) at its table's line, in the worker and in hookbox check alike; 16,384 are read", async (_what, content, message) => {
    const dir = tree({ ".copilot-shell/config.toml": content });
    expect((await skippedFileWarning(dir)).replace(/; the file is skipped: none of its hooks are read$/, "")).toMatch(message);
    const fits = tree({ ".copilot-shell/config.toml": `[hooks]\n${Array.from({ length: 16_384 }, (_, i) => `k${i} = 1`).join("\n")}\n` });
    expect((await loadRepositoryHooks(fits, 60_000)).hooks).toEqual([]);
    expect(loadRepositoryHooksSync(fits, 60_000).hooks).toEqual([]);
  });

  it("takes a repository hook's limits at their floors (memory 6m, cpus 0.01)", async () => {
    const set = await loadRepositoryHooks(tree({ ".copilot-shell/config.toml": '[[hooks.PreToolUse]]\nname = "x"\ncommand = "true"\nmemory = "6m"\ncpus = 0.01\n' }), 60_000);
    expect(set.hooks[0]!.limits).toEqual({ memoryBytes: 6 * 1024 * 1024, cpus: 0.01 });
  });

  it("skips a hook file over max_hook_file_bytes unread, naming the file and the key", async () => {
    const dir = tree({ ".claude/settings.json": " ".repeat(1024 + 1) });
    expect(await skippedFileWarning(dir, { maxHookFileBytes: 1024, maxHooks: 1000 }))
      .toBe(".claude/settings.json: the file is larger than 1024 bytes (server.max_hook_file_bytes); the file is skipped: none of its hooks are read");
  });

  it("refuses more hooks than max_repository_hooks", async () => {
    const dir = tree({ ".claude/settings.json": claude(11) });
    expect((await configErrorOfAsync(() => loadRepositoryHooks(dir, 60_000, { maxHookFileBytes: 1024 * 1024, maxHooks: 10 }))).message)
      .toBe(".claude/settings.json:47:11: hooks.PreToolUse[0].hooks[10]: the repository declares more than 10 hooks (server.max_repository_hooks)");
  });

  it("skips at most SKIPPED_HOOKS_FACTOR × max_repository_hooks entries of other types or async, in every format: past them, the file they stand in is skipped whole at the one past, and the workspace's other files load", async () => {
    const { SKIPPED_HOOKS_FACTOR } = await import("../../engine/formats/shared.js");
    const limits = { maxHookFileBytes: 4 * 1024 * 1024, maxHooks: 10 };
    const most = SKIPPED_HOOKS_FACTOR * limits.maxHooks;
    const claudeOf = (handlers: unknown[]) => JSON.stringify({ hooks: { PreToolUse: [{ hooks: handlers }] } });
    const http = (n: number) => Array.from({ length: n }, (_, i) => ({ type: "http", url: "https://example.com", [`k${i}`]: i }));
    const asyncs = (n: number) => Array.from({ length: n }, () => ({ type: "command", command: "x", async: true }));
    expect((await loadRepositoryHooks(tree({ ".claude/settings.json": claudeOf(http(most)) }), 60_000, limits)).hooks).toEqual([]);
    expect(await skippedFileWarning(tree({ ".claude/settings.json": claudeOf(http(most + 1)) }), limits))
      .toMatch(new RegExp(`^\\.claude/settings\\.json:\\d+:\\d+: hooks\\.PreToolUse\\[0\\]\\.hooks\\[${most}\\]: more hook entries hookbox skips than a repository's files may hold \\(${most}:`));
    expect(await skippedFileWarning(tree({ ".codex/hooks.json": claudeOf(asyncs(most + 1)) }), limits)).toMatch(/more hook entries hookbox skips than a repository's files may hold \(40:/);
    const copilot = JSON.stringify({ version: 1, hooks: { preToolUse: Array.from({ length: most + 1 }, () => ({ type: "prompt", prompt: "x" })) } });
    expect(await skippedFileWarning(tree({ ".github/hooks/h.json": copilot }), limits)).toMatch(/more hook entries hookbox skips than a repository's files may hold \(40:/);
    // A guard in another file — its own skipped entry too — loads beside the file skipped: that one's count is given back.
    // (Copilot's files are read first)
    const guard = claudeOf([{ type: "http", url: "https://example.com" }, { type: "command", command: "guard" }]);
    for (const load of [loadRepositoryHooks, loadRepositoryHooksSync]) {
      const set = await load(tree({ ".github/hooks/h.json": copilot, ".claude/settings.json": guard }), 60_000, limits);
      expect(set.hooks.map((h) => h.command)).toEqual(["guard"]);
      expect(set.warnings.filter((w) => w.endsWith("the file is skipped: none of its hooks are read"))).toEqual([expect.stringMatching(/^\.github\/hooks\/h\.json:/)]);
    }
  });

  it("counts and charges a matcher repeated across groups once: a thousand groups of one pattern load", async () => {
    const groups = Array.from({ length: 1001 }, () => ({ matcher: "mcp__.*", hooks: [{ type: "http", url: "https://example.com" }] }));
    const settings = JSON.stringify({ hooks: { PreToolUse: [...groups, { matcher: "mcp__.*", hooks: [{ type: "command", command: "guard" }] }] } });
    for (const load of [loadRepositoryHooks, loadRepositoryHooksSync]) {
      const set = await load(tree({ ".claude/settings.json": settings }), 60_000, { maxHookFileBytes: 1024 * 1024, maxHooks: 1000 });
      expect(set.hooks.map((h) => h.command)).toEqual(["guard"]);
    }
    // distinct ones past max_repository_hooks are still refused
    const distinct = JSON.stringify({ hooks: { PreToolUse: Array.from({ length: 11 }, (_, i) => ({ matcher: `m${i}.*`, hooks: [] })) } });
    expect((await configErrorOfAsync(() => loadRepositoryHooks(tree({ ".claude/settings.json": distinct }), 60_000, { maxHookFileBytes: 1024 * 1024, maxHooks: 10 }))).message)
      .toMatch(/hooks\.PreToolUse\[10\]\.matcher: matcher not compiled: more than 10 distinct matchers and conditions in one repository/);
  });

  it("refuses a file of 60 000 hooks at the hook past the limit, not after building them all", async () => {
    const many = JSON.stringify({ hooks: { preToolUse: Array.from({ length: 60_000 }, () => ({ bash: "x" })) } });
    const dir = tree({ ".github/copilot/settings.json": many });
    const message = (await configErrorOfAsync(() => loadRepositoryHooks(dir, 60_000, { maxHookFileBytes: 4 * 1024 * 1024, maxHooks: 1000 }))).message;
    expect(message).toMatch(/hooks\.preToolUse\[1000\]: the repository declares more than 1000 hooks/);
  });

  it("refuses a JSON hook file of more than MAX_EVENT_CONTAINERS arrays and objects by a byte pass, at the one past it, before any parser walks them", async () => {
    const { MAX_EVENT_CONTAINERS } = await import("../../engine/event-body.js");
    // Arrays nested 60 deep, over and over: what costs JSON.parse and the locator most per byte.
    const nest = `${"[".repeat(60)}${"]".repeat(60)}`;
    const text = `{"junk":[\n${Array.from({ length: Math.ceil(MAX_EVENT_CONTAINERS / 60) + 1 }, () => nest).join(",\n")}],\n"hooks":{"BeforeTool":[{"hooks":[{"type":"command","command":"g.sh"}]}]}}`;
    const message = await skippedFileWarning(tree({ ".gemini/settings.json": text }), { maxHookFileBytes: 4 * 1024 * 1024, maxHooks: 1000 });
    expect(message).toMatch(new RegExp(`^\\.gemini/settings\\.json:${2 + Math.floor((MAX_EVENT_CONTAINERS - 1) / 60)}:\\d+: holds more than ${MAX_EVENT_CONTAINERS} arrays and objects \\(MAX_EVENT_CONTAINERS\\); the file is skipped`));
    // A line comment ended by "\r" (jsonc-parser ends one there) hides nothing from the count.
    const hidden = `{// c\r"junk":[${Array.from({ length: Math.ceil(MAX_EVENT_CONTAINERS / 60) + 1 }, () => nest).join(",")}],"hooks":{"BeforeTool":[{"hooks":[{"type":"command","command":"g.sh"}]}]}}`;
    expect(await skippedFileWarning(tree({ ".gemini/settings.json": hidden }), { maxHookFileBytes: 4 * 1024 * 1024, maxHooks: 1000 })).toMatch(/holds more than 65536 arrays and objects/);
    // at the limit: read
    const fits = `{"junk":[${Array.from({ length: Math.floor((MAX_EVENT_CONTAINERS - 5) / 60) }, () => nest).join(",")}],"hooks":{"BeforeTool":[{"hooks":[{"type":"command","command":"g.sh"}]}]}}`;
    expect((await loadRepositoryHooks(tree({ ".gemini/settings.json": fits }), 60_000)).hooks).toHaveLength(1);
  });

  it("skips a file whose list is not of hooks at its first fault (Claude handlers), skips cosh entries without a name, and reads past a Gemini disabled list that is no list of names", async () => {
    const claudeDir = tree({ ".claude/settings.json": JSON.stringify({ hooks: { PreToolUse: [{ hooks: Array.from({ length: 100_000 }, () => 0) }] } }) });
    expect(await skippedFileWarning(claudeDir)).toMatch(/hooks\.PreToolUse\[0\]\.hooks\[0\]: /);
    // 50 000 cosh entries without a name: each skipped before it is read (as cosh skips them), warned about 100 times at most.
    const coshDir = tree({ ".copilot-shell/config.toml": `[hooks]\nPreToolUse = [${Array.from({ length: 50_000 }, () => "{}").join(",")}]\n` });
    const cosh = await loadRepositoryHooks(coshDir, 60_000);
    expect(cosh.hooks).toEqual([]);
    expect(cosh.warnings.length).toBeLessThanOrEqual(101);
    const geminiDir = tree({ ".gemini/settings.json": JSON.stringify({ hooksConfig: { disabled: [0, 0, 0] }, hooks: { BeforeTool: [{ hooks: [{ type: "command", command: "g.sh" }] }] } }) });
    const set = await loadRepositoryHooks(geminiDir, 60_000);
    expect(set.hooks).toHaveLength(1);
    expect(set.warnings).toEqual([expect.stringMatching(/hooksConfig\.disabled: expected a list of hook names/)]);
  });

  it("gives a Gemini hook the env its handler declares (Gemini CLI's CommandHookConfig env); one hookbox cannot give is warned about and left out, the hook kept — a guard is never dropped over its env", async () => {
    const text = JSON.stringify({ hooks: { BeforeTool: [{ hooks: [
      { type: "command", command: "guard.sh", env: { GUARD_MODE: "enforce" } },
      { type: "command", command: "other.sh", env: { "BAD-NAME": "x" } },
      { type: "command", command: "third.sh", env: null },
      { type: "command", command: "fourth.sh", env: ["A=1"] },
    ] }] } });
    const set = await loadRepositoryHooks(tree({ ".gemini/settings.json": text }), 60_000);
    expect(set.hooks.map((h) => [h.command, h.env])).toEqual([["guard.sh", { GUARD_MODE: "enforce" }], ["other.sh", {}], ["third.sh", {}], ["fourth.sh", {}]]);
    expect(set.warnings).toEqual([
      expect.stringMatching(/hooks\.BeforeTool\[0\]\.hooks\[1\]\.env.*letters, digits and _.*; the hook runs without its env$/),
      expect.stringMatching(/hooks\.BeforeTool\[0\]\.hooks\[2\]\.env: .*; the hook runs without its env$/),
      expect.stringMatching(/hooks\.BeforeTool\[0\]\.hooks\[3\]\.env: .*; the hook runs without its env$/),
    ]);
  });

  it("skips what Gemini CLI's registry discards, with a warning naming the line, and keeps the file's other hooks", async () => {
    const text = JSON.stringify({ hooks: {
      AfterTool: "not a list",
      BeforeTool: [
        { matcher: "shell" },
        { hooks: [{ command: "untyped.sh" }, { type: "command" }, { type: 5, command: "five.sh" }, "a string", { type: "command", command: "kept.sh" }] },
      ],
    } }, null, 2);
    const set = await loadRepositoryHooks(tree({ ".gemini/settings.json": text }), 60_000);
    expect(set.hooks.map((h) => h.command)).toEqual(["kept.sh"]);
    expect(set.warnings).toEqual([
      expect.stringMatching(/^\.gemini\/settings\.json:3: hooks\.AfterTool: an event takes an array of hook groups; skipped, as Gemini CLI skips it$/),
      expect.stringMatching(/^\.gemini\/settings\.json:5: hooks\.BeforeTool\[0\]: a hook group needs a "hooks" list; skipped/),
      expect.stringMatching(/^\.gemini\/settings\.json:\d+: hooks\.BeforeTool\[1\]\.hooks\[0\]: a hook needs "type": "command"; skipped/),
      expect.stringMatching(/hooks\.BeforeTool\[1\]\.hooks\[1\]: a "command" hook needs "command"; skipped/),
      expect.stringMatching(/hooks\.BeforeTool\[1\]\.hooks\[2\]: a hook needs "type": "command"; skipped/),
      expect.stringMatching(/hooks\.BeforeTool\[1\]\.hooks\[3\]: a hook needs "type": "command"; skipped/),
    ]);
  });

  it("reads a Gemini settings.json with comments and trailing commas, as Gemini CLI does; a real syntax error still says where", async () => {
    const set = await loadRepositoryHooks(tree({ ".gemini/settings.json": '{\n  // project settings\n  "hooks": { "BeforeTool": [ { "hooks": [ { "type": "command", "command": "g.sh", }, ], }, ], },\n  /* done */\n}\n' }), 60_000);
    expect(set.hooks.map((h) => h.command)).toEqual(["g.sh"]);
    expect(await skippedFileWarning(tree({ ".gemini/settings.json": '{\n  // ok\n  "hooks": { "BeforeTool": [ } \n}' }))).toMatch(/^\.gemini\/settings\.json:3:\d+: invalid JSON: /);
    // Claude's settings.json stays strict JSON (Claude Code skips one with a comment).
    expect(await skippedFileWarning(tree({ ".claude/settings.json": '{ // no\n}' }))).toMatch(/comments are not JSON/);
  });

  it("reads at most MAX_REPOSITORY_HOOK_FILES hook files, and lists at most MAX_WORKSPACE_WARNINGS warnings, of MAX_WARNINGS_JSON_CHARS together", async () => {
    const { MAX_REPOSITORY_HOOK_FILES, MAX_WORKSPACE_WARNINGS, MAX_WARNINGS_JSON_CHARS, MAX_WARNING_CHARS } = await import("../../engine/repository.js");
    const noisy = JSON.stringify({ version: 1, hooks: {}, ...Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 0])) });
    const files = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`.github/hooks/${String(i).padStart(3, "0")}.json`, noisy]));
    const many = await loadRepositoryHooks(tree(files(MAX_REPOSITORY_HOOK_FILES)), 60_000);
    expect(many.warnings.length).toBeLessThanOrEqual(MAX_WORKSPACE_WARNINGS + 1);
    // Past the budget each is counted, never written: the count is every one of them.
    expect(many.warnings.at(-1)).toBe(`… ${MAX_REPOSITORY_HOOK_FILES * 20 - MAX_WORKSPACE_WARNINGS} more warnings left out (at most 500, of 64 Ki characters of JSON together, are listed per workspace)`);
    // Keys of control characters, six characters each as JSON: as many warnings as fit in MAX_WARNINGS_JSON_CHARS.
    const loud = (i: number) => JSON.stringify({ version: 1, hooks: {}, ...Object.fromEntries(Array.from({ length: 20 }, (_, j) => [`${"\u0001".repeat(MAX_WARNING_CHARS)}${i}-${j}`, 0])) });
    const listed = (await loadRepositoryHooks(tree(Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`.github/hooks/${i}.json`, loud(i)]))), 60_000)).warnings;
    const shown = listed.slice(0, -1);
    const json = (ws: string[]) => ws.reduce((n, w) => n + JSON.stringify(w).length, 0);
    expect(json(shown)).toBeLessThanOrEqual(MAX_WARNINGS_JSON_CHARS);
    expect(json(shown) + JSON.stringify(shown[0]).length).toBeGreaterThan(MAX_WARNINGS_JSON_CHARS);
    expect(listed.at(-1)).toBe(`… ${200 - shown.length} more warnings left out (at most 500, of 64 Ki characters of JSON together, are listed per workspace)`);
    expect((await configErrorOfAsync(() => loadRepositoryHooks(tree(files(MAX_REPOSITORY_HOOK_FILES + 1)), 60_000))).message).toMatch(/more than 512 hook files \(MAX_REPOSITORY_HOOK_FILES\)/);
  });

  it("cuts a warning at MAX_WARNING_CHARS never inside a surrogate pair (a strict JSON reader refuses the lone half)", async () => {
    const { MAX_WARNING_CHARS } = await import("../../engine/repository.js");
    for (const lead of ["", "a"]) {
      const key = `${lead}${"\u{1F600}".repeat(MAX_WARNING_CHARS)}`;
      const set = await loadRepositoryHooks(tree({ ".github/hooks/h.json": JSON.stringify({ version: 1, hooks: {}, [key]: 0 }) }), 60_000);
      const long = set.warnings.filter((w) => w.includes("\u{1F600}"));
      expect(long.length).toBeGreaterThan(0);
      for (const w of long) {
        expect(w.length).toBeLessThanOrEqual(MAX_WARNING_CHARS + 1);
        expect(w, JSON.stringify(w.slice(-4))).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
      }
    }
  });

  it("loads a 120 KB settings.json of valid hooks, each with its line, in linear time", async () => {
    const text = claude(1_000);
    expect(text.length).toBeGreaterThan(120_000);
    const dir = tree({ ".claude/settings.json": text });
    const t0 = performance.now();
    const set = await loadRepositoryHooks(dir, 60_000);
    expect(performance.now() - t0).toBeLessThan(1_000);
    expect(set.hooks).toHaveLength(1_000);
    expect(set.hooks[999]!.origin).toBe(`.claude/settings.json:${7 + 999 * 4}`);
  });

  it("locates paths in JSON and TOML, the deepest prefix that exists", () => {
    const json = jsonLocator('{\n "a": [\n  {"b": 1},\n  {"b": 2, "c": 3}\n ],\n "a": []\n}');
    expect(json(["a"])).toEqual({ line: 6, column: 7 });
    expect(jsonLocator('{"a": [{"b": 1}]}')(["a", 0, "b", "zz"])).toEqual({ line: 1, column: 14 });
    const toml = tomlLocator('[hooks]\nenabled = true\n[[hooks.Stop]]\nname = "x"\n\n[[hooks.Stop]]\nname="y"\ncommand\t= 3\n');
    expect(toml(["hooks", "Stop", 1, "command"])).toEqual({ line: 8, column: 1 });
    expect(toml(["hooks", "Stop", 0, "missing"])).toEqual({ line: 3, column: 1 });
  });

  it("locates the tables of an array element in TOML: [a.b] after [[a]] belongs to a's latest element", () => {
    const toml = tomlLocator(
      ['[[hooks.Stop]]', 'command = "a"', '[hooks.Stop.env]', "A = 1", "[[hooks.Stop]]", 'command = "b"', "[hooks.Stop.env]", "A = 2", "[[hooks.Stop.more]]", "x = 1", "[[hooks.Stop.more]]", "x = 2"].join("\n"),
    );
    expect(toml(["hooks", "Stop", 0, "env", "A"])).toEqual({ line: 4, column: 1 });
    expect(toml(["hooks", "Stop", 1, "env", "A"])).toEqual({ line: 8, column: 1 });
    expect(toml(["hooks", "Stop", 1, "env"])).toEqual({ line: 7, column: 1 });
    expect(toml(["hooks", "Stop", 1, "more", 1, "x"])).toEqual({ line: 12, column: 1 });
    expect(toml(["hooks", "Stop", 0, "more"])).toEqual({ line: 1, column: 1 });
  });

  it(`looks at no more than MAX_TOML_LOOKUP_STEPS (${MAX_TOML_LOOKUP_STEPS}) parts of a path in TOML: a table deeper than them is located by its prefix that deep`, () => {
    const parts = (n: number) => Array.from({ length: n }, (_, i) => `p${i}`);
    const toml = tomlLocator(`[${parts(MAX_TOML_LOOKUP_STEPS).join(".")}]\nk = 1\n[${parts(MAX_TOML_LOOKUP_STEPS + 1).join(".")}]\nk = 2\n`);
    expect(toml(parts(MAX_TOML_LOOKUP_STEPS))).toEqual({ line: 1, column: 1 });
    expect(toml(parts(MAX_TOML_LOOKUP_STEPS + 1))).toEqual({ line: 1, column: 1 });
    expect(toml([...parts(MAX_TOML_LOOKUP_STEPS + 1), "k"])).toEqual({ line: 1, column: 1 });
  });

  it("indexes a TOML text whose lines are long runs of spaces in linear time", () => {
    const text = `${`a${" ".repeat(100_000)}b\n`.repeat(5)}[x]\nk = 1\n`;
    const t0 = performance.now();
    expect(tomlLocator(text)(["x", "k"])).toEqual({ line: 7, column: 1 });
    expect(performance.now() - t0).toBeLessThan(200);
  });

  const TOML = [
    "top = 1", //                 1
    "[hooks]", //                 2
    "Foo = 1", //                 3
    "[[hooks.Stop]]", //          4
    'name = "x"', //              5
    "env.A = 1", //               6
    "[[hooks.Stop]]", //          7
    "command = 3", //             8
    '["quoted name"]', //         9
    "k = 1", //                   10
    `[${"h".repeat(MAX_TOML_NAME_CHARS + 1)}]`, // 11
    "k0 = 1", //                  12
    "[b]", //                     13
    `${"k".repeat(MAX_TOML_NAME_CHARS + 1)} = 1`, // 14
    "short = 1", //               15
  ].join("\n");
  it.each<[string, (string | number)[], number | undefined]>([
    ["a root key", ["top"], 1],
    ["a key of a table", ["hooks", "Foo"], 3],
    ["a table header", ["hooks"], 2],
    ["an array's first element for the array", ["hooks", "Stop"], 4],
    ["an array element", ["hooks", "Stop", 1], 7],
    ["a key of an array element", ["hooks", "Stop", 1, "command"], 8],
    ["a dotted key", ["hooks", "Stop", 0, "env", "A"], 6],
    ["the deepest prefix that exists", ["hooks", "Stop", 0, "env", "B"], 4],
    ["a quoted header", ["quoted name", "k"], 10],
    ["a key under a header too long to index: not indexed", ["h".repeat(MAX_TOML_NAME_CHARS + 1), "k0"], undefined],
    ["a key too long to index: its table instead", ["b", "k".repeat(MAX_TOML_NAME_CHARS + 1)], 13],
    ["a key after a long one", ["b", "short"], 15],
    ["nothing", ["nowhere"], undefined],
  ])("locates %s in TOML", (_what, path, line) => {
    expect(tomlLocator(TOML)(path)).toEqual(line === undefined ? undefined : { line, column: 1 });
  });

  it("queues TOML parses: a parse past its timeout fails alone, the ones behind it get a fresh worker and a clock of their own", async () => {
    const hostile = `[hooks]\na${".b".repeat(300_000)} = 1\n`;
    const results = await Promise.allSettled([
      parseTomlOffThread("a = 1\n"),
      parseTomlOffThread(hostile, 1),
      parseTomlOffThread(hostile, 1),
      parseTomlOffThread("b = 2\n"),
      parseTomlOffThread("c = \n"),
      parseTomlOffThread("[t]\nd = 4\n"),
    ]);
    expect(results.map((r) => (r.status === "fulfilled" ? r.value : r.reason instanceof TomlSyntaxError ? "syntax" : (r.reason as Error).message))).toEqual([
      { a: 1 },
      "parsing took longer than 1 ms",
      "parsing took longer than 1 ms",
      { b: 2 },
      "syntax",
      { t: { d: 4 } },
    ]);
  });

  it("takes turns between parties: one tenant's flood of TOML puts another's parse behind one of its own at most", async () => {
    // Each of these costs the parser tens of milliseconds.
    const heavy = Array.from({ length: 16_000 }, (_, i) => `k${i} = ${i}`).join("\n");
    const order: string[] = [];
    const flood = Array.from({ length: 6 }, (_, i) => parseTomlOffThread(heavy, 5_000, "tenant-a").then(() => order.push(`a${i}`)));
    const other = parseTomlOffThread("x = 1\n", 5_000, "tenant-b").then(() => order.push("b"));
    await Promise.all([...flood, other]);
    // a0 was under way when b arrived; then one of a's, then b's turn.
    expect(order).toEqual(["a0", "a1", "b", "a2", "a3", "a4", "a5"]);
  });

  it("locates by the kept one of duplicate keys, and an array's children by index only", () => {
    expect(jsonLocator('{\n"a":\n{"b":1},\n"a":\n{"c":2}}')(["a", "b"])).toEqual({ line: 5, column: 1 });
    expect(jsonLocator('{"0": {"x": 1}}')([0, "x"])).toEqual({ line: 1, column: 13 });
    expect(jsonLocator('{"a": [{"x": 1}]}')(["a", "0", "x"])).toEqual({ line: 1, column: 7 });
  });

  it("keeps each key once, however deep its values: a 100 000-character key over half a million values costs a moment", () => {
    const inner = `[${Array(2048).fill(0).join(",")}]`;
    const text = `{"${"k".repeat(100_000)}": [${Array(200).fill(inner).join(",")}],\n"hooks": {"PreToolUse": [{"hooks": [{"type": "command"}]}]}}`;
    const t0 = performance.now();
    // past MAX_LOCATED_VALUES the rest is located by what was kept: here, the top level
    expect(jsonLocator(text)(["hooks", "PreToolUse", 0, "hooks", 0])).toEqual({ line: 1, column: 1 });
    expect(jsonLocator(`{"${"k".repeat(100_000)}": 1,\n"hooks": {"x": [1]}}`)(["hooks", "x", 0])).toEqual({ line: 2, column: 17 });
    // one string per value of the whole path would take minutes and gigabytes
    expect(performance.now() - t0).toBeLessThan(5_000);
  });

  it(`keeps the places of an array's or object's first MAX_LOCATED_CHILDREN (${MAX_LOCATED_CHILDREN}) children: one past them is located by its parent`, () => {
    // each child on a line of its own, the array opening on line 2
    const array = `{"a":\n[\n${Array.from({ length: MAX_LOCATED_CHILDREN + 1 }, () => "0").join(",\n")}]}`;
    expect(jsonLocator(array)(["a", MAX_LOCATED_CHILDREN - 1])).toEqual({ line: MAX_LOCATED_CHILDREN + 2, column: 1 });
    expect(jsonLocator(array)(["a", MAX_LOCATED_CHILDREN])).toEqual({ line: 2, column: 1 });
    const object = `{"a":\n{\n${Array.from({ length: MAX_LOCATED_CHILDREN + 1 }, (_, i) => `"k${i}": 0`).join(",\n")}}}`;
    expect(jsonLocator(object)(["a", `k${MAX_LOCATED_CHILDREN - 1}`])).toEqual({ line: MAX_LOCATED_CHILDREN + 2, column: 6 + String(MAX_LOCATED_CHILDREN - 1).length });
    expect(jsonLocator(object)(["a", `k${MAX_LOCATED_CHILDREN}`])).toEqual({ line: 2, column: 1 });
  });

  it("gives up locating in JSON nested too deep for the tree, without throwing", () => {
    const deep = `{"a": ${"[".repeat(100_000)}${"]".repeat(100_000)}}`;
    expect(jsonLocator(deep)(["a"])).toBeUndefined();
  });
});

describe("a hook's command longer than sh -c takes", () => {
  it("is skipped at its line, MAX_COMMAND_BYTES named: a cold run could not start it and a warm one's shell could not run it", async () => {
    const long = `true #${"x".repeat(200 * 1024)}`;
    const past = await loadRepositoryHooks(tree({ ".github/hooks/a.json": JSON.stringify({ version: 1, hooks: { preToolUse: [{ type: "command", bash: long }] } }) }), 60_000);
    expect(past.hooks).toEqual([]);
    expect(past.warnings).toEqual([expect.stringMatching(/^\.github\/hooks\/a\.json:1: hooks\.preToolUse\[0\]\.bash: .*MAX_COMMAND_BYTES.*; skipped/)]);
    // one of the most it may be loads
    const set = await loadRepositoryHooks(tree({ ".github/hooks/a.json": JSON.stringify({ version: 1, hooks: { preToolUse: [{ type: "command", bash: "x".repeat(96 * 1024) }] } }) }), 60_000);
    expect(set.hooks).toHaveLength(1);
  });
});

describe("each agent's own switch turns off that agent's hooks only", () => {
  it.each(["hooks", "codex_hooks"])("Codex's [features] %s = false in .codex/config.toml turns off its hooks.json's and inline hooks, the others' left running, with a warning", async (flag) => {
    const set = await loadRepositoryHooks(tree({
      ".codex/hooks.json": JSON.stringify({ hooks: { PreToolUse: [{ hooks: [{ type: "command", command: "codex.sh" }] }] } }),
      ".codex/config.toml": `model = "o3"\n\n[features]\n${flag} = false\n\n[[hooks.PreToolUse]]\n[[hooks.PreToolUse.hooks]]\ntype = "command"\ncommand = "inline.sh"\n`,
      ".github/hooks/guard.json": JSON.stringify({ version: 1, hooks: { preToolUse: [{ type: "command", bash: "copilot.sh" }] } }),
    }), 60_000);
    expect(set.hooks.map((h) => h.command)).toEqual(["copilot.sh"]);
    expect(set.warnings).toEqual(expect.arrayContaining([expect.stringMatching(/^\.codex\/config\.toml: switches off this repository's codex hooks \(\[features\] hooks = false, or codex_hooks\)/)]));
    // switched on (or not said): both run
    const on = await loadRepositoryHooks(tree({
      ".codex/hooks.json": JSON.stringify({ hooks: { PreToolUse: [{ hooks: [{ type: "command", command: "codex.sh" }] }] } }),
      ".codex/config.toml": `[features]\n${flag} = true\n\n[[hooks.PreToolUse]]\n[[hooks.PreToolUse.hooks]]\ntype = "command"\ncommand = "inline.sh"\n`,
    }), 60_000);
    expect(on.hooks.map((h) => h.command).sort()).toEqual(["codex.sh", "inline.sh"]);
  });
  it("disableAllHooks in .claude/settings.json leaves .github/hooks and .codex guards running, with a warning", async () => {
    const set = await loadRepositoryHooks(tree({
      ".claude/settings.json": JSON.stringify({ disableAllHooks: true, hooks: { PreToolUse: [{ hooks: [{ type: "command", command: "claude.sh" }] }] } }),
      ".github/hooks/guard.json": JSON.stringify({ version: 1, hooks: { preToolUse: [{ type: "command", bash: "copilot.sh" }] } }),
      ".codex/hooks.json": JSON.stringify({ hooks: { PreToolUse: [{ matcher: "Edit", hooks: [{ type: "command", command: "codex.sh" }, { type: "command", command: "bg.sh", async: true }] }] } }),
    }), 60_000);
    expect(set.disableAll).toBe(false);
    expect(set.hooks.map((h) => h.command).sort()).toEqual(["codex.sh", "copilot.sh"]);
    expect(set.warnings).toEqual(expect.arrayContaining([
      expect.stringMatching(/^\.claude\/settings\.json: switches off this repository's claude hooks \(disableAllHooks\)/),
      expect.stringMatching(/^\.codex\/hooks\.json:\d+: .*"async": true hooks decide nothing in Codex; skipped$/),
    ]));
    // Codex: a matcher of names only is exact, and Edit stands for apply_patch.
    const codex = set.hooks.find((h) => h.command === "codex.sh")!;
    expect(codex.matcher!.test("apply_patch")).toBe(true);
    expect(codex.matcher!.test("MultiEdit")).toBe(false);
    expect(codex.matcher!.test("Bash")).toBe(false);
    expect(codex.timeoutMs).toBe(60_000); // 600 s by default, bounded by max_timeout
  });

  it("runs .codex/hooks.json and config.toml guards whatever a disableAllHooks beside them says: Claude Code's switch, which Codex does not read (a warning)", async () => {
    const set = await loadRepositoryHooks(tree({
      ".codex/hooks.json": JSON.stringify({ disableAllHooks: true, hooks: { PreToolUse: [{ hooks: [{ type: "command", command: "codex.sh" }] }] } }),
      ".codex/config.toml": `[[hooks.PreToolUse]]\n[[hooks.PreToolUse.hooks]]\ntype = "command"\ncommand = "inline.sh"\n`,
    }), 60_000);
    expect(set.hooks.map((h) => h.command).sort()).toEqual(["codex.sh", "inline.sh"]);
    expect(set.warnings).toEqual([expect.stringMatching(/^\.codex\/hooks\.json:1: disableAllHooks: Claude Code's switch, which Codex does not read \(its hooks run\); skipped$/)]);
  });

  it("weighs Claude Code's disableAllHooks as Claude Code does: settings.local.json's false switches the project's true back off", async () => {
    const set = await loadRepositoryHooks(tree({
      ".claude/settings.json": JSON.stringify({ disableAllHooks: true, hooks: { PreToolUse: [{ hooks: [{ type: "command", command: "project.sh" }] }] } }),
      ".claude/settings.local.json": JSON.stringify({ disableAllHooks: false, hooks: { PreToolUse: [{ hooks: [{ type: "command", command: "local.sh" }] }] } }),
    }), 60_000);
    expect(set.hooks.map((h) => h.command).sort()).toEqual(["local.sh", "project.sh"]);
    const off = await loadRepositoryHooks(tree({
      ".claude/settings.json": JSON.stringify({ disableAllHooks: false, hooks: { PreToolUse: [{ hooks: [{ type: "command", command: "project.sh" }] }] } }),
      ".claude/settings.local.json": JSON.stringify({ disableAllHooks: true }),
    }), 60_000);
    expect(off.hooks).toEqual([]);
  });
});

describe("a JSONC hook file of nothing but errors", () => {
  it("is skipped at its first error without collecting the others (a 1 MiB of commas holds two million)", async () => {
    const dir = tree({ ".gemini/settings.json": `{${",".repeat(1024 * 1024 - 2)}}` });
    const before = process.memoryUsage().heapUsed;
    const set = await loadRepositoryHooks(dir, 60_000);
    expect(set.warnings).toEqual([expect.stringMatching(/^\.gemini\/settings\.json:1:2: .*found ","/)]);
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(40 * 1024 * 1024);
  });
});

describe("Gemini CLI settings.json", () => {
  it("reads a \"__proto__\" member as a field, as Gemini CLI's JSON.parse does: never as the object's prototype, whose hooks would then run", async () => {
    const set = await loadRepositoryHooks(tree({ ".gemini/settings.json": '{ "__proto__": { "hooks": { "BeforeTool": [ { "hooks": [ { "type": "command", "command": "hidden.sh" } ] } ] } }, // a comment\n}' }), 60_000);
    expect(set.hooks).toEqual([]);
  });
  it("reads a matcher as Gemini does: trimmed, and one JavaScript cannot read as a regex compared as the exact name", async () => {
    const set = await loadRepositoryHooks(tree({ ".gemini/settings.json": JSON.stringify({ hooks: { BeforeTool: [
      { matcher: "[", hooks: [{ type: "command", command: "a.sh" }] },
      { matcher: " run_shell_command ", hooks: [{ type: "command", command: "b.sh" }] },
    ] } }) }), 60_000);
    const [bracket, trimmed] = set.hooks.map((h) => h.matcher!);
    expect([bracket!.test("["), bracket!.test("x[y")]).toEqual([true, false]);
    expect([trimmed!.test("run_shell_command"), trimmed!.test("other")]).toEqual([true, false]);
  });

  it("runs an event's groups together unless one of them says sequential: true (Gemini's planner)", async () => {
    const load = async (sequential: boolean | undefined) =>
      (await loadRepositoryHooks(tree({ ".gemini/settings.json": JSON.stringify({ hooks: { BeforeTool: [
        { matcher: "a", hooks: [{ type: "command", command: "a.sh" }] },
        { matcher: "b", ...(sequential === undefined ? {} : { sequential }), hooks: [{ type: "command", command: "b.sh" }, { type: "command", command: "c.sh" }] },
      ] } }) }), 60_000)).hooks.map((h) => h.batch);
    expect(await load(undefined)).toEqual(["settings.json:BeforeTool", "settings.json:BeforeTool", "settings.json:BeforeTool"]);
    expect(await load(false)).toEqual(["settings.json:BeforeTool", "settings.json:BeforeTool", "settings.json:BeforeTool"]);
    expect(await load(true)).toEqual([undefined, undefined, undefined]);
  });

  it("loads matcher groups (timeout in ms, names, sequential: false together), honours disabled and skips other keys", async () => {
    const dir = tree({
      ".gemini/settings.json": JSON.stringify({
        model: { name: "gemini-2.5-pro" },
        hooksConfig: { disabled: ["noisy"] },
        hooks: {
          enabled: true,
          BeforeTool: [{ matcher: "run_shell_command", sequential: false, hooks: [{ type: "command", name: "guard", command: "g.sh", timeout: 5000 }, { type: "command", command: "h.sh" }, { type: "command", name: "noisy", command: "n.sh" }] }],
          SessionStart: [{ matcher: "startup", hooks: [{ type: "command", command: "s.sh" }] }],
          OnTeleport: [{ hooks: [{ type: "command", command: "t.sh" }] }],
        },
      }, null, 2),
    });
    const set = await loadRepositoryHooks(dir, 60_000);
    expect(set.hooks.map((h) => [h.name, h.point, h.timeoutMs, h.batch !== undefined])).toEqual([
      ["guard", "PreToolUse", 5000, true],
      ["settings.json:BeforeTool[0].hooks[1]", "PreToolUse", 60_000, true],
      ["settings.json:SessionStart[0].hooks[0]", "SessionStart", 60_000, true],
    ]);
    expect(set.hooks[2]!.matchOn).toEqual({ field: "source" });
    expect(set.warnings).toEqual([expect.stringMatching(/^\.gemini\/settings\.json:\d+: hooks\.OnTeleport: unknown event "OnTeleport"; skipped$/)]);
  });
  it("hooksConfig.enabled = false turns off Gemini's repository hooks only", async () => {
    const set = await loadRepositoryHooks(tree({
      ".gemini/settings.json": JSON.stringify({ hooksConfig: { enabled: false }, hooks: { BeforeTool: [{ hooks: [{ type: "command", command: "g.sh" }] }] } }),
      ".claude/settings.json": JSON.stringify({ hooks: { PreToolUse: [{ hooks: [{ type: "command", command: "c.sh" }] }] } }),
    }), 60_000);
    expect(set.hooks.map((h) => h.command)).toEqual(["c.sh"]);
  });
});

describe("hookbox workspace push", () => {
  it("sends every repository hook file the formats read (a source it leaves out never reaches the service)", () => {
    const sent = (path: string) => Object.hasOwn(HOOK_TABLES, path) || HOOK_PATHS.some((p) => path === p || path.startsWith(`${p}/`));
    const missing = REPOSITORY_SOURCES.map((s) => s.path).filter((p) => !sent(p));
    expect(missing).toEqual([]);
    expect(REPOSITORY_SOURCES.map((s) => s.path)).toContain(".gemini/settings.json");
  });
  it("holds to max_hook_file_bytes the files the formats read hooks from, and no other", () => {
    const read = REPOSITORY_SOURCES.map((s) => (s.suffix === undefined ? s.path : `${s.path}/x${s.suffix}`));
    expect(read.filter((p) => !isHookFile(p))).toEqual([]);
    const sentAsHookFiles = [...Object.keys(HOOK_TABLES), ...HOOK_PATHS.filter((p) => p.endsWith(".json")), ".github/hooks/x.json"];
    expect(sentAsHookFiles.filter((p) => isHookFile(p) !== read.includes(p))).toEqual([]);
    for (const p of [".github/hooks/scripts/x.json", ".claude/hooks/x.json", ".github/hooks/x.sh", ".cursor/mcp.json"]) expect(isHookFile(p), p).toBe(false);
  });
});

describe("hook files nested too deep", () => {
  it("are refused at the line and column where they pass 64 levels; comments and strings do not count", async () => {
    const { readJson } = await import("../../engine/formats/shared.js");
    const deep = `{\n  "a": ${"[".repeat(70)}`;
    expect(() => readJson("f.json", deep)).toThrow("f.json:2:71: nested deeper than 64 levels");
    const commented = `// ${"[".repeat(100)}\n/* ${"{".repeat(100)} */\n{"s": "${"[".repeat(100)}", "ok": [[1]]}`;
    expect(readJson("g.json", commented, true).value).toEqual({ s: "[".repeat(100), ok: [[1]] });
  });

  it("are refused at the key that makes an object of more than MAX_OBJECT_KEYS keys; colons in strings and comments do not count", async () => {
    const { readJson } = await import("../../engine/formats/shared.js");
    const keys = (n: number) => Array.from({ length: n }, (_, i) => `"k${i}": "a:b"`).join(",\n");
    expect(() => readJson("f.json", `{"hooks": {\n${keys(16_385)}}}`)).toThrow("f.json:16386:9: holds an object of more than 16384 keys (MAX_OBJECT_KEYS)");
    expect(Object.keys((readJson("g.json", `{"hooks": {\n${keys(16_384)}}} // a: b: c:`, true).value as { hooks: object }).hooks)).toHaveLength(16_384);
  });
});

describe("where a repository's JSON hook file is located", () => {
  it("walks into hooks (and hooksConfig) only: the other members are located as members, their insides passed over", async () => {
    const { LOCATED_MEMBERS, readJson } = await import("../../engine/formats/shared.js");
    const text = `{\n"junk": [\n0,\n{"deep": 1}\n],\n"hooks": {\n"PreToolUse": [\n{"matcher": "Bash"}\n]\n},\n"hooksConfig": {\n"disabled": 1\n}\n}`;
    const within = readJson("s.json", text, false, LOCATED_MEMBERS);
    expect(within.locate(["hooks", "PreToolUse", 0, "matcher"])).toEqual({ line: 8, column: 13 });
    expect(within.locate(["hooksConfig", "disabled"])).toEqual({ line: 12, column: 13 });
    // inside another member: its own place
    expect(within.locate(["junk", 1, "deep"])).toEqual({ line: 2, column: 9 });
    expect(readJson("s.json", text).locate(["junk", 1, "deep"])).toEqual({ line: 4, column: 10 });
    // the value is the whole file's, whatever is located
    expect(within.value).toEqual(readJson("s.json", text).value);
  });
});

describe("a JSONC hook file (Gemini CLI's settings.json)", () => {
  // Read as the JSON it stands for, comments and trailing commas blanked in place: each value as
  // jsonc-parser reads it, each line where it stood.
  it.each([
    ["[1, /* c */ ]", [1]],
    ["[1, // c\n ]", [1]],
    ['{"a":1, // x\n}', { a: 1 }],
    ['{"a":[1,/*,*/],/**/"b":{"c":2,}/* , */ ,}', { a: [1], b: { c: 2 } }],
    ['{"a":"x,] // no comment"  ,  }', { a: "x,] // no comment" }],
    ['{"a": // c\n 1, "__proto__": {"x": 1}}', JSON.parse('{"a": 1, "__proto__": {"x": 1}}') as unknown],
  ])("%s", async (text, value) => {
    const { readJson } = await import("../../engine/formats/shared.js");
    const read = readJson("g.json", text, true);
    expect(read.value).toEqual(value);
    expect(Object.getPrototypeOf(read.value)).toBe(Array.isArray(value) ? Array.prototype : Object.prototype);
  });
  it("locates a hook after comments and trailing commas at its own line and column; an error where jsonc-parser finds it", async () => {
    const { readJson } = await import("../../engine/formats/shared.js");
    const text = `// settings\n{\n  /* the hooks, below */ "hooks": {\n    "BeforeTool": [{"hooks": [{"command": "g",},],},],\n  },\n}`;
    expect(readJson("g.json", text, true).locate(["hooks", "BeforeTool", 0, "hooks", 0, "command"])).toEqual({ line: 4, column: 43 });
    expect(() => readJson("g.json", '{"a": 1 /* open', true)).toThrow(/^g\.json:1:/);
  });
});

describe("Cursor matchers, per the hook they are on", () => {
  it("test beforeReadFile against the tool type (Read, TabRead), subagents against their type, stop against Stop; loop_limit may be null", async () => {
    const { selectHooks } = await import("../../engine/match.js");
    const { emptyHookSet } = await import("../../engine/hooks.js");
    const set = await loadRepositoryHooks(tree({
      ".cursor/hooks.json": JSON.stringify({ version: 1, hooks: {
        beforeReadFile: [{ command: "read.sh", matcher: "^Read$" }, { command: "tab.sh", matcher: "TabRead" }],
        beforeTabFileRead: [{ command: "tabfile.sh", matcher: "TabRead" }],
        subagentStart: [{ command: "explore.sh", matcher: "explore|shell" }],
        stop: [{ command: "stop.sh", matcher: "Stop", loop_limit: null }],
      } }),
    }), 60_000);
    const run = (event: string, body: Record<string, unknown>) =>
      selectHooks({ policy: emptyHookSet(), service: emptyHookSet(), extension: emptyHookSet(), repository: set }, resolveEventName(event)!.point, undefined, { hooksEnabled: true, repositoryHooks: true }, body).map((h) => h.command);
    expect(run("beforeReadFile", { file_path: "/p/secret.env" })).toEqual(["read.sh"]);
    expect(run("beforeTabFileRead", { file_path: "/p/secret.env" })).toEqual(["tabfile.sh"]);
    expect(run("subagentStart", { subagent_type: "explore" })).toEqual(["explore.sh"]);
    expect(run("subagentStart", { subagent_type: "generalPurpose" })).toEqual([]);
    expect(run("stop", { status: "completed" })).toEqual(["stop.sh"]);
    expect(set.warnings).toEqual([]);
  });
  it("warns of a matcher that can never match what Cursor tests it against (a path pattern on beforeReadFile, a prompt pattern on beforeSubmitPrompt)", async () => {
    const set = await loadRepositoryHooks(tree({
      ".cursor/hooks.json": JSON.stringify({ version: 1, hooks: { beforeReadFile: [{ command: "env.sh", matcher: "\\.env$" }], beforeSubmitPrompt: [{ command: "pw.sh", matcher: "password" }] } }),
    }), 60_000);
    expect(set.warnings).toEqual([
      expect.stringMatching(/hooks\.beforeReadFile\[0\]\.matcher: Cursor tests it against "Read" or "TabRead" at beforeReadFile, which it does not match: this hook never runs$/),
      expect.stringMatching(/hooks\.beforeSubmitPrompt\[0\]\.matcher: Cursor tests it against "UserPromptSubmit" at beforeSubmitPrompt, which it does not match: this hook never runs$/),
    ]);
  });
  it("skips, with a warning, hooks under another agent's event names in Cursor's and Gemini CLI's files, and Gemini hooks disabled by their command", async () => {
    const set = await loadRepositoryHooks(tree({
      ".cursor/hooks.json": JSON.stringify({ version: 1, hooks: { PreToolUse: [{ command: "claude-name.sh" }], agentStop: [{ command: "copilot-name.sh" }], preToolUse: [{ command: "cursor.sh" }] } }),
      ".gemini/settings.json": JSON.stringify({ hooksConfig: { disabled: ["off.sh"] }, hooks: { PreToolUse: [{ hooks: [{ type: "command", command: "claude-name.sh" }] }], BeforeTool: [{ hooks: [{ type: "command", command: "gemini.sh" }, { type: "command", command: "off.sh" }] }] } }),
    }), 60_000);
    expect(set.hooks.map((h) => h.command).sort()).toEqual(["cursor.sh", "gemini.sh"]);
    expect(set.warnings).toEqual(expect.arrayContaining([
      expect.stringMatching(/\.cursor\/hooks\.json:\d+: hooks\.PreToolUse: "PreToolUse" is not an event Cursor fires/),
      expect.stringMatching(/\.cursor\/hooks\.json:\d+: hooks\.agentStop: "agentStop" is not an event Cursor fires/),
      expect.stringMatching(/\.gemini\/settings\.json:\d+: hooks\.PreToolUse: "PreToolUse" is not an event Gemini CLI fires/),
    ]));
  });
});

describe("Copilot and cosh repository files read as their agents read them", () => {
  it("skip, with a warning, a Copilot entry with no command (another agent's shape) and an event that is not a list; the rest of the file runs", async () => {
    const set = await loadRepositoryHooks(tree({
      ".github/hooks/mixed.json": JSON.stringify({ version: 1, hooks: {
        preToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "claude-shaped.sh" }] }, { type: "command", bash: "guard.sh" }],
        postToolUse: { type: "command", bash: "not-a-list.sh" },
      } }),
    }), 60_000);
    expect(set.hooks.map((h) => h.command)).toEqual(["guard.sh"]);
    expect(set.warnings).toEqual(expect.arrayContaining([
      expect.stringMatching(/mixed\.json:\d+: hooks\.preToolUse\[0\]: a command hook needs "bash" or "command"; skipped/),
      expect.stringMatching(/mixed\.json:\d+: hooks\.postToolUse: an event takes a list of hooks; skipped/),
    ]));
  });
  it("skip a cosh hook without a name before reading anything else of it, and hooks under events cosh never fires", async () => {
    const set = await loadRepositoryHooks(tree({
      ".copilot-shell/config.toml": '[[hooks.PreToolUse]]\ntimeout = 0\n\n[[hooks.BeforeTool]]\nname = "gemini-name"\ncommand = "b.sh"\n\n[[hooks.PreToolUse]]\nname = "guard"\ncommand = "g.sh"\n',
    }), 60_000);
    expect(set.hooks.map((h) => h.command)).toEqual(["g.sh"]);
    expect(set.warnings).toEqual(expect.arrayContaining([
      expect.stringMatching(/hook without a name skipped/),
      expect.stringMatching(/"BeforeTool" is not an event cosh fires/),
    ]));
  });
});

describe("Claude Code's handler keys", () => {
  it("runs an exec-form hook as its program and arguments, each word as written, the path placeholders filled in — checked by a real sh", () => {
    const hostile = ["a b", "it's", "$(touch /tmp/pwned)", "`id`", "*", "${CLAUDE_PROJECT_DIR}/.claude/guard.js", "x${CLAUDE_PLUGIN_ROOT}y", ""];
    const command = execFormCommand("printf", ["%s\\n", ...hostile]);
    const r = spawnSync("/bin/sh", ["-c", command], { env: { PATH: process.env.PATH ?? "", CLAUDE_PROJECT_DIR: "/workspace" }, encoding: "utf8" });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(["a b", "it's", "$(touch /tmp/pwned)", "`id`", "*", "/workspace/.claude/guard.js", "xy", ""].map((w) => `${w}\n`).join(""));
    // the program is looked up on PATH, never a shell builtin or function
    expect(command.startsWith("exec 'printf' ")).toBe(true);
  });

  it("reads args, onFailure and Claude Code's shorter default timeouts; skips another agent's event names, warned; Codex reads neither key", async () => {
    const set = await loadRepositoryHooks(tree({
      ".claude/settings.json": JSON.stringify({
        hooks: {
          PreToolUse: [{ hooks: [{ type: "command", command: "node", args: ["${CLAUDE_PROJECT_DIR}/.claude/guard.js"], onFailure: "block" }] }],
          UserPromptSubmit: [{ hooks: [{ type: "command", command: "prompt.sh" }] }],
          preToolUse: [{ hooks: [{ type: "command", command: "copilot-name.sh" }] }],
          PostToolBatch: [{ hooks: [{ type: "command", command: "batch.sh" }] }],
        },
      }),
      ".codex/hooks.json": JSON.stringify({ hooks: { PreToolUse: [{ hooks: [{ type: "command", command: "codex.sh", args: ["x"], onFailure: "block" }] }] } }),
    }), 600_000);
    const by = (c: string) => set.hooks.find((h) => h.command === c || h.command.includes(c))!;
    expect(by("guard.js")).toMatchObject({ command: `exec 'node' "\${CLAUDE_PROJECT_DIR}"'/.claude/guard.js'`, failOpen: false, timeoutMs: 600_000 });
    expect(by("prompt.sh")).toMatchObject({ failOpen: true, timeoutMs: 30_000 });
    expect(by("batch.sh").point).toBe("PostToolBatch");
    expect(set.hooks.some((h) => h.command === "copilot-name.sh")).toBe(false);
    expect(by("codex.sh")).toMatchObject({ command: "codex.sh", failOpen: true });
    // a program named like an option is no program: the hook fails as a missing one does, never runs exec's option
    const dash = execFormCommand("-a", ["x", "echo", "RAN"]);
    for (const sh of ["/bin/sh", "/bin/bash"]) {
      const r = spawnSync(sh, ["-c", dash], { encoding: "utf8" });
      expect(r.status, sh).toBe(127);
      expect(r.stdout, sh).toBe("");
    }
    expect(set.warnings).toEqual(expect.arrayContaining([
      expect.stringMatching(/^\.claude\/settings\.json:\d+: .*"preToolUse" is not an event Claude Code fires/),
      expect.stringMatching(/^\.codex\/hooks\.json:\d+: .*unknown key "args"/),
    ]));
  });
});
