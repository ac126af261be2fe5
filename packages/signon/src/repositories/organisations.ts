import { eq, sql } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { organisations } from "../db/schema.js";

export type Organisation = typeof organisations.$inferSelect;

export async function insertOrganisation(db: SignonDatabase, row: typeof organisations.$inferInsert): Promise<Organisation> {
  const [inserted] = await db.insert(organisations).values(row).returning();
  if (!inserted) throw new Error("insert returned no row");
  return inserted;
}

export async function findOrganisationBySlug(db: SignonDatabase, slug: string): Promise<Organisation | null> {
  const [row] = await db.select().from(organisations).where(eq(organisations.slug, slug)).limit(1);
  return row ?? null;
}

/** The id of the organisation with this slug or, failing that, the only one with this name (in any case); `null` when none or several. */
export async function findOrganisationIdBySlugOrName(db: SignonDatabase, given: string): Promise<string | null> {
  const bySlug = await findOrganisationBySlug(db, given);
  if (bySlug) return bySlug.id;
  const byName = await db.select({ id: organisations.id }).from(organisations).where(sql`lower(${organisations.name}) = lower(${given})`).limit(2);
  return byName.length === 1 ? (byName[0]?.id ?? null) : null;
}
