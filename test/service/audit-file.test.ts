/** A tenant's audit file name: its own where that is a plain file name, else a hash no plain name can be. */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AUDIT_INPUT_BYTES, auditEntry, AuditLog, auditFileName, TenantAuditLogs } from "../../service/records/audit-log.js";

describe("auditFileName", () => {
  it.each([
    ["team-a", "team-a.jsonl"],
    ["Org_2.prod", "Org_2.prod.jsonl"],
  ])("keeps a plain name: %s", (tenant, file) => {
    expect(auditFileName(tenant)).toBe(file);
  });

  it.each([["../etc/passwd"], [".hidden"], ["a/b"], ["x".repeat(65)], ["team a"], ["ünï"], [""]])("hashes anything else (%s) into _<16 hex>", (tenant) => {
    expect(auditFileName(tenant)).toMatch(/^_[0-9a-f]{16}\.jsonl$/);
  });

  it("never gives two tenants one file", () => {
    const names = ["a", "A", "a.", "_a", "../a", "a/b", "a b", "x".repeat(64), "x".repeat(65), "x".repeat(66)];
    expect(new Set(names.map(auditFileName)).size).toBe(names.length);
  });
});

describe("an audit file that takes no more bytes (a full disk, a file size limit)", () => {
  it("is left with whole lines only: a line it could not take whole is taken back and counted as not written", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hookbox-audit-full-"));
    const file = join(dir, "audit.jsonl");
    const module = join(process.cwd(), "dist/service/records/audit-log.js");
    // 2 KiB files at most (ulimit -f 2): the second 900-byte line fits half.
    const script = `import(${JSON.stringify(module)}).then(async ({ AuditLog }) => {
      const log = new AuditLog(${JSON.stringify(file)});
      const results = [];
      for (let i = 0; i < 4; i++) results.push(await log.write("t", { n: i, pad: "x".repeat(900) }).then(() => "ok", (e) => e.code ?? "error"));
      await log.close();
      console.log(JSON.stringify(results));
    })`;
    const out = execFileSync("sh", ["-c", `ulimit -f 2 && ${JSON.stringify(process.execPath)} --input-type=module -e '${script}'`], { encoding: "utf8" });
    const results = JSON.parse(out) as string[];
    expect(results[0]).toBe("ok");
    expect(results.slice(1)).toContain("EFBIG");
    const lines = readFileSync(file, "utf8").split("\n").filter(Boolean);
    // every line in the file is whole, and as many as were said written
    for (const l of lines) expect(() => JSON.parse(l)).not.toThrow();
    expect(lines.length).toBe(results.filter((r) => r === "ok").length);
  });
});

describe("the audit backlog", () => {
  it("counts the lines taken and not yet written, shared by a service's files, and gives them back once written or failed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hookbox-audit-backlog-"));
    const logs = new TenantAuditLogs(dir);
    const entry = (n: number) => ({ n, pad: "x".repeat(100) }) as unknown as Parameters<TenantAuditLogs["write"]>[1];
    const writes = [logs.write("a", entry(1)), logs.write("a", entry(2)), logs.write("b", entry(3))];
    expect(logs.backlogBytes()).toBe(3 * `${JSON.stringify(entry(1))}\n`.length);
    await Promise.all(writes);
    expect(logs.backlogBytes()).toBe(0);
    // one that fails (its file cannot be made) is given back too
    const broken = new AuditLog(join(dir, "no-such-dir", "audit.jsonl"));
    await broken.write("t", entry(4)).catch(() => undefined);
    expect(broken.backlogBytes()).toBe(0);
    await logs.close();
  });
});

describe("an audit file whose last line a crash cut off", () => {
  it("gets the next line on a line of its own: a whole decision is never swallowed by the cut one", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "hookbox-audit-cut-")), "audit.jsonl");
    writeFileSync(file, '{"time":"t0","decision":null}\n{"time":"t1","reason":"cut by a crash he');
    const log = new AuditLog(file);
    await log.write("t", { time: "t2", event_id: "evt_2", decision: "block" } as never);
    await log.close();
    const lines = readFileSync(file, "utf8").split("\n").filter(Boolean);
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[2]!)).toMatchObject({ event_id: "evt_2", decision: "block" });
  });
});

