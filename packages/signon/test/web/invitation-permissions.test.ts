import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { auditEvents, invitationPermissions, pushDeliveries } from "../../src/db/schema.js";
import { listPermissionsOfUser } from "../../src/repositories/user-form-choices.js";
import { findUserByEmail } from "../../src/repositories/users.js";
import { InjectBrowser } from "../support/browser.js";
import { createApp } from "../support/factories.js";
import { useTestSignon } from "../support/signon.js";
import { linkMailedTo, strongPassword, textOf } from "./account-support.js";
import { createTestOrganisation, signedInAs, submitMany } from "./users-support.js";

const { signon } = await useTestSignon();
const { app, ctx } = signon;

describe("invitations with permissions", () => {
  it("offers the grid of what the actor may grant, stores the ticked boxes and grants them, pushed, when the invitation is accepted", async () => {
    const { application } = await createApp(ctx, { name: "Publisher", permissions: ["editor", "admin"], pushBaseUrl: "https://publisher.example/auth/gds/api" });
    const { browser, uid: adminUid } = await signedInAs(app, ctx, "admin");
    const form = await browser.get("/users/new");
    expect(form.body).toContain("<legend>Publisher</legend>");
    expect(form.body).toContain(`value="${application.id}:editor"`);
    expect(textOf(form)).toContain("The link works once, for 14 days.");

    const response = await submitMany(app, browser, "/users/new", "/users/new", {
      name: "Ada Lovelace",
      email: "ada@example.org",
      role: "normal",
      organisation: "",
      permissions: [`${application.id}:signin`, `${application.id}:editor`],
    });
    expect(response.statusCode).toBe(303);
    const invited = await findUserByEmail(ctx.db, "ada@example.org");
    if (!invited) throw new Error("not invited");
    // Nothing is granted before the invitation is accepted.
    expect(await listPermissionsOfUser(ctx.db, invited.uid)).toEqual([]);
    expect(await ctx.db.select({ permission: invitationPermissions.permission }).from(invitationPermissions)).toEqual(
      expect.arrayContaining([{ permission: "signin" }, { permission: "editor" }]),
    );
    const [invitedEvent] = await ctx.db.select().from(auditEvents).where(eq(auditEvents.action, "user_invited"));
    expect(invitedEvent?.details).toEqual({ role: "normal", resent: false, permissions: ["Publisher: editor", "Publisher: signin"].sort() });

    expect(textOf(await browser.get(`/users/${invited.uid}`))).toContain("Granted when the invitation is accepted: Publisher: editor, Publisher: signin.");

    const link = await linkMailedTo(ctx, "ada@example.org", "/invitations/");
    const password = strongPassword();
    const accepted = await new InjectBrowser(app).submit(link, link, { password, confirmation: password });
    expect(accepted.statusCode).toBe(303);
    expect((await listPermissionsOfUser(ctx.db, invited.uid)).map((row) => row.permission).sort()).toEqual(["editor", "signin"]);
    expect(await ctx.db.select().from(invitationPermissions)).toEqual([]);
    const granted = await ctx.db.select().from(auditEvents).where(eq(auditEvents.action, "permissions_granted"));
    expect(granted).toEqual([expect.objectContaining({ actorUid: adminUid, subjectUid: invited.uid, applicationId: application.id, details: { permissions: ["editor", "signin"] } })]);
    expect(await ctx.db.select({ kind: pushDeliveries.kind, applicationId: pushDeliveries.applicationId }).from(pushDeliveries)).toEqual([
      { kind: "update", applicationId: application.id },
    ]);
  });

  it("shows organisation admins only the delegatable permissions, and refuses any other box, creating nobody", async () => {
    const { application } = await createApp(ctx, { name: "Whitehall", permissions: ["editor", "admin"], delegatablePermissions: ["signin", "editor"] });
    await createApp(ctx, { name: "Closed", permissions: ["admin"] });
    const organisation = await createTestOrganisation(ctx);
    const { browser } = await signedInAs(app, ctx, "organisation_admin", organisation.id, { Whitehall: ["signin"], Closed: ["signin"] });
    const form = await browser.get("/users/new");
    expect(form.body).toContain(`value="${application.id}:editor"`);
    expect(form.body).not.toContain(`value="${application.id}:admin"`);
    expect(form.body).not.toContain("<legend>Closed</legend>");

    const refused = await submitMany(app, browser, "/users/new", "/users/new", {
      name: "Grace",
      email: "grace@example.org",
      role: "normal",
      permissions: [`${application.id}:admin`],
    });
    expect(refused.statusCode).toBe(400);
    expect(textOf(refused)).toContain("You cannot grant admin on Whitehall");
    const unknown = await submitMany(app, browser, "/users/new", "/users/new", { name: "Grace", email: "grace@example.org", role: "normal", permissions: ["nope:signin"] });
    expect(unknown.statusCode).toBe(400);
    expect(textOf(unknown)).toContain("Choose permissions from the grid only");
    expect(await findUserByEmail(ctx.db, "grace@example.org")).toBeNull();

    const allowed = await submitMany(app, browser, "/users/new", "/users/new", { name: "Grace", email: "grace@example.org", role: "normal", permissions: [`${application.id}:editor`] });
    expect(allowed.statusCode).toBe(303);
  });
});
