/**
 * Attacks through workspaces and parsing, replayed against a running service while a probe calls
 * /healthz every 50 ms: symbolic-link chains that reach host files, JSON that costs quadratic time
 * or nests a million deep, a gzip bomb, a tenant filling the disk. Each is answered in bounded
 * time with its 4xx (or a 200 where the input is legitimate), nothing outside the workspace is
 * read, and the service never stops answering.
 */
import { spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { leftovers } from "../helpers/engine.js";
import { bodyOf, byHand } from "../helpers/raw-http.js";
import { TENANT_UPLOADS_IN_FLIGHT, UPLOAD_PIECE_BYTES } from "../../service/routes/workspaces.js";
import { MAX_META_HEADER_BYTES, MAX_PAX_RECORDS } from "../../engine/workspace-unpack.js";
import { MAX_RESIDENT_HOOK_BYTES, MAX_SUMMARY_HOOKS_JSON_CHARS, TENANT_WORKSPACE_WAITERS } from "../../engine/workspace-store.js";
import { MAX_WARNINGS_JSON_CHARS } from "../../engine/repository.js";
import { REMOVE_AT_ONCE } from "../../engine/workspace-tree.js";
import { MAX_JSONC_COMMENTS } from "../../engine/names.js";
import { MAX_HOOK_MESSAGE_CHARS } from "../../engine/execute.js";
import { MAX_WORD_CUT_CHARS } from "../../engine/detached.js";
import { MAX_TOOL_NAMES } from "../../engine/verdict.js";
import { SKIPPED_HOOKS_FACTOR } from "../../engine/formats/shared.js";
import { underProbe, WORST_HEALTH_MS } from "../helpers/probe.js";
import { METRICS_RENDER_EVERY_MS } from "../../service/metrics.js";
import { startService, tenantsToml, TOKEN_A, TOKEN_B, type Service } from "../helpers/service.js";
import { badSizeMember, paxRecords, rawMember, sparseTarGz, TAR_END, tarOf, zerosGzip, type Entry } from "../helpers/tar.js";

const MiB = 1024 * 1024;
const auth = { authorization: `Bearer ${TOKEN_A}` };

/** /metrics rendered after now: a scrape within METRICS_RENDER_EVERY_MS of the last is given that one. */
async function freshMetrics(svc: Service): Promise<string> {
  await new Promise((r) => setTimeout(r, METRICS_RENDER_EVERY_MS));
  return (await fetch(`${svc.url}/metrics`, { headers: auth })).text();
}

interface ErrorBody {
  error: { code: string; message: string };
}

const put = (svc: Service, id: string, body: Buffer) => fetch(`${svc.url}/v1/workspaces/${id}`, { method: "PUT", headers: auth, body });
const get = (svc: Service, id: string) => fetch(`${svc.url}/v1/workspaces/${id}`, { headers: auth });

async function alive(svc: Service): Promise<void> {
  expect(svc.proc.exitCode).toBeNull();
  expect(svc.proc.signalCode).toBeNull();
  expect((await fetch(`${svc.url}/healthz`)).status).toBe(200);
}

/** Runs the attack under the probe; its answer, read whole, as text. */
async function attack(svc: Service, send: () => Promise<Response>, withinMs = 5_000): Promise<{ status: number; text: string }> {
  const { value, ms, health } = await underProbe(svc.url, async () => {
    const res = await send();
    return { status: res.status, text: await res.text() };
  });
  expect(ms).toBeLessThan(withinMs);
  expect(health.failures).toBe(0);
  expect(health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
  await alive(svc);
  return value;
}

/** Every regular file under `dir`, links not followed. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const at = join(dir, name);
    const st = lstatSync(at);
    return st.isDirectory() ? filesUnder(at) : st.isFile() ? [at] : [];
  });
}

const errorOf = (text: string) => (JSON.parse(text) as ErrorBody).error;
/** A stored workspace's answer: its hooks' commands and its warnings. */
const storedOf = (text: string) => {
  const info = JSON.parse(text) as { hooks: { name: string }[]; warnings: string[] };
  return { hooks: info.hooks, warnings: info.warnings };
};

/**
 * A PUT on a connection of its own: another tenant is another client, never the next request on a
 * socket this test's refused uploads of one tenant used (the service reads a refused body's rest for
 * a moment only, then closes its connection).
 */
function putAlone(url: string, token: string, body: Uint8Array): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "PUT", agent: false, headers: { authorization: `Bearer ${token}`, "content-length": body.byteLength } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve(new Response(Buffer.concat(chunks), { status: res.statusCode })));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** `d0/…/d23/s -> ../`×24: the workspace root, reached by a link that looks harmless. */
const DEEP = Array.from({ length: 24 }, (_, i) => `d${i}`).join("/");
const ROOT_LINK: Entry = { name: `${DEEP}/s`, type: "symlink", linkname: "../".repeat(24) };
/** A link that passes the lexical check and, through ROOT_LINK, climbs 25 levels out to `hostPath`. */
const chainTo = (name: string, hostPath: string): Entry => {
  const up = "../".repeat(name.split("/").length - 1);
  return { name, type: "symlink", linkname: `${up}${DEEP}/s/${"../".repeat(25)}${hostPath.replace(/^\//, "")}` };
};

describe("workspaces cannot read the host", () => {
  let svc: Service;
  const scratch = mkdtempSync(join(tmpdir(), "hookbox-attack-"));
  const canaryText = `canary-${process.pid}-${Date.now()}`;
  const canary = join(scratch, "canary.json");
  writeFileSync(canary, JSON.stringify({ hooks: {}, canary: canaryText }));
  const answers: string[] = [];

  beforeAll(async () => {
    svc = await startService(`[sandbox]\npool_size = 0\n\n[[hooks.PreToolUse]]\nname = "service-marker-hook"\ncommand = "echo '{}'"\n`);
  });
  afterAll(async () => {
    for (const text of answers) expect(text).not.toContain(canaryText);
    expect(svc.logs()).not.toContain(canaryText);
    await svc.stop();
    expect((await leftovers()).containers).toEqual([]);
  });

  it.each<[string, () => Entry[], string]>([
    ["a chain to /etc/hostname", () => [ROOT_LINK, chainTo(".claude/settings.json", "/etc/hostname")], ".claude/settings.json"],
    ["a chain to a canary file", () => [ROOT_LINK, chainTo(".claude/settings.json", canary)], ".claude/settings.json"],
    ["a chain whose entries come in the other order", () => [chainTo(".claude/settings.json", canary), ROOT_LINK], ".claude/settings.json"],
    ["a chain to the service's own config", () => [ROOT_LINK, chainTo(".copilot-shell/config.toml", join(svc.dir, "hookbox.toml"))], ".copilot-shell/config.toml"],
    ["a chain to /dev/zero", () => [ROOT_LINK, chainTo(".github/hooks/zero.json", "/dev/zero")], ".github/hooks/zero.json"],
  ])("refuses %s with 400 archive_refused naming the entry", async (_what, entries, entry) => {
    const { status, text } = await attack(svc, async () => put(svc, "chain", await tarOf(entries())));
    answers.push(text);
    expect(status).toBe(400);
    const err = errorOf(text);
    expect(err.code).toBe("archive_refused");
    expect(err.message).toContain(`archive entry "${entry}": link passes through another link (${DEEP}/s)`);
    expect(text).not.toContain("service-marker-hook");
    expect((await get(svc, "chain")).status).toBe(404);
  });

  it("refuses a chain whose last link ends an archive without its end blocks (60 folders to make first), and every refusal of a last entry", async () => {
    // tar-stream ends its stream right after the last entry's header when no end blocks follow: the
    // entry's own work (its 60 folders, its link) once went on after the tree had been judged.
    const withoutEnd = (tar: Buffer) => {
      let end = tar.length;
      while (end >= 512 && tar.subarray(end - 512, end).every((b) => b === 0)) end -= 512;
      return tar.subarray(0, end);
    };
    const deep = `${Array.from({ length: 60 }, (_, i) => `x${i}`).join("/")}/q`;
    const archive = withoutEnd(await tarOf([ROOT_LINK, chainTo(deep, "/etc/hostname")]));
    const { status, text } = await attack(svc, () => put(svc, "chain-end", archive));
    answers.push(text);
    expect(status, text).toBe(400);
    expect(errorOf(text)).toMatchObject({ code: "archive_refused", message: expect.stringContaining(`link passes through another link (${DEEP}/s)`) });
    // the same again, each time: the race it once lost was the last entry's 60 folders against the judging of the tree
    for (let i = 0; i < 4; i++) {
      const again = await put(svc, "chain-end", archive);
      const body = await again.text();
      answers.push(body);
      expect(again.status, body).toBe(400);
    }
    expect((await get(svc, "chain-end")).status).toBe(404);
    const hardLinkLast = withoutEnd(await tarOf([{ name: "a", content: "x" }, { name: "b", type: "link", linkname: "a" }]));
    const link = await put(svc, "link-end", hardLinkLast);
    const linkText = await link.text();
    expect(link.status, linkText).toBe(400);
    expect(errorOf(linkText)).toMatchObject({ code: "archive_refused", message: expect.stringContaining("hard links are not accepted") });
  });

  it(`answers an archive cut short inside a file whose folder it makes first with 400, ${TENANT_UPLOADS_IN_FLIGHT + 1} times over, and then takes a whole one: no upload place, quota or file held`, async () => {
    // The entry's stream died with the archive while its folder was being made; piped after, it
    // never ended, and the upload never answered, holding one of the tenant's upload places for good.
    const whole = await tarOf([{ name: "a/f", content: "x".repeat(1000) }]);
    const gz = await tarOf([{ name: "a/f", content: "x".repeat(100_000) }], { gzip: true });
    for (const [i, cut] of [whole.subarray(0, 700), gz.subarray(0, gz.length - 10), whole.subarray(0, 700), whole.subarray(0, 512), whole.subarray(0, 700)].entries()) {
      const { status, text } = await attack(svc, () => put(svc, `cut-${i}`, cut));
      expect(status, text).toBe(400);
      expect(errorOf(text)).toMatchObject({ code: "archive_invalid", message: expect.stringMatching(/Unexpected end of data|unexpected end of file/) });
    }
    const ok = await put(svc, "cut-whole", whole);
    expect(ok.status, await ok.text()).toBe(200);
    const incoming = spawnSync("find", [join(svc.dataDir, "workspaces"), "-name", "*incoming*"], { encoding: "utf8" }).stdout;
    expect(incoming).toBe("");
  });

  it(`answers an entry whose size field cannot be read with 400 naming it within seconds, plain, gzip, a link, after a whole entry, ${TENANT_UPLOADS_IN_FLIGHT + 1} times over, and then takes a whole one: no upload place, quota or file held`, async () => {
    // A base-256 size opening 0x81–0xFE, which tar-stream reads as null: the entry never ended, and
    // the upload, all its bytes in (no idle or max timer left to fire), was never answered — four
    // such locked the tenant out of uploads (429) until a restart.
    const cases: [string, Buffer][] = [
      ["a.txt", Buffer.concat([badSizeMember("a.txt"), TAR_END])],
      ["a.txt", gzipSync(Buffer.concat([badSizeMember("a.txt", "0", 0xfe), TAR_END]))],
      ["l", Buffer.concat([badSizeMember("l", "2", 0x81, "a.txt"), TAR_END])],
      ["b.txt", Buffer.concat([rawMember("ok.txt", "0", Buffer.from("hi\n")), badSizeMember("b.txt", "0", 0xc0), TAR_END])],
      ["a.txt", Buffer.concat([badSizeMember("a.txt", "0", 0x81), TAR_END])],
    ];
    expect(cases[0]![1]).toHaveLength(1536);
    for (const [i, [entry, archive]] of cases.entries()) {
      const { status, text } = await attack(svc, () => put(svc, `bad-size-${i}`, archive), 2_000);
      expect(status, text).toBe(400);
      expect(errorOf(text)).toMatchObject({ code: "archive_refused", message: `archive entry ${JSON.stringify(entry)}: invalid size field` });
      expect((await get(svc, `bad-size-${i}`)).status).toBe(404);
    }
    const ok = await put(svc, "bad-size-whole", await tarOf([{ name: "a.txt", content: "a" }]));
    expect(ok.status, await ok.text()).toBe(200);
    const incoming = spawnSync("find", [join(svc.dataDir, "workspaces"), "-name", "*incoming*"], { encoding: "utf8" }).stdout;
    expect(incoming).toBe("");
  });

  it("keeps links that stay inside and point at no other link", async () => {
    const entries: Entry[] = [
      { name: "shared/settings.json", content: "{}" },
      { name: "docs/readme", type: "symlink", linkname: "../shared/settings.json" },
      { name: "up", type: "symlink", linkname: "." },
    ];
    const { status, text } = await attack(svc, async () => put(svc, "inside", await tarOf(entries)));
    expect(status, text).toBe(200);
  });

  it("reads no repository hook file that is a link, even one that stays inside: skipped unread, warned", async () => {
    const entries: Entry[] = [{ name: "shared/settings.json", content: JSON.stringify({ hooks: { PreToolUse: [{ hooks: [{ type: "command", command: "linked.sh" }] }] } }) }, { name: ".claude/settings.json", type: "symlink", linkname: "../shared/settings.json" }];
    const { status, text } = await attack(svc, async () => put(svc, "linked-hooks", await tarOf(entries)));
    expect(status, text).toBe(200);
    expect(storedOf(text)).toEqual({ hooks: [], warnings: [expect.stringMatching(/^\.claude\/settings\.json: \.claude\/settings\.json is a symbolic link.*; the file is skipped/)] });
  });

  it("`hookbox workspace push` follows a repository's links only to what it sends anyway: never out of the folder, never to .env or .git", async () => {
    // A hostile checkout on the developer's machine: its links point at the user's own files, and
    // at the checkout's untracked secrets.
    const home = mkdtempSync(join(tmpdir(), "hookbox-home-"));
    mkdirSync(join(home, ".claude"));
    writeFileSync(join(home, ".claude/settings.json"), JSON.stringify({ hooks: { PreToolUse: [{ hooks: [{ type: "command", command: `echo ${canaryText}-settings` }] }] } }));
    mkdirSync(join(home, ".ssh"));
    writeFileSync(join(home, ".ssh/id_rsa"), `${canaryText}-key`);
    const repo = mkdtempSync(join(tmpdir(), "hookbox-repo-"));
    symlinkSync(join(home, ".claude"), join(repo, ".claude")); // .claude/settings.json would be the user's own
    symlinkSync(join(home, ".ssh"), join(repo, ".cursor"));
    writeFileSync(join(repo, ".env"), `API_KEY=${canaryText}-env`);
    mkdirSync(join(repo, ".git"));
    writeFileSync(join(repo, ".git/config"), `url = https://${canaryText}-git@example.com/r`);
    // .GIT is .git where the file system ignores case (macOS, Windows): never sent either.
    mkdirSync(join(repo, ".GIT"));
    writeFileSync(join(repo, ".GIT/config"), `url = https://${canaryText}-GIT@example.com/r`);
    mkdirSync(join(repo, ".github/hooks/lib"), { recursive: true });
    writeFileSync(join(repo, ".github/hooks/hooks.json"), JSON.stringify({ version: 1, hooks: { preToolUse: [{ type: "command", bash: "sh .github/hooks/guard.sh" }] } }));
    writeFileSync(join(repo, ".github/hooks/lib/guard.sh"), "echo guard-body\n");
    symlinkSync("lib/guard.sh", join(repo, ".github/hooks/guard.sh"));
    symlinkSync(join(home, ".ssh/id_rsa"), join(repo, ".github/hooks/key.json"));
    symlinkSync("../../.env", join(repo, ".github/hooks/env"));
    symlinkSync("../../.git/config", join(repo, ".github/hooks/gitcfg"));
    symlinkSync("../../.GIT/config", join(repo, ".github/hooks/gitcfg2"));
    // a .git inside a hook folder: never sent, nor reached by a link
    mkdirSync(join(repo, ".github/hooks/.git"));
    writeFileSync(join(repo, ".github/hooks/.git/config"), `url = https://${canaryText}-nested@example.com/r`);
    symlinkSync(".git/config", join(repo, ".github/hooks/gitcfg3"));
    const viaLink = join(mkdtempSync(join(tmpdir(), "hookbox-link-")), "checkout");
    symlinkSync(repo, viaLink); // the folder named by a link: read as the folder it is
    for (const [folder, args] of [[repo, []], [viaLink, ["--all"]]] as const) {
      const pushed = spawnSync(process.execPath, ["dist/cli/main.js", "workspace", "push", folder, ...args, "--url", svc.url, "--token", TOKEN_A, "--id", "linked-out"]);
      const stderr = pushed.stderr.toString();
      expect(pushed.status, stderr).toBe(0);
      expect(stderr).toContain(args.length ? "warning: .claude is a link out of" : "warning: .claude is a link: nothing under it is sent");
      expect(stderr).toContain(".github/hooks/key.json is a link out of");
      expect(stderr).toMatch(/\.cursor is a link( out of|: nothing under it is sent)/);
      expect(stderr).toContain(".github/hooks/gitcfg is a link to .git/config, which is not sent: skipped");
      expect(stderr).toContain(".github/hooks/gitcfg2 is a link to .GIT/config, which is not sent: skipped");
      expect(stderr).toContain(".github/hooks/gitcfg3 is a link to .github/hooks/.git/config, which is not sent: skipped");
      if (!args.length) expect(stderr).toContain(".github/hooks/env is a link to .env, which is not sent: skipped");
      // hooks.json, lib/guard.sh and guard.sh; with --all also .env and the link to it
      expect(stderr).toContain(args.length ? "uploaded 5 files, 1 repository hooks" : "uploaded 3 files, 1 repository hooks");
      const info = (await (await get(svc, "linked-out")).json()) as { files: number; hooks: { origin: string }[] };
      expect(info.files).toBe(args.length ? 5 : 3);
      expect(info.hooks.map((h) => h.origin)).toEqual([".github/hooks/hooks.json:1"]);
      const stored = filesUnder(svc.dataDir).map((f) => readFileSync(f));
      expect(stored.some((b) => b.includes("guard-body"))).toBe(true);
      for (const secret of ["-settings", "-key", "-git", "-GIT", "-nested", ...(args.length ? [] : ["-env"])]) expect(stored.some((b) => b.includes(`${canaryText}${secret}`)), secret).toBe(false);
    }
  });

  it.each<[string, Entry[], string, RegExp]>([
    ["a file of a folder's name", [{ name: "a/b", content: "1" }, { name: "a", content: "2" }], "a", /archive names it twice, as a folder and as a file or link \(EEXIST\)/],
    ["a link of a folder's name", [{ name: "d/x", content: "1" }, { name: "d", type: "symlink", linkname: "x" }], "d", /archive names it twice.*\(EEXIST\)/],
    ["a name with a part of 256 bytes", [{ name: `x/${"n".repeat(256)}`, content: "1" }], "x/nnn", /a part of the name is longer than 255 bytes \(NAME_MAX\)/],
    ["a link to nothing named", [{ name: "l", type: "symlink", linkname: "" }], "l", /link with an empty target/],
  ])("refuses %s with 400 archive_refused naming the entry, never as an archive that is not tar", async (_what, entries, entry, why) => {
    const { status, text } = await attack(svc, async () => put(svc, "fs-refused", await tarOf(entries)));
    expect(status, text).toBe(400);
    const err = errorOf(text);
    expect(err.code).toBe("archive_refused");
    expect(err.message).toContain(`archive entry "${entry}`);
    expect(err.message).toMatch(why);
    expect((await get(svc, "fs-refused")).status).toBe(404);
  });

  it("refuses an entry whose path would pass PATH_MAX under the workspace's own name, so every stored workspace can be deleted", async () => {
    const id = "A".repeat(128);
    const base = join(svc.dataDir, "workspaces", createHash("sha256").update("team-a").digest("hex").slice(0, 16));
    // Fits under a short staging folder (`.incoming-` + a UUID), not under the 128-character id.
    const length = 4095 - base.length - 48 - 10;
    const parts = Array.from({ length: Math.ceil(length / 200) }, (_, i) => `${i}`.padEnd(199, "d"));
    const name = parts.join("/").slice(0, length);
    const { status, text } = await attack(svc, async () => put(svc, id, await tarOf([{ name, content: "x" }])));
    expect(status, text).toBe(400);
    expect(errorOf(text).message).toMatch(/ENAMETOOLONG/);
    // Nothing stored that cannot be walked: the id is free, uploads and deletes work.
    expect((await fetch(`${svc.url}/v1/workspaces/${id}`, { method: "DELETE", headers: auth })).status).toBe(404);
    expect((await put(svc, id, await tarOf([{ name: "a.txt", content: "x" }]))).status).toBe(200);
    expect((await fetch(`${svc.url}/v1/workspaces/${id}`, { method: "DELETE", headers: auth })).status).toBe(204);
  });

  it("skips a hook file of max_hook_file_bytes + 1 unread, a warning naming the file", async () => {
    const content = `{"hooks": {}, "pad": "${"x".repeat(MiB + 1 - 24)}"}`;
    expect(content.length).toBe(MiB + 1);
    const { status, text } = await attack(svc, async () => put(svc, "big-hooks", await tarOf([{ name: ".claude/settings.json", content }])));
    expect(status, text).toBe(200);
    expect(storedOf(text).warnings).toEqual([`.claude/settings.json: the file is larger than ${MiB} bytes (server.max_hook_file_bytes); the file is skipped: none of its hooks are read`]);
  });

  it("loads a 120 KB .claude/settings.json of 1000 valid hooks in bounded time", async () => {
    const settings = {
      hooks: { PreToolUse: [{ matcher: "Bash", hooks: Array.from({ length: 1_000 }, (_, i) => ({ type: "command", command: `./scripts/check-${i}.sh --policy org ${"x".repeat(40)}` })) }] },
    };
    const content = JSON.stringify(settings, null, 2);
    expect(content.length).toBeGreaterThan(120_000);
    const { status, text } = await attack(svc, async () => put(svc, "many-hooks", await tarOf([{ name: ".claude/settings.json", content }])));
    expect(status, text).toBe(200);
    const info = JSON.parse(text) as { hooks: { origin: string }[] };
    expect(info.hooks).toHaveLength(1_000);
    expect(info.hooks[999]!.origin).toBe(`.claude/settings.json:${7 + 999 * 4}`);
  });

  it("loads four JSON hook files of a megabyte of other values each, beside one hook each, without holding the event loop, and locates each hook", async () => {
    const junk = `[${"0,".repeat(450_000)}0]`;
    const claude = (n: string) => JSON.stringify({ junk: JSON.parse(junk) as unknown, hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: n }] }] } }, null, 0).replace('"hooks"', '\n"hooks"');
    const entries: Entry[] = [
      { name: ".claude/settings.json", content: claude("project.sh") },
      { name: ".claude/settings.local.json", content: claude("local.sh") },
      { name: ".codex/hooks.json", content: claude("codex.sh") },
      { name: ".gemini/settings.json", content: `// comments and trailing commas: Gemini's own reading\n{"junk": ${junk},\n"hooks": {"BeforeTool": [{"matcher": "x", "hooks": [{"type": "command", "command": "gemini.sh",},],},],},}` },
    ];
    for (const e of entries) expect(Buffer.byteLength((e as { content: string }).content)).toBeGreaterThan(900_000);
    // as a plain tar: gzip would make it a "bomb" (max_unpack_ratio)
    const { status, text } = await attack(svc, async () => put(svc, "big-json", await tarOf(entries)));
    expect(status, text).toBe(200);
    const hooks = (JSON.parse(text) as { hooks: { origin: string; command: string }[] }).hooks;
    expect(hooks.map((h) => h.origin).sort()).toEqual([".claude/settings.json:2", ".claude/settings.local.json:2", ".codex/hooks.json:2", ".gemini/settings.json:3"]);
  });

  it("loads JSON hook files of a mebibyte of blanks each (spaces and tabs: jsonc-parser's scanner builds such a run a character at a time) without holding the event loop, and locates each hook and error after them", async () => {
    const blanks = (n: number) => " \t".repeat(n / 2);
    const guarded = (command: string) => `{"PreToolUse": [{"matcher": "Bash", "hooks": [${blanks(900_000)}{"type": "command", "command": "${command}"}]}]}`;
    const entries: Entry[] = [
      { name: ".claude/settings.json", content: `{"hooks":\n${guarded("project.sh")}}` },
      // blanks of a key and a string are no run between tokens: kept, and the file read as it is
      { name: ".codex/hooks.json", content: `{"hooks":\n{"PreToolUse": [{"hooks": [{"type": "command", "command": "codex.sh"}]}]}, "a${" ".repeat(40)}b": "${" ".repeat(900_000)}"}` },
      { name: ".gemini/settings.json", content: `// Gemini's own reading\n{${blanks(900_000)}\n"hooks": {"BeforeTool": [{"matcher": "x", "hooks": [{"type": "command", "command": "gemini.sh",},],},],},}` },
      // an error after a run: located past it
      { name: ".github/hooks/bad.json", content: `{"version": 1,${blanks(900_000)}\n  "hooks": {"preToolUse": [{"type": "command" "bash": "x"}]}}` },
    ];
    for (const e of entries) expect(Buffer.byteLength((e as { content: string }).content)).toBeGreaterThan(900_000);
    const { status, text } = await attack(svc, async () => put(svc, "blank-json", await tarOf(entries)));
    expect(status, text).toBe(200);
    const hooks = (JSON.parse(text) as { hooks: { origin: string; command: string }[] }).hooks;
    expect(hooks.map((h) => h.origin).sort()).toEqual([".claude/settings.json:2", ".codex/hooks.json:2", ".gemini/settings.json:3"]);
    expect(storedOf(text).warnings).toEqual([expect.stringMatching(/^\.github\/hooks\/bad\.json:2:47: invalid JSON: expected ',' or '}', found "\\"".*; the file is skipped/)]);
  });

  it("skips a megabyte .gemini/settings.json with an error at its end with a located warning, found in the one scan that reads it", async () => {
    const junk = `[${"0,".repeat(450_000)}0]`;
    const lines = `${"// a line of comment\n".repeat(2_000)}`;
    const content = `${lines}{"junk": ${junk},\n"hooks": {"BeforeTool": [{"matcher": "x" "hooks": []}]}}`;
    expect(Buffer.byteLength(content)).toBeGreaterThan(900_000);
    const { status, text } = await attack(svc, async () => put(svc, "bad-jsonc", await tarOf([{ name: ".gemini/settings.json", content }])));
    expect(status, text).toBe(200);
    expect(storedOf(text).warnings).toEqual([expect.stringMatching(/^\.gemini\/settings\.json:2002:\d+: invalid JSON: expected ',' or '}', found "\\"".*; the file is skipped/)]);
  });

  it("loads 500 Copilot hook files without holding the event loop", async () => {
    const entries: Entry[] = Array.from({ length: 500 }, (_, i) => ({
      name: `.github/hooks/h${i}.json`,
      content: JSON.stringify({ version: 1, hooks: { preToolUse: [{ type: "command", bash: `echo ${i}` }] } }),
    }));
    const { status, text } = await attack(svc, async () => put(svc, "many-files", await tarOf(entries, { gzip: true })));
    expect(status, text).toBe(200);
    expect((JSON.parse(text) as { hooks: unknown[] }).hooks).toHaveLength(500);
  });

  it("parses a hostile 1 MiB .copilot-shell/config.toml off the main thread", async () => {
    // A dotted key of 300 000 parts costs the TOML parser a few hundred ms: in a worker, not on the loop that serves everyone.
    const content = `[hooks]\n${"a".repeat(1)}${".b".repeat(300_000)} = 1\n`;
    expect(content.length).toBeLessThan(MiB);
    const { status, text } = await attack(svc, async () => put(svc, "toml-bomb", await tarOf([{ name: ".copilot-shell/config.toml", content }])));
    expect(status, text).toBe(200);
    expect(storedOf(text).warnings).toEqual([expect.stringMatching(/^\.copilot-shell\/config\.toml.*; the file is skipped/)]);
    // A valid one still loads, through the same worker.
    const ok = await put(svc, "toml-ok", await tarOf([{ name: ".copilot-shell/config.toml", content: '[[hooks.PreToolUse]]\nname = "x"\ncommand = "true"\n' }]));
    expect(ok.status).toBe(200);
  });

  it("sends the main thread only the [hooks] of a config.toml, and at most MAX_TOML_VALUES of them: 350 000 empty tables cost it nothing", async () => {
    const tables = (n: number) => `[${"{},".repeat(n - 1)}{}]`;
    // outside [hooks]: left in the worker
    const outside = `a = ${tables(340_000)}\n[[hooks.PreToolUse]]\nname = "x"\ncommand = "true"\n`;
    expect(outside.length).toBeLessThan(MiB);
    const kept = await attack(svc, async () => put(svc, "toml-outside", await tarOf([{ name: ".copilot-shell/config.toml", content: outside }])));
    expect(kept.status, kept.text).toBe(200);
    // inside [hooks]: the file skipped by count, before anything is sent
    const inside = `[hooks]\nx = ${tables(340_000)}\n`;
    const refused = await attack(svc, async () => put(svc, "toml-inside", await tarOf([{ name: ".copilot-shell/config.toml", content: inside }])));
    expect(refused.status, refused.text).toBe(200);
    expect(storedOf(refused.text).warnings).toEqual([expect.stringMatching(/more than 100000 values \(MAX_TOML_VALUES\).*; the file is skipped/)]);
  });

  it("takes a hook name of 256 characters and skips a hook of one of 257, warned at its line", async () => {
    const toml = (n: number) => `[[hooks.PreToolUse]]\nname = "${"n".repeat(n)}"\ncommand = "true"\n`;
    expect((await put(svc, "name-256", await tarOf([{ name: ".copilot-shell/config.toml", content: toml(256) }]))).status).toBe(200);
    const res = await put(svc, "name-257", await tarOf([{ name: ".copilot-shell/config.toml", content: toml(257) }]));
    expect(res.status).toBe(200);
    expect(storedOf(await res.text())).toEqual({ hooks: [], warnings: [expect.stringMatching(/^\.copilot-shell\/config\.toml:2: hooks\.PreToolUse\[0\]\.name: a hook name is at most 256 characters; skipped/)] });
  });

  it("refuses more than max_repository_hooks (1000) hooks with 400", async () => {
    const entries: Entry[] = Array.from({ length: 2 }, (_, i) => ({
      name: `.github/hooks/h${i}.json`,
      content: JSON.stringify({ version: 1, hooks: { preToolUse: Array.from({ length: 501 }, () => ({ type: "command", bash: "true" })) } }),
    }));
    const { status, text } = await attack(svc, async () => put(svc, "too-many-hooks", await tarOf(entries)));
    expect(status).toBe(400);
    expect(errorOf(text).message).toMatch(/more than 1000 hooks \(server\.max_repository_hooks\)/);
  });

  it("refuses 2 000 costly matchers in groups without hooks once they pass the workspace's compile budget, never compiling them all", async () => {
    // Each `[a-z]{2xx}` is a ~250-instruction RE2 program (~0.1–0.25 ms to build); 20 000 of them
    // (as `\\pL{2xx}`) in groups with no hooks once took 3.4 s in one piece, and loaded. Compiling
    // stops at MAX_REPOSITORY_MATCHER_PROGRAM instructions (about 160 of these).
    const groups = Array.from({ length: 2_000 }, (_, i) => ({ matcher: `[a-z]{${200 + (i % 90)}}x${i}`, hooks: [] }));
    const content = JSON.stringify({ hooks: { PreToolUse: groups } });
    const { status, text } = await attack(svc, async () => put(svc, "matcher-flood", await tarOf([{ name: ".claude/settings.json", content }], { gzip: true })));
    expect(status, text).toBe(400);
    // the instruction budget, or — on a machine busy enough — the time budget first: either well before the 2 000th
    const m = /hooks\.PreToolUse\[(\d+)\]\.matcher: matcher not compiled: the repository.s matchers and conditions (together pass 40000 RE2 instructions \(MAX_REPOSITORY_MATCHER_PROGRAM\)|took more than 100 ms to compile \(MAX_REPOSITORY_COMPILE_MS\))/.exec(errorOf(text).message);
    expect(m, errorOf(text).message).not.toBeNull();
    expect(Number(m![1])).toBeLessThan(200);
  });

  it.each([
    ["repeats of a Unicode class", "\\pL{999}".repeat(50)],
    ["case-folded Unicode classes, 15–26 ms each to build", "(?i)" + "\\PL".repeat(168)],
    ["repeats of an empty-width atom", "(?:^{999})".repeat(51)],
    ["a \\Q…\\E that hides a class bracket", "\\Q[\\E" + "\\PL{999}".repeat(55) + "]"],
    ["nested empty capturing groups, repeated", ("(".repeat(120) + ")".repeat(120) + "{1000}").repeat(2)],
  ])("skips the hooks of a matcher too costly to build (%s) without building it: never run for every call", async (_what, pattern) => {
    const content = JSON.stringify({ hooks: { PreToolUse: Array.from({ length: 50 }, () => ({ matcher: pattern, hooks: [{ type: "command", command: "true" }] })) } });
    const { status, text } = await attack(svc, async () => put(svc, "repeat-bomb", await tarOf([{ name: ".claude/settings.json", content }])));
    expect(status, text).toBe(200);
    const stored = storedOf(text);
    expect(stored.hooks).toEqual([]);
    expect(stored.warnings).toHaveLength(50);
    for (const w of stored.warnings) expect(w).toMatch(/matcher past hookbox's limits .*too complex \(weighed before it is built: over 300 RE2 instructions\) — the hooks it selects are not run; skipped/);
  });

  it("refuses 600 noisy hook files at the 513th (MAX_REPOSITORY_HOOK_FILES), never building half a million warnings", async () => {
    const noisy = JSON.stringify({ hooks: {}, ...Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, 0])) });
    const entries = Array.from({ length: 600 }, (_, i) => ({ name: `.github/hooks/${String(i).padStart(4, "0")}${"n".repeat(200)}.json`, content: noisy }));
    const archive = await tarOf(entries);
    const { status, text } = await attack(svc, async () => put(svc, "warning-flood", archive));
    expect(status, text.slice(0, 300)).toBe(400);
    expect(errorOf(text).message).toMatch(/more than 512 hook files \(MAX_REPOSITORY_HOOK_FILES\)/);
    expect(text.length).toBeLessThan(4096);
  });

  it(`answers a workspace whose hooks and warnings are named by control characters (six bytes each as JSON) with a summary of at most MAX_SUMMARY_HOOKS_JSON_CHARS (${MAX_SUMMARY_HOOKS_JSON_CHARS / 1024} Ki) of hooks and MAX_WARNINGS_JSON_CHARS of warnings, made once: 300 clients at once that never read, and two that read back to back, hold the loop no longer`, async () => {
    // Copilot names each hook by its file and place: 200 U+0001 in the file's name, in each of a
    // thousand hooks' name and origin; and unknown keys of 1000 of them, each in a warning.
    const file = `.github/hooks/${"\u0001".repeat(200)}.json`;
    const hook = (i: number) => ({ type: "command", bash: "true", ...(i < 100 ? { [`${"\u0001".repeat(1000)}${i}`]: 1 } : {}) });
    const archive = await tarOf([{ name: file, content: JSON.stringify({ version: 1, hooks: { preToolUse: Array.from({ length: 1000 }, (_, i) => hook(i)) } }) }]);
    const { status, text } = await attack(svc, async () => put(svc, "big-summary", archive), 10_000);
    expect(status).toBe(200);
    const whole = await (await get(svc, "big-summary")).text();
    expect(whole).toBe(text);
    const info = JSON.parse(whole) as { hooks: { name: string }[]; hooks_unlisted: number; warnings: string[] };
    const json = (items: unknown[]) => items.reduce<number>((n, item) => n + JSON.stringify(item).length, 0);
    expect(json(info.hooks)).toBeLessThanOrEqual(MAX_SUMMARY_HOOKS_JSON_CHARS);
    expect(json(info.hooks) + JSON.stringify(info.hooks[0]).length).toBeGreaterThan(MAX_SUMMARY_HOOKS_JSON_CHARS);
    expect(info.hooks.length + info.hooks_unlisted).toBe(1000);
    expect(json(info.warnings.slice(0, -1))).toBeLessThanOrEqual(MAX_WARNINGS_JSON_CHARS);
    expect(info.warnings.at(-1)).toMatch(/^… \d+ more warnings left out/);
    const port = Number(new URL(svc.url).port);
    const head = `GET /v1/workspaces/big-summary HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN_A}`;
    const held: Socket[] = [];
    try {
      await attack(svc, async () => {
        // all at once, each asking and never reading what comes
        const asked = await Promise.all(Array.from({ length: 300 }, () => byHand(port, head)));
        for (const { socket } of asked) {
          socket.pause();
          held.push(socket);
        }
        const reader = async () => {
          for (let i = 0; i < 20; i++) expect(await (await get(svc, "big-summary")).text()).toBe(whole);
        };
        await Promise.all([reader(), reader()]);
        return new Response(null, { status: 204 });
      }, 30_000);
    } finally {
      for (const s of held) s.destroy();
    }
  });

  it("skips a hook whose env is past its limits (count, name, value), warned at its line: never run with it", async () => {
    // as many as one object holds (MAX_OBJECT_KEYS): skipped by the schema at its line, not by the byte pass
    const env = Object.fromEntries(Array.from({ length: 16_000 }, (_, i) => [`K${i}`, "x=x=x=x"]));
    const hook = (e: unknown) => JSON.stringify({ version: 1, hooks: { preToolUse: [{ type: "command", bash: "true", env: e }] } }, null, 1);
    const skipped = async (id: string, e: unknown) => {
      const res = await put(svc, id, await tarOf([{ name: ".github/hooks/env.json", content: hook(e) }]));
      const text = await res.text();
      expect(res.status, text).toBe(200);
      const stored = storedOf(text);
      expect(stored.hooks).toEqual([]);
      expect(stored.warnings).toHaveLength(1);
      return stored.warnings[0]!;
    };
    const { status, text } = await attack(svc, async () => put(svc, "env-flood", await tarOf([{ name: ".github/hooks/env.json", content: hook(env) }])));
    expect(status, text).toBe(200);
    expect(storedOf(text).warnings).toEqual([expect.stringMatching(/^\.github\/hooks\/env\.json:\d+: hooks\.preToolUse\[0\]\.env: at most 64 variables.*; skipped/)]);
    expect(await skipped("env-value", { TOKEN: "v".repeat(4097) })).toMatch(/env\.TOKEN: .*4096/);
    expect(await skipped("env-name", { [`N${"n".repeat(128)}`]: "v" })).toMatch(/env\.Nn+: a variable name is at most 128 characters \(MAX_HOOK_ENV_NAME_CHARS\)/);
    expect(await skipped("env-odd", { "A-B": "v" })).toMatch(/:\d+: hooks\.preToolUse\[0\]\.env\.A-B: a variable name is letters, digits and _/);
    expect(await skipped("env-count", Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`K${i}`, "v"])))).toMatch(/at most 64 variables/);
    // at each limit: 64 variables, a name of 128 characters, a value of 4096
    const atLimits = { TOKEN: "v".repeat(4096), [`N${"n".repeat(127)}`]: "v", ...Object.fromEntries(Array.from({ length: 62 }, (_, i) => [`K${i}`, "v"])) };
    const ok = await put(svc, "env-ok", await tarOf([{ name: ".github/hooks/env.json", content: hook(atLimits) }]));
    expect(ok.status, await ok.clone().text()).toBe(200);
  });

  it.each([
    ['memory = "0"', /memory: expected a size .* more than zero/],
    ['memory = "0.4"', /memory: expected a size .* more than zero/],
    ['memory = "5m"', /memory: memory is at least 6m/],
    ["cpus = 1e-10", /cpus: cpus is at least 0\.01/],
    ["cpus = 0", /cpus: cpus is at least 0\.01/],
  ])("skips a repository hook whose %s Docker would read as no limit, warned at its line: never run unbounded", async (limit, message) => {
    const toml = `[[hooks.PreToolUse]]\nname = "x"\ncommand = "true"\n${limit}\n`;
    const { status, text } = await attack(svc, async () => put(svc, "no-limit", await tarOf([{ name: ".copilot-shell/config.toml", content: toml }])));
    expect(status, text).toBe(200);
    const stored = storedOf(text);
    expect(stored.hooks).toEqual([]);
    expect(stored.warnings).toEqual([expect.stringMatching(/^\.copilot-shell\/config\.toml:4: hooks\.PreToolUse\[0\]\./)]);
    expect(stored.warnings[0]).toMatch(message);
  });

  it("answers 120 KB of invalid JSON with many lines with a located 400 at once", async () => {
    const body = `{\n${Array.from({ length: 16_000 }, (_, i) => `"k${i}": ${i},`).join("\n")}\n}`;
    expect(body.length).toBeGreaterThan(120_000);
    const { status, text } = await attack(svc, () => svc.event(body));
    expect(status).toBe(400);
    expect(errorOf(text)).toEqual({ code: "bad_json", message: 'the body is not valid JSON: expected a string, found "}" at line 16002, column 1', field: "body" });
  });

  it.each([
    ["1 MiB of '['", "[".repeat(MiB - 16), /^the body is nested deeper than 64 levels$/],
    ["1 MiB of balanced nesting", `{"hook_event_name":"PreToolUse","x":${"[".repeat(MiB / 2 - 32)}${"]".repeat(MiB / 2 - 32)}}`, /^the body is nested deeper than 64 levels$/],
  ])("answers %s with 400, no crash, no stall", async (_what, body, message) => {
    const { status, text } = await attack(svc, () => svc.event(body));
    expect(status).toBe(400);
    expect(errorOf(text)).toMatchObject({ code: "bad_json", message: expect.stringMatching(message) });
  });

  it.each([
    ["a body", (j: string) => `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls","junk":${j}}}`, "bad_json", /^the body holds more than 65536 arrays and objects \(MAX_EVENT_CONTAINERS\)$/],
    ["a Copilot toolArgs", (j: string) => JSON.stringify({ toolName: "bash", toolArgs: `{"command":"ls","junk":${j}}` }), "bad_field", /^toolArgs: the JSON in it holds more than 65536 arrays and objects/],
  ])("refuses %s of a mebibyte of arrays nested 60 deep (half a million of them) by a byte pass, with 400, no stall", async (_what, body, code, message) => {
    const nest = `${"[".repeat(60)}${"]".repeat(60)}`;
    const junk = `[${Array.from({ length: Math.floor((MiB - 200) / 121) }, () => nest).join(",")}]`;
    const { status, text } = await attack(svc, () => svc.event(body(junk)));
    expect(status).toBe(400);
    expect(errorOf(text)).toMatchObject({ code, message: expect.stringMatching(message) });
  });

  /** The upload's answer takes the workspace with `name` skipped whole, its warning matching `message`. */
  const skipped = (status: number, text: string, name: string, message: RegExp) => {
    expect(status, text.slice(0, 500)).toBe(200);
    const { hooks, warnings } = JSON.parse(text) as { hooks: unknown[]; warnings: string[] };
    expect(hooks).toEqual([]);
    expect(warnings).toContainEqual(expect.stringMatching(message));
    expect(warnings.find((w) => w.startsWith(name))).toMatch(/; the file is skipped: none of its hooks are read$/);
  };

  it("skips a JSON hook file of a mebibyte of arrays nested 60 deep by a byte pass, at the line past MAX_EVENT_CONTAINERS, before any parser or locator walks it", async () => {
    const nest = `${"[".repeat(60)}${"]".repeat(60)}`;
    const content = `{"junk":[\n${Array.from({ length: 8_500 }, () => nest).join(",\n")}],\n"hooks":{"BeforeTool":[{"hooks":[{"type":"command","command":"g.sh"}]}]}}`;
    for (const name of [".claude/settings.json", ".gemini/settings.json"]) {
      const text0 = name.startsWith(".claude") ? content.replace('"BeforeTool"', '"PreToolUse"') : content;
      const { status, text } = await attack(svc, async () => put(svc, "nested-arrays", await tarOf([{ name, content: text0 }])));
      skipped(status, text, name, new RegExp(`${name.replace(/\./g, "\\.")}:1094:\\d+: holds more than 65536 arrays and objects \\(MAX_EVENT_CONTAINERS\\)`));
    }
  });

  it("refuses a body and a Copilot toolArgs, and skips a JSON hook file and a TOML table, of a mebibyte of one object's keys — past MAX_OBJECT_KEYS — by a byte pass, at the key's line in a file", async () => {
    const keys = (n: number, sep = ":") => Array.from({ length: n }, (_, i) => `"k${i}"${sep}0`).join(",\n");
    const wide = `{${keys(80_000)}}`;
    expect(wide.length).toBeGreaterThan(MiB - 200_000);
    for (const [body, code, message] of [
      [`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":${wide}}`, "bad_json", /^the body holds an object of more than 16384 keys \(MAX_OBJECT_KEYS\)$/],
      [JSON.stringify({ toolName: "bash", toolArgs: wide.slice(0, MiB - 300_000) + "}" }), "bad_field", /^toolArgs: the JSON in it holds an object of more than 16384 keys \(MAX_OBJECT_KEYS\)$/],
    ] as const) {
      const { status, text } = await attack(svc, () => svc.event(body));
      expect(status, text).toBe(400);
      expect(errorOf(text)).toMatchObject({ code, message: expect.stringMatching(message) });
    }
    const files = [
      [".claude/settings.json", `{"hooks":\n${wide}}`, /\.claude\/settings\.json:16386:\d+: holds an object of more than 16384 keys \(MAX_OBJECT_KEYS\)/],
      [".copilot-shell/config.toml", `[hooks]\n${keys(70_000, " =").replace(/,\n/g, "\n")}\n`, /\.copilot-shell\/config\.toml:1:\d+: hooks: holds more than 16384 keys \(MAX_OBJECT_KEYS\)/],
    ] as const;
    for (const [name, content, message] of files) {
      const { status, text } = await attack(svc, async () => put(svc, "wide-file", await tarOf([{ name, content }])));
      skipped(status, text, name, message);
    }
  });

  it("skips a hook file nested half a million deep at the line where it passes 64 levels, before any parser walks it", async () => {
    const content = `{\n"hooks": {\n"PreToolUse":\n${"[\n".repeat(500_000)}`;
    for (const name of [".claude/settings.json", ".gemini/settings.json"]) {
      const { status, text } = await attack(svc, async () => put(svc, "deep-file", await tarOf([{ name, content }], { gzip: true })), 2_000);
      skipped(status, text, name, new RegExp(`^${name.replace(/\./g, "\\.")}:66:1: nested deeper than 64 levels`));
    }
  });

  it("refuses 20 concurrent bodies of 1 MiB of '[' by a byte pass, before JSON.parse holds the loop", async () => {
    const body = "[".repeat(MiB - 16);
    const { value } = await underProbe(svc.url, () => Promise.all(Array.from({ length: 20 }, async () => {
      const res = await svc.event(body);
      return { status: res.status, text: await res.text() };
    }))).then(async (r) => {
      expect(r.ms).toBeLessThan(5_000);
      expect(r.health.failures).toBe(0);
      expect(r.health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
      await alive(svc);
      return r;
    });
    for (const { status, text } of value) {
      expect(status).toBe(400);
      expect(errorOf(text)).toEqual({ code: "bad_json", message: "the body is nested deeper than 64 levels", field: "body" });
    }
  });

  it("locates a warning in a config.toml of a 500 KB header and 6000 keys under it, in linear memory", async () => {
    // Indexed as header + key per line, this kept 6000 copies of the 500 KB name: seconds, then out of memory.
    const keys = Array.from({ length: 6_000 }, (_, i) => `k${i}=1`).join("\n");
    const content = `[hooks]\nFoo = 1\n["${"a".repeat(500_000)}"]\n${keys}\n`;
    expect(content.length).toBeGreaterThan(540_000);
    const { status, text } = await attack(svc, async () => put(svc, "toml-long-header", await tarOf([{ name: ".copilot-shell/config.toml", content }])));
    expect(status, text.slice(0, 500)).toBe(200);
    expect((JSON.parse(text) as { warnings: string[] }).warnings).toContainEqual(expect.stringMatching(/^\.copilot-shell\/config\.toml:2: hooks\.Foo: /));
  });

  it.each([
    // as many as one object or table holds (MAX_OBJECT_KEYS)
    [".copilot-shell/config.toml", `[hooks]\n${Array.from({ length: 16_384 }, (_, i) => `NoSuchEvent${i} = 1`).join("\n")}\n`],
    [".claude/settings.json", JSON.stringify({ hooks: Object.fromEntries(Array.from({ length: 16_384 }, (_, i) => [`NoSuchEvent${i}`, []])) })],
  ])("lists 100 of 16 384 unknown events in %s and writes none of the rest, without holding the loop", async (name, content) => {
    expect(content.length).toBeLessThanOrEqual(MiB);
    const { status, text } = await attack(svc, async () => put(svc, `unknown-events-${name.length}`, await tarOf([{ name, content }])));
    expect(status, text.slice(0, 300)).toBe(200);
    const { warnings } = JSON.parse(text) as { warnings: string[] };
    expect(warnings).toHaveLength(101);
    expect(warnings[0]).toMatch(/NoSuchEvent0.*unknown event/);
    expect(warnings[100]).toBe("… and more warnings, left out (at most 100 are listed per file)");
  });

  it("parses another tenant's tiny config.toml queued behind a tenant's hostile ones (12 sent, TENANT_UPLOADS_IN_FLIGHT taken), each on its own clock", async () => {
    // One worker, one job at a time: the tiny parse waits its turn, and its 5 s start only when it is posted.
    const hostile = await tarOf([{ name: ".copilot-shell/config.toml", content: `[hooks]\na${".b".repeat(450_000)} = 1\n` }]);
    const tiny = await tarOf([{ name: ".copilot-shell/config.toml", content: '[[hooks.PreToolUse]]\nname = "x"\ncommand = "true"\n' }]);
    const { status, text } = await attack(svc, async () => {
      const floods = Array.from({ length: 12 }, (_, i) => put(svc, `toml-flood-${i}`, hostile).then(async (r) => ({ status: r.status, text: await r.text() })));
      await new Promise((r) => setTimeout(r, 200));
      const res = await putAlone(`${svc.url}/v1/workspaces/toml-tiny`, TOKEN_B, tiny);
      const answers = await Promise.all(floods);
      // As many as a tenant may send at once are parsed (the file skipped); the rest are 429 at once.
      expect(answers.filter((a) => a.status === 200)).toHaveLength(TENANT_UPLOADS_IN_FLIGHT);
      for (const flood of answers) {
        expect([200, 429]).toContain(flood.status);
        expect(flood.text).not.toMatch(/took longer than/);
        if (flood.status === 200) expect((JSON.parse(flood.text) as { warnings: string[] }).warnings[0]).toMatch(/^\.copilot-shell\/config\.toml:.*; the file is skipped/);
      }
      return res;
    }, 20_000);
    expect(status, text).toBe(200);
    expect((JSON.parse(text) as { hooks: unknown[] }).hooks).toHaveLength(1);
  });

  it.each<[string, Entry[], RegExp]>([
    ["an entry 2000 levels deep", [{ name: `${"a/".repeat(1_999)}f`, content: "" }], /^archive entry "(a\/)+a?": more than 64 levels deep$/],
    ["an entry 65 levels deep", [{ name: `${"a/".repeat(64)}f`, content: "" }], /^archive entry "(a\/){64}f": more than 64 levels deep$/],
    ["a file under a link that stays inside", [{ name: "up", type: "symlink", linkname: "." }, { name: "up/f", content: "" }], /^archive entry "up\/f": up is a symbolic link: nothing is unpacked through a link$/],
    ["a folder under a link", [{ name: "d/x", content: "" }, { name: "l", type: "symlink", linkname: "d" }, { name: "l/sub/", type: "directory" }], /^archive entry "l\/sub\/": l is a symbolic link/],
  ])("refuses %s with 400 archive_refused naming the entry, at once", async (_what, entries, message) => {
    const { status, text } = await attack(svc, async () => put(svc, "deep", await tarOf(entries)));
    expect(status).toBe(400);
    expect(errorOf(text)).toMatchObject({ code: "archive_refused", message: expect.stringMatching(message) });
    expect((await get(svc, "deep")).status).toBe(404);
  });

  it("takes an entry 64 levels deep", async () => {
    const ok = await attack(svc, async () => put(svc, "deep-ok", await tarOf([{ name: `${"a/".repeat(63)}f`, content: "x" }, { name: "a/a/", type: "directory" }])));
    expect(ok.status, ok.text).toBe(200);
    expect(JSON.parse(ok.text)).toMatchObject({ files: 1, bytes: 1 });
  });

  it("refuses a gzip of 8 GiB of zeros with 413 within seconds (max_unpack_ratio)", async () => {
    const bomb = await zerosGzip(8 * 1024 * MiB);
    expect(bomb.length).toBeLessThan(16 * MiB);
    const { status, text } = await attack(svc, () => put(svc, "bomb", bomb), 10_000);
    expect(status).toBe(413);
    expect(errorOf(text)).toMatchObject({ code: "archive_too_large", message: expect.stringMatching(/times its size \(server\.max_unpack_ratio\)/) });
  });

  it("refuses a 4 MiB pax global header of half a million records before it is decoded, with a 400 naming it, however many pax headers follow", async () => {
    // Decoded, each later pax header would copy every record of the global one: seconds of one thread.
    const records = paxRecords(Array.from({ length: 530_000 }, (_, i) => [i.toString(36), ""] as [string, string]));
    const locals = Array.from({ length: 64 }, () => rawMember("x", "x", paxRecords([["a", "bcde"]])));
    const body = Buffer.concat([rawMember("pax_global_header", "g", records), ...locals, rawMember("ok.txt", "0", Buffer.from("hi\n")), TAR_END]);
    const { status, text } = await attack(svc, () => put(svc, "pax-global", body));
    expect(status).toBe(400);
    expect(errorOf(text)).toMatchObject({ code: "archive_refused", message: expect.stringMatching(new RegExp(`pax_global_header.*pax-global-header of \\d+ bytes: more than ${MAX_META_HEADER_BYTES}`)) });
    expect((await get(svc, "pax-global")).status).toBe(404);
  });

  it(`refuses an upload of a 4 MiB pax header sent a byte a chunk, its pieces joined into blocks, once past max_body_bytes / UPLOAD_PIECE_BYTES (${64 * MiB / UPLOAD_PIECE_BYTES}) pieces: the loop answers throughout`, async () => {
    // Held as it came, a byte a buffer, the header would take about a gigabyte before it is judged.
    const header = rawMember("PaxHeader/a.txt", "x", Buffer.alloc(4 * MiB, 0x61)).subarray(0, 512);
    const pieces = 64 * MiB / UPLOAD_PIECE_BYTES + 50_000;
    const { status, text } = await attack(svc, async () => {
      const url = new URL(svc.url);
      // a chunk of the header, then one-byte chunks, ten thousand to a write
      const { socket, answer } = await byHand(Number(url.port), `PUT /v1/workspaces/byte-pieces HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${TOKEN_A}\r\nTransfer-Encoding: chunked`, Buffer.concat([Buffer.from("200\r\n"), header, Buffer.from("\r\n")]), url.hostname);
      void answer.then(() => socket.destroy());
      const batch = "1\r\na\r\n".repeat(10_000);
      // (the answer may come, and the socket go, while a write waits: no drain comes then)
      for (let sent = 0; sent < pieces && !socket.destroyed; sent += 10_000) if (!socket.write(batch)) await Promise.race([new Promise((r) => socket.once("drain", r)), answer]);
      const got = await answer;
      return new Response(bodyOf(got), { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(got)?.[1] ?? 599) });
    },
    60_000);
    expect(status, text.slice(0, 300)).toBe(400);
    expect(errorOf(text)).toMatchObject({ code: "archive_invalid", message: expect.stringMatching(/more than \d+ pieces.*UPLOAD_PIECE_BYTES/) });
  }, 90_000);

  it("refuses a pax header of MAX_META_HEADER_BYTES + 1, and takes one of exactly that beside the small global header git archive writes", async () => {
    const pathRecord = paxRecords([["path", `${"long/".repeat(40)}name.txt`]]);
    /** pax records of exactly `bytes`: the path and a comment that fills the rest */
    const sized = (bytes: number): Buffer => {
      for (let pad = bytes - pathRecord.length - 20; pad < bytes; pad++) {
        const records = Buffer.concat([pathRecord, paxRecords([["comment", "c".repeat(pad)]])]);
        if (records.length === bytes) return records;
      }
      throw new Error(`no pax records of ${bytes} bytes`);
    };
    const [exact, over] = [sized(MAX_META_HEADER_BYTES), sized(MAX_META_HEADER_BYTES + 1)];
    const git = rawMember("pax_global_header", "g", paxRecords([["comment", "0123456789abcdef0123456789abcdef01234567"]]));
    const archive = (pax: Buffer) => Buffer.concat([git, rawMember("PaxHeader/name.txt", "x", pax), rawMember("short.txt", "0", Buffer.from("hi\n")), TAR_END]);
    const ok = await attack(svc, () => put(svc, "pax-exact", archive(exact)));
    expect(ok.status, ok.text).toBe(200);
    expect(JSON.parse(ok.text)).toMatchObject({ files: 1, bytes: 3 });
    const refused = await attack(svc, () => put(svc, "pax-over", archive(over)));
    expect(refused.status).toBe(400);
    expect(errorOf(refused.text)).toMatchObject({ code: "archive_refused", message: expect.stringMatching(/pax-header of \d+ bytes/) });
  });

  it("takes a pax header of MAX_PAX_RECORDS records and refuses one of a record more, global or not, with 400 naming it", async () => {
    // Each record is decoded, and each of the global header's copied into every later pax header:
    // ten thousand 9 KiB headers of a thousand records each once cost the shared thread 26 s.
    const records = (n: number) => paxRecords(Array.from({ length: n }, (_, i) => [`k${i}`, "v"] as [string, string]));
    const archive = (global: number, local: number) =>
      Buffer.concat([rawMember("pax_global_header", "g", records(global)), rawMember("PaxHeader/a.txt", "x", records(local)), rawMember("a.txt", "0", Buffer.from("hi\n")), TAR_END]);
    const ok = await attack(svc, () => put(svc, "pax-records", archive(MAX_PAX_RECORDS, MAX_PAX_RECORDS)));
    expect(ok.status, ok.text).toBe(200);
    // records as the decoder walks them, by their length: without their newlines too
    const unended = (n: number) => Buffer.concat(Array.from({ length: n }, (_, i) => Buffer.from(`${`k${i}=v`.length + 1 + String(`k${i}=v`.length + 1 + 2).length} k${i}=v`)));
    // …and with negative lengths, which the decoder follows to the last bytes of what is left (the innermost, "-0", ends the walk)
    const backwards = (n: number) => {
      let rest = Buffer.alloc(0);
      for (let i = 0; i < n; i++) rest = Buffer.concat([Buffer.from(`-${rest.length} k${i}=vX`), rest]);
      return rest;
    };
    for (const [id, records] of [["pax-records-bare", unended(MAX_PAX_RECORDS + 1)], ["pax-records-backwards", backwards(MAX_PAX_RECORDS + 2)]] as const) {
      const body = Buffer.concat([rawMember("PaxHeader/a.txt", "x", records), rawMember("a.txt", "0", Buffer.from("hi\n")), TAR_END]);
      const refused = await attack(svc, () => put(svc, id, body));
      expect(refused.status, id).toBe(400);
      expect(errorOf(refused.text)).toMatchObject({ code: "archive_refused", message: expect.stringContaining(`pax-header of more than ${MAX_PAX_RECORDS} records is not accepted`) });
    }
    for (const [global, local, kind] of [[MAX_PAX_RECORDS + 1, 1, "pax-global-header"], [1, MAX_PAX_RECORDS + 1, "pax-header"]] as const) {
      const refused = await attack(svc, () => put(svc, "pax-records-over", archive(global, local)));
      expect(refused.status).toBe(400);
      expect(errorOf(refused.text)).toMatchObject({ code: "archive_refused", message: expect.stringContaining(`${kind} of more than ${MAX_PAX_RECORDS} records is not accepted`) });
    }
  });

  it("judges a stored workspace again after a restart: a link chain planted on disk is refused", async () => {
    expect((await put(svc, "planted", await tarOf([{ name: "a.txt", content: "a" }]))).status).toBe(200);
    const tenant = readdirSync(join(svc.dataDir, "workspaces")).map((t) => join(svc.dataDir, "workspaces", t)).find((t) => existsSync(join(t, "planted")))!;
    symlinkSync(".", join(tenant, "planted", "s"));
    symlinkSync(`s/${"../".repeat(25)}${canary.replace(/^\//, "")}`, join(tenant, "planted", "x"));
    await svc.stop();
    svc = await startService("[sandbox]\npool_size = 0\n", { dir: svc.dir });
    const { status, text } = await attack(svc, () => get(svc, "planted"));
    answers.push(text);
    expect(status).toBe(400);
    expect(errorOf(text)).toMatchObject({ code: "archive_refused", message: expect.stringMatching(/^archive entry "x": link passes through another link \(s\)/) });
    // The judgement is kept: no event or read naming it walks the tree again (the planted link
    // removed behind the service's back changes nothing), until an upload replaces it.
    rmSync(join(tenant, "planted", "x"));
    const again = await attack(svc, () => svc.event({ session_id: "s", hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: {} }, { query: "workspace=planted" }));
    expect(again.status).toBe(400);
    expect(errorOf(again.text)).toMatchObject({ code: "archive_refused", message: expect.stringMatching(/^archive entry "x"/) });
    expect((await put(svc, "planted", await tarOf([{ name: "a.txt", content: "b" }]))).status).toBe(200);
    expect((await get(svc, "planted")).status).toBe(200);
  });
});

