/**
 * The decisions page in a real browser (Debian's headless Chromium, driven by playwright-core):
 * sign in with a token, see a new blocked event appear without reloading, open it, and find one
 * waterfall bar per hook with the blocking hook marked.
 */
import { mkdirSync } from "node:fs";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { LIVE_FOLLOWERS_PER_TENANT } from "../../service/routes/traces.js";
import { startService, TOKEN_A, TOKEN_B, type Service } from "../helpers/service.js";

let svc: Service;
let browser: Browser;

beforeAll(async () => {
  svc = await startService(`
[[policy.PreToolUse]]
name = "org-guard"
command = "cat >/dev/null; echo '{}'"

[[hooks.PreToolUse]]
name = "lint-check"
command = "cat >/dev/null; echo '{\\"decision\\":\\"allow\\"}'"

[[hooks.PreToolUse]]
name = "security-check"
command = '''cat >/dev/null; sleep 0.2; echo '{"decision":"block","reason":"Dangerous rm -rf command","systemMessage":"Command blocked by security policy"}' '''
`);
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
});
afterAll(async () => {
  await browser?.close();
  await svc?.stop();
});

it("shows a new blocked event live, and its hooks as a waterfall with the blocking hook marked", async () => {
  const page = await browser.newPage({ viewport: { width: 1400, height: 800 } });
  await page.goto(`${svc.url}/ui`);
  await page.fill("#token", TOKEN_A);
  await page.click("#login-form button");
  await page.waitForSelector("#live.on");
  expect(await page.locator("tr.row").count()).toBe(0);

  // An agent posts an event while the page is open.
  const posted = (await (await svc.event({ session_id: "ui-session", hook_event_name: "PreToolUse", tool_name: "shell", tool_input: { command: "rm -rf /" } })).json()) as { event_id: string };
  const row = page.locator(`tr.row[data-event-id="${posted.event_id}"]`);
  await row.waitFor({ timeout: 10_000 });
  expect(await row.getAttribute("data-decision")).toBe("block");

  await row.click();
  await page.waitForSelector(".waterfall .bar");
  const bars = page.locator(".waterfall .bar");
  expect(await bars.count()).toBe(3);
  expect(await bars.evaluateAll((els) => els.map((e) => e.getAttribute("data-name")))).toEqual(["org-guard", "lint-check", "security-check"]);
  const blocking = page.locator(".waterfall .bar.blocking");
  expect(await blocking.count()).toBe(1);
  expect(await blocking.getAttribute("data-name")).toBe("security-check");
  expect(await page.locator('[data-hook-output="security-check"] .stdout').textContent()).toContain("Dangerous rm -rf command");

  mkdirSync("test-output", { recursive: true });
  await page.screenshot({ path: process.env.HOOKBOX_SCREENSHOT ?? "test-output/ui.png" });
  await page.close();
}, 60_000);

it("leaves nothing of one tenant's for the next to sign in in the same tab", async () => {
  const page = await browser.newPage({ viewport: { width: 1400, height: 800 } });
  await page.goto(`${svc.url}/ui`);
  await page.fill("#token", TOKEN_A);
  await page.click("#login-form button");
  await page.waitForSelector("#live.on");
  const posted = (await (await svc.event({ session_id: "a-secret-session", hook_event_name: "PreToolUse", tool_name: "shell", tool_input: { command: "rm -rf /" } })).json()) as { event_id: string };
  await page.locator(`tr.row[data-event-id="${posted.event_id}"]`).click();
  await page.waitForSelector("[data-hook-output='security-check'] .stdin");
  await page.fill("#f-session", "a-secret-session");
  await page.click("#sign-out");
  // the login box holds no token: no one signs in as team-a by a click
  expect(await page.locator("#token").inputValue()).toBe("");
  // team-b signs in: none of team-a's rows, trace or filter is shown
  await page.fill("#token", TOKEN_B);
  await page.click("#login-form button");
  await page.waitForSelector("#live.on");
  expect(await page.locator("#detail").textContent()).toBe("Select an event to see its hooks.");
  expect(await page.locator(`tr.row[data-event-id="${posted.event_id}"]`).count()).toBe(0);
  expect(await page.locator("#f-session").inputValue()).toBe("");
  expect(await page.content()).not.toContain("a-secret-session");
  await page.close();
}, 60_000);

it("lists each session with when hookbox last heard from it", async () => {
  const page = await browser.newPage({ viewport: { width: 1400, height: 800 } });
  await page.goto(`${svc.url}/ui`);
  await page.fill("#token", TOKEN_A);
  await page.click("#login-form button");
  await page.waitForSelector("#live.on");
  await (await svc.event({ session_id: "quiet-session", hook_event_name: "SessionStart" })).arrayBuffer();
  await page.click("#show-sessions");
  const row = page.locator('tr.session[data-session="quiet-session"]');
  await row.waitFor({ timeout: 10_000 });
  expect(await row.locator("td").nth(1).textContent()).toMatch(/s ago$/);
  expect(await row.locator("td").nth(2).textContent()).toBe("SessionStart");
  await page.close();
}, 60_000);

/** `test` on a page of team-a's, signed in and following; the page closed after, whatever happened (its live follower let go). */
async function signedIn(test: (page: Page) => Promise<void>): Promise<void> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 800 } });
  try {
    await page.goto(`${svc.url}/ui`);
    await page.fill("#token", TOKEN_A);
    await page.click("#login-form button");
    await page.waitForSelector("#live.on");
    await test(page);
  } finally {
    await page.close();
  }
}
const posted = async (body: Record<string, unknown>) => ((await (await svc.event({ hook_event_name: "PostToolUse", tool_input: {}, ...body })).json()) as { event_id: string }).event_id;

