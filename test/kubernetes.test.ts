/**
 * The Kubernetes manifests say what deploy/kubernetes/README.md promises. Parsed here; the image
 * and the same-path arrangement they rely on run for real in deploy.test.ts.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../engine/config.js";

const DIR = "deploy/kubernetes";
type Doc = { kind: string; metadata: { name: string; annotations?: Record<string, string> }; spec?: any; data?: Record<string, string>; handler?: string }; // eslint-disable-line @typescript-eslint/no-explicit-any
const docs: Doc[] = readdirSync(DIR)
  .filter((f) => f.endsWith(".yaml"))
  .flatMap((f) => parseAllDocuments(readFileSync(join(DIR, f), "utf8")).map((d) => {
    expect(d.errors, f).toEqual([]);
    return d.toJSON() as Doc;
  }));
const find = (kind: string, name?: string) => docs.find((d) => d.kind === kind && (!name || d.metadata.name === name))!;

describe("deploy/kubernetes", () => {
  const sts = find("StatefulSet");
  const pod = sts.spec.template.spec;
  const hookbox = pod.containers.find((c: { name: string }) => c.name === "hookbox");
  const engine = pod.containers.find((c: { name: string }) => c.name === "engine");

  it("runs replicas of hookbox with an engine of their own beside them, sharing its socket", () => {
    expect(sts.spec.replicas).toBeGreaterThan(1);
    expect(engine.securityContext.privileged).toBe(true);
    const socket = hookbox.env.find((e: { name: string }) => e.name === "DOCKER_HOST").value as string;
    expect(socket).toBe("unix:///var/run/engine/docker.sock");
    // dockerd named first: the image's entrypoint adds none of its own listeners (tcp://0.0.0.0:2376)
    expect(engine.args).toEqual(["dockerd", "--host=unix:///var/run/engine/docker.sock"]);
  });

  it("runs only on nodes of its own: the engine is privileged", () => {
    expect(pod.nodeSelector).toEqual({ "hookbox.dev/sandbox": "true" });
    expect(pod.tolerations).toContainEqual({ key: "hookbox.dev/sandbox", operator: "Equal", value: "true", effect: "NoSchedule" });
  });

  it("takes events over TLS only, and lets only the ingress controller and Prometheus reach the pods", () => {
    const ingress = find("Ingress");
    const hosts = ingress.spec.rules.map((r: { host: string }) => r.host);
    expect(ingress.spec.tls).toEqual([{ hosts, secretName: "hookbox-tls" }]);
    const policy = find("NetworkPolicy");
    expect(policy.spec.podSelector.matchLabels).toEqual(sts.spec.selector.matchLabels);
    expect(policy.spec.policyTypes).toEqual(["Ingress"]);
    expect(policy.spec.ingress).toEqual([{ from: [
      { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "ingress-nginx" } } },
      { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } } },
    ], ports: [{ protocol: "TCP", port: 8080 }] }]);
  });

  it("mounts the data volume at the same path in hookbox and in the engine", () => {
    const at = (c: { volumeMounts: Array<{ name: string; mountPath: string }> }) => c.volumeMounts.find((m) => m.name === "data")!.mountPath;
    expect(at(hookbox)).toBe("/var/lib/hookbox");
    expect(at(engine)).toBe(at(hookbox));
    expect(sts.spec.volumeClaimTemplates[0].metadata.name).toBe("data");
  });

  it("probes /readyz and /healthz, sets resource limits, and carries scrape annotations", () => {
    expect(hookbox.readinessProbe.httpGet.path).toBe("/readyz");
    expect(hookbox.livenessProbe.httpGet.path).toBe("/healthz");
    for (const c of pod.containers) expect(c.resources.limits).toBeDefined();
    expect(sts.spec.template.metadata.annotations).toMatchObject({ "prometheus.io/scrape": "true", "prometheus.io/path": "/metrics" });
  });

  it("routes a workspace to one replica, and waits for an answer as long as an agent does", () => {
    const annotations = find("Ingress").metadata.annotations!;
    expect(annotations["nginx.ingress.kubernetes.io/upstream-hash-by"]).toMatch(/hookbox_workspace/);
    expect(Number(annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"])).toBeGreaterThanOrEqual(600);
  });

  it("pulls hookbox from the operator's registry only, and runs it without privileges or a cluster token", () => {
    expect(hookbox.image).toMatch(/^registry\.example\.com\//);
    expect(hookbox.image).not.toMatch(/:latest$/);
    expect(engine.image).not.toMatch(/:dind$|:latest$/);
    // all but what handing an upload's files to the hooks' user takes (deploy.test.ts runs the image with these)
    expect(hookbox.securityContext).toMatchObject({ allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"], add: ["CHOWN", "DAC_OVERRIDE", "FOWNER"] } });
    expect(pod.automountServiceAccountToken).toBe(false);
  });

  it("carries a configuration hookbox loads, with the data folder the pod mounts", () => {
    const config = parseConfig("configmap:hookbox.toml", find("ConfigMap").data!["hookbox.toml"]!, { HOOKBOX_TOKEN: "x" });
    expect(config.server.dataDir).toBe("/var/lib/hookbox");
    expect(config.server.publicMetrics).toBe(true);
    expect(config.server.shutdownGraceMs).toBeLessThan(pod.terminationGracePeriodSeconds * 1000);
    expect(config.tenants[0]!.onFailure).toMatchObject({ PreToolUse: "block" });
  });
});
