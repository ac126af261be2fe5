import { desc, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createApiUser, createUser as createPerson } from "../../src/accounts/manage-users.js";
import { createOrganisation } from "../../src/accounts/organisations.js";
import { registerApplication } from "../../src/applications/register-application.js";
import { auditEvents } from "../../src/db/schema.js";
import { useTestSignon } from "../support/signon.js";
import { signedInAs } from "./users-support.js";

const { signon } = await useTestSignon();
const { app, ctx } = signon;

/** Actor, IP address and user agent of the latest event of this kind. */
async function latest(action: string) {
  const [event] = await ctx.db
    .select({ actorUid: auditEvents.actorUid, ip: auditEvents.ip, userAgent: auditEvents.userAgent })
    .from(auditEvents)
    .where(eq(auditEvents.action, action))
    .orderBy(desc(auditEvents.id))
    .limit(1);
  expect(event, action).toBeDefined();
  return event;
}

describe("creation events of the web pages", () => {
  it("record who created the user, API user, organisation and application, and from which IP address and user agent", async () => {
    const { browser, uid: actorUid } = await signedInAs(app, ctx, "superadmin");
    const from = { actorUid, ip: "127.0.0.1", userAgent: "lightMyRequest" };

    const invited = await browser.submit("/users/new", "/users/new", { name: "Grace Hopper", email: "grace@example.org", role: "normal", organisation: "" });
    expect(invited.statusCode).toBe(303);
    expect(await latest("user_created")).toEqual(from);

    const apiUser = await browser.submit("/api-users/new", "/api-users/new", { name: "Publishing robot", email: "robot@example.org" });
    expect(apiUser.statusCode).toBe(303);
    expect(await latest("api_user_created")).toEqual(from);

    const organisation = await browser.submit("/organisations/new", "/organisations/new", { name: "Ministry of Tests", slug: "ministry-of-tests", content_id: "" });
    expect(organisation.statusCode).toBe(303);
    expect(await latest("organisation_created")).toEqual(from);

    const application = await browser.submit("/applications/new", "/applications/new", {
      name: "Publisher",
      redirect_uris: "https://publisher.example.org/auth/callback",
      home_uri: "",
      push_base_url: "",
      permissions: "editor",
      delegatable_permissions: "",
    });
    expect(application.statusCode).toBe(303);
    expect(await latest("application_created")).toEqual(from);
  });

  it("record no origin when made outside a request, as from the command line", async () => {
    const none = { actorUid: null, ip: null, userAgent: null };
    await createPerson(ctx, { email: "cli@example.org", name: "From the command line" });
    expect(await latest("user_created")).toEqual(none);
    await createApiUser(ctx, { email: "cli-robot@example.org", name: "Robot" });
    expect(await latest("api_user_created")).toEqual(none);
    await createOrganisation(ctx, { slug: "cli-organisation", name: "CLI organisation" });
    expect(await latest("organisation_created")).toEqual(none);
    await registerApplication(ctx, { name: "CLI application", redirectUris: ["https://cli.example.org/callback"] });
    expect(await latest("application_created")).toEqual(none);
  });
});