it("shows a bidi override or an escape in a tool name or a session id as an escape, as hookbox trace does, never as what it does", async () => {
  await signedIn(async (page) => {
    const id = await posted({ session_id: "s\u202egnp.exe", tool_name: "shell\u202e\u001b[2Jdone" });
    const row = page.locator(`tr.row[data-event-id="${id}"]`);
    await row.waitFor({ timeout: 10_000 });
    expect(await row.locator("td").nth(2).textContent()).toBe("shell\\u202e\\x1b[2Jdone");
    await row.click();
    await page.waitForSelector("#detail .meta");
    const meta = (await page.locator("#detail .meta").first().textContent())!;
    expect(meta).toContain("tool shell\\u202e\\x1b[2Jdone");
    expect(meta).toContain("session s\\u202egnp.exe");
    const html = await page.content();
    for (const c of ["\u202e", "\u001b"]) expect(html).not.toContain(c);
    // its session in the sessions list, shown escaped, filters by the id itself
    await page.click("#show-sessions");
    await page.locator("tr.session", { hasText: "gnp.exe" }).click();
    await expect.poll(() => page.locator("#f-session").inputValue()).toBe("s\u202egnp.exe");
    await page.locator(`tr.row[data-event-id="${id}"]`).waitFor({ timeout: 10_000 });
  });
}, 60_000);

it("draws the event clicked last, whichever answer comes last", async () => {
  await signedIn(async (page) => {
    const first = await posted({ session_id: "order", tool_name: "first" });
    const second = await posted({ session_id: "order", tool_name: "second" });
    await page.locator(`tr.row[data-event-id="${second}"]`).waitFor({ timeout: 10_000 });
    // the first event's trace answers a second late: the second's, clicked after it, answers first
    await page.route(`**/v1/events/${first}`, async (route) => {
      await new Promise((r) => setTimeout(r, 1000));
      await route.continue();
    });
    const late = page.waitForResponse(`**/v1/events/${first}`);
    await page.locator(`tr.row[data-event-id="${first}"]`).click();
    await page.locator(`tr.row[data-event-id="${second}"]`).click();
    await late;
    await new Promise((r) => setTimeout(r, 200));
    expect(await page.locator("#detail .meta").first().textContent()).toContain(second);
    expect(await page.locator("tr.row.selected").getAttribute("data-event-id")).toBe(second);
    // a trace that cannot be had (gone since it was listed): said in its place, not the last one's hooks under its row
    await page.route(`**/v1/events/${first}`, (route) => route.fulfill({ status: 404, body: "{}" }));
    await page.locator(`tr.row[data-event-id="${first}"]`).click();
    await expect.poll(() => page.locator("#detail").textContent()).toMatch(/could not be shown \(hookbox answered 404\)/);
  });
}, 60_000);

it("lists the events that gave no session id under the sessions list's (no session id)", async () => {
  await signedIn(async (page) => {
    const id = await posted({ tool_name: "anonymous" });
    const named = await posted({ session_id: "named", tool_name: "named" });
    await page.click("#show-sessions");
    const row = page.locator('tr.session[data-session="(no session id)"]');
    await row.waitFor({ timeout: 10_000 });
    await row.click();
    const shown = () => page.locator("tr.row").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-event-id")));
    await expect.poll(shown, { timeout: 10_000 }).not.toContain(named);
    expect(await shown()).toContain(id);
    // one more of each, live (the named one first: by the time the other is shown, it was weighed)
    const liveNamed = await posted({ session_id: "named", tool_name: "named" });
    const liveId = await posted({ tool_name: "anonymous" });
    await page.locator(`tr.row[data-event-id="${liveId}"]`).waitFor({ timeout: 10_000 });
    expect(await shown()).not.toContain(liveNamed);
  });
}, 60_000);

it("says it is not live while the tenant's followers are all taken, and follows once one is free", async () => {
  // Take every live follower this tenant may hold, as other tabs or `hookbox tail` would (the pages
  // of the tests before let theirs go as their connections close: a 429 meanwhile is retried).
  // Each answer is kept, not only its controller: an answer no one holds is collected, and its
  // connection closed with it — a follower given back while the test counts it as held.
  const held: { ctl: AbortController; res: Response }[] = [];
  for (let tries = 0; held.length < LIVE_FOLLOWERS_PER_TENANT && tries < 100; tries++) {
    const ctl = new AbortController();
    const res = await fetch(`${svc.url}/v1/events/live`, { headers: { authorization: `Bearer ${TOKEN_A}` }, signal: ctl.signal });
    if (res.status === 200) held.push({ ctl, res });
    else await new Promise((r) => setTimeout(r, 100));
  }
  expect(held).toHaveLength(LIVE_FOLLOWERS_PER_TENANT);
  const page = await browser.newPage({ viewport: { width: 1400, height: 800 } });
  await page.goto(`${svc.url}/ui`);
  await page.fill("#token", TOKEN_A);
  await page.click("#login-form button");
  await expect.poll(() => page.locator("#live").textContent(), { timeout: 10_000 }).toMatch(/not live \(429\), retrying in 5 s/);
  expect(await page.locator("#live.on").count()).toBe(0);

  held[0]?.ctl.abort();
  await page.waitForSelector("#live.on", { timeout: 15_000 });
  for (const { ctl } of held.slice(1)) ctl.abort();
  await page.close();
}, 60_000);
