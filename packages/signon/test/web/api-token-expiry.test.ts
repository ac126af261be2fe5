import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { issueApiUserToken } from "../../src/accounts/api-users.js";
import { createApiUser } from "../../src/accounts/manage-users.js";
import { renewExpiringApiTokens } from "../../src/accounts/token-renewal.js";
import { accessTokens, auditEvents, renewedTokens, users } from "../../src/db/schema.js";
import { sha256Hex } from "../../src/security/random.js";
import { createApp } from "../support/factories.js";
import { getUserJson } from "../support/flow.js";
import { useTestSignon } from "../support/signon.js";
import { signedInAs } from "./users-support.js";

const { database, signon } = await useTestSignon();
const { app, ctx, clock } = signon;
const db = database.db;
const dayS = 86_400;

async function apiUserWithToken(days: number, name = "Indexer") {
  const client = await createApp(ctx, { name: `${name} target` });
  const apiUser = await createApiUser(ctx, { name, email: `${name.toLowerCase()}@example.org` });
  const { browser, uid } = await signedInAs(app, ctx, "superadmin");
  const issued = await issueApiUserToken(ctx, { user: apiUser, applicationId: client.application.id, permissions: [], expiresInDays: days }, uid);
  return { client, apiUser, browser, issued };
}

describe("GET /api-users/:uid: token expiry", () => {
  it("warns from 30 days before a token expires, with the days left, and not before", async () => {
    const { apiUser, browser } = await apiUserWithToken(60);
    const calm = await browser.get(`/api-users/${apiUser.uid}`);
    expect(calm.body).not.toContain('id="expiry-warning"');
    expect(calm.body).not.toContain('tag suspended">Expires in');

    clock.advance(31 * dayS);
    const warned = await (await signedInAs(app, ctx, "superadmin")).browser.get(`/api-users/${apiUser.uid}`);
    expect(warned.body).toContain("1 token(s) of this API user expire within 30 days.");
    expect(warned.body).toContain('<span class="tag suspended">Expires in 29 days</span>');

    clock.advance(30 * dayS);
    const expired = await (await signedInAs(app, ctx, "superadmin")).browser.get(`/api-users/${apiUser.uid}`);
    expect(expired.body).not.toContain('id="expiry-warning"');
    expect(expired.body).toContain('<span class="tag suspended">Expired</span>');
  });
});

