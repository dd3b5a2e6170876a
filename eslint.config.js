// @ts-check
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  // test/fixtures holds hook scripts as agents ship them, linted by nobody but their authors.
  { ignores: ["dist/", "node_modules/", "data/", "bench/results/", "test/fixtures/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/consistent-type-imports": "error",
      // Tests match printed output, where runs of spaces are the format.
      "no-regex-spaces": "off",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-restricted-imports": ["error", { paths: [{ name: "dockerode", message: "only engine/run/docker-client.ts talks to the engine" }] }],
    },
  },
  // Tests look at the engine directly; the benchmark measures raw engine calls as its baseline.
  { files: ["engine/run/docker-client.ts", "test/**", "bench/**"], rules: { "no-restricted-imports": "off" } },
  { files: ["scripts/**/*.{js,mjs}", "examples/**/*.{js,mjs}", "bench/**/*.{js,mjs}"], languageOptions: { globals: { process: "readonly", console: "readonly" } } },
);
