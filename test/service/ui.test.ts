/**
 * The decisions page in a real browser (Debian's headless Chromium, driven by playwright-core):
 * sign in with a token, see a new blocked event appear without reloading, open it, and find one
 * waterfall bar per hook with the blocking hook marked.
 */
import { mkdirSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";
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
