import { describe, expect, it } from "vitest";
import { createUser } from "../support/factories.js";
import { useTestSignon } from "../support/signon.js";
import { listedNames, signedInAs } from "./users-support.js";

const { signon } = await useTestSignon();
const { app, ctx } = signon;

describe("GET /assets/signon.css", () => {
  it("serves the pages' stylesheet, cached for an hour", async () => {
    const response = await app.inject({ method: "GET", url: "/assets/signon.css" });
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-type"]).toBe("text/css; charset=utf-8");
    expect(response.headers["cache-control"]).toBe("public, max-age=3600");
  });

  it("lets table cells wrap a long unbroken value, so that no column is pushed off the screen", async () => {
    const css = (await app.inject({ method: "GET", url: "/assets/signon.css" })).body;
    // overflow-wrap: anywhere also narrows the cell's smallest width, so the table can shrink to the screen;
    // max-width stops one long value from taking the other columns' room, min-width stops them from being squeezed.
    expect(css).toContain("th, td { overflow-wrap: anywhere; min-width: 5rem; max-width: 24rem; }");
    expect(css).toMatch(/\.tag \{[^}]*white-space: nowrap;/);
    expect(css).toContain(".table-wrap { overflow-x: auto;");
    expect(css).toMatch(/main \{[^}]*overflow-wrap: break-word;/);
  });
});

describe("pages", () => {
  it("link the stylesheet and carry no inline style, which the CSP refuses", async () => {
    const signIn = await app.inject({ method: "GET", url: "/sign-in" });
    expect(signIn.body).toContain('<link rel="stylesheet" href="/assets/signon.css">');
    expect(signIn.headers["content-security-policy"]).toContain("style-src 'self';");

    const longName = "W".repeat(200);
    await createUser(ctx, { name: longName });
    const { browser } = await signedInAs(app, ctx, "superadmin");
    const users = await browser.get("/users");
    expect(listedNames(users)).toContain(longName);
    expect(users.body).toContain('<div class="table-wrap">');
    expect(users.body).toContain('<link rel="stylesheet" href="/assets/signon.css">');
    expect(users.body).not.toMatch(/<style|style="/);
  });
});
