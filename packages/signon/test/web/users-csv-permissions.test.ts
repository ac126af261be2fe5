import { parse } from "csv-parse/sync";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { applications } from "../../src/db/schema.js";
import { createApp, createUser } from "../support/factories.js";
import { useTestSignon } from "../support/signon.js";
import { createTestOrganisation, signedInAs } from "./users-support.js";

const { signon } = await useTestSignon();
const { app, ctx } = signon;

describe("GET /users.csv: a permissions column per application", () => {
  it("has one column per application people use, headed by its name, with the person's permissions joined by ';'", async () => {
    await createApp(ctx, { name: "Publisher", permissions: ["admin", "editor"] });
    await createApp(ctx, { name: "=Formula app" });
    await createApp(ctx, { name: "Search API", apiOnly: true });
    const retired = await createApp(ctx, { name: "Old" });
    await ctx.db.update(applications).set({ retired: true }).where(eq(applications.id, retired.application.id));
    await createUser(ctx, { email: "ada@example.org", permissions: { Publisher: ["signin", "editor", "admin"], "=Formula app": ["signin"] } });
    await createUser(ctx, { email: "bob@example.org", permissions: { Publisher: ["signin"] } });
    await createUser(ctx, { email: "cy@example.org" });

    const { browser, email } = await signedInAs(app, ctx, "superadmin");
    const rows = parse((await browser.get("/users.csv")).body) as string[][];
    expect(rows[0]).toEqual(["name", "email", "role", "organisation", "status", "last_sign_in", "created_at", "'=Formula app", "Publisher"]);
    const byEmail = new Map(rows.slice(1).map((row) => [row[1], row.slice(7)]));
    expect(Object.fromEntries(byEmail)).toEqual({
      "ada@example.org": ["signin", "admin;editor;signin"],
      "bob@example.org": ["", "signin"],
      "cy@example.org": ["", ""],
      [email]: ["", ""],
    });
  });

  it("for an organisation admin, has columns only for applications where they may grant something, with only those permissions", async () => {
    await createApp(ctx, { name: "Rota", permissions: ["planner", "viewer"], delegatablePermissions: ["viewer"] });
    await createApp(ctx, { name: "Ledger", permissions: ["viewer"] });
    const organisation = await createTestOrganisation(ctx);
    await createUser(ctx, { email: "member@example.org", organisationId: organisation.id, permissions: { Rota: ["signin", "planner", "viewer"], Ledger: ["viewer"] } });
    const { browser } = await signedInAs(app, ctx, "organisation_admin", organisation.id, { Rota: ["signin"], Ledger: ["signin"] });
    const rows = parse((await browser.get("/users.csv")).body) as string[][];
    expect(rows[0]?.slice(7)).toEqual(["Rota"]);
    expect(rows.find((row) => row[1] === "member@example.org")?.slice(7)).toEqual(["viewer"]);
  });
});