describe("automatic token renewal", () => {
  it("is turned on and off on the API user page, audited; a bad choice is 400", async () => {
    const { apiUser, browser } = await apiUserWithToken(365);
    const url = `/api-users/${apiUser.uid}`;
    const on = await browser.submit(url, `${url}/auto-renewal`, { token_auto_renewal: "yes" });
    expect(on.statusCode).toBe(303);
    const shown = (await browser.follow(on)).body;
    expect(shown).toContain(
      "tokens are renewed automatically: each token is renewed once, when a third of its lifetime is left (at most 30 days, at least 2 hours before it expires). Each new token is shown here once.",
    );
    expect(shown).toContain("<dt>Automatic token renewal</dt><dd>On: each token is renewed once, when a third of its lifetime is left");
    expect((await db.select().from(users).where(eq(users.uid, apiUser.uid)))[0]?.tokenAutoRenewal).toBe(true);
    const bad = await browser.submit(url, `${url}/auto-renewal`, { token_auto_renewal: "maybe" });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('id="token_auto_renewal-error">Choose whether tokens are renewed automatically');
    await browser.submit(url, `${url}/auto-renewal`, { token_auto_renewal: "no" });
    const events = await db.select().from(auditEvents).where(eq(auditEvents.action, "token_auto_renewal_changed"));
    expect(events.map((event) => event.details)).toEqual([{ on: true }, { on: false }]);
  });

  it("issues a new token before the old expires, shows it until acknowledged, never twice, and keeps only its digest then", async () => {
    const { apiUser, issued, client } = await apiUserWithToken(365);
    await db.update(users).set({ tokenAutoRenewal: true }).where(eq(users.uid, apiUser.uid));
    expect(await renewExpiringApiTokens(ctx)).toBe(0);

    clock.advance(340 * dayS);
    expect(await renewExpiringApiTokens(ctx)).toBe(1);
    expect(await renewExpiringApiTokens(ctx)).toBe(0);
    const [renewal] = await db.select().from(renewedTokens);
    expect(renewal?.tokenSealed).toMatch(/^v1\./);

    // Signed in again: a session does not last 340 days.
    const { browser } = await signedInAs(app, ctx, "superadmin");
    const url = `/api-users/${apiUser.uid}`;
    const page = await browser.get(url);
    const token = new RegExp(`<p class="secret" id="renewed-${renewal?.grantId}">([0-9a-f]{64})</p>`).exec(page.body)?.[1] as string;
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(renewal?.tokenSealed).not.toContain(token);
    const [stored] = await db.select().from(accessTokens).where(eq(accessTokens.grantId, renewal?.grantId as string));
    expect(stored).toMatchObject({ tokenHash: sha256Hex(token), applicationId: client.application.id });
    expect(stored?.expiresAt.getTime()).toBe(clock.now().getTime() + 365 * dayS * 1000);
    expect((await getUserJson(app, token)).statusCode).toBe(200);
    expect((await getUserJson(app, issued.accessToken)).statusCode).toBe(200);
    const [event] = await db.select().from(auditEvents).where(eq(auditEvents.action, "api_token_renewed"));
    expect(JSON.stringify(event)).not.toContain(token);
    expect(event).toMatchObject({ subjectUid: apiUser.uid, applicationId: client.application.id, details: { grant_id: renewal?.grantId } });

    const acknowledged = await browser.submit(url, `${url}/renewed-tokens/${renewal?.grantId}/acknowledge`);
    expect(acknowledged.statusCode).toBe(303);
    const after = await browser.follow(acknowledged);
    expect(after.body).not.toContain(token);
    expect(after.body).toContain("The renewed token is no longer shown.");
    expect((await db.select().from(renewedTokens))[0]).toMatchObject({ tokenSealed: null, acknowledgedBy: expect.any(String) });
    expect((await browser.submit(url, `${url}/renewed-tokens/${renewal?.grantId}/acknowledge`)).statusCode).toBe(404);
    expect(await db.select().from(auditEvents).where(eq(auditEvents.action, "renewed_token_acknowledged"))).toHaveLength(1);
  });

  it("renews a 10-day token once, when a third of its lifetime is left, and the new token only when a third of its own is left", async () => {
    const { apiUser } = await apiUserWithToken(10, "Short");
    await db.update(users).set({ tokenAutoRenewal: true }).where(eq(users.uid, apiUser.uid));
    const hourly = async (hours: number): Promise<number> => {
      let renewed = 0;
      for (let hour = 0; hour < hours; hour += 1) {
        renewed += await renewExpiringApiTokens(ctx);
        clock.advance(3600);
      }
      return renewed;
    };
    // 10 days is 240 hours; a third of it, 80 hours, is left after 160.
    expect(await hourly(160)).toBe(0);
    expect(await renewExpiringApiTokens(ctx)).toBe(1);
    const [first] = await db.select().from(renewedTokens);
    const [firstToken] = await db.select().from(accessTokens).where(eq(accessTokens.grantId, first?.grantId as string));
    expect(firstToken?.expiresAt.getTime()).toBe(clock.now().getTime() + 10 * dayS * 1000);
    // The old token's last 80 hours and the new token's first 160: nothing more.
    expect(await hourly(160)).toBe(0);
    expect(await db.select().from(renewedTokens)).toHaveLength(1);
    expect(await renewExpiringApiTokens(ctx)).toBe(1);
    expect(await db.select().from(renewedTokens)).toHaveLength(2);

    const page = await (await signedInAs(app, ctx, "superadmin")).browser.get(`/api-users/${apiUser.uid}`);
    expect(page.body.match(/<p class="secret" id="renewed-/g)).toHaveLength(2);
  });

  it("renews a token shorter than the job's reach at its first run, by a day-long token not renewed until its last 8 hours", async () => {
    const { apiUser } = await apiUserWithToken(365, "Brief");
    await db.update(users).set({ tokenAutoRenewal: true }).where(eq(users.uid, apiUser.uid));
    await db.update(accessTokens).set({ expiresAt: new Date(clock.now().getTime() + 3600_000) }).where(eq(accessTokens.userUid, apiUser.uid));
    expect(await renewExpiringApiTokens(ctx)).toBe(1);
    expect(await renewExpiringApiTokens(ctx)).toBe(0);
    clock.advance(16 * 3600 - 60);
    expect(await renewExpiringApiTokens(ctx)).toBe(0);
    clock.advance(60);
    expect(await renewExpiringApiTokens(ctx)).toBe(1);
  });

  it("leaves API users without it, revoked tokens and suspended API users alone", async () => {
    const { apiUser } = await apiUserWithToken(40, "Plain");
    clock.advance(30 * dayS);
    expect(await renewExpiringApiTokens(ctx)).toBe(0);
    await db.update(users).set({ tokenAutoRenewal: true, suspendedAt: clock.now(), suspensionReason: "test" }).where(eq(users.uid, apiUser.uid));
    expect(await renewExpiringApiTokens(ctx)).toBe(0);
  });
});
