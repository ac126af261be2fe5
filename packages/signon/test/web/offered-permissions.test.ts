import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { applications } from "../../src/db/schema.js";
import { signedInBrowser } from "../support/browser.js";
import { createApp, createUser, defaultPassword } from "../support/factories.js";
import { useTestSignon } from "../support/signon.js";
import { createTestOrganisation, signedInAs } from "./users-support.js";

const { signon } = await useTestSignon();
const { app, ctx } = signon;

/**
 * Four applications: one people use, with a permission kept out of the web
 * interface and delegatable ones; one with nothing delegatable; an API-only
 * one and a retired one, both with `signin` delegatable.
 */
async function applicationsOfEveryKind() {
  const live = await createApp(ctx, { name: "Live", permissions: ["editor", "approver", "auditor"], delegatablePermissions: ["editor", "approver"], permissionsNotGrantableInUi: ["approver"] });
  const undelegated = await createApp(ctx, { name: "Undelegated", permissions: ["viewer"] });
  const apiOnly = await createApp(ctx, { name: "Machine", delegatablePermissions: ["signin"], apiOnly: true });
  const retired = await createApp(ctx, { name: "Old", delegatablePermissions: ["signin"] });
  await ctx.db.update(applications).set({ retired: true }).where(eq(applications.id, retired.application.id));
  const names = new Map([live, undelegated, apiOnly, retired].map(({ application }) => [application.id, application.name]));
  return { live, apiOnly, names };
}

/** The `<application>:<permission>` boxes or options of a page, by application name, sorted. */
function offered(body: string, names: Map<string, string>, pattern: RegExp): string[] {
  return [...body.matchAll(pattern)]
    .map((match) => match[1] as string)
    .filter((value) => names.has(value.split(":")[0] as string))
    .map((value) => `${names.get(value.split(":")[0] as string)}:${value.split(":")[1]}`)
    .sort();
}
const boxes = /<input[^>]*type="checkbox"[^>]*value="([0-9a-f-]{36}:[^"]+)"/g;
const options = /<option value="([0-9a-f-]{36}:[^"]+)"/g;

describe("what every permission grid and filter offers", () => {
  it("follows one rule: no API-only or retired applications, no permission kept out of the web interface, only delegatable ones for organisation-scoped administrators", async () => {
    const { names } = await applicationsOfEveryKind();
    const organisation = await createTestOrganisation(ctx);
    const person = await createUser(ctx, { organisationId: organisation.id });
    const everything = ["Live:auditor", "Live:editor", "Live:signin", "Undelegated:signin", "Undelegated:viewer"];
    const delegated = ["Live:editor"];
    const expected = {
      superadmin: { grid: everything, filter: [...everything, "Live:approver"].sort() },
      admin: { grid: everything, filter: [...everything, "Live:approver"].sort() },
      super_organisation_admin: { grid: delegated, filter: delegated },
      organisation_admin: { grid: delegated, filter: delegated },
    } as const;
    for (const [role, { grid, filter }] of Object.entries(expected)) {
      // Organisation-scoped administrators grant only on applications they may sign in to themselves.
      const { browser } = await signedInAs(app, ctx, role as keyof typeof expected, organisation.id, { Live: ["signin"], Undelegated: ["signin"] });
      const pages = {
        permissions: offered((await browser.get(`/users/${person.uid}/permissions`)).body, names, boxes),
        invite: offered((await browser.get("/users/new")).body, names, boxes),
        batch: offered((await browser.get("/users/invite-batch")).body, names, boxes),
        filter: offered((await browser.get("/users")).body, names, options),
      };
      expect(pages, role).toEqual({ permissions: grid, invite: grid, batch: grid, filter });
    }
    for (const role of ["organisation_admin", "super_organisation_admin"] as const) {
      const { browser } = await signedInAs(app, ctx, role, organisation.id, { Undelegated: ["signin"] });
      const pages = {
        permissions: offered((await browser.get(`/users/${person.uid}/permissions`)).body, names, boxes),
        invite: offered((await browser.get("/users/new")).body, names, boxes),
        batch: offered((await browser.get("/users/invite-batch")).body, names, boxes),
        filter: offered((await browser.get("/users")).body, names, options),
      };
      expect(pages, `${role} who cannot sign in to Live`).toEqual({ permissions: [], invite: [], batch: [], filter: [] });
    }
  });

  it("the dashboard and the account page leave out API-only applications; the account page tags a retired one", async () => {
    const { live, apiOnly } = await applicationsOfEveryKind();
    const person = await createUser(ctx, { permissions: { Live: ["signin", "editor"], Machine: ["signin"], Old: ["signin"] } });
    const browser = await signedInBrowser(app, person.email, defaultPassword);
    const dashboard = (await browser.get("/")).body;
    expect(dashboard).toContain("Live");
    expect(dashboard).not.toContain("Machine");
    expect(dashboard).not.toContain("Old");
    const account = (await browser.get("/account")).body;
    expect(account).toContain(`/account/applications/${live.application.id}/give-up`);
    expect(account).toMatch(/Old <span class="tag">Retired<\/span>/);
    expect(account).not.toContain(`/account/applications/${apiOnly.application.id}/give-up`);
    expect(account).not.toContain('<th scope="row">Machine');
  });
});
