// Bundles the `hookbox` command's entry, as tsc built it, into one CommonJS file: `hookbox forward`
// then starts without the ES module loader (cli/hookbox.ts). Everything else stays as tsc built it.
import { defineConfig } from "rolldown";

export default defineConfig({
  input: "dist/cli/hookbox.js",
  platform: "node",
  external: [/^node:/, "./main.js"],
  output: { file: "dist/cli/hookbox.cjs", format: "cjs", codeSplitting: false, banner: "#!/usr/bin/env node" },
});
