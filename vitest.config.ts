import { defineConfig } from "vitest/config";

// Container tests share one engine of two cores: files run one at a time so deadlines measured in
// a test are the runner's, not the machine's contention.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "engine/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    // testcontainers' reaper (Ryuk) is an image from a registry, and none may answer here: the
    // tests that start containers with it stop them themselves.
    env: { TESTCONTAINERS_RYUK_DISABLED: "true" },
    fileParallelism: false,
    testTimeout: 60_000,
    // expect.poll looks again every 10 ms (not 50): a wait ends when its condition does.
    expect: { poll: { interval: 10 } },
    // Transformed test and source files are kept on disk (node_modules/.experimental-vitest-cache),
    // keyed by each file's content: a run after the first imports without transforming again.
    experimental: { fsModuleCache: true },
    hookTimeout: 120_000,
  },
});
