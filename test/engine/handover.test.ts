/**
 * The handover to a pre-started container, run here through the real shells: the bash wrapper and
 * the POSIX sh one (dash) for images without bash. Same hook, same environment, same event, same
 * end marker.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BASH_WRAPPER, HANDOVER_SCRIPT, handover, MarkerWatch, SH_WRAPPER } from "../../engine/run/handover.js";
import type { RunRequest } from "../../engine/run/types.js";
import { DEFAULT_LIMITS } from "../../engine/names.js";

const request: RunRequest = {
  command: 'printf "%s|" "$GREETING" "$(cat)" "$(pwd)"; echo "ünï" >&2; exit 3',
  env: { GREETING: "it's a 'quoted' ünïcode $HOME `value`", SECOND: "line one\nline two" },
  stdin: Buffer.from('{"toolName":"bash"}'),
  timeoutMs: 1000,
  limits: DEFAULT_LIMITS,
};

describe.each([
  ["bash", "bash", BASH_WRAPPER],
  ["sh", "dash", SH_WRAPPER],
] as const)("the %s wrapper", (format, shell, script) => {
  it("runs the hook with its environment and event, then prints the marker on both streams", () => {
    const nonce = "0123456789abcdef0123456789abcdef";
    const r = spawnSync(shell, ["-c", script], { input: Buffer.concat(handover(nonce, request, format)), cwd: mkdtempSync(`${tmpdir()}/hookbox-wrap-`) });
    const watch = new MarkerWatch(nonce);
    expect(watch.take("stdout", r.stdout)).toEqual(r.stdout);
    expect(watch.done).toBe(false);
    expect(watch.started).toBe(false);
    // The wrapper says its hook starts before anything the hook writes; that line is the wrapper's, not the hook's.
    expect(r.stderr.toString()).toMatch(new RegExp(`^${nonce} s\\n`));
    const err = watch.take("stderr", r.stderr);
    expect(watch.started).toBe(true);
    expect(watch.done).toBe(true);
    expect(r.status).toBe(3); // the wrapper ends with its hook's exit code too
    expect(watch.exitCode).toBe(3);
    expect(watch.strip("stdout", r.stdout).toString()).toBe(`it's a 'quoted' ünïcode $HOME \`value\`|{"toolName":"bash"}|${r.stdout.toString().split("|")[2]}|`);
    expect(watch.strip("stderr", err).toString()).toBe("ünï\n");
  });

  it("runs each hook in its agent's shell (sh, or bash), and where the image has no such shell exits 94 before the hook starts, never the hook's own 127", () => {
    const nonce = "1".repeat(32);
    const probe: RunRequest = { ...request, env: {}, command: 'if [ -n "$BASH_VERSION" ]; then echo bash; else echo sh; fi' };
    for (const which of ["sh", "bash"] as const) {
      const r = spawnSync(shell, ["-c", script], { input: Buffer.concat(handover(nonce, { ...probe, ...(which === "bash" ? { shell: which } : {}) }, format)) });
      expect(r.status).toBe(0);
      expect(r.stdout.toString().split("\n")[0]).toBe(which);
    }
    const [head, ...rest] = handover(nonce, { ...probe, shell: "bash" }, format);
    const forged = Buffer.from(Buffer.from(head!).toString("latin1").replace(format === "bash" ? " bash\n" : " bash ", format === "bash" ? " nosuch\n" : " nosuch "), "latin1");
    const r = spawnSync(shell, ["-c", script], { input: Buffer.concat([forged, ...rest]) });
    expect(r.status).toBe(94);
    expect(r.stderr.toString()).toContain("hookbox: the image has no /bin/nosuch");
    expect(r.stderr.toString()).not.toContain(`${nonce} s`);
  });

  it("gives the hook variables named as the wrapper's own (n, c, d, e, h, la, r, PATH) without changing its nonce, its command or its tools", () => {
    const nonce = "fedcba9876543210fedcba9876543210";
    const env = { n: "nonce?", c: "echo hijacked", d: "/", e: "x", h: "y", la: "7", r: "9", PATH: "/nowhere" };
    const r = spawnSync(shell, ["-c", script], { input: Buffer.concat(handover(nonce, { ...request, env, command: 'printf "%s|" "$n" "$c" "$d" "$e" "$h" "$la" "$r" "$PATH"; exit 4' }, format)) });
    const watch = new MarkerWatch(nonce);
    watch.take("stdout", r.stdout);
    watch.take("stderr", r.stderr);
    expect(watch.done).toBe(true);
    expect(watch.exitCode).toBe(4);
    expect(watch.strip("stdout", r.stdout).toString()).toBe("nonce?|echo hijacked|/|x|y|7|9|/nowhere|");
  });

  it("keeps the container's project dir and COSH_RUNTIME over what the hook declares", () => {
    const nonce = "00112233445566778899aabbccddeeff";
    const env = { CLAUDE_PROJECT_DIR: "/etc", COSH_RUNTIME: "cosh", MINE: "1" };
    const command = 'printf "%s|" "${CLAUDE_PROJECT_DIR-unset}" "${COSH_RUNTIME-unset}" "$MINE"';
    const r = spawnSync(shell, ["-c", script], { input: Buffer.concat(handover(nonce, { ...request, env, command }, format)), env: { PATH: process.env.PATH ?? "", CLAUDE_PROJECT_DIR: "/workspace", COSH_RUNTIME: "hookbox-container" } });
    const watch = new MarkerWatch(nonce);
    watch.take("stdout", r.stdout);
    expect(watch.strip("stdout", r.stdout).toString()).toBe("/workspace|hookbox-container|1|");
  });
});

it("finds the marker followed by a background process's output, in any chunking, and keeps none of what follows it", () => {
  const nonce = "0123456789abcdef0123456789abcdef";
  const stream = Buffer.from(`hook says\n${nonce} 2 0\nbackground writes on\n`);
  const end = stream.indexOf("background");
  for (const size of [1, 7, 40, stream.length]) {
    const watch = new MarkerWatch(nonce);
    const kept: Buffer[] = [];
    for (let at = 0; at < stream.length; at += size) kept.push(watch.take("stdout", stream.subarray(at, at + size)));
    watch.take("stderr", Buffer.from(`${nonce} s\n${nonce} 2 0\n`));
    expect(watch.done).toBe(true);
    expect(watch.exitCode).toBe(2);
    expect(Buffer.concat(kept)).toEqual(stream.subarray(0, end));
    expect(watch.strip("stdout", Buffer.concat(kept)).toString()).toBe("hook says\n");
  }
});

it("reads the start line in any chunking, once, and keeps of stderr only what follows it: what the wrapper wrote before is not the hook's", () => {
  const nonce = "0123456789abcdef0123456789abcdef";
  const stream = Buffer.from(`cd: no such folder\n${nonce} s\nthe hook's own ${nonce} s\n line\n${nonce} 0 0\n`);
  for (const size of [1, 5, 33, stream.length]) {
    let starts = 0;
    const watch = new MarkerWatch(nonce, () => starts++);
    const kept: Buffer[] = [];
    for (let at = 0; at < stream.length; at += size) kept.push(watch.take("stderr", stream.subarray(at, at + size)));
    expect(starts).toBe(1);
    expect(watch.exitCode).toBe(0);
    expect(watch.strip("stderr", Buffer.concat(kept)).toString()).toBe(`the hook's own ${nonce} s\n line\n`);
  }
  // Without its start line, nothing on stderr is the hook's, and its end marker is not read there.
  const never = new MarkerWatch(nonce);
  expect(never.take("stderr", Buffer.from(`x\n${nonce} 0 0\n`)).length).toBe(0);
  expect(never.started).toBe(false);
  expect(never.done).toBe(false);
});

it("the launcher picks bash when the image has it and says so", () => {
  const r = spawnSync("sh", ["-c", HANDOVER_SCRIPT], { input: Buffer.concat(handover("f".repeat(32), { ...request, command: "true" }, "bash")) });
  expect(r.stderr.toString()).toMatch(/^bash\n/);
  expect(r.stdout.toString()).toMatch(new RegExp(`^${"f".repeat(32)} 0 \\d+\\n$`));
});

it("the sh wrapper without base64 runs no hook (an empty command would pass): it exits 98, a hand-over failure a cold run takes", () => {
  const empty = mkdtempSync(`${tmpdir()}/hookbox-no-base64-`);
  const r = spawnSync("/bin/sh", ["-c", SH_WRAPPER], { env: { PATH: empty, HOME: empty }, input: Buffer.concat(handover("d".repeat(32), { ...request, command: "echo ran" }, "sh")) });
  expect(r.status).toBe(98);
  expect(r.stdout.toString()).toBe("");
});

it("the launcher picks sh where head reads ahead (BusyBox's, say: the workspace's tar would take the event with it), and the hook still gets its event", () => {
  // a head that reads a whole buffer of its input, as BusyBox's does, and passes on only what it was asked
  const bin = mkdtempSync(`${tmpdir()}/hookbox-greedy-head-`);
  writeFileSync(join(bin, "head"), '#!/bin/sh\nexec dd bs=65536 count=1 2>/dev/null | /usr/bin/head "$@"\n', { mode: 0o755 });
  const env = { PATH: `${bin}:${process.env.PATH ?? ""}`, HOME: bin };
  const r = spawnSync("sh", ["-c", HANDOVER_SCRIPT], { env, input: Buffer.concat(handover("e".repeat(32), { ...request, env: {}, command: "cat" }, "sh")) });
  expect(r.stderr.toString()).toMatch(/^sh\n/);
  expect(r.stdout.toString()).toBe(`{"toolName":"bash"}${"e".repeat(32)} 0 0\n`);
  // and with bash's own head, the bash wrapper
  expect(spawnSync("sh", ["-c", HANDOVER_SCRIPT], { input: "" }).stderr.toString()).toMatch(/^bash\n/);
});
