import { eq } from "drizzle-orm";
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
