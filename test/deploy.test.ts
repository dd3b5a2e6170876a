/**
 * The service as a container: built from deploy/Dockerfile with testcontainers (offline: the Debian
 * base was built by set-up and nothing is pulled), then the image, run with the engine socket,
 * answers /readyz and runs a container hook on that engine, under tini as PID 1; stopped, it leaves
 * nothing behind.
 */
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GenericContainer, Wait } from "testcontainers";
import { expect, it } from "vitest";
import { leftovers } from "./helpers/engine.js";

const TAG = "hookbox/service:test";
const PORT = 8080;

it("builds from deploy/Dockerfile and serves from the image", async () => {
  const image = await GenericContainer.fromDockerfile(".", "deploy/Dockerfile").build(TAG, { deleteOnExit: false });

  // The data folder sits at the same path inside and out: the engine mounts workspaces from there.
  const data = mkdtempSync(join(tmpdir(), "hookbox-deploy-"));
  chmodSync(data, 0o755);
  const config = join(data, "hookbox.toml");
  writeFileSync(config, `[server]\ndata_dir = "${data}"\n\n[[tenants]]\nname = "t"\ntoken_env = "HOOKBOX_TOKEN"\n\n` +
    `[[hooks.PreToolUse]]\nname = "in-a-container"\ncommand = '''test "$(id -u)" != 0 && jq -r .tool_input.command | grep -q 'rm -rf' && echo '{"decision":"block","reason":"from the image"}' || echo '{}' '''\n`);
  const service = await image
    .withBindMounts([{ source: "/var/run/docker.sock", target: "/var/run/docker.sock" }, { source: data, target: data }])
    .withEnvironment({ HOOKBOX_TOKEN: "deploy-token" })
    .withCommand(["--config", config, "--listen", `0.0.0.0:${PORT}`])
    .withExposedPorts(PORT)
    .withWaitStrategy(Wait.forHttp("/readyz", PORT).forStatusCode(200))
    .withStartupTimeout(120_000)
    .start();
  try {
    const res = await fetch(`http://${service.getHost()}:${service.getMappedPort(PORT)}/v1/events`, {
      method: "POST", headers: { authorization: "Bearer deploy-token" },
      body: JSON.stringify({ hook_event_name: "PreToolUse", tool_name: "shell", tool_input: { command: "rm -rf /" } }),
    });
    const body = (await res.json()) as { decision: string; reason: string; hooks: Array<{ sandbox: string; outcome: string }> };
    expect(body).toMatchObject({ decision: "block", reason: "from the image" });
    expect(body.hooks).toEqual([expect.objectContaining({ sandbox: "container", outcome: "exited" })]);
    // PID 1 is tini, which reaps what policy hooks leave to be adopted; the service is its child.
    expect((await service.exec(["cat", "/proc/1/comm"])).output.trim()).toBe("tini");
  } finally {
    // SIGTERM, then the container is removed: the service drains and removes its hook containers.
    await service.stop({ timeout: 10_000 });
  }
  expect((await leftovers()).containers).toEqual([]);
}, 900_000);
