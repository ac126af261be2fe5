import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createOrganisation } from "../../src/accounts/organisations.js";
import {
  accessTokens,
  accountLinks,
  emailChanges,
  failureCounters,
  grants,
  identityProviders,
  passkeyChallenges,
  refreshTokens,
  rememberedBrowsers,
  sessions,
  upstreamMessagesSeen,
  upstreamSignIns,
} from "../../src/db/schema.js";
import { startExpiredRecordsJob } from "../../src/maintenance/expired-records-job.js";
import { deleteExpiredRecords } from "../../src/repositories/expired-records.js";
import { signedInBrowser } from "../support/browser.js";
import { createApp, createUser, defaultPassword } from "../support/factories.js";
import { useTestSignon } from "../support/signon.js";

const { database, signon } = await useTestSignon();
const db = database.db;
const minutes = (n: number) => new Date(signon.clock.now().getTime() + n * 60_000);
const days = (n: number) => minutes(n * 24 * 60);

/** One of each kind of record, expired and not, named by what should become of it. */
async function seed() {
  const { application } = await createApp(signon.ctx);
  const person = await createUser(signon.ctx);
  const grant = async (kind: "authorization_code" | "issued", code: { expiresAt: Date; usedAt: Date | null } | null) => {
    const id = randomUUID();
    await db.insert(grants).values({
      id,
      kind,
      userUid: person.uid,
      applicationId: application.id,
      codeHash: code ? randomUUID() : null,
      codeExpiresAt: code?.expiresAt ?? null,
      codeUsedAt: code?.usedAt ?? null,
      createdAt: minutes(-60),
    });
    return id;
  };
  const token = (grantId: string, expiresAt: Date) =>
    db.insert(accessTokens).values({ tokenHash: randomUUID(), grantId, userUid: person.uid, applicationId: application.id, expiresAt, createdAt: minutes(-60) });

  const signedIn = await grant("authorization_code", { expiresAt: minutes(-50), usedAt: minutes(-59) });
  await token(signedIn, minutes(-1)); // expired: goes
  await token(signedIn, minutes(60)); // current: stays
  await db.insert(refreshTokens).values({ tokenHash: randomUUID(), grantId: signedIn, createdAt: minutes(-59) });
  const issued = await grant("issued", null);
  await token(issued, days(-1)); // expired, but the issued-token list shows when: stays
  await grant("authorization_code", { expiresAt: minutes(-1), usedAt: null }); // expired unused code: goes
  await grant("authorization_code", { expiresAt: minutes(5), usedAt: null }); // code still valid: stays

  await db.insert(rememberedBrowsers).values([
    { tokenHash: "gone", userUid: person.uid, expiresAt: minutes(0), createdAt: days(-30) },
    { tokenHash: "kept", userUid: person.uid, expiresAt: minutes(1), createdAt: days(-30) },
  ]);
  await db.insert(failureCounters).values([
    { key: "sign-in-ip:gone", failures: 30, windowEndsAt: minutes(-1) },
    { key: "sign-in-ip:kept", failures: 30, windowEndsAt: minutes(1) },
  ]);
  await db.insert(accountLinks).values([
    { tokenHash: "gone", userUid: person.uid, purpose: "password_reset", expiresAt: days(-31), createdAt: days(-32) },
    { tokenHash: "kept", userUid: person.uid, purpose: "invitation", expiresAt: days(-29), createdAt: days(-36) },
  ]);
  await db.insert(emailChanges).values([
    { tokenHash: "gone", userUid: person.uid, newEmail: "old@example.org", expiresAt: days(-31), confirmedAt: days(-31.5), createdAt: days(-32) },
    { tokenHash: "kept", userUid: person.uid, newEmail: "late@example.org", expiresAt: days(-29), createdAt: days(-30) },
  ]);
  await db.insert(passkeyChallenges).values([
    { challenge: "gone", purpose: "passwordless", userUid: null, sessionHash: null, expiresAt: minutes(0) },
    { challenge: "kept", purpose: "registration", userUid: person.uid, sessionHash: "x", expiresAt: minutes(1) },
  ]);
  return { signedIn, issued };
}

