import { beforeAll, describe, expect, it } from "vitest";
import { signedInBrowser, type InjectBrowser } from "../support/browser.js";
import { createApp, createUser, defaultPassword } from "../support/factories.js";
import { exchangeCode, getUserJson, obtainCode } from "../support/flow.js";
import { signonBehindFaultProxy } from "../support/signon-behind-proxy.js";

// Sign-on with its primary behind a proxy that can refuse it, and a read replica: a second pool straight to the
// database, which the proxy does not touch, and which can be held behind the primary.
const { app, direct, proxy, reads, replica } = await signonBehindFaultProxy({ replica: true });
const primaryReads = () => reads?.routed().get("primary") ?? 0;

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

  it("reads the lists of a browser that has just changed something on a replica that has replayed the change, and on the primary until one has", async () => {
    const person = await createUser(direct.ctx, { name: "Suspended Meanwhile" });
    changer = await signedInBrowser(app, (await createUser(direct.ctx, { role: "superadmin" })).email, defaultPassword);
    await replica?.hold();
    await reads?.check();
    const posted = await changer.submit(`/users/${person.uid}`, `/users/${person.uid}/suspend`, { reason: "Left the team", confirm: "yes" });
    expect(posted.statusCode).toBe(303);
    const mark = posted.cookies.find((cookie) => cookie.name === "signon_recent_write");
    // The primary's WAL position once the change had committed, kept for DATABASE_READ_MAX_LAG_MS (5,000 by
    // default) and two of the seconds between measures of a replica's lag.
    expect(mark).toMatchObject({ value: expect.stringMatching(/^[0-9A-F]+\/[0-9A-F]+$/), maxAge: 7, path: "/", httpOnly: true, sameSite: "Lax" });

    // The replica has not replayed it: the primary serves the lists, and they show the change.
    await reads?.check();
    let before = primaryReads();
    for (const url of lists) expect((await changer.get(url)).statusCode, url).toBe(200);
    expect(primaryReads() - before).toBe(lists.length);
    expect((await changer.get("/users?status=suspended")).body).toContain("Suspended Meanwhile");
    // Another administrator's lists still read the replica.
    before = primaryReads();
    for (const url of lists) expect((await admin.get(url)).statusCode, url).toBe(200);
    expect(primaryReads()).toBe(before);

    // Once the replica's check finds the change replayed, it serves the changer's lists too.
    replica?.release();
    await reads?.check();
    before = primaryReads();
    for (const url of lists) expect((await changer.get(url)).statusCode, url).toBe(200);
    expect(primaryReads()).toBe(before);

    // A change that fails leaves no mark.
    const refused = await admin.postForm(`/users/${person.uid}/suspend`, { _csrf: "forged", reason: "x", confirm: "yes" });
    expect(refused.statusCode).toBeGreaterThanOrEqual(400);
    expect(refused.cookies.map((cookie) => cookie.name)).not.toContain("signon_recent_write");
  });

  it("reads on the primary for a mark that names no position (the primary's could not be read), or one no replica has reached", async () => {
    const planted = await signedInBrowser(app, (await createUser(direct.ctx, { role: "superadmin" })).email, defaultPassword);
    // A forged position far ahead of the primary only sends this browser's own reads to the primary.
    for (const value of ["primary", "x/y", "0/G", "-1/0", "1".repeat(40), "FFFFFFFF/FFFFFFFF"]) {
      planted.setCookie("signon_recent_write", value);
      const before = primaryReads();
      expect((await planted.get("/users")).statusCode, value).toBe(200);
      expect(primaryReads() - before, value).toBe(1);
    }
    planted.setCookie("signon_recent_write", "0/0");
    const before = primaryReads();
    expect((await planted.get("/users")).statusCode).toBe(200);
    expect(primaryReads()).toBe(before);
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
