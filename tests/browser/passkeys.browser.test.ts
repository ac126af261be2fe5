import type { Browser, CDPSession, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkPage, fillSignIn, launchBrowser } from "./support/browser.js";
import { password, startTestSystem, type TestSystem } from "./support/system.js";

let system: TestSystem;
let browser: Browser;
/** Sign-on at `localhost`: a passkey's RP ID is a host name, never an IP address. */
let signonUrl: string;

const email = "pia@example.org";

beforeAll(async () => {
  [system, browser] = await Promise.all([startTestSystem("browser_passkeys", { publicHost: "localhost" }), launchBrowser()]);
  signonUrl = system.signonUrl.replace("127.0.0.1", "localhost");
  await system.createUser({ email, name: "Pia Passkey", permissions: ["signin"] });
});

afterAll(async () => {
  await browser?.close();
  await system?.close();
});

/** A stored credential of Chromium's virtual authenticator, as the DevTools protocol gives and takes it. */
interface VirtualCredential {
  credentialId: string;
  isResidentCredential: boolean;
  rpId?: string;
  privateKey: string;
  userHandle?: string;
  signCount: number;
}

/** A platform authenticator with user verification that answers at once (no one to touch it). */
async function addAuthenticator(cdp: CDPSession): Promise<string> {
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  return authenticatorId;
}

/**
 * A page whose pages' CSP is enforced (the passkey script must run under it),
 * with Chromium's virtual authenticator switched on through the DevTools protocol.
 */
async function pageWithAuthenticator(): Promise<{ page: Page; cdp: CDPSession; authenticatorId: string }> {
  const context = await browser.newContext({ viewport: { width: 1024, height: 800 } });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send("WebAuthn.enable", { enableUI: false });
  return { page, cdp, authenticatorId: await addAuthenticator(cdp) };
}

async function credentialsOf(cdp: CDPSession, authenticatorId: string): Promise<VirtualCredential[]> {
  const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
  return credentials as VirtualCredential[];
}

/** Swaps the authenticator for a copy holding `credential` with another signature counter (a clone, or a later use). */
async function replaceAuthenticator(cdp: CDPSession, authenticatorId: string, credential: VirtualCredential, signCount: number): Promise<string> {
  await cdp.send("WebAuthn.removeVirtualAuthenticator", { authenticatorId });
  const copy = await addAuthenticator(cdp);
  await cdp.send("WebAuthn.addCredential", { authenticatorId: copy, credential: { ...credential, signCount } });
  return copy;
}

async function signOut(page: Page): Promise<void> {
  await page.getByRole("button", { name: "Sign out", exact: true }).click();
  await page.waitForURL((url) => url.pathname === "/sign-in");
}

async function signInWithPasswordAndPasskey(page: Page): Promise<void> {
  await page.goto(`${signonUrl}/sign-in`);
  await fillSignIn(page, email, password);
  await page.waitForURL((url) => url.pathname === "/sign-in/two-step");
  await page.getByRole("button", { name: "Use a passkey" }).click();
}

async function signInWithPasskeyAlone(page: Page): Promise<void> {
  await page.goto(`${signonUrl}/sign-in`);
  await page.getByRole("button", { name: "Sign in with a passkey" }).click();
}

const refused = "That passkey could not sign you in";

