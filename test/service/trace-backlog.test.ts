/**
 * Traces accepted faster than they are written hold only a bounded part of their events: one
 * tenant's flood of 1 MiB events cannot fill the memory (and take the service down for every
 * tenant) while the writer falls behind, nor cost another tenant its traces' contents.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import type { EventResult } from "../../engine/index.js";
import { HOOK_FIELD_BYTES, MAX_PENDING_TRACE_BYTES, OMITTED_FIELD_BYTES, PARSED_STDIN_BYTES, PENDING_FULL, traceHooksOf } from "../../service/records/trace-content.js";
import { notePayloadWeight, PayloadCache } from "../../engine/payload.js";
import { resolveEventName } from "../../engine/events.js";
import { TRACE_LIST_SLICE, TRACE_WRITES_AT_ONCE, TraceStore } from "../../service/records/trace-store.js";
import { DEFAULT_TRACE_LIMITS } from "../../engine/trace-limits.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** An event of one hook that read a `bodyBytes` event (a huge session_id, say). */
function event(n: number, bodyBytes: number): EventResult {
  const body = Buffer.from(JSON.stringify({ hook_event_name: "PreToolUse", session_id: "s".repeat(bodyBytes), tool_name: "Bash" }));
  return {
    event_id: `e${n}`, event: "PreToolUse", decision: null, notifications: [], output: {}, exit_code: 0,
    session_id: "s".repeat(bodyBytes), tool_name: "Bash",
    hooks: [{ name: "h", source: "repository", sandbox: "container", format: "claude", origin: "x:1", decision: null, effective: true, rule: "r", outcome: "exited", exit_code: 0, timed_out: false, duration_ms: 1, start_ms: 1, remove_ms: null, error: null }],
    trace: { queued_ms: 0, hooks: [{ stdin: body, stdout: "out", stderr: "", stdoutBytes: 3, stderrBytes: 0, env: {}, offset_ms: 0, warm: false }] },
  };
}