describe("a data folder that refuses writes", () => {
  let svc: Service;
  const dir = mkdtempSync(join(tmpdir(), "hookbox-full-"));
  const workspaces = join(dir, "data", "workspaces");
  beforeAll(async () => {
    // the workspaces' folder on a file system of 256 KiB
    mkdirSync(workspaces, { recursive: true });
    const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", workspaces], { encoding: "utf8" });
    expect(mounted.status, mounted.stderr).toBe(0);
    svc = await startService("[sandbox]\npool_size = 0\n", { dir });
  });
  afterAll(async () => {
    await svc?.stop();
    spawnSync("umount", [workspaces]);
  });

  it("answers an upload it has no room for with 500 storage_failed naming the code — the service's trouble, not a 400 of the archive — and takes one that fits once the staging is gone", async () => {
    const big = await tarOf([{ name: ".claude/settings.json", content: "{}" }, { name: "big.bin", content: "x".repeat(MiB) }]);
    const { status, text } = await attack(svc, async () => put(svc, "full", big));
    expect(status, text).toBe(500);
    expect(errorOf(text)).toEqual({ code: "storage_failed", message: expect.stringMatching(/^hookbox could not store the workspace's files \(ENOSPC on write\): its data folder refused the write/) });
    expect(text).not.toContain(dir);
    expect(svc.logs()).toMatch(/"code":"storage_failed".*request failed on the service's side/);
    expect((await put(svc, "small", await tarOf([{ name: ".claude/settings.json", content: "{}" }]))).status).toBe(200);
  });
});

describe("uploads of one id racing each other", () => {
  let svc: Service;
  const opts = { server: 'max_body_bytes = "128m"\nmax_unpack_ratio = 100000\nmax_workspace_bytes = "300m"' };
  const config = "[sandbox]\npool_size = 0\n";
  beforeAll(async () => {
    svc = await startService(config, opts);
  });
  afterAll(async () => {
    await svc.stop();
  });

  it("leave on disk the tree whose size the quota counts, also after a restart", async () => {
    const many = await tarOf(Array.from({ length: 9000 }, (_, i) => ({ name: `d${i % 90}/f${i}.txt`, content: "x" })), { gzip: true });
    const tiny = await tarOf([{ name: "a.txt", content: "a" }]);
    const mid = await tarOf([{ name: "b.bin", content: "b".repeat(2 * MiB) }], { gzip: true });
    for (let round = 0; round < 2; round++) {
      // An old tree of many files makes the first swap's clean-up slow: the window the other upload
      // of the id would otherwise swap in.
      expect((await put(svc, "swap", many)).status).toBe(200);
      const answers = await Promise.all([put(svc, "swap", tiny), put(svc, "swap", mid)]);
      expect(answers.map((a) => a.status)).toEqual([200, 200]);
      const before = (await (await get(svc, "swap")).json()) as { bytes: number; digest: string };
      await svc.stop();
      svc = await startService(config, { ...opts, dir: svc.dir });
      const after = (await (await get(svc, "swap")).json()) as { bytes: number; digest: string };
      expect(after).toMatchObject({ bytes: before.bytes, digest: before.digest });
    }
  });
});

describe("a workspace's hook files are bounded together", () => {
  let small: Service;
  beforeAll(async () => {
    small = await startService("[sandbox]\npool_size = 0\n", { server: 'max_hook_file_bytes = "1k"' });
  });
  afterAll(async () => {
    await small.stop();
  });
  /** A Copilot hook file of exactly `bytes` bytes. */
  const file = (i: number, bytes: number): Entry => {
    const head = `{"version":1,"hooks":{"preToolUse":[{"type":"command","bash":"echo ${i}"}]},"pad":"`;
    return { name: `.github/hooks/h${i}.json`, content: `${head}${"x".repeat(bytes - head.length - 2)}"}` };
  };
  it("takes files of 4 × max_hook_file_bytes together, and refuses one byte more with 400 naming the file", async () => {
    const at = await put(small, "files-at", await tarOf([0, 1, 2, 3].map((i) => file(i, 1024))));
    expect(at.status, await at.clone().text()).toBe(200);
    const past = await put(small, "files-past", await tarOf([...[0, 1, 2, 3].map((i) => file(i, 1024)), { name: ".github/hooks/h4.json", content: "{}" }]));
    expect(past.status).toBe(400);
    expect(errorOf(await past.text()).message).toMatch(/^repository hook file \.github\/hooks\/h4\.json: the repository's hook files together are larger than 4096 bytes \(4 × server\.max_hook_file_bytes\)/);
  });
});

describe("a tenant's workspaces are bounded together", () => {
  let svc: Service;
  let big: Buffer;
  const opts = { server: 'max_body_bytes = "128m"\nmax_unpack_ratio = 100000\nmax_workspace_bytes = "300m"\nmax_workspaces = 3' };
  const config = "[sandbox]\npool_size = 0\n";

  beforeAll(async () => {
    big = await sparseTarGz("data.bin", 256 * MiB);
    svc = await startService(config, opts);
  });
  afterAll(async () => {
    await svc.stop();
  });

  it("refuses a gzip of 8 GiB of zeros with 413 by the decompressed-byte counter", async () => {
    const bomb = await zerosGzip(8 * 1024 * MiB);
    const { status, text } = await attack(svc, () => put(svc, "bomb", bomb), 10_000);
    expect(status).toBe(413);
    expect(errorOf(text)).toMatchObject({ code: "archive_too_large", message: `the archive unpacks to more than ${512 * MiB} bytes (4 × server.max_body_bytes)` });
  });

  it("stores one 256 MiB workspace and refuses a second past max_workspace_bytes with 413", async () => {
    expect(big.length).toBeLessThan(8 * MiB);
    const first = await attack(svc, () => put(svc, "big-1", big), 30_000);
    expect(first.status, first.text).toBe(200);
    expect(JSON.parse(first.text)).toMatchObject({ bytes: 256 * MiB });
    const second = await attack(svc, () => put(svc, "big-2", big));
    expect(second.status).toBe(413);
    expect(errorOf(second.text)).toEqual({
      code: "tenant_workspace_bytes",
      message: `the tenant's workspaces would hold more than ${300 * MiB} bytes unpacked together (max_workspace_bytes in [server], or the tenant's own [[tenants]] entry)`,
      field: "body",
    });
    expect((await get(svc, "big-2")).status).toBe(404);
    // Replacing the same workspace counts its new size instead of the old.
    expect((await put(svc, "big-1", big)).status).toBe(200);
  });

  it("lets only one of two concurrent uploads past the quota", async () => {
    const statuses = (await Promise.all([put(svc, "race-1", big), put(svc, "race-2", big)])).map((r) => r.status);
    expect(statuses.sort()).toEqual([413, 413]);
    expect((await fetch(`${svc.url}/v1/workspaces/big-1`, { method: "DELETE", headers: auth })).status).toBe(204);
    const racing = await Promise.all([put(svc, "race-1", big), put(svc, "race-2", big)]);
    expect(racing.map((r) => r.status).sort()).toEqual([200, 413]);
  });

  it("keeps the totals across a restart, and refuses a workspace past max_workspaces", async () => {
    await svc.stop();
    svc = await startService(config, { ...opts, dir: svc.dir });
    const stored = (await get(svc, "race-1")).status === 200 ? "race-1" : "race-2";
    const again = await attack(svc, () => put(svc, "big-3", big));
    expect(again.status).toBe(413);
    expect(errorOf(again.text).code).toBe("tenant_workspace_bytes");
    const small = await tarOf([{ name: "a.txt", content: "a" }]);
    expect((await put(svc, "small-1", small)).status).toBe(200);
    expect((await put(svc, "small-2", small)).status).toBe(200);
    const fourth = await attack(svc, () => put(svc, "small-3", small));
    expect(fourth.status).toBe(413);
    expect(errorOf(fourth.text)).toMatchObject({ code: "tenant_workspace_count", message: expect.stringMatching(/already has 3 workspaces, its limit \(max_workspaces in \[server\]/) });
    // An existing id may be replaced at the limit.
    expect((await put(svc, stored, small)).status).toBe(200);
  });
});

describe("folders are entries and are charged to the tenant's quota", () => {
  let svc: Service;
  const folders = (n: number): Entry[] => Array.from({ length: n }, (_, i) => ({ name: `d${i}/f`, content: "" }));

  beforeAll(async () => {
    svc = await startService("[sandbox]\npool_size = 0\n", {
      server: "max_workspace_entries = 1000",
      tenants: tenantsToml().replace('name = "team-a"\n', 'name = "team-a"\nmax_workspace_bytes = "1m"\n'),
    });
  });
  afterAll(async () => {
    await svc.stop();
  });

  it("counts the folders an entry's name implies against max_workspace_entries", async () => {
    // 20 files, each under 59 folders of its own: 1180 folders, past max_workspace_entries (1000).
    const entries: Entry[] = Array.from({ length: 20 }, (_, i) => ({ name: `e${i}/${"d/".repeat(58)}f`, content: "" }));
    const body = await tarOf(entries, { gzip: true });
    // Tenant B: no 1 MiB quota of its own to stop it first.
    const { status, text } = await attack(svc, () => fetch(`${svc.url}/v1/workspaces/many-folders`, { method: "PUT", headers: { authorization: `Bearer ${TOKEN_B}` }, body }));
    expect(status).toBe(400);
    expect(errorOf(text)).toMatchObject({ code: "archive_too_many_entries", message: "the archive has more than 1000 entries" });
  });

  it("takes the archive's root (./, as tar -C dir . writes it first) for no entry: exactly max_workspace_entries entries under it are stored; a root named again counts", async () => {
    const files: Entry[] = Array.from({ length: 1000 }, (_, i) => ({ name: `./f${i}`, content: "" }));
    const putB = (id: string, body: Buffer) => fetch(`${svc.url}/v1/workspaces/${id}`, { method: "PUT", headers: { authorization: `Bearer ${TOKEN_B}` }, body });
    const stored = await putB("root-and-1000", await tarOf([{ name: "./", type: "directory" }, ...files]));
    expect(stored.status, await stored.clone().text()).toBe(200);
    const again = await putB("root-twice-and-1000", await tarOf([{ name: "./", type: "directory" }, { name: ".", type: "directory" }, ...files]));
    expect(again.status).toBe(400);
    expect(errorOf(await again.text())).toMatchObject({ code: "archive_too_many_entries" });
  });

  it("refuses an archive of no entry at all (an empty body, a gzip of a tar's end blocks alone: a tar that failed) and keeps the workspace it would have replaced; an empty folder's archive is stored", async () => {
    const guard = JSON.stringify({ hooks: { PreToolUse: [{ hooks: [{ type: "command", command: "echo '{}'" }] }] } });
    const putB = (body: Buffer) => fetch(`${svc.url}/v1/workspaces/guarded`, { method: "PUT", headers: { authorization: `Bearer ${TOKEN_B}` }, body });
    expect((await putB(await tarOf([{ name: ".claude/settings.json", content: guard }]))).status).toBe(200);
    for (const [what, body] of [["an empty body", Buffer.alloc(0)], ["a tar's end blocks", TAR_END], ["a gzip of a tar's end blocks", gzipSync(TAR_END)]] as const) {
      const res = await attack(svc, () => putB(body));
      expect(res.status, what).toBe(400);
      expect(errorOf(res.text), what).toMatchObject({ code: "archive_invalid", message: expect.stringMatching(/holds no entry/) });
      const kept = await fetch(`${svc.url}/v1/workspaces/guarded`, { headers: { authorization: `Bearer ${TOKEN_B}` } });
      expect((await kept.json()) as { hooks: unknown[] }, what).toMatchObject({ hooks: [expect.anything()] });
    }
    const emptied = await putB(await tarOf([{ name: "./", type: "directory" }]));
    expect(emptied.status).toBe(200);
    expect(await emptied.json()).toMatchObject({ files: 0, hooks: [] });
  });

  it("refuses a link whose target is 4096 bytes or more (PATH_MAX counts its NUL), saying so; 4095 bytes are stored", async () => {
    const putB = (id: string, body: Buffer) => fetch(`${svc.url}/v1/workspaces/${id}`, { method: "PUT", headers: { authorization: `Bearer ${TOKEN_B}` }, body });
    const fits = `${"a/".repeat(2047)}b`;
    expect(Buffer.byteLength(fits)).toBe(4095);
    expect((await putB("link-4095", await tarOf([{ name: "l", type: "symlink", linkname: fits }]))).status).toBe(200);
    const over = await putB("link-4096", await tarOf([{ name: "l", type: "symlink", linkname: `${fits}b` }]));
    expect(over.status).toBe(400);
    expect(errorOf(await over.text())).toMatchObject({ code: "archive_refused", message: 'archive entry "l": link target of 4096 bytes: at most 4095' });
  });

  it("charges each folder a 4096-byte block, made explicitly or implied by a name, and keeps it charged once stored", async () => {
    // 300 empty files in 300 folders: 0 bytes of files, 1.2 MB of folders, past 1 MiB.
    const over = await attack(svc, async () => put(svc, "folders-300", await tarOf(folders(300))));
    expect(over.status).toBe(413);
    expect(errorOf(over.text).code).toBe("tenant_workspace_bytes");
    const named: Entry[] = Array.from({ length: 300 }, (_, i) => ({ name: `n${i}/`, type: "directory" }));
    expect((await put(svc, "named-300", await tarOf(named))).status).toBe(413);
    // 100 folders and 100 empty files: 800 KiB, stored
    const first = await attack(svc, async () => put(svc, "folders-100", await tarOf(folders(100))));
    expect(first.status, first.text).toBe(200);
    // 130 of each stored together: 1 040 KiB, past 1 MiB
    const second = await attack(svc, async () => put(svc, "folders-30", await tarOf(folders(30))));
    expect(second.status).toBe(413);
    expect(errorOf(second.text).code).toBe("tenant_workspace_bytes");
    expect((await fetch(`${svc.url}/v1/workspaces/folders-100`, { method: "DELETE", headers: { authorization: `Bearer ${TOKEN_A}` } })).status).toBe(204);
  });

  it("deletes workspace x beside a workspace named x.digest, and gives its share back", async () => {
    expect((await put(svc, "dup", await tarOf([{ name: "a", content: "a" }]))).status).toBe(200);
    expect((await put(svc, "dup.digest", await tarOf([{ name: "b", content: "b" }]))).status).toBe(200);
    const del = (id: string) => fetch(`${svc.url}/v1/workspaces/${id}`, { method: "DELETE", headers: { authorization: `Bearer ${TOKEN_A}` } });
    expect((await del("dup")).status).toBe(204);
    expect((await fetch(`${svc.url}/v1/workspaces/dup.digest`, { headers: { authorization: `Bearer ${TOKEN_A}` } })).status).toBe(200);
    expect((await del("dup.digest")).status).toBe(204);
  });

  it("says no host path in a refusal (a name the file system cannot take)", async () => {
    const { status, text } = await attack(svc, async () => put(svc, "long-name", await tarOf([{ name: `${"a".repeat(300)}`, content: "x" }])));
    expect(status).toBe(400);
    expect(text).not.toMatch(/\/workspaces\/|\.incoming-|\/tmp\//);
  });

  it("charges each file and each link at least a block: 300 one-byte files, or 300 dangling links, pass a 1 MiB quota", async () => {
    const tiny: Entry[] = Array.from({ length: 300 }, (_, i) => ({ name: `f${i}`, content: "x" }));
    const files = await attack(svc, async () => put(svc, "tiny-files", await tarOf(tiny)));
    expect(files.status, files.text).toBe(413);
    expect(errorOf(files.text).code).toBe("tenant_workspace_bytes");
    const links: Entry[] = Array.from({ length: 300 }, (_, i) => ({ name: `l${i}`, type: "symlink", linkname: `missing-${"x".repeat(200)}` }));
    const linked = await attack(svc, async () => put(svc, "links", await tarOf(links)));
    expect(linked.status, linked.text).toBe(413);
    expect(errorOf(linked.text).code).toBe("tenant_workspace_bytes");
    // 200 of them fit (800 KiB)
    expect((await put(svc, "tiny-200", await tarOf(tiny.slice(0, 200)))).status).toBe(200);
  });
});

describe("the hook sets of many large stored workspaces", () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService("[sandbox]\npool_size = 0\n");
  });
  afterAll(async () => {
    await svc.stop();
  });

  it(`are held within MAX_RESIDENT_HOOK_BYTES (${MAX_RESIDENT_HOOK_BYTES / MiB} MiB) whatever one tenant stores, the rest read again from disk when named`, async () => {
    // Each workspace: four hook files of 250 hooks of ~4000 random characters (1000 hooks, ~4 MiB,
    // within every limit) — about 10 MiB as held; sixteen of them would hold 160 MiB for good.
    const workspace = async (w: number) =>
      tarOf(Array.from({ length: 4 }, (_, f) => ({
        name: `.github/hooks/h${f}.json`,
        content: JSON.stringify({ version: 1, hooks: { postToolUse: Array.from({ length: 250 }, (_, i) => ({ type: "command", bash: `echo ${w}-${f}-${i}-${randomBytes(2900).toString("base64")}`, timeoutSec: 10 })) } }),
      })), { gzip: true });
    const ids = Array.from({ length: 16 }, (_, w) => `big-${w}`);
    for (const [w, id] of ids.entries()) {
      const res = await attack(svc, async () => put(svc, id, await workspace(w)), 15_000);
      expect(res.status, res.text.slice(0, 300)).toBe(200);
    }
    const held = async () => Number(/^hookbox_workspace_hooks_resident_bytes (\d+)/m.exec(await freshMetrics(svc))?.[1]);
    const perWorkspace = 1000 * (2048 + 2 * 4000);
    expect(await held()).toBeGreaterThan(MAX_RESIDENT_HOOK_BYTES - 2 * perWorkspace);
    expect(await held()).toBeLessThanOrEqual(MAX_RESIDENT_HOOK_BYTES + 2 * perWorkspace);
    // every one still answers with its hooks, the first ones read again from disk
    for (const id of ids) {
      const res = await attack(svc, () => get(svc, id), 15_000);
      expect(res.status).toBe(200);
      expect((JSON.parse(res.text) as { hooks: unknown[] }).hooks).toHaveLength(1000);
    }
    expect(await held()).toBeLessThanOrEqual(MAX_RESIDENT_HOOK_BYTES + 2 * perWorkspace);
  });
});

/** The loop that serves everyone, against a workspace's worst: its largest delay read from prom-client (each scrape starts a new window). */
describe("a workspace's worst, against the loop that serves everyone", () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService("[sandbox]\npool_size = 0\n", { server: "max_workspace_entries = 20000" });
  });
  afterAll(async () => {
    await svc.stop();
  });

  const loopLagMaxMs = async () => 1000 * Number(/^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(await freshMetrics(svc))?.[1]);

  it(`holds the loop for no more than REMOVE_AT_ONCE (${REMOVE_AT_ONCE}) unlinks at a time, however many files: 19,999 deleted`, async () => {
    const files = await tarOf(Array.from({ length: 19_999 }, (_, i) => ({ name: `f${i}`, content: "x" })));
    const stored = await attack(svc, () => put(svc, "many", files), 60_000);
    expect(stored.status, stored.text.slice(0, 300)).toBe(200);
    await loopLagMaxMs();
    const del = await attack(svc, () => fetch(`${svc.url}/v1/workspaces/many`, { method: "DELETE", headers: auth }), 60_000);
    expect(del.status).toBe(204);
    // Node's recursive rm here: an unlink started for each of the 19,999 at once, and 200–400 ms of the
    // loop for their completions on a quiet fast machine; four at a time, 20–70 ms however slow the machine
    expect(await loopLagMaxMs()).toBeLessThan(150);
    expect((await get(svc, "many")).status).toBe(404);
    expect(readdirSync(join(svc.dataDir, "workspaces")).flatMap((t) => readdirSync(join(svc.dataDir, "workspaces", t))).filter((n) => n.startsWith(".trash-"))).toEqual([]);
  });

  it(`escapes a repository hook's mebibyte of control characters only as far as MAX_HOOK_MESSAGE_CHARS (${MAX_HOOK_MESSAGE_CHARS}) keeps of it: the reason of an exit 2`, async () => {
    const command = "cat >/dev/null; head -c 1000000 /dev/zero | tr '\\0' '\\1' >&2; exit 2";
    const settings = JSON.stringify({ hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command }] }] } });
    expect((await put(svc, "controls", await tarOf([{ name: ".claude/settings.json", content: settings }]))).status).toBe(200);
    await loopLagMaxMs();
    const { status, text } = await attack(svc, () => svc.event({ session_id: "s", hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "ls" } }, { query: "workspace=controls" }), 30_000);
    // escaped whole, 1 MB of \x01 became 4 MB of "\x01" first: 150–500 ms of the loop
    expect(await loopLagMaxMs()).toBeLessThan(100);
    expect(status).toBe(200);
    const { decision, reason } = JSON.parse(text) as { decision: string; reason: string };
    expect(decision).toBe("block");
    // cut inside one word of escapes: what it kept of it dropped, up to MAX_WORD_CUT_CHARS
    // (marked as the repository's: its words, cut, then the mark)
    expect(reason).toBe(`[repository] ${"\\x01".repeat((MAX_HOOK_MESSAGE_CHARS - MAX_WORD_CUT_CHARS) / 4)}…`);
  });

  it(`joins ten repository Gemini BeforeToolSelection hooks' lists of 100,000 names each (a mebibyte of output apiece) to MAX_TOOL_NAMES (${MAX_TOOL_NAMES}), holding the loop for one answer at a time`, async () => {
    const command = `cat >/dev/null; printf '{"hookSpecificOutput":{"toolConfig":{"allowedFunctionNames":['; seq -f '"t%06g",' 0 99998 | tr -d '\\n'; printf '"t099999"]}}}'`;
    const hooks = Array.from({ length: 10 }, (_, i) => ({ type: "command", name: `lister-${i}`, command }));
    const settings = JSON.stringify({ hooks: { BeforeToolSelection: [{ hooks }] } });
    expect((await put(svc, "tool-lists", await tarOf([{ name: ".gemini/settings.json", content: settings }]))).status).toBe(200);
    await loopLagMaxMs();
    const { status, text } = await attack(svc, () => svc.event({ session_id: "s", hook_event_name: "BeforeToolSelection", llm_request: { model: "m", messages: [], config: {} } }, { query: "workspace=tool-lists&format=gemini" }), 60_000);
    // each answer read in a turn of its own (turns.ts): one mebibyte's JSON.parse, 20–110 ms on a
    // quiet machine, as a 1 MiB event body's; the ten back to back would be ten of them. The bound
    // is this machine's: four parses of one such answer here, and at least the 300 ms the worst
    // /healthz may take under any attack (WORST_HEALTH_MS) — a loaded machine's GC pause is in it.
    const answer = `{"hookSpecificOutput":{"toolConfig":{"allowedFunctionNames":[${Array.from({ length: 100_000 }, (_, i) => `"t${String(i).padStart(6, "0")}"`).join(",")}]}}}`;
    const parses = Array.from({ length: 3 }, () => { const t0 = performance.now(); JSON.parse(answer); return performance.now() - t0; }).sort((a, b) => a - b);
    expect(await loopLagMaxMs()).toBeLessThan(Math.max(WORST_HEALTH_MS, 4 * parses[1]!));
    expect(status, text.slice(0, 300)).toBe(200);
    const names = (JSON.parse(text) as { output: { hookSpecificOutput: { toolConfig: { allowedFunctionNames: string[] } } } }).output.hookSpecificOutput.toolConfig.allowedFunctionNames;
    expect(names).toHaveLength(MAX_TOOL_NAMES);
    expect(names.slice(0, 2)).toEqual(["t000000", "t000001"]);
  });

  it("locates a JSON hook file of max_repository_hooks hooks, each padded with 445 numbers under hooks, without walking into what no place is kept of", async () => {
    const pad = Array.from({ length: 445 }, () => 0);
    const settings = JSON.stringify({ hooks: { PreToolUse: Array.from({ length: 1000 }, () => ({ matcher: "Bash", hooks: [{ type: "command", command: "x", pad }] })) } });
    expect(settings.length).toBeGreaterThan(900_000);
    await loopLagMaxMs();
    const { status, text } = await attack(svc, async () => put(svc, "padded", await tarOf([{ name: ".claude/settings.json", content: settings }])));
    expect(status, text.slice(0, 300)).toBe(200);
    expect((JSON.parse(text) as { hooks: unknown[] }).hooks).toHaveLength(1000);
    // a place made for each of the first 100,000 numbers, the rest walked into: 230–550 ms of the loop (now 40–120 ms)
    expect(await loopLagMaxMs()).toBeLessThan(200);
  });

  it(`skips a .gemini/settings.json of a mebibyte of comments (350,000 of them) at the comment past MAX_JSONC_COMMENTS (${MAX_JSONC_COMMENTS}), before any parser scans it`, async () => {
    const head = '{"hooks":{"BeforeTool":[{"matcher":"x","hooks":[{"type":"command","command":"g.sh"}]}]},"notes":[';
    const content = `${head}\n${"//\n".repeat(Math.floor((MiB - head.length - 8) / 3))}0]}`;
    expect(content.length).toBeGreaterThan(MiB - 16);
    await loopLagMaxMs();
    const { status, text } = await attack(svc, async () => put(svc, "commented", await tarOf([{ name: ".gemini/settings.json", content }])));
    expect(status, text.slice(0, 300)).toBe(200);
    expect(storedOf(text)).toEqual({ hooks: [], warnings: [expect.stringMatching(new RegExp(`^\\.gemini/settings\\.json:${MAX_JSONC_COMMENTS + 2}:1: holds more than ${MAX_JSONC_COMMENTS} comments \\(MAX_JSONC_COMMENTS\\); the file is skipped`))] });
    // scanned by the parser, then blanked comment by comment: 270–850 ms of the loop (now a byte pass, 10–40 ms)
    expect(await loopLagMaxMs()).toBeLessThan(150);
  });

  it("locates a config.toml's hooks past a mebibyte of tables outside [hooks] without indexing them", async () => {
    let content = `[[hooks.PreToolUse]]\nname = "n"\ncommand = "x"\n`;
    for (let i = 0; content.length < 1_000_000; i++) content += `[a.b.b.b.b.b.b.c${i}]\n`;
    await loopLagMaxMs();
    const { status, text } = await attack(svc, async () => put(svc, "toml-tables", await tarOf([{ name: ".copilot-shell/config.toml", content }])));
    expect(status, text.slice(0, 300)).toBe(200);
    expect((JSON.parse(text) as { hooks: { origin: string }[] }).hooks.map((h) => h.origin)).toEqual([".copilot-shell/config.toml:1"]);
    // every header indexed, each resolved against the array by a growing name: 180–1200 ms of the loop
    // (now 40–100 ms, as the machine's other load goes)
    expect(await loopLagMaxMs()).toBeLessThan(150);
  });

  it("skips a config.toml of a mebibyte of tables under [hooks] at the table past MAX_OBJECT_KEYS (one no header names: no line), the headers indexed in one pass", async () => {
    let content = `[[hooks.PreToolUse]]\nname = "n"\ncommand = "x"\n`;
    for (let i = 0; content.length < 1_000_000; i++) content += `[hooks.b.b.b.b.b.c${i}]\n`;
    const { status, text } = await attack(svc, async () => put(svc, "toml-hook-tables", await tarOf([{ name: ".copilot-shell/config.toml", content }])));
    expect(status, text.slice(0, 300)).toBe(200);
    expect(storedOf(text)).toEqual({ hooks: [], warnings: [".copilot-shell/config.toml: hooks.b.b.b.b.b: holds more than 16384 keys (MAX_OBJECT_KEYS); the file is skipped: none of its hooks are read"] });
  });

  it("skips a config.toml whose [hooks.x] holds a mebibyte of dotted keys past MAX_OBJECT_KEYS at its header, indexing no more of them than MAX_LOCATED_CHILDREN", async () => {
    let content = `[[hooks.PreToolUse]]\nname = "n"\ncommand = "x"\n[hooks.x]\n`;
    // (as many keys as a mebibyte holds: 115,000)
    for (let i = 0; content.length < 1_000_000; i++) content += `a.${i.toString(36)}=1\n`;
    await loopLagMaxMs();
    const { status, text } = await attack(svc, async () => put(svc, "toml-hook-keys", await tarOf([{ name: ".copilot-shell/config.toml", content }])));
    expect(status, text.slice(0, 300)).toBe(200);
    expect(storedOf(text)).toEqual({ hooks: [], warnings: [".copilot-shell/config.toml:4:1: hooks.x.a: holds more than 16384 keys (MAX_OBJECT_KEYS); the file is skipped: none of its hooks are read"] });
    // every key indexed on the loop that serves everyone, for the line of one error: 120–320 ms (now the scan alone, 25–80 ms)
    expect(await loopLagMaxMs()).toBeLessThan(150);
  });

  it(`skips a hook file of 50,000 entries of another type whole at the one past SKIPPED_HOOKS_FACTOR × max_repository_hooks (${SKIPPED_HOOKS_FACTOR * 1000}), none read by a schema; the workspace's other guard loads`, async () => {
    const handlers = Array.from({ length: 50_000 }, (_, i) => ({ type: "x", k: i % 10 }));
    const settings = JSON.stringify({ hooks: { PreToolUse: [{ hooks: handlers }] } });
    const guard = JSON.stringify({ version: 1, hooks: { preToolUse: [{ type: "command", bash: "echo guard" }] } });
    const { status, text } = await attack(svc, async () => put(svc, "skipped", await tarOf([{ name: ".claude/settings.json", content: settings }, { name: ".github/hooks/guard.json", content: guard }])));
    expect(status, text.slice(0, 300)).toBe(200);
    const stored = storedOf(text);
    expect(stored.hooks).toEqual([expect.objectContaining({ name: expect.stringMatching(/^guard\.json:/) })]);
    expect(stored.warnings).toContainEqual(expect.stringMatching(new RegExp(`^\\.claude/settings\\.json:\\d+:\\d+: hooks\\.PreToolUse\\[0\\]\\.hooks\\[${SKIPPED_HOOKS_FACTOR * 1000}\\]: more hook entries hookbox skips than a repository's files may hold .*; the file is skipped: none of its hooks are read$`)));
  });
});

