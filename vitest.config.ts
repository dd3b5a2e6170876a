import { defineConfig } from "vitest/config";

// Container tests share one engine of two cores: files run one at a time so deadlines measured in
// a test are the runner's, not the machine's contention.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "engine/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