describe("traces waiting to be written", () => {
  it(`hold at most MAX_PENDING_TRACE_BYTES (${MAX_PENDING_TRACE_BYTES / 2 ** 20} MiB) of one tenant's events; past it a trace keeps its hooks' outcomes, each string to OMITTED_FIELD_BYTES (${OMITTED_FIELD_BYTES}); another tenant's keep theirs`, async () => {
    const dir = mkdtempSync(join(tmpdir(), "hookbox-backlog-"));
    dirs.push(dir);
    const store = new TraceStore(dir);
    const flooder = { name: "flooder", traceToolInput: true };
    // Accepted at once, before the writer has written one: the flood outruns it.
    const adds: Promise<unknown>[] = [];
    for (let i = 0; i < 100; i++) adds.push(store.add(flooder, event(i, 1 << 20), { durationMs: 1, cancelled: false }));
    // one more in the flood, of two hooks: rules OMITTED_FIELD_BYTES long and a byte longer
    const rules = [OMITTED_FIELD_BYTES, OMITTED_FIELD_BYTES + 1].map((n, i) => String(i).repeat(n));
    const two = event(100, 1 << 20);
    two.hooks = rules.map((rule) => ({ ...two.hooks[0]!, rule }));
    two.trace.hooks = [two.trace.hooks[0]!, two.trace.hooks[0]!];
    adds.push(store.add(flooder, two, { durationMs: 1, cancelled: false }));
    await Promise.all(adds);
    expect(store.pendingBytesOf("flooder")).toBeGreaterThan(0);
    expect(store.pendingBytesOf("flooder")).toBeLessThanOrEqual(MAX_PENDING_TRACE_BYTES);
    const other = { name: "other", traceToolInput: true };
    await store.add(other, event(1000, 1 << 20), { durationMs: 1, cancelled: false });
    await store.flush();
    expect(store.pendingBytesOf("flooder")).toBe(0);
    expect(store.pendingBytesOf("other")).toBe(0);
    const first = (await store.get("flooder", "e0"))!;
    const last = (await store.get("flooder", "e99"))!;
    expect(first.hooks[0]!.stdout).toBe("out");
    expect(last.hooks[0]).toMatchObject({ stdout: PENDING_FULL, stdin: PENDING_FULL, outcome: "exited" });
    // such a hook keeps each string of its own to OMITTED_FIELD_BYTES
    const omitted = (await store.get("flooder", "e100"))!.hooks;
    expect(omitted.map((h) => h.stdout)).toEqual([PENDING_FULL, PENDING_FULL]);
    expect(omitted.map((h) => h.rule)).toEqual([rules[0], `${"1".repeat(OMITTED_FIELD_BYTES)}…[truncated 1 bytes]`]);
    // Its summary still lists it, its session id capped.
    expect(last.session_id!.length).toBeLessThan(2048);
    expect((await store.get("other", "e1000"))!.hooks[0]!.stdout).toBe("out");
  });

  it(`keep each string of a hook's own to HOOK_FIELD_BYTES (${HOOK_FIELD_BYTES})`, async () => {
    const dir = mkdtempSync(join(tmpdir(), "hookbox-fields-"));
    dirs.push(dir);
    const store = new TraceStore(dir);
    await store.load();
    const rules = [HOOK_FIELD_BYTES, HOOK_FIELD_BYTES + 1].map((n, i) => String(i).repeat(n));
    const two = event(1, 10);
    two.hooks = rules.map((rule) => ({ ...two.hooks[0]!, rule }));
    two.trace.hooks = [two.trace.hooks[0]!, two.trace.hooks[0]!];
    await store.add({ name: "t", traceToolInput: false }, two, { durationMs: 1, cancelled: false });
    await store.flush();
    const kept = (await store.get("t", "e1"))!.hooks;
    expect(kept.map((h) => h.stdout)).toEqual(["out", "out"]);
    expect(kept.map((h) => h.rule)).toEqual([rules[0], `${"1".repeat(HOOK_FIELD_BYTES)}…[truncated 1 bytes]`]);
  });

  it("are written each tenant's in turn: another tenant's trace is never kept waiting (in memory, its streams at stake) behind a flood of one tenant's", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hookbox-turns-"));
    dirs.push(dir);
    const store = new TraceStore(dir);
    await store.load();
    const flooder = { name: "flooder", traceToolInput: false };
    const adds: Promise<unknown>[] = [];
    for (let i = 0; i < 2000; i++) adds.push(store.add(flooder, event(i, 10), { durationMs: 1, cancelled: false }));
    await Promise.all(adds);
    await store.add({ name: "other", traceToolInput: false }, event(5000, 10), { durationMs: 1, cancelled: false });
    await store.flush();
    // Written second or so, not after the flood's two thousand: fewer of the flood's files are
    // older than it than are out to the writer's thread at once (it writes them in the order taken).
    const written = (file: string) => statSync(file, { bigint: true }).mtimeNs;
    const folders = readdirSync(dir).map((k) => join(dir, k));
    const otherFolder = folders.find((f) => existsSync(join(f, "e5000.json")))!;
    const floodFolder = folders.find((f) => f !== otherFolder)!;
    const otherAt = written(join(otherFolder, "e5000.json"));
    const flood = readdirSync(floodFolder);
    expect(flood).toHaveLength(2000);
    expect(flood.filter((f) => written(join(floodFolder, f)) < otherAt).length).toBeLessThan(TRACE_WRITES_AT_ONCE);
    expect(store.pendingBytesOf("flooder")).toBe(0);
    expect((await store.list("flooder", { limit: 500 })).events).toHaveLength(500);
    // a page lists at most 500, at least 1, 50 unless asked (README: GET /v1/events)
    expect((await store.list("flooder", { limit: 501 })).events).toHaveLength(500);
    expect((await store.list("flooder", { limit: 0 })).events).toHaveLength(1);
    expect((await store.list("flooder", {})).events).toHaveLength(50);
  });

  it("share the writer's time between tenants: one whose every trace takes long to build (a thousand hooks of long names) keeps another's quick traces waiting no longer than its own share", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hookbox-share-"));
    dirs.push(dir);
    const store = new TraceStore(dir);
    await store.load();
    const name = 'password=a "token":"x",--secret y '.repeat(8).slice(0, 240);
    const heavy = (n: number): EventResult => {
      const one = event(n, 10);
      return { ...one, hooks: Array.from({ length: 1000 }, () => ({ ...one.hooks[0]!, name, origin: name, rule: name })), trace: { queued_ms: 0, hooks: Array.from({ length: 1000 }, () => one.trace.hooks[0]!) } };
    };
    const slow = { name: "slow", traceToolInput: false };
    for (let i = 0; i < 20; i++) await store.add(slow, heavy(i), { durationMs: 1, cancelled: false });
    const perTrace = store.pendingBytesOf("slow") / 20;
    expect(perTrace).toBeGreaterThan(1000 * 2 * 3 * 240);
    // the writer is on the first of them; the quick tenant's twenty come in behind
    for (let i = 0; i < 20; i++) await store.add({ name: "quick", traceToolInput: false }, event(100 + i, 10), { durationMs: 1, cancelled: false });
    await expect.poll(() => store.pendingBytesOf("quick"), { timeout: 30_000 }).toBe(0);
    // One trace of the slow tenant's each turn, as the tenants took turns trace by trace: the quick
    // tenant's last written after nineteen of the slow one's.
    expect(store.pendingBytesOf("slow") / perTrace).toBeGreaterThanOrEqual(15);
    await store.flush();
    expect((await store.get("quick", "e119"))!.hooks[0]!.stdout).toBe("out");
  });

  it("are read back at a restart whatever else lies beside them: a folder named like a trace, a file of no time, a cut one", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hookbox-restart-"));
    dirs.push(dir);
    const first = new TraceStore(dir);
    await first.load();
    for (let i = 0; i < 3; i++) await first.add({ name: "t", traceToolInput: false }, event(i, 10), { durationMs: 1, cancelled: false });
    await first.flush();
    const [tenantDir] = readdirSync(dir);
    const at = (name: string) => join(dir, tenantDir!, name);
    mkdirSync(at("a-folder.json"));
    writeFileSync(at("no-time.json"), JSON.stringify({ ...JSON.parse(readFileSync(at("e0.json"), "utf8")), event_id: "e-no-time", time: "never" }));
    writeFileSync(at("cut.json"), "{\"event_id\":");
    const errors: unknown[] = [];
    const again = new TraceStore(dir, undefined, (err) => errors.push(err));
    await again.load();
    expect((await again.list("t", {})).events.map((e) => e.event_id).sort()).toEqual(["e0", "e1", "e2"]);
    // what is no trace is gone — but the folder, which no file removal takes: said, and left
    expect(readdirSync(join(dir, tenantDir!)).sort()).toEqual(["a-folder.json", "e0.json", "e1.json", "e2.json"]);
    expect(errors).toHaveLength(1);
  });

  it("are kept where no other user of the machine reads them: folders 0700, files 0600", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hookbox-modes-"));
    dirs.push(dir);
    const store = new TraceStore(join(dir, "traces"));
    await store.load();
    await store.add({ name: "t", traceToolInput: false }, event(1, 10), { durationMs: 1, cancelled: false });
    await store.flush();
    const mode = (p: string) => statSync(p).mode & 0o777;
    expect(mode(join(dir, "traces"))).toBe(0o700);
    const [tenantDir] = readdirSync(join(dir, "traces"));
    expect(mode(join(dir, "traces", tenantDir!))).toBe(0o700);
    expect(mode(join(dir, "traces", tenantDir!, "e1.json"))).toBe(0o600);
  });
});

