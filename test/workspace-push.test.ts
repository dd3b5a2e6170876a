/**
 * `hookbox workspace push` against a hostile repository, with no service: what it reads of the
 * repository before any upload. The --url goes nowhere (exit 69, "cannot reach", once the archive is
 * made); a limit the upload would pass ends the push before that (exit 65, "nothing sent").
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, linkSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, symlinkSync, writeFileSync, ftruncateSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { MAX_PUSH_WARNINGS, scriptsNamed, workspacePush } from "../cli/workspace-push.js";
import { loadRepositoryHooksSync } from "../engine/repository.js";

const MiB = 1024 * 1024;
const root = mkdtempSync(join(tmpdir(), "hookbox-push-hostile-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A repository holding `files` (a number: a sparse file of that many bytes). */
function repo(files: Record<string, string | Buffer | number>): string {
  const dir = mkdtempSync(join(root, "repo-"));
  for (const [name, body] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    if (typeof body !== "number") writeFileSync(join(dir, name), body);
    else {
      const fd = openSync(join(dir, name), "w");
      ftruncateSync(fd, body);
      closeSync(fd);
    }
  }
  return dir;
}

/** The push, killed if it takes 20 s (each case here ends in well under one). */
const push = (dir: string) =>
  spawnSync(process.execPath, ["dist/cli/main.js", "workspace", "push", dir, "--url", "http://127.0.0.1:9", "--id", "x"], {
    encoding: "utf8", env: { PATH: process.env.PATH ?? "", HOOKBOX_TOKEN: "t" }, timeout: 20_000, killSignal: "SIGKILL",
  });

describe("hookbox workspace push, the scripts a hook file names", () => {
  it("are looked for in time linear in the file's text: a megabyte of `a.a.a.…` is a moment, not twenty minutes", () => {
    // Tried from every character, it was: 200 KB took 51 s (80 KB: 6–8 s).
    const r = push(repo({ ".claude/hooks/x.json": "a.".repeat(500_000) }));
    expect(r.error).toBeUndefined();
    expect(r.status, r.stderr).toBe(69);
    expect(r.stderr).toContain("cannot reach");
  });

  it("are the paths found as before", () => {
    expect(scriptsNamed('python3 ./scripts/fmt.py; "$CLAUDE_PROJECT_DIR/.cursor/scripts/g.py" ${CLAUDE_PROJECT_DIR}/h.sh')).toEqual(["scripts/fmt.py", ".cursor/scripts/g.py", "h.sh"]);
    expect(scriptsNamed("x$CLAUDE_PROJECT_DIR/a.sh /usr/bin/b.bash a//c.ts ../d.rb e.sh.bak f.shx g.json a.a/h.mjs-1")).toEqual(["a.sh", "usr/bin/b.bash", "c.ts", "../d.rb", "e.sh", "a.a/h.mjs"]);
    // The pattern as it was (quadratic on a long run), on short texts of the pieces paths are made of.
    const before = /(?:\$\{?CLAUDE_PROJECT_DIR\}?\/|\.\/)?((?:[\w.-]+\/)*[\w.-]+\.(?:sh|bash|py|js|mjs|cjs|ts|rb|pl))\b/g;
    const pieces = ["a", "b", ".", "/", "-", "_", "$", "{", "}", " ", "sh", ".sh", ".py", ".json", "..", "./", "//", "CLAUDE_PROJECT_DIR", "$CLAUDE_PROJECT_DIR/", "${CLAUDE_PROJECT_DIR}/", "é", '"'];
    let seed = 1;
    const next = (n: number) => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n;
    let found = 0;
    for (let i = 0; i < 50_000; i++) {
      const text = Array.from({ length: 1 + next(12) }, () => pieces[next(pieces.length)]).join("");
      const was = Array.from(text.matchAll(before), (m) => m[1]);
      found += was.length;
      expect(scriptsNamed(text), text).toEqual(was);
    }
    expect(found).toBeGreaterThan(5_000);
  });
});

