/**
 * Redaction as a table: every kind of secret it knows, in the shapes hooks print them, and text
 * that must come through unchanged. Each pattern runs only where its literal occurs; these rows
 * hold it to the same answers as running every pattern everywhere.
 */
import { describe, expect, it } from "vitest";
import { keep, redactText } from "../../service/records/redact.js";

describe("redactText", () => {
  it.each([
    ["a bearer token", "Authorization: Bearer abcdefgh12345678", "Authorization: Bearer [redacted]"],
    ["an OpenAI / Anthropic key", "key is sk-proj-9f8e7d6c5b4a39281706 ok", "key is [redacted] ok"],
    ["a GitHub token", "ghp_1234567890abcdefghijABCDEFGHIJ123456", "[redacted]"],
    ["a GitHub server token", "x ghs_1234567890abcdefghijAB y", "x [redacted] y"],
    ["a fine-grained GitHub token", "github_pat_11ABCDEFG0123456789_abcdefghij", "[redacted]"],
    ["an AWS access key id", "AKIAABCDEFGHIJKLMNOP", "[redacted]"],
    ["a Slack token", "xoxb-1234567890-abcdef", "[redacted]"],
    ["a Google API key", "AIzaSyA1234567890abcdefghijklmnopqrstu", "[redacted]"],
    ["a JWT", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.abcdefghijklmnop", "[redacted]"],
    ["KEY=value", "API_KEY=hunter2hunter2", "API_KEY=[redacted]"],
    ["KEY: value", "password: hunter2", "password: [redacted]"],
    ['KEY="value"', 'GITHUB_TOKEN="abc"', 'GITHUB_TOKEN="[redacted]"'],
    ["a JSON member", '{"client_secret": "s3cr3t", "name": "x"}', '{"client_secret": "[redacted]", "name": "x"}'],
    ["two kinds in one line", 'token=abc and Bearer 0123456789abcdef', "token=[redacted] and Bearer [redacted]"],
  ])("redacts %s", (_what, text, expected) => {
    expect(redactText(text)).toBe(expected);
  });

  it.each([
    ["a plain word", "exited"],
    ["an empty string", ""],
    ["a short 'sk-'", "task-list sk-short"],
    ["a name that is not secret", "MODE=fast"],
    ["a JSON member that is not secret", '{"command": "ls -la"}'],
    ["the schemes kept", "Authorization: Basic"],
    ["an AKIA too short", "AKIA1234"],
    ["an event", '{"session_id":"s-1","hook_event_name":"PreToolUse","tool_name":"shell","tool_input":{"command":"ls"}}'],
  ])("keeps %s as it is", (_what, text) => {
    expect(redactText(text)).toBe(text);
  });

  it("keeps a field within its cap, redacted, and says how much was cut", () => {
    expect(keep(`API_KEY=hunter2 ${"x".repeat(100)}`, 24)).toBe("API_KEY=[redacted] xxxxx…[truncated 92 bytes]");
  });
});
