import { mkdir } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import axe from "axe-core";
import { chromium, type Browser, type Page } from "playwright-core";
import { expect } from "vitest";
import { chromiumPath } from "./chromium.js";

const screenshotDirectory = fileURLToPath(new URL("../../../test-results/browser/", import.meta.url));

/** Starts headless chromium. */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath, headless: true, args: ["--no-sandbox", "--disable-dev-shm-usage"] });
}

/** A fresh page in its own context (its own cookies), 1024 px wide. */
export async function newPage(browser: Browser): Promise<Page> {
  // axe-core is injected by the test, not by the page: the pages' CSP rightly allows no script at all.
  const context = await browser.newContext({ bypassCSP: true, viewport: { width: 1024, height: 800 } });
  return context.newPage();
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * Checks the page as it stands: no serious or critical accessibility
 * violation (axe-core, WCAG 2.1 A and AA), nothing wider than a 320 px
 * screen, and a screenshot under `test-results/browser/<name>.png`.
 */
export async function checkPage(page: Page, name: string): Promise<void> {
  await page.evaluate(axe.source);
  const violations = await page.evaluate(async () => {
    const run = (window as unknown as { axe: { run: (context: Document, options: unknown) => Promise<{ violations: AxeViolation[] }> } }).axe.run;
    const result = await run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } });
    return result.violations.map((violation) => ({ id: violation.id, impact: violation.impact, help: violation.help, nodes: violation.nodes.map((node) => ({ target: node.target })) }));
  });
  const serious = violations.filter((violation) => violation.impact === "serious" || violation.impact === "critical");
  expect(serious, `accessibility of ${name} (${page.url()})`).toEqual([]);

  // One way of writing times on every page: `2026-11-21 09:05 UTC` (a day alone as `2026-11-21`).
  const times = await page.locator("time").allTextContents();
  for (const time of times) expect(time, `a time on ${name}`).toMatch(/^\d{4}-\d{2}-\d{2}( \d{2}:\d{2} UTC)?$/);
  expect(await page.locator("body").innerText(), `times on ${name}`).not.toMatch(/GMT|\b\d{2}:\d{2}:\d{2}\b/);

  await mkdir(screenshotDirectory, { recursive: true });
  await page.screenshot({ path: `${screenshotDirectory}${name}.png`, fullPage: true });

  const viewport = page.viewportSize();
  await page.setViewportSize({ width: 320, height: 640 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow, `${name} is usable 320 px wide without scrolling sideways`).toBeLessThanOrEqual(0);
  if (viewport) await page.setViewportSize(viewport);
}

/** Signs in on Sign-on's sign-in form (the page must show it). */
export async function fillSignIn(page: Page, email: string, password: string): Promise<void> {
  await page.getByLabel("E-mail address").fill(email);
  await page.getByLabel("Password", { exact: true }).fill(password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
}