describe("events waiting for their workspaces to be read after a restart", () => {
  let svc: Service;
  const config = "[sandbox]\npool_size = 0\n";
  const opts = { server: "max_workspace_entries = 60000\nmax_unpack_ratio = 100000" };
  const event = { session_id: "s", hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "ls" } };
  beforeAll(async () => {
    svc = await startService(config, opts);
  });
  afterAll(async () => {
    await svc.stop();
  });

  it(`resume each in a turn of its own once their workspace is in (the probe answered between them); past TENANT_WORKSPACE_WAITERS (${TENANT_WORKSPACE_WAITERS}) a tenant's next is 429, another tenant's still waits its turn`, async () => {
    // 1000 hooks, each matcher its own (none takes Bash): every waiting event tests them all
    const settings = { hooks: { PreToolUse: Array.from({ length: 1000 }, (_, i) => ({ matcher: `tool${i}|other${i}`, hooks: [{ type: "command", command: `guard-${i}.sh` }] })) } };
    const stored = await put(svc, "herd", await tarOf([{ name: ".claude/settings.json", content: JSON.stringify(settings) }]));
    expect(stored.status, await stored.clone().text()).toBe(200);
    // two trees of 20 000 entries: read first after the restart, they hold both reading slots a while
    const wide = await tarOf(Array.from({ length: 20_000 }, (_, i) => ({ name: `d${i % 100}/f${i}`, content: "" })), { gzip: true });
    for (const id of ["wide-1", "wide-2"]) expect((await put(svc, id, wide)).status).toBe(200);
    const b = await fetch(`${svc.url}/v1/workspaces/b-one`, { method: "PUT", headers: { authorization: `Bearer ${TOKEN_B}` }, body: await tarOf([{ name: "a.txt", content: "a" }]) });
    expect(b.status).toBe(200);
    await svc.stop();
    svc = await startService(config, { ...opts, dir: svc.dir });
    const on = (id: string, token = TOKEN_A) => svc.event(event, { query: `workspace=${id}`, token });
    const { value, health } = await underProbe(svc.url, async () => {
      const slow = ["wide-1", "wide-2"].map((id) => on(id));
      await new Promise((r) => setTimeout(r, 100));
      const herd = Array.from({ length: TENANT_WORKSPACE_WAITERS - 2 }, () => on("herd"));
      await new Promise((r) => setTimeout(r, 300));
      const [past, other] = await Promise.all([on("herd"), on("b-one", TOKEN_B)]);
      const answers = await Promise.all([...slow, ...herd]);
      return { past: { status: past.status, text: await past.text() }, other: other.status, statuses: answers.map((r) => r.status) };
    });
    expect(value.past.status).toBe(429);
    expect(errorOf(value.past.text)).toMatchObject({ code: "overloaded", message: expect.stringContaining("TENANT_WORKSPACE_WAITERS") });
    expect(value.other).toBe(200);
    expect(new Set(value.statuses)).toEqual(new Set([200]));
    expect(health.failures).toBe(0);
    expect(health.worstMs).toBeLessThanOrEqual(WORST_HEALTH_MS);
    await alive(svc);
  }, 120_000);
});