describe("a hook's stdin in its trace", () => {
  const wide = (keys: number) => ({ hook_event_name: "PreToolUse", session_id: "s1", tool_name: "Bash", tool_input: Object.fromEntries(Array.from({ length: keys }, (_, i) => [`k${i}`, "v".repeat(40)])) });
  async function traced(stdin: Uint8Array, keepInputs: boolean) {
    const dir = mkdtempSync(join(tmpdir(), "hookbox-stdin-"));
    dirs.push(dir);
    const store = new TraceStore(dir);
    await store.load();
    const e = event(1, 10);
    e.trace.hooks[0] = { ...e.trace.hooks[0]!, stdin };
    const parse = vi.spyOn(JSON, "parse");
    try {
      await store.add({ name: "t", traceToolInput: keepInputs }, e, { durationMs: 1, cancelled: false });
      await store.flush();
      return { stdin: (await store.get("t", "e1"))!.hooks[0]!.stdin, bigParses: parse.mock.calls.filter(([text]) => typeof text === "string" && text.length > 64 * 1024).length };
    } finally {
      parse.mockRestore();
    }
  }
  it("is read from the event's own value when it is the event's payload: a mebibyte of JSON is never parsed again for it", async () => {
    const body = wide(24_000);
    const raw = Buffer.from(JSON.stringify(body));
    expect(raw.byteLength).toBeGreaterThan(1 << 20);
    const stdin = new PayloadCache(raw, body, "snake", resolveEventName("PreToolUse")!.point).for("snake");
    for (const keep of [false, true]) {
      const r = await traced(stdin, keep);
      expect(r.bigParses, `keepInputs ${keep}`).toBe(0);
      expect(r.stdin).toContain('"session_id":"s1"');
      if (keep) expect(r.stdin).toContain('"k0":"vvvv');
      else expect(r.stdin).toContain('"tool_input":"[omitted]"');
    }
    // the event's own value is left as it was
    expect(Object.keys(body.tool_input)).toHaveLength(24_000);
  });
  it("counts what its parsed value weighs against the tenant's pending bytes while the trace waits: the value lives as long as the stdin", () => {
    const body = wide(100);
    const raw = Buffer.from(JSON.stringify(body));
    notePayloadWeight(raw, 5_000_000);
    const payloads = new PayloadCache(raw, body, "snake", resolveEventName("PreToolUse")!.point);
    const e = event(1, 10);
    e.trace.hooks[0] = { ...e.trace.hooks[0]!, stdin: payloads.for("snake") };
    expect(traceHooksOf(e).bytes).toBeGreaterThanOrEqual(5_000_000 + raw.byteLength);
    // a copy in another dialect weighs as much as the body it was made of
    e.trace.hooks[0] = { ...e.trace.hooks[0]!, stdin: payloads.for("camel") };
    expect(traceHooksOf(e).bytes).toBeGreaterThanOrEqual(5_000_000);
    // a snake-case copy of a Copilot body holds its toolArgs parsed anew: 32 bytes a character more
    const toolArgs = JSON.stringify({ command: "x".repeat(10_000) });
    const camel = { toolName: "bash", toolArgs };
    const camelRaw = Buffer.from(JSON.stringify(camel));
    notePayloadWeight(camelRaw, 1_000_000);
    const copies = new PayloadCache(camelRaw, camel, "camel", resolveEventName("preToolUse")!.point);
    e.trace.hooks[0] = { ...e.trace.hooks[0]!, stdin: copies.for("snake") };
    expect(traceHooksOf(e).bytes).toBeGreaterThanOrEqual(1_000_000 + 32 * toolArgs.length);
    // a stdin of no payload's holds no value
    e.trace.hooks[0] = { ...e.trace.hooks[0]!, stdin: Buffer.from(raw) };
    expect(traceHooksOf(e).bytes).toBeLessThan(5_000_000);
  });
  it(`is kept as redacted text past PARSED_STDIN_BYTES (${PARSED_STDIN_BYTES / 1024} KiB) when it is no payload of the event's`, async () => {
    const r = await traced(Buffer.from(JSON.stringify(wide(4_000))), false);
    expect(r.bigParses).toBe(0);
    expect(r.stdin).toMatch(/^\{"hook_event_name":"PreToolUse"/);
  });
});

describe("a trace whose hook's text is made to cost the redactor most", () => {
  it("is built in slices between the parts of a hook (stdin, each stream, its fields): no piece holds the thread for long", async () => {
    // Openers that switch on every pass of the redactor over the whole text, then what it redacts
    // again and again: a few microseconds a character.
    const hostile = `a: "docker login mysql curl sshpass --password 'x' ${"a://:@ ".repeat(3_000)} -p; -u -user </`;
    const e = event(1, 10);
    e.hooks[0] = { ...e.hooks[0]!, reason: hostile, error: hostile };
    e.hooks[0] = { ...e.hooks[0]!, source: "repository" };
    e.trace.hooks[0] = { ...e.trace.hooks[0]!, env: Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`V${i}`, hostile])), stdin: Buffer.from(JSON.stringify({ hook_event_name: "PreToolUse", notes: hostile })), stdout: hostile, stderr: hostile, stdoutBytes: hostile.length, stderrBytes: hostile.length };
    const dir = mkdtempSync(join(tmpdir(), "hookbox-slices-"));
    dirs.push(dir);
    const store = new TraceStore(dir, { ...DEFAULT_TRACE_LIMITS, captureBytes: 16 * 1024 });
    await store.load();
    let worstGapMs = 0;
    let last = performance.now();
    const probe = setInterval(() => {
      const now = performance.now();
      worstGapMs = Math.max(worstGapMs, now - last);
      last = now;
    }, 2);
    try {
      await store.add({ name: "t", traceToolInput: true }, e, { durationMs: 1, cancelled: false });
      await store.flush();
    } finally {
      clearInterval(probe);
    }
    const trace = (await store.get("t", "e1"))!;
    expect(trace.hooks[0]!.stdout).toContain("a://:[redacted]@");
    // One part at a time: at most about 17 Ki characters at a few microseconds each
    // (all of one hook in one piece took about twice that: 335 ms here)
    expect(worstGapMs).toBeLessThan(300);
  });
});

