/**
 * The handover to a pre-started container, run here through the real shells: the bash wrapper and
 * the POSIX sh one (dash) for images without bash. Same hook, same environment, same event, same
 * end marker.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
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
    watch.feed("stdout", r.stdout);
    expect(watch.feed("stderr", r.stderr)).toBe(true);
    expect(watch.exitCode).toBe(3);
    expect(watch.strip("stdout", r.stdout).toString()).toBe(`it's a 'quoted' ünïcode $HOME \`value\`|{"toolName":"bash"}|${r.stdout.toString().split("|")[2]}|`);
    expect(watch.strip("stderr", r.stderr).toString()).toBe("ünï\n");
  });
});

it("the launcher picks bash when the image has it and says so", () => {
  const r = spawnSync("sh", ["-c", HANDOVER_SCRIPT], { input: Buffer.concat(handover("f".repeat(32), { ...request, command: "true" }, "bash")) });
  expect(r.stderr.toString()).toMatch(/^bash\n/);
  expect(r.stdout.toString()).toMatch(new RegExp(`\\n${"f".repeat(32)} 0 \\d+\\n$`));
});
