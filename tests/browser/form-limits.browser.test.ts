import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkPage, launchBrowser, newPage } from "./support/browser.js";
import { startTestSystem, type TestSystem } from "./support/system.js";

let system: TestSystem;
let browser: Browser;

beforeAll(async () => {
  [system, browser] = await Promise.all([startTestSystem("browser_form_limits"), launchBrowser()]);
});

afterAll(async () => {
  await browser?.close();
  await system?.close();
});

/** An address of 300 characters: more than the 254 an e-mail address may have. */
const overLong = `${"a".repeat(288)}@example.org`;

describe("a field's length limit in the browser", () => {
  it("keeps a pasted address to 254 characters, and answers a longer one posted by hand with the form and a message by the field", async () => {
    const page = await newPage(browser);
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: system.signonUrl });
    await page.goto(`${system.signonUrl}/password-reset`);
    const field = page.getByLabel("E-mail address");
    expect(await field.getAttribute("maxlength")).toBe("254");

    // Pasted as a person would: the browser keeps the first 254 characters, and the post carries no more.
    await page.evaluate((text) => navigator.clipboard.writeText(text), overLong);
    await field.focus();
    await page.keyboard.press("ControlOrMeta+V");
    expect(await field.inputValue()).toBe(overLong.slice(0, 254));
    const posted = page.waitForRequest((request) => request.method() === "POST" && new URL(request.url()).pathname === "/password-reset");
    await page.getByRole("button", { name: "Send the link" }).click();
    const sent = new URLSearchParams((await posted).postData() ?? "").get("email");
    expect(sent).toBe(overLong.slice(0, 254));
    await expect.poll(() => page.locator("#email-error").textContent()).toBe("Enter an e-mail address like name@example.org");

    // Posted by hand (the limit taken off the page): the form again, 400, with the address as sent and the limit by the field.
    await field.evaluate((input) => input.removeAttribute("maxlength"));
    await field.fill(overLong);
    const answered = page.waitForResponse((response) => response.request().method() === "POST" && new URL(response.url()).pathname === "/password-reset");
    await page.getByRole("button", { name: "Send the link" }).click();
    expect((await answered).status()).toBe(400);
    await expect.poll(() => page.locator("#email-error").textContent()).toBe("Enter an e-mail address of at most 254 characters");
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Reset your password");
    expect(await page.getByRole("alert").getByRole("link").textContent()).toBe("Enter an e-mail address of at most 254 characters");
    expect(await field.inputValue()).toBe(overLong);
    expect(await field.getAttribute("maxlength")).toBe("254");
    expect(await field.getAttribute("aria-describedby")).toBe("email-error");
    await checkPage(page, "password-reset-over-long");
  });
});
