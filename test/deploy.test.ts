/**
 * The service as a container: built from deploy/Dockerfile with testcontainers (offline: the Debian
 * base was built by set-up and nothing is pulled), then the image, run with the engine socket and
 * the capabilities the Kubernetes manifest gives it, answers /readyz, stores a workspace and runs
 * its repository hook and a container hook on that engine, under tini as PID 1, and deletes the
 * workspace; stopped, it leaves nothing behind.
 */
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GenericContainer, Wait } from "testcontainers";
import { expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { leftovers } from "./helpers/engine.js";
import { tarOf } from "./helpers/tar.js";

/** The hookbox container's security context in deploy/kubernetes/statefulset.yaml. */
function podSecurity(): { capabilities: { drop: string[]; add: string[] }; allowPrivilegeEscalation: boolean } {
  const sts = parseAllDocuments(readFileSync("deploy/kubernetes/statefulset.yaml", "utf8")).map((d) => d.toJSON() as { kind: string; spec: { template: { spec: { containers: { name: string; securityContext: never }[] } } } }).find((d) => d.kind === "StatefulSet")!;
  return sts.spec.template.spec.containers.find((c) => c.name === "hookbox")!.securityContext;
}

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
  // as the pod runs it: every capability dropped but the manifest's few, no privilege escalation
  const security = podSecurity();
  expect(security.allowPrivilegeEscalation).toBe(false);
  const service = await image
    .withDroppedCapabilities(...security.capabilities.drop)
    .withAddedCapabilities(...security.capabilities.add)
    .withSecurityOpt("no-new-privileges")
    .withBindMounts([{ source: "/var/run/docker.sock", target: "/var/run/docker.sock" }, { source: data, target: data }])
    .withEnvironment({ HOOKBOX_TOKEN: "deploy-token" })
    .withCommand(["--config", config, "--listen", `0.0.0.0:${PORT}`])
    .withExposedPorts(PORT)
    .withWaitStrategy(Wait.forHttp("/readyz", PORT).forStatusCode(200))
    .withStartupTimeout(120_000)
    .start();
  try {
    const url = `http://${service.getHost()}:${service.getMappedPort(PORT)}`;
    const auth = { authorization: "Bearer deploy-token" };
    // a workspace stored (its files handed to the hooks' user), its repository hook run, and deleted
    const guard = JSON.stringify({ version: 1, hooks: { preToolUse: [{ type: "command", bash: `echo '{"permissionDecision":"deny","permissionDecisionReason":"from the repository"}'` }] } });
    const put = await fetch(`${url}/v1/workspaces/repo`, { method: "PUT", headers: auth, body: await tarOf([{ name: ".github/hooks/guard.json", content: guard }], { gzip: true }) });
    expect(put.status, await put.clone().text()).toBe(200);
    const copilot = await fetch(`${url}/v1/events/preToolUse?format=copilot&workspace=repo`, { method: "POST", headers: auth, body: JSON.stringify({ toolName: "bash", toolArgs: '{"command":"ls"}' }) });
    expect(await copilot.json()).toMatchObject({ decision: "block", reason: "[repository] from the repository", hooks: expect.arrayContaining([expect.objectContaining({ source: "repository", sandbox: "container", outcome: "exited" })]) });
    expect((await fetch(`${url}/v1/workspaces/repo`, { method: "DELETE", headers: auth })).status).toBe(204);
    expect((await fetch(`${url}/v1/workspaces/repo`, { headers: auth })).status).toBe(404);
    const res = await fetch(`${url}/v1/events`, {
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
