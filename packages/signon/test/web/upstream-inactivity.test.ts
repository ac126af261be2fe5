import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { suspendPeopleUnseenUpstream } from "../../src/accounts/inactivity.js";
import { createOrganisation } from "../../src/accounts/organisations.js";
import { auditEvents, upstreamIdentities } from "../../src/db/schema.js";
import { connectOpenIdProvider } from "../../src/identity-providers/connect.js";
import { findUserByUid } from "../../src/repositories/users.js";
import { createUser } from "../support/factories.js";
import { useTestSignon } from "../support/signon.js";

const { database, signon } = await useTestSignon();
const day = 86_400;

describe("suspendPeopleUnseenUpstream", () => {
  it("suspends the people the organisation's provider has not vouched for in its days, and nobody else", async () => {
    const organisation = await createOrganisation(signon.ctx, { slug: "unseen", name: "Unseen" });
    const elsewhere = await createOrganisation(signon.ctx, { slug: "elsewhere", name: "Elsewhere" });
    const person = (name: string, organisationId = organisation.id) => createUser(signon.ctx, { email: `${name}@unseen.example`, organisationId });
    const leaver = await person("leaver");
    const seen = await person("seen");
    const never = await person("never");
    const breakGlass = await person("break-glass");
    const other = await person("other", elsewhere.id);
    const outsider = await createUser(signon.ctx, { email: "outsider@partner.example", organisationId: organisation.id });
    const { provider } = await connectOpenIdProvider(
      signon.ctx,
      organisation,
      { issuer: "https://idp.unseen.example", clientId: "c", clientSecret: "s", domains: "unseen.example", passwordAddresses: "break-glass@unseen.example", suspendUnseenDays: "30" },
      { uid: null, origin: null },
    );
    const link = (uid: string, subject: string) =>
      database.db.insert(upstreamIdentities).values({ providerId: provider.id, subject, userUid: uid, linkedAt: signon.clock.now(), lastSeenAt: signon.clock.now() });
    await link(leaver.uid, "leaver");
    await link(seen.uid, "seen");

    signon.clock.advance(29 * day);
    expect(await suspendPeopleUnseenUpstream(signon.ctx)).toEqual([]);
    await database.db.update(upstreamIdentities).set({ lastSeenAt: signon.clock.now() }).where(eq(upstreamIdentities.subject, "seen"));
    signon.clock.advance(2 * day);
    expect((await suspendPeopleUnseenUpstream(signon.ctx)).sort()).toEqual([leaver.email, never.email].sort());
    expect(await findUserByUid(signon.ctx.db, leaver.uid)).toMatchObject({ suspensionReason: "Not seen through the organisation's identity provider for 30 days" });
    for (const kept of [seen, breakGlass, other, outsider]) expect((await findUserByUid(signon.ctx.db, kept.uid))?.suspendedAt).toBeNull();
    const events = await database.db.select().from(auditEvents).where(eq(auditEvents.action, "suspended_for_inactivity"));
    expect(events.map((row) => row.details)).toContainEqual({ days: 30, through: "identity_provider" });
  });
});
