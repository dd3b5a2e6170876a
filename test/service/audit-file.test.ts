/** A tenant's audit file name: its own where that is a plain file name, else a hash no plain name can be. */
import { describe, expect, it } from "vitest";
import { auditFileName } from "../../service/records/audit-log.js";

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
