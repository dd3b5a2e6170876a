/**
 * compose.yaml as a user runs it (`HOOKBOX_TOKEN=… docker compose up -d`), through testcontainers:
 * built and started, waited on its healthcheck (/readyz), a real event decided by its container hook, then taken
 * down with nothing left behind. Compose v2 when the engine's CLI has it, else the standalone
 * `docker-compose` (set-up installs Debian's for the tests).
 */
import { spawnSync } from "node:child_process";
import { DockerComposeEnvironment, Wait, type StartedDockerComposeEnvironment } from "testcontainers";
import { afterAll, expect, it, vi } from "vitest";
import { leftovers } from "./helpers/engine.js";
import { freePort } from "./helpers/service.js";

afterAll(() => {
  vi.unstubAllEnvs();
});

const composeV2 = spawnSync("docker", ["compose", "version"], { stdio: "ignore" }).status === 0;

it("builds and starts with compose.yaml and decides an event", async () => {
  const port = await freePort();
  const env = { HOOKBOX_TOKEN: "compose-token", HOOKBOX_PORT: String(port) };
  // Also in this process's environment: the `down` testcontainers runs after a failed start gets
  // no withEnvironment values, and compose refuses to read compose.yaml without HOOKBOX_TOKEN.
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  const environment = new DockerComposeEnvironment(".", "compose.yaml")
    .withBuild()
    .withProjectName(`hookbox-compose-test-${process.pid}`)
    .withEnvironment(env)
    .withClientOptions(composeV2 ? {} : { executable: { standalone: true } })
    // The file's own healthcheck asks /readyz: waiting on it proves that check too.
    .withDefaultWaitStrategy(Wait.forHealthCheck())
    .withStartupTimeout(120_000);
  let started: StartedDockerComposeEnvironment | undefined;
  try {
    started = await environment.up();
    const res = await fetch(`http://127.0.0.1:${port}/v1/events`, {
      method: "POST", headers: { authorization: "Bearer compose-token" },
      body: JSON.stringify({ session_id: "compose", hook_event_name: "PreToolUse", tool_name: "shell", tool_input: { command: "rm -rf /tmp/old" } }),
    });
    expect(res.status).toBe(200);
    // The shipped configuration refuses a tool call hookbox cannot decide.
    expect(res.headers.get("hookbox-on-failure")).toBe("block");
    const body = (await res.json()) as { decision: string; reason: string; hooks: Array<{ name: string; sandbox: string; outcome: string }> };
    expect(body).toMatchObject({ decision: "block", reason: "Dangerous rm -rf command" });
    expect(body.hooks.map((h) => [h.name, h.sandbox, h.outcome])).toEqual([["org-guard", "host", "exited"], ["security-check", "container", "exited"]]);
  } finally {
    // SIGTERM with time to drain: the service removes its hook containers before it exits.
    await started?.down({ timeout: 10_000 });
  }
  expect((await leftovers()).containers).toEqual([]);
}, 900_000);
