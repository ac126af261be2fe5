import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkPage, fillSignIn, launchBrowser, newPage } from "./support/browser.js";
import { appName, password, startTestSystem, type TestSystem } from "./support/system.js";

let system: TestSystem;
let browser: Browser;

beforeAll(async () => {
  [system, browser] = await Promise.all([startTestSystem("browser_sign_in"), launchBrowser()]);
  await system.createUser({ email: "nora@example.org", name: "Nora Normal", permissions: ["signin"] });
});

afterAll(async () => {
  await browser?.close();
  await system?.close();
});

describe("signing in through the browser", () => {
  it("shows an accessible sign-in page and then the dashboard with the applications the user may use", async () => {
    const page = await newPage(browser);
    await page.goto(`${system.signonUrl}/sign-in`);
    await checkPage(page, "sign-in");

    await fillSignIn(page, "nora@example.org", "not the password");
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("not right");
    await checkPage(page, "sign-in-error");

    await fillSignIn(page, "nora@example.org", password);
    await page.waitForURL(`${system.signonUrl}/`);
    await expect.poll(() => page.getByRole("link", { name: appName }).count()).toBe(1);
    await checkPage(page, "dashboard");
  });

  it("after six wrong passwords says there were too many tries and when to try again, in the same words for an address without an account", async () => {
    await system.createUser({ email: "tess@example.org", name: "Tess Tries" });
    const words: string[] = [];
    for (const email of ["tess@example.org", "nobody-here@example.org"]) {
      const page = await newPage(browser);
      await page.goto(`${system.signonUrl}/sign-in`);
      for (let attempt = 1; attempt <= 6; attempt++) {
        await fillSignIn(page, email, `wrong guess ${attempt}`);
        await expect.poll(() => page.getByRole("alert").textContent()).toContain("The e-mail address or password is not right.");
      }
      // The right password (for the address that has an account) is refused too, saying why and until when.
      const refused = page.waitForResponse((response) => response.url() === `${system.signonUrl}/sign-in` && response.request().method() === "POST");
      await fillSignIn(page, email, password);
      expect((await refused).status()).toBe(429);
      const alert = ((await page.getByRole("alert").textContent()) ?? "").trim();
      expect(alert).toMatch(
        /^There have been too many tries to sign in with this e-mail address from your network\. Try again after \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC \(in (59|60) minutes\)\.$/,
      );
      words.push(alert.replace(/after .* UTC \(in \d+ minutes\)/, "after … (in …)"));
      if (email === "tess@example.org") await checkPage(page, "sign-in-too-many-tries");
      await page.context().close();
    }
    expect(words[1]).toBe(words[0]);
  });

  it("signs in to the example application through Sign-on and back", async () => {
    const page = await newPage(browser);
    await page.goto(`${system.appUrl}/`);
    expect(new URL(page.url()).origin).toBe(system.signonUrl);
    await fillSignIn(page, "nora@example.org", password);
    await page.waitForURL(`${system.appUrl}/`);
    expect(await page.textContent("body")).toContain("Nora Normal");
  });
});
