// An administrators' policy hook: runs on the host, before any other hook, and cannot be
// switched off. Blocks tool calls that touch credentials. Reads the event on stdin (snake_case).
import { readFileSync } from "node:fs";

const event = JSON.parse(readFileSync(0, "utf8"));
const input = JSON.stringify(event.tool_input ?? {});
if (/\.ssh\/|\.aws\/credentials|\.env\b/.test(input)) {
  process.stdout.write(JSON.stringify({
    decision: "block",
    reason: "Reading credentials is not allowed by organisation policy",
    systemMessage: "Blocked by organisation policy: credentials",
  }));
} else {
  process.stdout.write("{}");
}
