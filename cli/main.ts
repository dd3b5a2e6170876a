#!/usr/bin/env node
/**
 * @module The `hookbox` command: serve (the service), forward (an agent's one-line hook), workspace
 * push (upload a repository's hook files), check (validate a configuration). A client of the HTTP
 * API; only `serve` and `check` load the engine.
 */
// Each command loads its own module when it runs: `forward`, on every tool call of an agent, loads
// no engine, no schemas and no TOML parser.

const USAGE = `usage: hookbox <command>
  serve [--config FILE] [--listen HOST:PORT]   run the service
  forward --url URL --event NAME ...            post stdin's event, print the agent-native answer
  workspace push DIR [--id ID] [--all] [--url URL] [--token T]
                                                upload a repository's hook files, print the id
  check CONFIG [--workspace DIR]                validate a configuration, list the hooks per event
  trace EVENT_ID [--json] [--url URL] [--token T]
                                                one event's hooks: what they got, printed, decided
  tail [--url URL] [--token T]                  follow decisions live
  doctor [DIR] [--home DIR] [--url URL] [--json]
                                                prove every agent's hookbox line is live: a block reaches the agent
  (--url: else HOOKBOX_URL, else http://127.0.0.1:8080; --token: else HOOKBOX_TOKEN)
`;

async function run(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const print = (r: { stdout: string; stderr: string; code: number }) => {
    process.stdout.write(r.stdout);
    process.stderr.write(r.stderr);
    return r.code;
  };
  switch (command) {
    case "serve": {
      const { main } = await import("../service/main.js");
      await main(rest);
      return -1; // keeps running
    }
    case "forward": {
      // As from the bundled command (hookbox.ts): a failure of its own is a block, and the process
      // ends once the answer is out, whatever still holds it (stdin the agent keeps open).
      const { forwardCommand } = await import("./forward.js");
      forwardCommand(rest);
      return -1; // ends itself
    }
    case "workspace": {
      if (rest[0] !== "push") break;
      const { workspacePush } = await import("./workspace-push.js");
      return print(await workspacePush(rest.slice(1), process.env));
    }
    case "check": {
      const { check } = await import("./check.js");
      return print(check(rest, process.env));
    }
    case "trace": {
      const { trace } = await import("./trace.js");
      return print(await trace(rest, process.env));
    }
    case "doctor": {
      // Loaded only for this command: it reads TOML (cosh configs).
      const { doctor } = await import("./doctor.js");
      return print(await doctor(rest, process.env));
    }
    case "tail": {
      const { tail } = await import("./trace.js");
      return tail(rest, process.env, (line) => process.stdout.write(line));
    }
    case "help":
    case "--help":
    case undefined:
      process.stdout.write(`${USAGE}\n${(await import("./forward.js")).FORWARD_USAGE}\n`);
      return command === undefined ? 64 : 0;
  }
  process.stderr.write(`hookbox: unknown command "${argv.join(" ")}"\n${USAGE}\n${(await import("./forward.js")).FORWARD_USAGE}\n`);
  return 64;
}

run(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  async (err: unknown) => {
    // an error's message may quote what a server or a file held: escaped, never raw
    const { oneLine } = await import("./terminal.js");
    // the stack too when asked for (HOOKBOX_LOG_LEVEL=debug or trace), as the service's own start says it
    const level = process.env.HOOKBOX_LOG_LEVEL;
    const stack = (level === "debug" || level === "trace") && err instanceof Error && err.stack !== undefined ? err.stack.split("\n").slice(1).map((l) => `${oneLine(l)}\n`).join("") : "";
    process.stderr.write(`hookbox: ${oneLine(String((err as Error)?.message ?? err))}\n${stack}`);
    // A flag a command does not take, or one without its value, is a usage error (64), with the usage.
    const usage = String((err as NodeJS.ErrnoException)?.code ?? "").startsWith("ERR_PARSE_ARGS");
    if (usage) process.stderr.write(USAGE);
    process.exitCode = usage ? 64 : 70;
  },
);