describe("an audit file whose cut last line cannot be ended (the disk still full)", () => {
  it("holds no file descriptor per line it could not write", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "hookbox-audit-fd-")), "audit.jsonl");
    // 4 KiB exactly, the last line cut: ending it would pass `ulimit -f 4`
    writeFileSync(file, `{"pad":"${"x".repeat(4096 - 10)}"`.slice(0, 4096));
    const module = join(process.cwd(), "dist/service/records/audit-log.js");
    const script = `import(${JSON.stringify(module)}).then(async ({ AuditLog }) => {
      const { readdirSync } = await import("node:fs");
      const fds = () => readdirSync("/proc/self/fd").length;
      const log = new AuditLog(${JSON.stringify(file)});
      const before = fds();
      for (let i = 0; i < 50; i++) await log.write("t", { n: i }).catch(() => undefined);
      const after = fds();
      await log.close().catch(() => undefined);
      console.log(JSON.stringify({ before, after }));
    })`;
    const out = execFileSync("sh", ["-c", `ulimit -f 4 && ${JSON.stringify(process.execPath)} --input-type=module -e '${script}'`], { encoding: "utf8" });
    const { before, after } = JSON.parse(out) as { before: number; after: number };
    expect(after - before).toBeLessThanOrEqual(2);
  });
});

describe("tool inputs an operator keeps in the audit (audit_tool_input)", () => {
  const result = { event_id: "e", event: "PreToolUse", decision: "allow", reason: "", session_id: "s", tool_name: "Bash", hooks: [] } as unknown as Parameters<typeof auditEntry>[0]["result"];
  const entryWith = (command: string) => auditEntry({ result, tenant: "t", workspace: undefined, durationMs: 1, cancelled: false, body: { tool_input: { command } }, includeInputs: true });
  // the JSON `{"tool_input":{"command":"…"}}` around the command
  const around = JSON.stringify({ tool_input: { command: "" } }).length;

  it(`keeps them whole while their JSON fits in AUDIT_INPUT_BYTES (${AUDIT_INPUT_BYTES}), else their first bytes marked as cut`, async () => {
    const at = await entryWith("x".repeat(AUDIT_INPUT_BYTES - around));
    expect(at.tool_input).toEqual({ command: "x".repeat(AUDIT_INPUT_BYTES - around) });
    const past = await entryWith("x".repeat(AUDIT_INPUT_BYTES - around + 1));
    expect(typeof past.tool_input).toBe("string");
    expect(past.tool_input as string).toMatch(/^\{"tool_input":\{"command":"x+[^x…]{0,2}…\[truncated\]$/);
    expect(Buffer.byteLength((past.tool_input as string).replace("…[truncated]", ""))).toBeLessThanOrEqual(AUDIT_INPUT_BYTES);
    // not kept unless asked
    expect(await auditEntry({ result, tenant: "t", workspace: undefined, durationMs: 1, cancelled: false, body: { tool_input: { command: "ls" } }, includeInputs: false })).not.toHaveProperty("tool_input");
  });
});

describe("an audit line", () => {
  it("writes a client's C1 controls, bidi overrides, line separators and tag characters as escapes (the file is read in terminals), and reads back the same", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hookbox-audit-visible-"));
    const file = join(dir, "audit.jsonl");
    const log = new AuditLog(file);
    const sent = "s\u009b2J\u202eevil\u2028\u0085\u007f\u{e0041}x";
    await log.write("t", { session_id: sent, tool_name: "Ba\u009b31msh" } as unknown as Parameters<AuditLog["write"]>[1]);
    await log.close();
    const line = readFileSync(file, "utf8").trimEnd();
    expect(line).not.toMatch(/[\u007f-\u009f\u202e\u2028]|\u{e0041}/u);
    expect(line).toContain("s\\u009b2J\\u202eevil\\u2028\\u0085\\u007f\\udb40\\udc41x");
    expect(JSON.parse(line)).toEqual({ session_id: sent, tool_name: "Ba\u009b31msh" });
  });
});
