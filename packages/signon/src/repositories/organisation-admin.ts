import { asc, eq, sql } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { organisations, users } from "../db/schema.js";
import type { Organisation } from "./organisations.js";

/** An organisation with the number of its users (people and API users). */
export type OrganisationSummary = Organisation & { userCount: number };

/** Every organisation, by name, with its number of users. */
export async function listOrganisationSummaries(db: SignonDatabase): Promise<OrganisationSummary[]> {
  const rows = await db
    .select({ organisation: organisations, userCount: sql<number>`count(${users.uid})::int` })
    .from(organisations)
    .leftJoin(users, eq(users.organisationId, organisations.id))
    .groupBy(organisations.id)
    .orderBy(asc(organisations.name), asc(organisations.slug));
  return rows.map((row) => ({ ...row.organisation, userCount: row.userCount }));
}

export async function findOrganisationById(db: SignonDatabase, id: string): Promise<Organisation | null> {
  const [row] = await db.select().from(organisations).where(eq(organisations.id, id)).limit(1);
  return row ?? null;
}

/** Changes an organisation's name, slug, parent or closed flag; returns the row afterwards, or `null` when there is none. */
export async function updateOrganisationRow(
  db: SignonDatabase,
  id: string,
  changes: Partial<Pick<Organisation, "name" | "slug" | "parentId" | "closed">>,
): Promise<Organisation | null> {
  const [row] = await db.update(organisations).set(changes).where(eq(organisations.id, id)).returning();
  return row ?? null;
}

/** The uids of the users of an organisation. */
export async function listMemberUids(db: SignonDatabase, organisationId: string): Promise<string[]> {
  const rows = await db.select({ uid: users.uid }).from(users).where(eq(users.organisationId, organisationId));
  return rows.map((row) => row.uid);
}

/** How many users (people and API users) an organisation has. */
export async function countMembers(db: SignonDatabase, organisationId: string): Promise<number> {
  const [row] = await db.select({ count: sql<number>`count(*)::int` }).from(users).where(eq(users.organisationId, organisationId));
  return row?.count ?? 0;
}
