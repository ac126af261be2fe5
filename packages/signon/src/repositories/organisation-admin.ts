import { asc, eq } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { organisations, users } from "../db/schema.js";
import type { Organisation } from "./organisations.js";

/** An organisation with the number of its users (people and API users). */
export type OrganisationSummary = Organisation & { userCount: number };

/** Every organisation, by name, with its number of users (kept up to date on the row: `memberCount`). */
export async function listOrganisationSummaries(db: SignonDatabase): Promise<OrganisationSummary[]> {
  const rows = await db.select().from(organisations).orderBy(asc(organisations.name), asc(organisations.slug));
  return rows.map((row) => ({ ...row, userCount: row.memberCount }));
}

export async function findOrganisationById(db: SignonDatabase, id: string): Promise<Organisation | null> {
  const [row] = await db.select().from(organisations).where(eq(organisations.id, id)).limit(1);
  return row ?? null;
}

/** Changes an organisation's name, slug, parent, closed flag or content id; returns the row afterwards, or `null` when there is none. */
export async function updateOrganisationRow(
  db: SignonDatabase,
  id: string,
  changes: Partial<Pick<Organisation, "name" | "slug" | "parentId" | "closed" | "contentId">>,
): Promise<Organisation | null> {
  const [row] = await db.update(organisations).set(changes).where(eq(organisations.id, id)).returning();
  return row ?? null;
}

/** The uids of the users of an organisation. */
export async function listMemberUids(db: SignonDatabase, organisationId: string): Promise<string[]> {
  const rows = await db.select({ uid: users.uid }).from(users).where(eq(users.organisationId, organisationId));
  return rows.map((row) => row.uid);
}

/** How many users (people and API users) an organisation has, as its row keeps it; 0 for none. */
export async function countMembers(db: SignonDatabase, organisationId: string): Promise<number> {
  const [row] = await db.select({ count: organisations.memberCount }).from(organisations).where(eq(organisations.id, organisationId));
  return row?.count ?? 0;
}