describe("trace files on a disk that takes no more bytes, or cut by a crash", () => {
  it("leaves no part of a trace it could not write whole, and removes at the next start a file a crash cut short", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hookbox-trace-full-"));
    dirs.push(dir);
    const module = join(process.cwd(), "dist/service/records/trace-store.js");
    // 4 KiB files at most (ulimit -f 8: dash counts 512-byte blocks): a small trace fits, one that
    // holds a 32 KiB session id does not.
    const small = event(1, 10);
    const large = event(2, 32 * 1024);
    const events = join(mkdtempSync(join(tmpdir(), "hookbox-trace-events-")), "events.json");
    dirs.push(dirname(events));
    writeFileSync(events, JSON.stringify([small, large]));
    const script = `import { readFile } from "node:fs/promises";
    import(${JSON.stringify(module)}).then(async ({ TraceStore }) => {
      const errors = [];
      const store = new TraceStore(${JSON.stringify(dir)}, undefined, (e) => errors.push(e.code ?? String(e)));
      await store.load();
      const revive = (e) => ({ ...e, trace: { ...e.trace, hooks: e.trace.hooks.map((h) => ({ ...h, stdin: Buffer.from(h.stdin.data) })) } });
      for (const e of JSON.parse(await readFile(process.argv[1], "utf8")).map(revive)) await store.add({ name: "t", traceToolInput: true }, e, { durationMs: 1, cancelled: false });
      await store.flush();
      const listed = (await store.list("t", {})).events.map((e) => e.event_id);
      console.log(JSON.stringify({ errors, listed, small: (await store.get("t", "e1"))?.event_id ?? null, large: (await store.get("t", "e2"))?.event_id ?? null }));
    })`;
    const out = execFileSync("sh", ["-c", `ulimit -f 8 && exec "$0" --input-type=module -e "$1" "$2"`, process.execPath, script, events], { encoding: "utf8" });
    // The one not written whole is neither served nor listed.
    expect(JSON.parse(out)).toEqual({ errors: ["EFBIG"], listed: ["e1"], small: "e1", large: null });
    const [tenantDir] = readdirSync(dir);
    const files = () => readdirSync(join(dir, tenantDir!)).sort();
    expect(files()).toHaveLength(1);
    const [kept] = files();
    expect(() => JSON.parse(readFileSync(join(dir, tenantDir!, kept!), "utf8"))).not.toThrow();
    // A trace a crash cut short: no JSON, removed when the files are read again; the whole one stays.
    writeFileSync(join(dir, tenantDir!, "e3.json"), readFileSync(join(dir, tenantDir!, kept!), "utf8").slice(0, 100));
    const store = new TraceStore(dir);
    await store.load();
    expect(files()).toEqual([kept]);
    expect((await store.get("t", "e1"))?.event_id).toBe("e1");
  });
});

