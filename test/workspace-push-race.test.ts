/**
 * `hookbox workspace push` against a checkout that changes under it: another process that can write
 * the repository but not read the user's home (an agent's sandbox or a dev container with the
 * checkout mounted) swaps a folder on a listed file's path for a link to the user's own files. No
 * service: the upload is caught at fetch and unpacked here. The swaps happen at the very calls
 * where the race would be won (node:fs wrapped), so each case is deterministic.
 */
import type * as Fs from "node:fs";
import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { workspacePush } from "../cli/workspace-push.js";

/** Called with the path before the real call: where a test swaps a folder for a link. */
const before = vi.hoisted(() => ({ open: undefined as ((path: string) => void) | undefined, readdir: undefined as ((path: string) => void) | undefined }));
vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof Fs>();
  return {
    ...fs,
    openSync: ((...a: Parameters<typeof fs.openSync>) => {
      before.open?.(String(a[0]));
      return fs.openSync(...a);
    }) as typeof fs.openSync,
    readdirSync: ((...a: unknown[]) => {
      before.readdir?.(String(a[0]));
      return (fs.readdirSync as (...x: unknown[]) => unknown)(...a);
    }) as typeof fs.readdirSync,
  };
});

const SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- the user's own";
const root = mkdtempSync(join(tmpdir(), "hookbox-push-race-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(() => {
  before.open = undefined;
  before.readdir = undefined;
  vi.unstubAllGlobals();
});

/** A home with a key, and a repository whose .claude/hooks holds a guard and a decoy of the key's name. */
function setUp(): { home: string; repo: string; hooks: string } {
  const home = mkdtempSync(join(root, "home-"));
  mkdirSync(join(home, ".ssh"));
  writeFileSync(join(home, ".ssh/id_rsa"), SECRET);
  const repo = realpathSync(mkdtempSync(join(root, "repo-")));
  mkdirSync(join(repo, ".claude/hooks"), { recursive: true });
  writeFileSync(join(repo, ".claude/hooks/guard.sh"), "echo guard\n");
  writeFileSync(join(repo, ".claude/hooks/id_rsa"), "decoy\n");
  return { home, repo, hooks: join(repo, ".claude/hooks") };
}

/** `.claude/hooks` becomes a link to the home's .ssh, once: at the first call on `at`. */
const swapper = (hooks: string, home: string, at: string) => {
  let done = false;
  return (path: string) => {
    if (done || path !== at) return;
    done = true;
    renameSync(hooks, `${hooks}.was`);
    symlinkSync(join(home, ".ssh"), hooks);
  };
};

/** The push, its upload caught: the archive's bytes, unpacked from gzip (tar holds the files as they are). */
async function push(repo: string): Promise<{ code: number; stderr: string; archive: string }> {
  let sent: Buffer | undefined;
  vi.stubGlobal("fetch", async (_url: string, init: { body: Buffer }) => {
    sent = Buffer.from(init.body);
    return new Response(JSON.stringify({ hooks: [], warnings: [] }), { status: 200, headers: { "content-type": "application/json" } });
  });
  const r = await workspacePush([repo, "--url", "http://127.0.0.1:9", "--id", "x"], { HOOKBOX_TOKEN: "t" });
  return { code: r.code, stderr: r.stderr, archive: sent ? gunzipSync(sent).toString("latin1") : "" };
}

describe("hookbox workspace push, a folder swapped for a link while it runs", () => {
  it("between the listing and the read: the file read is not the one listed, and is not sent", async () => {
    const { home, repo, hooks } = setUp();
    before.open = swapper(hooks, home, join(hooks, "id_rsa"));
    const r = await push(repo);
    expect(r.archive).toContain("echo guard");
    expect(r.archive).not.toContain(SECRET);
    expect(r.stderr).toMatch(/\.claude\/hooks\/id_rsa could not be read \(.*changed.*\): skipped/);
  });

  it("between a folder's look and its listing: what the link leads to is not sent", async () => {
    const { home, repo, hooks } = setUp();
    before.readdir = swapper(hooks, home, hooks);
    const r = await push(repo);
    expect(r.archive).not.toContain(SECRET);
  });
});
