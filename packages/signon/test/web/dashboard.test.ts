import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { applications } from "../../src/db/schema.js";
import { InjectBrowser, signedInBrowser } from "../support/browser.js";
import { createApp, createUser, defaultPassword } from "../support/factories.js";
import { useTestSignon } from "../support/signon.js";
import { textOf } from "./account-support.js";

const { database, signon } = await useTestSignon();

describe("GET /", () => {
  it("sends an anonymous visitor to sign in", async () => {
    const response = await new InjectBrowser(signon.app).get("/");
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe("/sign-in?return_to=%2F");
  });

  it("links each application the person may sign in to, and only those", async () => {
    await createApp(signon.ctx, { name: "Publisher", homeUri: "https://publisher.example/" });
    await createApp(signon.ctx, { name: "Whitehall" });
    const { application: retired } = await createApp(signon.ctx, { name: "Old Tool", homeUri: "https://old.example/" });
    await createApp(signon.ctx, { name: "Reports", homeUri: "https://reports.example/" });
    const user = await createUser(signon.ctx, {
      permissions: { Publisher: ["signin", "admin"], Whitehall: ["signin"], "Old Tool": ["signin"], Reports: ["admin"] },
    });
    await database.db.update(applications).set({ retired: true }).where(eq(applications.id, retired.id));

    const page = await (await signedInBrowser(signon.app, user.email, defaultPassword)).get("/");
    expect(page.statusCode).toBe(200);
    expect(page.headers["cache-control"]).toBe("no-store");
    expect(page.body).toContain('<a href="https://publisher.example/">Publisher</a>');
    expect(textOf(page)).toContain("Whitehall (no home page set)");
    expect(page.body).not.toContain("Old Tool");
    expect(page.body).not.toContain("Reports");
    expect(page.body).toContain('<a href="/" aria-current="page">Dashboard</a>');
  });

  it("says so when the person has no application", async () => {
    const user = await createUser(signon.ctx);
    const page = await (await signedInBrowser(signon.app, user.email, defaultPassword)).get("/");
    expect(textOf(page)).toContain("You do not have access to any application yet");
  });
});

describe("the site icon", () => {
  it("is linked from every page and served at /favicon.svg and /favicon.ico without a session", async () => {
    const page = await new InjectBrowser(signon.app).get("/sign-in");
    expect(page.body).toContain('<link rel="icon" href="/favicon.svg" type="image/svg+xml">');
    for (const path of ["/favicon.svg", "/favicon.ico"]) {
      const icon = await signon.app.inject({ method: "GET", url: path });
      expect(icon.statusCode).toBe(200);
      expect(icon.headers["content-type"]).toMatch(/^image\/svg\+xml/);
      expect(icon.headers["cache-control"]).toBe("public, max-age=86400");
      expect(icon.body).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    }
  });
});