describe("a full shelf", () => {
  it("drops its oldest trace on every event and still lists, pages and serves exactly the newest max_events, across the cuts of its array", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hookbox-shelf-"));
    dirs.push(dir);
    const store = new TraceStore(dir, { ...DEFAULT_TRACE_LIMITS, maxEvents: 5 });
    await store.load();
    const tenant = { name: "t", traceToolInput: false };
    // Past 1024 (SHELF_CUT_AT) gone places twice over, then a few: the array is cut along the way.
    for (let i = 0; i < 2_600; i++) await store.add(tenant, event(i, 1), { durationMs: 1, cancelled: false });
    await store.flush();
    const first = await store.list("t", { limit: 3 });
    expect(first.events.map((e) => e.event_id)).toEqual(["e2599", "e2598", "e2597"]);
    const rest = await store.list("t", { limit: 3, cursor: first.next_cursor! });
    expect(rest.events.map((e) => e.event_id)).toEqual(["e2596", "e2595"]);
    expect(rest.next_cursor).toBeNull();
    expect(await store.get("t", "e2594")).toBeUndefined();
    expect((await store.get("t", "e2595"))?.event_id).toBe("e2595");
    // Only the kept ones are on disk.
    const [tenantDir] = readdirSync(dir);
    // (a dropped trace's file is removed beside the writes, not waited for by flush)
    await expect.poll(() => readdirSync(join(dir, tenantDir!)).sort()).toEqual(["e2595.json", "e2596.json", "e2597.json", "e2598.json", "e2599.json"]);
    // And after a restart, the same five.
    const again = new TraceStore(dir, { ...DEFAULT_TRACE_LIMITS, maxEvents: 5 });
    await again.load();
    expect((await again.list("t", { limit: 10 })).events.map((e) => e.event_id)).toEqual(["e2599", "e2598", "e2597", "e2596", "e2595"]);
  });
});

