/**
 * What `hookbox trace` and `hookbox tail` print of a decision the agent did not get: a guard slowed
 * past the agent's deadline whose block came after the failure mode's allow went out is printed as
 * that allow, the hooks' block beside it — never as a block that stopped the action. Pure.
 */
import { describe, expect, it } from "vitest";
import { renderTrace, tailLine } from "../cli/trace.js";

const hook = {
  name: "slow-guard", source: "service", sandbox: "container", format: "cosh", warm: true, decision: "block", effective: true,
  rule: "cosh: decision block", outcome: "exited", exit_code: 0, offset_ms: 0, start_ms: 2, duration_ms: 5000, remove_ms: null,
  error: null, stdin: "{}", stdout: '{"decision":"block"}', stderr: "", env: {},
};
const trace = {
  event_id: "evt_1", event: "PreToolUse", time: "2026-12-02T10:00:00.000Z", decision: "block", reason: "exfiltration", duration_ms: 5003, queued_ms: 0,
  tenant: "team-a", session_id: "s1", tool_name: "Bash", workspace: null, blocked_by: "slow-guard", hooks: [hook],
};
const late = { ...trace, answered: { decision: null, why: "answered within 4500 ms, the agent's deadline near, with the tenant's failure mode (allow)" } };

describe("hookbox trace", () => {
  it("prints the decision the agent got, why, and the hooks' later one; the deciding hook blocked late", () => {
    const out = renderTrace(late);
    expect(out.split("\n")[0]).toMatch(/decision: pass-through/);
    expect(out).toMatch(/answered pass-through: answered within 4500 ms, .*failure mode \(allow\); the hooks decided block/);
    expect(out).toMatch(/⟵ blocked late/);
    expect(out).not.toMatch(/blocked here/);
  });
  it("prints a decision the agent got as before: the block, blocked here", () => {
    const out = renderTrace({ ...trace, answered: null });
    expect(out.split("\n")[0]).toMatch(/decision: block/);
    expect(out).not.toMatch(/answered/);
    expect(out).toMatch(/⟵ blocked here/);
  });
});

describe("hookbox tail", () => {
  const summary = (t: typeof late | typeof trace) => ({ ...t, hooks: 1 });
  it("prints what the agent got, the hooks' decision beside it when they differ", () => {
    expect(tailLine(summary(late))).toMatch(/PreToolUse +pass +\(hooks: block\) Bash/);
    expect(tailLine(summary(trace))).toMatch(/PreToolUse +block +Bash/);
    expect(tailLine(summary(trace))).not.toMatch(/hooks:/);
  });
});