describe("deleteExpiredRecords", () => {
  it("deletes what can no longer be used and keeps the rest", async () => {
    const { signedIn, issued } = await seed();

    expect(await deleteExpiredRecords(db, signon.clock.now(), signon.ctx.config.sessionIdleSeconds)).toEqual({
      sessions: 0,
      rememberedBrowsers: 1,
      failureCounters: 1,
      accessTokens: 1,
      unusedCodes: 1,
      accountLinks: 1,
      emailChanges: 1,
      passkeyChallenges: 1,
      upstreamSignIns: 0,
      upstreamMessages: 0,
    });

    expect((await db.select().from(accessTokens)).map((row) => [row.grantId === signedIn ? "signed in" : row.grantId === issued ? "issued" : "?", row.expiresAt]).sort()).toEqual([
      ["issued", days(-1)],
      ["signed in", minutes(60)],
    ]);
    expect((await db.select().from(grants)).map((row) => row.codeExpiresAt).sort()).toEqual([minutes(-50), minutes(5), null].sort());
    expect((await db.select().from(rememberedBrowsers)).map((row) => row.tokenHash)).toEqual(["kept"]);
    expect((await db.select().from(failureCounters)).map((row) => row.key)).toEqual(["sign-in-ip:kept"]);
    expect((await db.select().from(accountLinks)).map((row) => row.tokenHash)).toEqual(["kept"]);
    expect((await db.select().from(emailChanges)).map((row) => row.tokenHash)).toEqual(["kept"]);
    expect((await db.select().from(passkeyChallenges)).map((row) => row.challenge)).toEqual(["kept"]);
    expect(await deleteExpiredRecords(db, signon.clock.now(), signon.ctx.config.sessionIdleSeconds)).toEqual({
      sessions: 0,
      rememberedBrowsers: 0,
      failureCounters: 0,
      accessTokens: 0,
      unusedCodes: 0,
      accountLinks: 0,
      emailChanges: 0,
      passkeyChallenges: 0,
      upstreamSignIns: 0,
      upstreamMessages: 0,
    });
  });

  it("deletes sign-ins sent to an organisation's provider that never came back, and logout tokens past their replay time", async () => {
    const organisation = await createOrganisation(signon.ctx, { slug: "upstream-expiry", name: "Upstream expiry" });
    const providerId = randomUUID();
    await db.insert(identityProviders).values({ id: providerId, organisationId: organisation.id, protocol: "oidc", domains: ["upstream-expiry.example"], createdAt: minutes(0), updatedAt: minutes(0) });
    await db.insert(upstreamSignIns).values([
      { stateHash: "expired", providerId, nonce: "n", codeVerifier: null, email: "someone@upstream-expiry.example", returnTo: "/", expiresAt: minutes(-1) },
      { stateHash: "kept", providerId, nonce: "n", codeVerifier: null, email: "someone@upstream-expiry.example", returnTo: "/", expiresAt: minutes(5) },
    ]);
    await db.insert(upstreamMessagesSeen).values([
      { providerId, messageId: "expired", expiresAt: minutes(-1) },
      { providerId, messageId: "kept", expiresAt: minutes(5) },
    ]);
    expect(await deleteExpiredRecords(db, signon.clock.now(), signon.ctx.config.sessionIdleSeconds)).toMatchObject({ upstreamSignIns: 1, upstreamMessages: 1 });
    expect((await db.select().from(upstreamSignIns)).map((row) => row.stateHash)).toEqual(["kept"]);
    expect((await db.select().from(upstreamMessagesSeen)).map((row) => row.messageId)).toEqual(["kept"]);
  });

  it("deletes sessions idle too long or past their maximum age, and no other", async () => {
    const idle = await createUser(signon.ctx);
    const busy = await createUser(signon.ctx);
    await signedInBrowser(signon.app, idle.email, defaultPassword);
    const busyBrowser = await signedInBrowser(signon.app, busy.email, defaultPassword);
    signon.clock.advance(29 * 60);
    expect((await busyBrowser.get("/")).statusCode).toBe(200);
    signon.clock.advance(60);

    expect((await deleteExpiredRecords(db, signon.clock.now(), signon.ctx.config.sessionIdleSeconds)).sessions).toBe(1);
    expect((await db.select().from(sessions)).map((row) => row.userUid)).toEqual([busy.uid]);

    // Used every 20 minutes, the busy session still ends at its maximum age (12 hours after sign-in).
    for (let at = 30; at + 20 < 12 * 60; at += 20) {
      signon.clock.advance(20 * 60);
      expect((await busyBrowser.get("/")).statusCode).toBe(200);
    }
    expect((await deleteExpiredRecords(db, signon.clock.now(), signon.ctx.config.sessionIdleSeconds)).sessions).toBe(0);
    signon.clock.advance(11 * 60);
    expect((await deleteExpiredRecords(db, signon.clock.now(), signon.ctx.config.sessionIdleSeconds)).sessions).toBe(1);
    expect(await db.select().from(sessions)).toEqual([]);
  });
});

describe("startExpiredRecordsJob", () => {
  it("runs after start, says what it deleted, and stops", async () => {
    await seed();
    const lines: string[] = [];
    const ran = new Promise<void>((resolve) => {
      const job = startExpiredRecordsJob(signon.ctx, {
        firstRunMs: 0,
        log: {
          info: (message) => {
            lines.push(message);
            void job.stop().then(resolve);
          },
          error: (message) => lines.push(message),
        },
      });
    });
    await ran;
    expect(lines).toEqual(["Deleted expired records: 1 rememberedBrowsers, 1 failureCounters, 1 accessTokens, 1 unusedCodes, 1 accountLinks, 1 emailChanges, 1 passkeyChallenges"]);
  });
});
