/**
 * @module The `hookbox` command's entry. The build bundles it into one CommonJS file
 * (`dist/cli/hookbox.cjs`, by rolldown) so that `forward` — which an agent runs on every tool call —
 * starts without Node's ES module loader and without reading another file of the package; every
 * other command goes on to `main.js`.
 */
import { forwardCommand } from "./forward.js";

const [command, ...rest] = process.argv.slice(2);
if (command === "forward") forwardCommand(rest);
// Left out of the bundle (rolldown.config.mjs): the rest of the command, as built by tsc.
else void import("./main.js");
