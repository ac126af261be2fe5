import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CookieBrowser } from "./support/browser.js";
import { rubyMissing, rubyPackages } from "./support/ruby.js";
import { appName, startRubySystem, type RubySystem } from "./support/system.js";

const missing = rubyMissing();
if (missing !== null) {
  const line = `ruby-client: skipped, ${missing} (install with: apt-get install ${rubyPackages})`;
  if (process.env.CI === "true") throw new Error(`${line}; CI must run these tests`);
  console.warn(line);
}

const password = "Ruby client test pass 42!";

describe.skipIf(missing !== null)("a gds-sso style Ruby application (OmniAuth OAuth2, oauth2 gem) against Sign-on", () => {
  let system: RubySystem;
  let person: { uid: string; email: string };
  let organisation: { slug: string; content_id: string };
  const browser = new CookieBrowser({ email: "grace@example.org", password });

  beforeAll(async () => {
    system = await startRubySystem();
    organisation = (await system.signon("organisations", "create", "--slug", "editors", "--name", "Editors")) as typeof organisation;
    person = (await system.signon(
      "users", "create", "--email", "grace@example.org", "--name", "Grace Hopper", "--password", password, "--organisation", "editors",
    )) as typeof person;
    await system.signon("permissions", "grant", "--email", person.email, "--app", appName, "--permissions", "signin,editor");
  });
  afterAll(async () => {
    await system.close();
  });

  /** What the application holds about a user, as its push receivers and sign-in left it. */
  async function storedUser(uid: string): Promise<Record<string, unknown>> {
    const response = await fetch(`${system.rubyUrl}/inspect/users/${uid}`);
    return (await response.json()) as Record<string, unknown>;
  }

  it("signs a person in through Sign-on's form; the application maps the user as gds-sso does", async () => {
    const { response, body, visited } = await browser.visit(`${system.rubyUrl}/`);

    expect(visited.some((url) => url.startsWith(`${system.signonUrl}/oauth/authorize?`) && url.includes("code_challenge_method=S256"))).toBe(true);
    const callback = visited.find((url) => url.startsWith(`${system.rubyUrl}/auth/gds/callback?`)) ?? "";
    expect(new URL(callback).searchParams.get("iss")).toBe(system.signonUrl);
    expect(response.status).toBe(200);
    expect(JSON.parse(body)).toEqual({
      uid: person.uid,
      name: "Grace Hopper",
      email: "grace@example.org",
      permissions: ["editor", "signin"],
      organisation_slug: "editors",
      organisation_content_id: organisation.content_id,
      disabled: false,
      remotely_signed_out: false,
    });
  });

  it("refreshes the signed-in person's token with the oauth2 gem, and the new token reads /user.json", async () => {
    const response = await browser.request(`${system.rubyUrl}/session/refresh`, { method: "POST" });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ token_changed: true, refresh_token_changed: true, expires_in: 7200, user: { uid: person.uid } });
  });

  it("accepts an API client's bearer token, checked through /user.json?client_id=, and refuses any other", async () => {
    const api = await system.signon("api-users", "create", "--name", "Publishing API", "--email", "publishing-api@example.org");
    await system.signon("permissions", "grant", "--email", "publishing-api@example.org", "--app", appName, "--permissions", "signin");
    const { access_token: token } = await system.signon("tokens", "issue", "--email", "publishing-api@example.org", "--app", appName);

    const accepted = await fetch(`${system.rubyUrl}/api/user`, { headers: { authorization: `Bearer ${String(token)}` } });
    expect(accepted.status).toBe(200);
    expect(await accepted.json()).toMatchObject({ uid: api["uid"], email: "publishing-api@example.org", permissions: ["signin"] });

    await system.signon("apps", "create", "--name", "Other app", "--redirect-uri", "http://127.0.0.1:9/auth/gds/callback");
    await system.signon("permissions", "grant", "--email", "publishing-api@example.org", "--app", "Other app", "--permissions", "signin");
    const { access_token: otherAppsToken } = await system.signon("tokens", "issue", "--email", "publishing-api@example.org", "--app", "Other app");
    for (const bearer of ["0".repeat(64), String(otherAppsToken)]) {
      const refused = await fetch(`${system.rubyUrl}/api/user`, { headers: { authorization: `Bearer ${bearer}` } });
      expect(refused.status).toBe(401);
    }
  });

  it("receives Sign-on's permission push, authenticated as gds-sso requires", async () => {
    await system.signon("permissions", "grant", "--email", person.email, "--app", appName, "--permissions", "admin");
    await expect.poll(async () => (await storedUser(person.uid))["permissions"], { timeout: 15_000 }).toEqual(["admin", "editor", "signin"]);
  });

  it("refuses a push from a caller without user_update_permission, or without a token", async () => {
    await system.signon("api-users", "create", "--name", "Intruder", "--email", "intruder@example.org");
    await system.signon("permissions", "grant", "--email", "intruder@example.org", "--app", appName, "--permissions", "signin");
    const { access_token: token } = await system.signon("tokens", "issue", "--email", "intruder@example.org", "--app", appName);
    const forged = JSON.stringify({ user: { uid: person.uid, name: "Forged", email: "forged@example.org", permissions: ["signin", "admin"] } });

    const withoutPermission = await fetch(`${system.rubyUrl}/auth/gds/api/users/${person.uid}`, {
      method: "PUT",
      headers: { authorization: `Bearer ${String(token)}`, "content-type": "application/json" },
      body: forged,
    });
    expect(withoutPermission.status).toBe(403);
    const withoutToken = await fetch(`${system.rubyUrl}/auth/gds/api/users/${person.uid}/reauth`, { method: "POST" });
    expect(withoutToken.status).toBe(401);
    expect(await storedUser(person.uid)).toMatchObject({ name: "Grace Hopper", remotely_signed_out: false });
  });

  it("signs the person out of the application when Sign-on suspends them", async () => {
    expect((await browser.request(`${system.rubyUrl}/`)).status).toBe(200);
    await system.signon("users", "suspend", "--email", person.email, "--reason", "Left the team");
    await expect
      .poll(async () => storedUser(person.uid), { timeout: 15_000 })
      .toMatchObject({ disabled: true, remotely_signed_out: true });

    const home = await browser.request(`${system.rubyUrl}/`);
    expect(home.status).toBe(302);
    expect(new URL(home.headers.get("location") ?? "", system.rubyUrl).pathname).toBe("/auth/gds");
  });
});
