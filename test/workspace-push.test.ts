/**
 * `hookbox workspace push` against a hostile repository, with no service: what it reads of the
 * repository before any upload. The --url goes nowhere (exit 69, "cannot reach", once the archive is
 * made).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { scriptsNamed } from "../cli/workspace-push.js";

const root = mkdtempSync(join(tmpdir(), "hookbox-push-hostile-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A repository holding `files`. */
function repo(files: Record<string, string>): string {
  const dir = mkdtempSync(join(root, "repo-"));
  for (const [name, body] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), body);
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
