/**
 * @module The `hookbox` command's entry. The build bundles it into one CommonJS file
 * (`dist/cli/hookbox.cjs`, by rolldown) so that `forward` — which an agent runs on every tool call —
 * starts without Node's ES module loader and without reading another file of the package; every
 * other command goes on to `main.js`.
 */
import { forward, forwardFailed } from "./forward.js";

const [command, ...rest] = process.argv.slice(2);
if (command === "forward") {
  const answer = (r: { stdout: string; stderr: string; code: number }) => {
    process.stderr.write(r.stderr);
    // Ends once the answer is out: a name lookup still running (a DNS server that never answers
    // outlives the request it was for) must not keep the agent waiting past its deadline.
    process.stdout.write(r.stdout, () => process.exit(r.code));
  };
  // A failure of its own is a block too, never an exit the agent lets the call through on.
  forward(rest, { stdin: process.stdin, env: process.env }).then(answer, (err: unknown) => answer(forwardFailed(err, rest)));
} else {
  // Left out of the bundle (rolldown.config.mjs): the rest of the command, as built by tsc.
  void import("./main.js");
}