describe("a shelf past [traces] max_bytes", () => {
  it("drops its tenant's oldest traces once their bytes on disk pass max_bytes, and none of another tenant's", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hookbox-shelf-bytes-"));
    dirs.push(dir);
    const t = { name: "t", traceToolInput: false };
    const u = { name: "u", traceToolInput: false };
    // one trace's size as written
    const probe = new TraceStore(join(dir, "probe"), DEFAULT_TRACE_LIMITS);
    await probe.load();
    await probe.add(t, event(0, 2000), { durationMs: 1, cancelled: false });
    await probe.flush();
    const [probeDir] = readdirSync(join(dir, "probe"));
    const size = statSync(join(dir, "probe", probeDir!, readdirSync(join(dir, "probe", probeDir!))[0]!)).size;
    // room for three and a half
    const store = new TraceStore(join(dir, "kept"), { ...DEFAULT_TRACE_LIMITS, maxBytes: Math.floor(3.5 * size) });
    await store.load();
    await store.add(u, event(9, 2000), { durationMs: 1, cancelled: false });
    for (let i = 0; i < 10; i++) await store.add(t, event(i, 2000), { durationMs: 1, cancelled: false });
    await store.flush();
    expect((await store.list("t", { limit: 10 })).events.map((e) => e.event_id)).toEqual(["e9", "e8", "e7"]);
    expect(await store.get("t", "e6")).toBeUndefined();
    expect((await store.list("u", { limit: 10 })).events.map((e) => e.event_id)).toEqual(["e9"]);
  });
});

describe("a listing over a full shelf", () => {
  it(`lets the event loop in every TRACE_LIST_SLICE (${TRACE_LIST_SLICE}) summaries when its filter matches nothing, and a cursor's page starts below its place`, async () => {
    const dir = mkdtempSync(join(tmpdir(), "hookbox-list-"));
    dirs.push(dir);
    const count = TRACE_LIST_SLICE * 5;
    const store = new TraceStore(dir, { ...DEFAULT_TRACE_LIMITS, maxEvents: count });
    // summaries only: the writer is not started (what is listed is the shelf in memory)
    (store as unknown as { kick(): void }).kick = () => undefined;
    const t = { name: "t", traceToolInput: false };
    for (let i = 0; i < count; i++) await store.add(t, { ...event(i, 8), session_id: `s${i % 7}` }, { durationMs: 1, cancelled: false });
    let letIn = false;
    setImmediate(() => (letIn = true));
    const nothing = await store.list("t", { session_id: "nope" });
    expect(nothing).toEqual({ events: [], next_cursor: null });
    expect(letIn).toBe(true); // walked in one go, the timer would run only after it
    const first = await store.list("t", { limit: 3 });
    expect(first.events.map((e) => e.event_id)).toEqual([`e${count - 1}`, `e${count - 2}`, `e${count - 3}`]);
    const second = await store.list("t", { limit: 3, cursor: first.next_cursor! });
    expect(second.events.map((e) => e.event_id)).toEqual([`e${count - 4}`, `e${count - 5}`, `e${count - 6}`]);
    const session = await store.list("t", { limit: 2, session_id: "s3", cursor: second.next_cursor! });
    expect(session.events.map((e) => [e.event_id, e.session_id])).toEqual([[`e${count - 7 - ((count - 7 - 3) % 7)}`, "s3"], [`e${count - 14 - ((count - 7 - 3) % 7)}`, "s3"]]);
  });
});

