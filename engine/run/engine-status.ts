/**
 * @module Is the engine reachable, with the runtimes and images hooks need? For /readyz. Each call
 * is under the engine timeout, so a hung engine is reported, not waited on.
 */
import type { Runtime } from "../names.js";
import { describeError } from "./container-parts.js";
import { EngineTimeoutError, type DockerClient } from "./docker-client.js";

export interface EngineStatus {
  ok: boolean;
  problems: string[];
  runtimes: string[];
}

export async function engineStatus(client: DockerClient, images: readonly string[], runtimes: readonly Runtime[]): Promise<EngineStatus> {
  try {
    const have = await client.runtimes();
    const problems = runtimes.filter((r) => !have.includes(r)).map((r) => `runtime ${r} is not registered with the engine`);
    const missing = await Promise.all(images.map((image) => client.inspectImage(image).then(() => null, (err: unknown) => {
      if (err instanceof EngineTimeoutError) throw err;
      return `image ${image} is missing (run npm run setup)`;
    })));
    problems.push(...missing.filter((p): p is string => p !== null));
    return { ok: problems.length === 0, problems, runtimes: have };
  } catch (err) {
    if (err instanceof EngineTimeoutError) return { ok: false, problems: [err.message], runtimes: [] };
    return { ok: false, problems: [`container engine unreachable: ${describeError(err)}`], runtimes: [] };
  }
}
