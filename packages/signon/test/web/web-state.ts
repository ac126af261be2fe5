import { asc, count } from "drizzle-orm";
import type { SignonContext } from "../../src/context.js";
import {
  accessTokens,
  accountLinks,
  applications,
  emailChanges,
  grants,
  invitationBatches,
  invitationBatchRows,
  invitationPermissions,
  organisations,
  pushDeliveries,
  sessions,
  userPermissions,
  users,
} from "../../src/db/schema.js";

/** What the forms could change, read in a fixed order so two readings compare equal when nothing changed. */
export async function webState(ctx: SignonContext) {
  const db = ctx.db;
  return {
    users: await db
      .select({
        uid: users.uid,
        email: users.email,
        name: users.name,
        role: users.role,
        organisationId: users.organisationId,
        suspendedAt: users.suspendedAt,
        passwordHash: users.passwordHash,
        otpEnabledAt: users.otpEnabledAt,
        twoStepRequired: users.twoStepRequired,
        twoStepExemptionReason: users.twoStepExemptionReason,
        twoStepExemptUntil: users.twoStepExemptUntil,
      })
      .from(users)
      .orderBy(asc(users.uid)),
    permissions: await db.select().from(userPermissions).orderBy(asc(userPermissions.userUid), asc(userPermissions.applicationId), asc(userPermissions.permission)),
    applications: await db.select().from(applications).orderBy(asc(applications.id)),
    organisations: await db.select().from(organisations).orderBy(asc(organisations.id)),
    grants: await db.select({ id: grants.id, revokedAt: grants.revokedAt }).from(grants).orderBy(asc(grants.id)),
    accessTokens: (await db.select({ n: count() }).from(accessTokens))[0]?.n,
    accountLinks: (await db.select({ n: count() }).from(accountLinks))[0]?.n,
    emailChanges: (await db.select({ n: count() }).from(emailChanges))[0]?.n,
    invitationPermissions: (await db.select({ n: count() }).from(invitationPermissions))[0]?.n,
    invitationBatches: (await db.select({ n: count() }).from(invitationBatches))[0]?.n,
    invitationBatchRows: (await db.select({ n: count() }).from(invitationBatchRows))[0]?.n,
    pushes: await db.select({ id: pushDeliveries.id, seq: pushDeliveries.seq, status: pushDeliveries.status }).from(pushDeliveries).orderBy(asc(pushDeliveries.id)),
    sessions: (await db.select({ n: count() }).from(sessions))[0]?.n,
  };
}