describe("passkeys in the browser", () => {
  // One person and one browser through the steps in order: each step starts where the one before ended.
  let page: Page;
  let cdp: CDPSession;
  let authenticatorId: string;

  beforeAll(async () => {
    ({ page, cdp, authenticatorId } = await pageWithAuthenticator());
  });

  it("registers a passkey from the account page, named, never used yet", async () => {
    await page.goto(`${signonUrl}/sign-in`);
    await fillSignIn(page, email, password);
    await page.waitForURL(`${signonUrl}/`);
    await page.getByRole("link", { name: "Your account" }).click();
    await page.getByRole("link", { name: "add or remove passkeys" }).click();
    await page.waitForURL(`${signonUrl}/account/passkeys`);
    await checkPage(page, "passkeys-none");
    await page.getByLabel("Name").fill("This laptop");
    await page.getByRole("button", { name: "Add a passkey" }).click();
    await expect.poll(() => page.getByRole("status").first().textContent()).toContain("The passkey “This laptop” is added");
    await expect.poll(() => page.locator("#passkeys tbody tr").first().innerText()).toMatch(/This laptop\s+\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC\s+Never/);
    await checkPage(page, "passkeys-one");
    const [credential] = await credentialsOf(cdp, authenticatorId);
    expect(credential?.isResidentCredential).toBe(true);
  });

  it("signs in with the passkey as the second factor after the password", async () => {
    await signOut(page);
    await signInWithPasswordAndPasskey(page);
    await page.waitForURL(`${signonUrl}/`);
    await page.goto(`${signonUrl}/account/passkeys`);
    await expect.poll(() => page.locator("#passkeys tbody tr").first().innerText()).not.toContain("Never");
  });

  it("signs in with the passkey alone from the sign-in page", async () => {
    await signOut(page);
    await signInWithPasskeyAlone(page);
    await page.waitForURL(`${signonUrl}/`);
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Your applications");
    await signOut(page);
  });

  it("shows an administrator the person's passkeys on their user page", async () => {
    const adminEmail = "ada-admin@example.org";
    await system.createUser({ email: adminEmail, name: "Ada Admin", role: "admin" });
    const context = await browser.newContext({ viewport: { width: 1024, height: 800 } });
    try {
      const admin = await context.newPage();
      await admin.goto(`${signonUrl}/sign-in`);
      await fillSignIn(admin, adminEmail, password);
      await admin.waitForURL(`${signonUrl}/`);
      await admin.goto(`${signonUrl}/users?q=${encodeURIComponent(email)}`);
      await admin.getByRole("link", { name: "Pia Passkey" }).click();
      await expect.poll(() => admin.getByRole("heading", { level: 1 }).textContent()).toBe("Pia Passkey");
      await expect.poll(() => admin.locator("#passkey-count").innerText()).toMatch(/^1\b/);
      // Used to sign in by now: a time in both columns.
      await expect.poll(() => admin.locator("#passkey-list tbody tr").first().innerText()).toMatch(/This laptop\s+\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC\s+\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/);
      await checkPage(admin, "user-passkeys");
    } finally {
      await context.close();
    }
  });

  it("refuses a cloned authenticator: the same key with a counter that went back", async () => {
    const used = (await credentialsOf(cdp, authenticatorId))[0];
    if (!used) throw new Error("the virtual authenticator lost its credential");
    expect(used.signCount).toBeGreaterThan(1);
    const clone = await replaceAuthenticator(cdp, authenticatorId, used, 0);
    await signInWithPasskeyAlone(page);
    await expect.poll(() => page.getByRole("alert").textContent()).toContain(refused);
    expect(new URL(page.url()).pathname).toBe("/sign-in/passkey");
    await signInWithPasswordAndPasskey(page);
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("That passkey could not be accepted");
    // The real authenticator again, its counter ahead of every use so far.
    authenticatorId = await replaceAuthenticator(cdp, clone, used, used.signCount + 10);
  });

  it("refuses a removed passkey, and the password alone signs in again", async () => {
    await signInWithPasswordAndPasskey(page);
    await page.waitForURL(`${signonUrl}/`);
    await page.goto(`${signonUrl}/account/passkeys`);
    await page.getByRole("link", { name: "Remove This laptop" }).click();
    await checkPage(page, "passkey-remove");
    await page.getByRole("button", { name: "Remove “This laptop”" }).click();
    await expect.poll(() => page.getByRole("status").first().textContent()).toContain("The passkey “This laptop” is removed");
    await expect.poll(() => page.locator("#no-passkeys").textContent()).toContain("You have no passkeys yet");

    await signOut(page);
    await signInWithPasskeyAlone(page);
    await expect.poll(() => page.getByRole("alert").textContent()).toContain(refused);
    expect((await credentialsOf(cdp, authenticatorId)).length).toBe(1);

    await page.goto(`${signonUrl}/sign-in`);
    await fillSignIn(page, email, password);
    await page.waitForURL(`${signonUrl}/`);
  });
});