describe("hookbox workspace push, past a limit of the service's", () => {
  it("refuses files that together pass 4 × max_body_bytes before reading the one that passes it, naming it", () => {
    // 1.9 GB was read whole (3.9 GB of memory) before the upload the service refuses.
    const r = push(repo({ ".claude/hooks/a.sh": "echo '{}'\n", ".claude/hooks/big.sh": 1900 * MiB }));
    expect(r.error).toBeUndefined();
    expect(r.status, r.stderr).toBe(65);
    expect(r.stderr).toBe("hookbox: .claude/hooks/big.sh: with it the files sent come to more than 268435456 bytes, the most an upload may unpack to (4 × server.max_body_bytes, by default): nothing sent\n");
    // …one byte past it, however many files make it
    const past = push(repo({ ".claude/hooks/a.sh": 128 * MiB, ".claude/hooks/b.sh": 128 * MiB + 1 }));
    expect(past.status, past.stderr).toBe(65);
    expect(past.stderr).toMatch(/^hookbox: \.claude\/hooks\/b\.sh: with it the files sent come to more than 268435456 bytes/);
  });

  it("refuses a hook file the service reads over max_hook_file_bytes, as it is or as its hook settings are cut from it, naming it; one of exactly that is sent", () => {
    // blanks: no path for the search for scripts to find (unsentScripts)
    const big = JSON.stringify({ hooks: {}, x: " ".repeat(MiB) });
    for (const name of [".github/hooks/h.json", ".cursor/hooks.json", ".claude/settings.json", ".codex/config.toml"]) {
      const r = push(repo({ [name]: name.endsWith(".toml") ? `x = "${" ".repeat(MiB)}"\n[hooks]\n` : big }));
      expect(r.status, `${name}: ${r.stderr}`).toBe(65);
      expect(r.stderr).toBe(`hookbox: ${name}: the file is larger than 1048576 bytes, the most the service reads of a hook file (server.max_hook_file_bytes, by default): nothing sent\n`);
    }
    const exactly = JSON.stringify({ hooks: {}, x: "" });
    const r = push(repo({ ".github/hooks/h.json": JSON.stringify({ hooks: {}, x: " ".repeat(MiB - exactly.length) }), ".claude/hooks/data.json": big }));
    expect(r.status, r.stderr).toBe(69);
  });

  it("sends nothing when every file found holds no hook settings (a Claude settings file of permissions alone): no archive of nothing, which the service refuses", () => {
    const r = push(repo({ ".claude/settings.json": JSON.stringify({ permissions: { allow: ["Bash(ls)"] } }) }));
    expect(r.status, r.stderr).toBe(65);
    expect(r.stderr).toMatch(/^hookbox: no hook settings in .* \(the files found hold none, or could not be read\): nothing sent\n$/);
  });

  it("refuses an archive over max_body_bytes before sending it", () => {
    const r = push(repo({ ".claude/hooks/blob.bin": randomBytes(65 * MiB) }));
    expect(r.status, r.stderr).toBe(65);
    expect(r.stderr).toBe("hookbox: the archive is over 67108864 bytes, the most the service takes (server.max_body_bytes, by default): nothing sent\n");
  });
});

describe("hookbox workspace push, names it cannot read", () => {
  it("skips a file whose name is not UTF-8 (git keeps such names), and still sends the rest", () => {
    // Read back as text, the name holds U+FFFD and names no file: its lstat threw, and the push ended (exit 70), nothing sent.
    const dir = repo({ ".claude/hooks/guard.sh": "echo guard\n" });
    writeFileSync(Buffer.concat([Buffer.from(join(dir, ".claude/hooks/")), Buffer.from([0x62, 0xff, 0x2e, 0x73, 0x68])]), "x");
    const r = push(dir);
    // the archive made, the upload tried (its warnings are said with the service's answer)
    expect(r.status, r.stderr).toBe(69);
    expect(r.stderr).toContain("cannot reach");
  });
});

