import { and, eq, sql } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { identityProviders, sessions, upstreamIdentities, upstreamMessagesSeen, upstreamSignIns } from "../db/schema.js";

export type IdentityProvider = typeof identityProviders.$inferSelect;
export type UpstreamSignIn = typeof upstreamSignIns.$inferSelect;

export async function insertIdentityProvider(db: SignonDatabase, row: typeof identityProviders.$inferInsert): Promise<IdentityProvider> {
  const [inserted] = await db.insert(identityProviders).values(row).returning();
  if (!inserted) throw new Error("insert returned no row");
  return inserted;
}

export async function updateIdentityProvider(db: SignonDatabase, id: string, changes: Partial<typeof identityProviders.$inferInsert>): Promise<IdentityProvider | null> {
  const [updated] = await db.update(identityProviders).set(changes).where(eq(identityProviders.id, id)).returning();
  return updated ?? null;
}

export async function deleteIdentityProvider(db: SignonDatabase, id: string): Promise<boolean> {
  const deleted = await db.delete(identityProviders).where(eq(identityProviders.id, id)).returning({ id: identityProviders.id });
  return deleted.length > 0;
}

export async function findIdentityProvider(db: SignonDatabase, id: string): Promise<IdentityProvider | null> {
  const [row] = await db.select().from(identityProviders).where(eq(identityProviders.id, id)).limit(1);
  return row ?? null;
}

export async function findIdentityProviderOfOrganisation(db: SignonDatabase, organisationId: string): Promise<IdentityProvider | null> {
  const [row] = await db.select().from(identityProviders).where(eq(identityProviders.organisationId, organisationId)).limit(1);
  return row ?? null;
}

/** The provider that answers for an e-mail domain (lower case), if one does. */
export async function findIdentityProviderForDomain(db: SignonDatabase, domain: string): Promise<IdentityProvider | null> {
  const [row] = await db
    .select()
    .from(identityProviders)
    .where(sql`${domain} = any(${identityProviders.domains})`)
    .limit(1);
  return row ?? null;
}

/** Whether any organisation signs in through its own provider. */
export async function anyIdentityProvider(db: SignonDatabase): Promise<boolean> {
  const [row] = await db.select({ id: identityProviders.id }).from(identityProviders).limit(1);
  return row !== undefined;
}

/**
 * The provider a normalised address signs in through: the one that answers for its domain, unless the organisation
 * lets that address keep a password (a break-glass account). `null`: a Sign-on password (or passkey).
 */
export async function providerOfAddress(db: SignonDatabase, address: string): Promise<IdentityProvider | null> {
  const at = address.lastIndexOf("@");
  if (at < 1 || at === address.length - 1) return null;
  const provider = await findIdentityProviderForDomain(db, address.slice(at + 1));
  return provider === null || provider.passwordAddresses.includes(address) ? null : provider;
}

export async function listIdentityProviders(db: SignonDatabase): Promise<IdentityProvider[]> {
  return db.select().from(identityProviders).orderBy(identityProviders.createdAt);
}

/** The account linked to a provider's subject, marking it seen at `now`; `null` when none is linked. */
export async function touchUpstreamIdentity(db: SignonDatabase, providerId: string, subject: string, now: Date): Promise<string | null> {
  const [row] = await db
    .update(upstreamIdentities)
    .set({ lastSeenAt: now })
    .where(and(eq(upstreamIdentities.providerId, providerId), eq(upstreamIdentities.subject, subject)))
    .returning({ userUid: upstreamIdentities.userUid });
  return row?.userUid ?? null;
}

/** The subject an account is linked to at a provider, if any. */
export async function findUpstreamSubjectOfUser(db: SignonDatabase, providerId: string, userUid: string): Promise<string | null> {
  const [row] = await db
    .select({ subject: upstreamIdentities.subject })
    .from(upstreamIdentities)
    .where(and(eq(upstreamIdentities.providerId, providerId), eq(upstreamIdentities.userUid, userUid)))
    .limit(1);
  return row?.subject ?? null;
}

export async function findUserOfUpstreamSubject(db: SignonDatabase, providerId: string, subject: string): Promise<string | null> {
  const [row] = await db
    .select({ userUid: upstreamIdentities.userUid })
    .from(upstreamIdentities)
    .where(and(eq(upstreamIdentities.providerId, providerId), eq(upstreamIdentities.subject, subject)))
    .limit(1);
  return row?.userUid ?? null;
}

/** Forgets every link to a provider's people, and the sign-ins waiting on it: its subjects mean nothing at another issuer. */
export async function forgetUpstreamLinks(db: SignonDatabase, providerId: string): Promise<number> {
  await db.delete(upstreamSignIns).where(eq(upstreamSignIns.providerId, providerId));
  const links = await db.delete(upstreamIdentities).where(eq(upstreamIdentities.providerId, providerId)).returning({ subject: upstreamIdentities.subject });
  return links.length;
}

export async function insertUpstreamIdentity(db: SignonDatabase, row: typeof upstreamIdentities.$inferInsert): Promise<void> {
  await db.insert(upstreamIdentities).values(row);
}

export async function insertUpstreamSignIn(db: SignonDatabase, row: typeof upstreamSignIns.$inferInsert): Promise<void> {
  await db.insert(upstreamSignIns).values(row);
}

/** Takes the sign-in waiting for this state's answer: found once, then gone (a replayed answer finds nothing). */
export async function takeUpstreamSignIn(db: SignonDatabase, stateHash: string, now: Date): Promise<UpstreamSignIn | null> {
  const [row] = await db.delete(upstreamSignIns).where(eq(upstreamSignIns.stateHash, stateHash)).returning();
  return row && row.expiresAt > now ? row : null;
}

/** Records a message (a logout token's `jti`) as acted on; `false` when it already was (a replay). */
export async function markUpstreamMessageSeen(db: SignonDatabase, providerId: string, messageId: string, expiresAt: Date): Promise<boolean> {
  const inserted = await db.insert(upstreamMessagesSeen).values({ providerId, messageId, expiresAt }).onConflictDoNothing().returning({ id: upstreamMessagesSeen.messageId });
  return inserted.length > 0;
}

/** Ends the sessions a provider's logout names: every session through it of the subject's account, or of that provider session alone. */
export async function deleteUpstreamSessions(
  db: SignonDatabase,
  providerId: string,
  selector: { userUid: string | null; upstreamSessionId: string | null },
): Promise<{ idHash: string; userUid: string }[]> {
  const conditions = [eq(sessions.upstreamProviderId, providerId)];
  if (selector.userUid !== null) conditions.push(eq(sessions.userUid, selector.userUid));
  if (selector.upstreamSessionId !== null) conditions.push(eq(sessions.upstreamSessionId, selector.upstreamSessionId));
  return db.delete(sessions).where(and(...conditions)).returning({ idHash: sessions.idHash, userUid: sessions.userUid });
}
