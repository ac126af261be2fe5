import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createOrganisation } from "../../src/accounts/organisations.js";
import { auditEvents, identityProviders } from "../../src/db/schema.js";
import { openSecret } from "../../src/security/secret-box.js";
import { signedInBrowser, type InjectBrowser } from "../support/browser.js";
import { createUser, defaultPassword } from "../support/factories.js";
import { startSamlIdentityProvider } from "@tessera/test-support/saml-identity-provider";
import { useTestSignon } from "../support/signon.js";

const { database, signon } = await useTestSignon();
const db = database.db;
const key = Buffer.from("5e".repeat(32), "hex");

async function browserFor(role: "superadmin" | "admin"): Promise<InjectBrowser> {
  const user = await createUser(signon.ctx, { role });
  return signedInBrowser(signon.app, user.email, defaultPassword);
}

const settings = { issuer: "https://login.example.net/tenant/v2.0", client_id: "sign-on", client_authentication: "client_secret_basic", client_secret: "s3cret-value", domains: "agency.example.gov.uk, Agency.example.org", suspend_unseen_days: "30" };

describe("/organisations/:id/identity-provider", () => {
  it("connects an organisation, keeps the secret sealed and out of the page, and lists the change", async () => {
    const agency = await createOrganisation(signon.ctx, { slug: "agency", name: "Agency" });
    const browser = await browserFor("superadmin");
    const url = `/organisations/${agency.id}/identity-provider`;
    const page = await browser.get(url);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`<code>${signon.ctx.config.publicUrl.replace(/\/$/, "")}/sign-in/upstream/callback</code>`);
    expect(page.body).toContain('<label for="issuer">Issuer</label>');

    const saved = await browser.submit(url, url, settings);
    expect(saved.statusCode).toBe(303);
    const [stored] = await db.select().from(identityProviders).where(eq(identityProviders.organisationId, agency.id));
    expect(stored).toMatchObject({ issuer: settings.issuer, clientId: "sign-on", domains: ["agency.example.gov.uk", "agency.example.org"], suspendUnseenDays: 30 });
    expect(openSecret(key, stored!.clientCredentialSealed!)).toBe("s3cret-value");
    const shown = await browser.get(url);
    expect(shown.body).not.toContain("s3cret-value");
    expect(shown.body).toContain(`/sign-in/upstream/${stored!.id}/backchannel-logout`);
    expect(shown.body).toContain("Organisation connected to its identity provider (https://login.example.net/tenant/v2.0)");
    const edit = await browser.get(`/organisations/${agency.id}`);
    expect(edit.body).toContain("People at agency.example.gov.uk, agency.example.org sign in through https://login.example.net/tenant/v2.0.");

    // A change without the secret keeps the stored one.
    const changed = await browser.submit(url, url, { ...settings, client_secret: "", domains: "agency.example.gov.uk" });
    expect(changed.statusCode).toBe(303);
    const [after] = await db.select().from(identityProviders).where(eq(identityProviders.organisationId, agency.id));
    expect(openSecret(key, after!.clientCredentialSealed!)).toBe("s3cret-value");
    const events = await db.select().from(auditEvents).where(eq(auditEvents.action, "identity_provider_changed"));
    expect(JSON.stringify(events.map((event) => event.details))).not.toContain("s3cret");
  });

  it("says what is wrong by the field, keeping what was typed but never the secret", async () => {
    const bureau = await createOrganisation(signon.ctx, { slug: "bureau", name: "Bureau" });
    const browser = await browserFor("superadmin");
    const url = `/organisations/${bureau.id}/identity-provider`;
    const cases: [Record<string, string>, string, string][] = [
      [{ issuer: "http://login.example.net" }, "issuer", "The issuer must be an https URL."],
      [{ domains: "gmail.com" }, "domains", "gmail.com is a public mail service"],
      [{ domains: "" }, "domains", "Give at least one e-mail domain"],
      [{ suspend_unseen_days: "0" }, "suspend_unseen_days", "a whole number from 1 to 3650"],
      [{ password_addresses: "someone@elsewhere.example" }, "password_addresses", "is not at one of the provider's domains"],
      [{ client_authentication: "private_key_jwt" }, "private_key", "private_key_jwt needs Sign-on's private key"],
    ];
    for (const [change, field, message] of cases) {
      const response = await browser.submit(url, url, { ...settings, domains: "bureau.example", ...change });
      expect(response.statusCode, field).toBe(400);
      expect(response.body).toContain(`<p class="error-message" id="${field}-error">`);
      expect(response.body).toContain(message.replace(/'/g, "&#39;"));
      expect(response.body).not.toContain("s3cret-value");
    }
    expect(await db.select().from(identityProviders).where(eq(identityProviders.organisationId, bureau.id))).toEqual([]);
  });

  it("refuses a domain another organisation's provider answers for, and disconnects", async () => {
    const first = await createOrganisation(signon.ctx, { slug: "first-owner", name: "First owner" });
    const second = await createOrganisation(signon.ctx, { slug: "second-owner", name: "Second owner" });
    const browser = await browserFor("superadmin");
    const firstUrl = `/organisations/${first.id}/identity-provider`;
    expect((await browser.submit(firstUrl, firstUrl, { ...settings, domains: "owned.example" })).statusCode).toBe(303);
    const secondUrl = `/organisations/${second.id}/identity-provider`;
    const taken = await browser.submit(secondUrl, secondUrl, { ...settings, domains: "owned.example" });
    expect(taken.statusCode).toBe(400);
    expect(taken.body).toContain("owned.example already belongs to another organisation&#39;s provider.");
    const disconnected = await browser.submit(firstUrl, `${firstUrl}/disconnect`);
    expect(disconnected.statusCode).toBe(303);
    expect(await db.select().from(identityProviders).where(eq(identityProviders.organisationId, first.id))).toEqual([]);
    expect((await browser.get(firstUrl)).body).toContain("Organisation&#39;s identity provider disconnected");
  });

  it("connects a SAML identity provider from its metadata, showing what to register there", async () => {
    const idp = await startSamlIdentityProvider(`${signon.ctx.config.publicUrl.replace(/\/$/, "")}/sign-in/upstream/saml/metadata`);
    try {
      const office = await createOrganisation(signon.ctx, { slug: "saml-office", name: "SAML office" });
      const browser = await browserFor("superadmin");
      const url = `/organisations/${office.id}/identity-provider`;
      const saved = await browser.submit(url, url, { protocol: "saml", saml_metadata: idp.metadata, domains: "saml-office.example" });
      expect(saved.statusCode).toBe(303);
      const [stored] = await db.select().from(identityProviders).where(eq(identityProviders.organisationId, office.id));
      expect(stored).toMatchObject({ protocol: "saml", samlEntityId: idp.entityId, samlSignOnUrl: idp.signOnUrl, issuer: null, clientId: null });
      const page = await browser.get(url);
      expect(page.body).toContain(`sign in through <strong>${idp.entityId}</strong> (SAML 2.0)`);
      expect(page.body).toContain(`/sign-in/upstream/${stored!.id}/saml/logout</code>`);
      const broken = await browser.submit(url, url, { protocol: "saml", saml_metadata: "<nothing/>", domains: "saml-office.example" });
      expect(broken.statusCode).toBe(400);
      expect(broken.body).toContain('<p class="error-message" id="saml_metadata-error">');
    } finally {
      await idp.close();
    }
  });

  it("is for superadmins only", async () => {
    const office = await createOrganisation(signon.ctx, { slug: "office", name: "Office" });
    const browser = await browserFor("admin");
    expect((await browser.get(`/organisations/${office.id}/identity-provider`)).statusCode).toBe(403);
  });
});
