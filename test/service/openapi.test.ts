/**
 * `/openapi.json`: valid OpenAPI 3.1 (checked by a validator library), every route of the app in
 * it, and every documented example a request the running service accepts.
 */
import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { leftovers } from "../helpers/engine.js";
import { edgeApp } from "../helpers/app.js";
import { startService, TOKEN_A, type Service } from "../helpers/service.js";

interface Parameter { name: string; in: string; required?: boolean; schema?: { examples?: unknown[] } }
interface Operation {
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { examples?: Record<string, { value: unknown }> }> };
  responses: Record<string, unknown>;
  security?: unknown[];
}
type Document = { openapi: string; paths: Record<string, Record<string, Operation>> };

const edge = edgeApp();
const document = async () => (await (await edge.request("/openapi.json", { token: null })).json()) as Document;

describe("the document", () => {
  it("is valid OpenAPI 3.1", async () => {
    const doc = await document();
    expect(doc.openapi).toBe("3.1.0");
    const result = await new Validator().validate(doc as unknown as Record<string, unknown>);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
  });

  it("documents every route of the app, and no other", async () => {
    const shape = (path: string) => path.replace(/:[A-Za-z]+/g, "{}").replace(/\{[A-Za-z_]+\}/g, "{}");
    const routes = new Set(edge.app.routes.filter((r) => r.method !== "ALL").map((r) => `${r.method} ${shape(r.path)}`));
    const documented = new Set(Object.entries((await document()).paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${shape(path)}`)));
    expect([...documented].sort()).toEqual([...routes].sort());
  });

  it("documents the bearer scheme, the error shape and hookbox's headers", async () => {
    const doc = (await document()) as Document & { components: { securitySchemes: unknown; schemas: Record<string, unknown> } };
    expect(doc.components.securitySchemes).toEqual({ bearer: expect.objectContaining({ type: "http", scheme: "bearer" }) });
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(["Error", "EventBody", "Decision", "Workspace", "Trace", "TraceList", "Sessions", "Readiness"]));
    const post = doc.paths["/v1/events"]!.post!;
    expect(post.parameters!.map((p) => `${p.in}:${p.name}`)).toEqual(expect.arrayContaining(["header:Hookbox-Workspace", "header:Hookbox-Canary", "query:workspace", "query:format", "query:interactive"]));
    expect(JSON.stringify(post.responses["200"])).toContain("Hookbox-On-Failure");
    expect(JSON.stringify(post.responses["429"])).toContain("Retry-After");
    expect(doc.paths["/healthz"]!.get!.security).toEqual([]);
  });
});

describe("its examples, against the running service", () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService(`[[policy.PreToolUse]]\nname = "org-guard"\ncommand = "echo '{}'"\n`);
  });
  afterAll(async () => {
    await svc.stop();
    expect((await leftovers()).containers).toEqual([]);
  });

  it("accepts a request built from each documented example", async () => {
    const doc = await document();
    const requests = Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).flatMap(([method, op]) =>
      Object.entries(op.requestBody?.content ?? {}).flatMap(([type, media]) => Object.entries(media.examples ?? {}).map(([name, example]) => {
        let url = path;
        for (const p of op.parameters ?? []) {
          const value = p.schema?.examples?.[0];
          if (p.in === "path") url = url.replace(`{${p.name}}`, encodeURIComponent(String(value)));
          else if (p.required) throw new Error(`${method} ${path}: required ${p.in} parameter ${p.name} has no example`);
        }
        return { what: `${method.toUpperCase()} ${path} (${name})`, url, method, type, body: JSON.stringify(example.value) };
      }))));
    expect(requests.length).toBeGreaterThanOrEqual(4);
    for (const r of requests) {
      const res = await fetch(`${svc.url}${r.url}`, { method: r.method.toUpperCase(), headers: { authorization: `Bearer ${TOKEN_A}`, "content-type": r.type }, body: r.body });
      expect({ what: r.what, status: res.status }, await res.text()).toEqual({ what: r.what, status: 200 });
    }
  });
});
