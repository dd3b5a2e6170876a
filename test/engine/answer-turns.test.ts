/**
 * A hook's large answer is read in a turn of its own (turns.ts), as a large event body is parsed:
 * one tenant's hooks each printing a mebibyte take turns with another tenant's, never all before it.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createEngine, type EventRequest, type RunRequest, type RunResult, type Runner } from "../../engine/index.js";
import { parseConfig } from "../../engine/config.js";
import { heavyTurns, TURN_BODY_BYTES } from "../../engine/turns.js";

/** An allow padded to `bytes` with a reason (a mebibyte of it costs the parse). */
const answer = (bytes: number): RunResult => {
  const pad = "x".repeat(Math.max(0, bytes - 40));
  return { outcome: "exited", exitCode: 0, stdout: JSON.stringify({ decision: "allow", reason: pad }), stderr: "", durationMs: 1, startMs: 0 };
};

const host: Runner = {
  kind: "host",
  run: async (request: RunRequest) => answer(request.command.startsWith("big") ? 1024 * 1024 : 100),
};

const engine = createEngine({
  config: parseConfig("test.toml", `[policy]\nparallel = true\n${["big1", "big2", "big3", "big4"].map((n) => `[[policy.PreToolUse]]\nname = "${n}"\ncommand = "${n}"\nmatcher = "^big$"\n`).join("")}[[policy.PreToolUse]]\nname = "small"\ncommand = "small"\nmatcher = "^small$"\n[[policy.PreToolUse]]\nname = "big-b"\ncommand = "big-b"\nmatcher = "^one$"\n`),
  runners: { host, container: { ...host, kind: "container" } },
});

const event = (tenant: string, tool: string): EventRequest => {
  const body = { session_id: "s", hook_event_name: "PreToolUse", tool_name: tool, tool_input: {} };
  return { body, raw: Buffer.from(JSON.stringify(body)), tenant: { name: tenant, repositoryHooks: false }, interactive: true, format: "cosh" };
};

afterEach(() => vi.restoreAllMocks());

describe("a hook's answer of TURN_BODY_BYTES or more", () => {
  it("waits for its tenant's turn: four of one tenant's and one of another's are read a, b, a, a, a", async () => {
    const served: string[] = [];
    const take = heavyTurns.take.bind(heavyTurns);
    vi.spyOn(heavyTurns, "take").mockImplementation((party) => take(party).then(() => void served.push(party)));
    const [a, b] = await Promise.all([engine.handleEvent(event("a", "big")), engine.handleEvent(event("b", "one"))]);
    expect(a.decision).toBe("allow");
    expect(b.decision).toBe("allow");
    expect(served).toEqual(["a", "b", "a", "a", "a"]);
  });

  it("and only such an answer: one under TURN_BODY_BYTES is read at once", async () => {
    const spy = vi.spyOn(heavyTurns, "take");
    expect((await engine.handleEvent(event("a", "small"))).decision).toBe("allow");
    expect(spy).not.toHaveBeenCalled();
    expect(TURN_BODY_BYTES).toBe(16 * 1024);
  });
});