describe("hookbox workspace push, a hard link", () => {
  it("is not sent: another name of the file may lie outside the repository (a clone makes none)", async () => {
    const dir = repo({ ".claude/hooks/guard.sh": "echo guard\n" });
    const secret = join(root, `outside-${randomBytes(4).toString("hex")}`);
    writeFileSync(secret, "id_rsa\n");
    linkSync(secret, join(dir, ".claude/hooks/hard.sh"));
    symlinkSync("hard.sh", join(dir, ".claude/hooks/to-hard.sh"));
    const r = await workspacePush([dir, "--id", "x", "--url", "http://127.0.0.1:9"], { HOOKBOX_TOKEN: "t" }, 5_000);
    expect(r.code, r.stderr).toBe(69);
    expect(r.stderr).toMatch(/warning: \.claude\/hooks\/hard\.sh is a hard link \(the file has 2 names, which may lie outside .*\): skipped/);
    expect(r.stderr).toMatch(/warning: \.claude\/hooks\/to-hard\.sh is a link to a hard link/);
  });
});

describe("hookbox workspace push, many warnings", () => {
  it("lists MAX_PUSH_WARNINGS of them and counts the rest in one line: a folder of links to nothing lists no line per link", async () => {
    const dir = repo({ ".claude/hooks/guard.sh": "echo guard\n" });
    for (let i = 0; i < MAX_PUSH_WARNINGS + 50; i++) symlinkSync(`nothing-${i}`, join(dir, `.claude/hooks/gone-${i}`));
    const r = await workspacePush([dir, "--id", "x", "--url", "http://127.0.0.1:9"], { HOOKBOX_TOKEN: "t" }, 5_000);
    expect(r.code, r.stderr).toBe(69);
    const lines = r.stderr.trim().split("\n");
    expect(lines.filter((l) => l.endsWith("is a link to nothing: skipped"))).toHaveLength(MAX_PUSH_WARNINGS);
    expect(lines).toContain("warning: 50 more not listed (MAX_PUSH_WARNINGS)");
  });

  it(`lists all of exactly MAX_PUSH_WARNINGS`, async () => {
    const dir = repo({ ".claude/hooks/guard.sh": "echo guard\n" });
    for (let i = 0; i < MAX_PUSH_WARNINGS; i++) symlinkSync(`nothing-${i}`, join(dir, `.claude/hooks/gone-${i}`));
    const r = await workspacePush([dir, "--id", "x", "--url", "http://127.0.0.1:9"], { HOOKBOX_TOKEN: "t" }, 5_000);
    expect(r.stderr.trim().split("\n").filter((l) => l.endsWith("is a link to nothing: skipped"))).toHaveLength(MAX_PUSH_WARNINGS);
    expect(r.stderr).not.toContain("more not listed");
  });
});

/**
 * A stand-in for the service's upload route: unpacks what it is sent and answers with the warnings
 * the engine's own loader gives for it (the service's answer). `sent`: each upload's files as text.
 */
