/**
 * The service as a container: `docker build -f deploy/Dockerfile .` (offline: the Debian base was
 * built by set-up), then the image, run with the engine socket, answers /readyz and runs a
 * container hook on that engine.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { leftovers } from "./helpers/engine.js";
import { freePort } from "./helpers/service.js";

const TAG = "hookbox/service:test";
const NAME = `hookbox-deploy-test-${process.pid}`;

afterAll(() => {
  spawnSync("docker", ["rm", "-f", NAME], { stdio: "ignore" });
});

it("builds with docker build -f deploy/Dockerfile . and serves from the image", async () => {
  const build = spawnSync("docker", ["build", "-q", "-f", "deploy/Dockerfile", "-t", TAG, "."], { encoding: "utf8", timeout: 600_000 });
  expect(build.status, build.stderr).toBe(0);

  // The data folder sits at the same path inside and out: the engine mounts workspaces from there.
  const data = mkdtempSync(join(tmpdir(), "hookbox-deploy-"));
  chmodSync(data, 0o755);
  const config = join(data, "hookbox.toml");
  writeFileSync(config, `[server]\ndata_dir = "${data}"\n\n[[tenants]]\nname = "t"\ntoken_env = "HOOKBOX_TOKEN"\n\n` +
    `[[hooks.PreToolUse]]\nname = "in-a-container"\ncommand = '''test "$(id -u)" != 0 && jq -r .tool_input.command | grep -q 'rm -rf' && echo '{"decision":"block","reason":"from the image"}' || echo '{}' '''\n`);
  const port = await freePort();
  execFileSync("docker", [
    "run", "-d", "--name", NAME, "--network", "host",
    "-v", "/var/run/docker.sock:/var/run/docker.sock", "-v", `${data}:${data}`,
    "-e", "HOOKBOX_TOKEN=deploy-token", TAG, "--config", config, "--listen", `127.0.0.1:${port}`,
  ]);
  const url = `http://127.0.0.1:${port}`;
  let ready = 0;
  for (let i = 0; i < 100 && ready !== 200; i++) {
    ready = await fetch(`${url}/readyz`).then((r) => r.status, () => 0);
    if (ready !== 200) await new Promise((r) => setTimeout(r, 200));
  }
  expect(ready, spawnSync("docker", ["logs", NAME], { encoding: "utf8" }).stderr).toBe(200);

  const res = await fetch(`${url}/v1/events`, {
    method: "POST", headers: { authorization: "Bearer deploy-token" },
    body: JSON.stringify({ hook_event_name: "PreToolUse", tool_name: "shell", tool_input: { command: "rm -rf /" } }),
  });
  const body = (await res.json()) as { decision: string; reason: string; hooks: Array<{ sandbox: string; outcome: string }> };
  expect(body).toMatchObject({ decision: "block", reason: "from the image" });
  expect(body.hooks).toEqual([expect.objectContaining({ sandbox: "container", outcome: "exited" })]);

  execFileSync("docker", ["stop", "-t", "10", NAME]);
  expect((await leftovers()).containers).toEqual([]);
}, 900_000);
