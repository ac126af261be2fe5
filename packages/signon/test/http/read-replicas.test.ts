import { beforeAll, describe, expect, it } from "vitest";
import { signedInBrowser, type InjectBrowser } from "../support/browser.js";
import { createApp, createUser, defaultPassword } from "../support/factories.js";
import { exchangeCode, getUserJson, obtainCode } from "../support/flow.js";
import { signonBehindFaultProxy } from "../support/signon-behind-proxy.js";

// Sign-on with its primary behind a proxy that can refuse it, and a read replica: a second pool straight to the
// database, which the proxy does not touch.
const { app, direct, proxy, reads } = await signonBehindFaultProxy({ replica: true });

const lists = ["/users", "/users.csv", "/applications", "/api-users", "/organisations"];

describe("Sign-on's administrator lists with a read replica", () => {
  let admin: InjectBrowser;
  /** A browser that has just changed something. */
  let changer: InjectBrowser;
  let client: Awaited<ReturnType<typeof createApp>>;
  let accessToken: string;
  let code: string;

  beforeAll(async () => {
    client = await createApp(direct.ctx, { name: "Replicated" });
    const superadmin = await createUser(direct.ctx, { role: "superadmin", name: "Sam Superadmin" });
    await createUser(direct.ctx, { name: "Listed Person", permissions: { Replicated: ["signin"] } });
    const user = await createUser(direct.ctx, { permissions: { Replicated: ["signin"] } });
    admin = await signedInBrowser(app, superadmin.email, defaultPassword);
    accessToken = (await exchangeCode(app, client, (await obtainCode(app, client, user.email)).code)).json<{ access_token: string }>().access_token;
    code = (await obtainCode(app, client, user.email)).code;
  });

  it("sends the lists, users.csv and the usage page to the replica", async () => {
    const before = reads?.routed().get("primary") ?? 0;
    for (const url of [...lists, `/applications/${client.application.id}/usage`]) expect((await admin.get(url)).statusCode, url).toBe(200);
    const routed = Object.fromEntries(reads?.routed() ?? []);
    expect(routed["primary"]).toBe(before);
    expect(Object.values(routed).reduce((sum, count) => sum + count, 0) - before).toBeGreaterThanOrEqual(lists.length + 1);
  });

  it("reads the lists of a browser that has just changed something on the primary, for as long as a replica may lag", async () => {
    const person = await createUser(direct.ctx, { name: "Suspended Meanwhile" });
    changer = await signedInBrowser(app, (await createUser(direct.ctx, { role: "superadmin" })).email, defaultPassword);
    const posted = await changer.submit(`/users/${person.uid}`, `/users/${person.uid}/suspend`, { reason: "Left the team", confirm: "yes" });
    expect(posted.statusCode).toBe(303);
    const mark = posted.cookies.find((cookie) => cookie.name === "signon_recent_write");
    // DATABASE_READ_MAX_LAG_MS (5,000 by default) and two of the seconds between measures of a replica's lag.
    expect(mark).toMatchObject({ value: "1", maxAge: 7, path: "/", httpOnly: true, sameSite: "Lax" });

    const primaryBefore = reads?.routed().get("primary") ?? 0;
    for (const url of lists) expect((await changer.get(url)).statusCode, url).toBe(200);
    expect((reads?.routed().get("primary") ?? 0) - primaryBefore).toBe(lists.length);
    // Another administrator's lists still read the replica.
    for (const url of lists) expect((await admin.get(url)).statusCode, url).toBe(200);
    expect((reads?.routed().get("primary") ?? 0) - primaryBefore).toBe(lists.length);
    // A change that fails leaves no mark.
    const refused = await admin.postForm(`/users/${person.uid}/suspend`, { _csrf: "forged", reason: "x", confirm: "yes" });
    expect(refused.statusCode).toBeGreaterThanOrEqual(400);
    expect(refused.cookies.map((cookie) => cookie.name)).not.toContain("signon_recent_write");
  });

  describe("while the primary refuses connections", () => {
    beforeAll(async () => {
      proxy.cutAll();
      await proxy.refuse();
    });

    it("still shows every list to a signed-in administrator, from the replica", async () => {
      const page = await admin.get("/users");
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain("Listed Person");
      for (const url of lists) expect((await admin.get(url)).statusCode, url).toBe(200);
      // The browser that changed something a moment ago too: with the primary away, the replica's list is the one there is.
      for (const url of lists) expect((await changer.get(url)).statusCode, url).toBe(200);
    });

    it("answers every other page, /token and /user.json 503: sessions, tokens and codes are the primary's", async () => {
      expect((await admin.get("/account")).statusCode).toBe(503);
      expect((await admin.get(`/applications/${client.application.id}`)).statusCode).toBe(503);
      expect((await exchangeCode(app, client, code)).statusCode).toBe(503);
      expect((await getUserJson(app, accessToken)).statusCode).toBe(503);
    });

    it("sends a browser without a session to sign in, which waits for the primary", async () => {
      const response = await app.inject({ method: "GET", url: "/users" });
      expect(response.statusCode).toBe(303);
      expect(response.headers.location).toBe("/sign-in?return_to=%2Fusers");
    });
  });
});