async function loaderService(): Promise<{ url: string; sent: Record<string, string>[]; close: () => Promise<void> }> {
  const sent: Record<string, string>[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const dir = mkdtempSync(join(root, "upload-"));
      writeFileSync(join(dir, "..", `${dir.split("/").pop()!}.tgz`), Buffer.concat(chunks));
      const unpacked = join(dir, "w");
      mkdirSync(unpacked);
      spawnSync("tar", ["-xzf", `${dir}.tgz`, "-C", unpacked]);
      const files = spawnSync("find", [".", "-type", "f"], { cwd: unpacked, encoding: "utf8" }).stdout.split("\n").filter(Boolean);
      sent.push(Object.fromEntries(files.map((f) => [f.slice(2), readFileSync(join(unpacked, f), "utf8")])));
      const set = loadRepositoryHooksSync(unpacked, 60_000);
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ hooks: set.hooks.map((h) => ({ origin: h.origin })), warnings: set.warnings }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, sent, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe("hookbox workspace push, the service's warnings", () => {
  it("name the user's own lines, as hookbox check does: a settings file's other settings and comments are blanked where they stand, never sent", async () => {
    const claude = [
      "{", //                                                          1
      '  "permissions": {', //                                          2
      '    "allow": [', //                                              3
      '      "Bash(ls)",', //                                           4
      '      "Bash(git status)"', //                                    5
      "    ]", //                                                       6
      "  },", //                                                        7
      '  "hooks": {', //                                                8
      '    "PreToolUse": [', //                                         9
      '      { "matcher": "^(?!Read).*",', //                           10: RE2 takes no lookahead
      '        "hooks": [', //                                          11
      '          { "type": "http", "url": "https://example.com" },', // 12: not run by hookbox
      '          { "type": "command", "command": "guard.sh", "colour": "red" }', // 13: unknown key
      "        ] }", //                                                 14
      "    ]", //                                                       15
      "  },", //                                                        16
      '  "env": { "API_KEY": "sk-secret-claude" }', //                  17
      "}",
    ].join("\n");
    const codex = [
      'model = "o3"', //                                 1
      "# api_key = \"sk-secret-comment\"", //          2
      "[mcp_servers.x]", //                              3
      'env = { TOKEN = "sk-secret-codex" }', //          4
      "", //                                             5
      "[[hooks.PreToolUse]]", //                         6
      'matcher = "Bash"', //                             7
      "[[hooks.PreToolUse.hooks]]", //                   8
      'type = "command"', //                             9
      'command = """', //                                10
      "[ -f .env ] && exit 2", //                        11
      '"""', //                                          12
      'colour = "red" # a comment', //                   13: unknown key
    ].join("\n");
    const gemini = '{\n  // my notes: token sk-secret-gemini\n  "theme": "dark",\n  "hooks": { "BeforeTool": [ { "hooks": [\n    { "type": "command", "command": "g.sh", "colour": "red", },\n  ], }, ], },\n}\n';
    const dir = repo({ ".claude/settings.json": claude, ".codex/config.toml": codex, ".gemini/settings.json": gemini });
    const own = loadRepositoryHooksSync(dir, 60_000).warnings;
    expect(own).toEqual([
      expect.stringMatching(/^\.claude\/settings\.json:10: hooks\.PreToolUse\[0\]\.matcher: /),
      expect.stringMatching(/^\.claude\/settings\.json:12: hooks\.PreToolUse\[0\]\.hooks\[0\]: "http" hooks are not run/),
      expect.stringMatching(/^\.claude\/settings\.json:13: hooks\.PreToolUse\[0\]\.hooks\[1\]\.colour: unknown key/),
      expect.stringMatching(/^\.codex\/config\.toml:13: hooks\.PreToolUse\[0\]\.hooks\[0\]\.colour: unknown key/),
      expect.stringMatching(/^\.gemini\/settings\.json:5: hooks\.BeforeTool\[0\]\.hooks\[0\]\.colour: unknown key/),
    ]);
    const service = await loaderService();
    try {
      const r = await workspacePush([dir, "--id", "x", "--url", service.url], { HOOKBOX_TOKEN: "t" }, 5_000);
      expect(r.code, r.stderr).toBe(0);
      const said = r.stderr.split("\n").filter((l) => /^warning: \.(claude|codex|gemini)\/[a-z.]+:\d+: /.test(l));
      expect(said).toEqual(own.map((w) => `warning: ${w}`));
      expect(r.stderr).toMatch(/\.claude\/settings\.json: only its hook settings .* blanked where they stand: line numbers the service gives for it are the file's own/);
      // what was sent holds the hook settings alone, each on its own line
      const files = service.sent[0]!;
      for (const text of Object.values(files)) expect(text).not.toMatch(/sk-secret|Bash\(git status\)|my notes|api_key|theme/);
      expect(files[".claude/settings.json"]!.split("\n")).toHaveLength(claude.split("\n").length);
      expect(files[".codex/config.toml"]!.split("\n")[10]).toBe("[ -f .env ] && exit 2");
    } finally {
      await service.close();
    }
  });
});
