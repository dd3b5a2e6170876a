/**
 * The environment a hook sees (SERVICE.md §5): what it declared, then the project-dir variables
 * and COSH_RUNTIME, which its own declaration cannot move.
 */
import { describe, expect, it } from "vitest";
import { hookEnv } from "../../engine/run/hook-env.js";

describe("a hook's environment", () => {
  it("keeps its declared variables, PATH included, but not over where its project is or where it runs", () => {
    const env = hookEnv({ declared: { PATH: "/opt/bin", CLAUDE_PROJECT_DIR: "/etc", COSH_RUNTIME: "x", MINE: "1" }, projectDir: "/workspace", runtime: "container", home: "/home/hook" });
    expect(env).toMatchObject({ PATH: "/opt/bin", MINE: "1", CLAUDE_PROJECT_DIR: "/workspace", COSH_RUNTIME: "hookbox-container" });
  });
  it("inherits nothing of the server's environment but the allow-listed names", () => {
    const env = hookEnv({ declared: {}, projectDir: "/p", runtime: "host", home: "/p", inherit: { LANG: "de_DE.UTF-8", HOOKBOX_TOKEN: "secret", AWS_SECRET_ACCESS_KEY: "k" } });
    expect(env.LANG).toBe("de_DE.UTF-8");
    expect(Object.values(env)).not.toContain("secret");
    expect(env).not.toHaveProperty("AWS_SECRET_ACCESS_KEY");
  });
});
