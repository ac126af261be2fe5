import { eq, inArray } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { applications } from "../db/schema.js";

export type Application = typeof applications.$inferSelect;
export type NewApplication = typeof applications.$inferInsert;

export async function insertApplication(db: SignonDatabase, row: NewApplication): Promise<Application> {
  const [inserted] = await db.insert(applications).values(row).returning();
  if (!inserted) throw new Error("insert returned no row");
  return inserted;
}

export async function findApplicationByClientId(db: SignonDatabase, clientId: string): Promise<Application | null> {
  const [row] = await db.select().from(applications).where(eq(applications.clientId, clientId)).limit(1);
  return row ?? null;
}

export async function findApplicationByName(db: SignonDatabase, name: string): Promise<Application | null> {
  const [row] = await db.select().from(applications).where(eq(applications.name, name)).limit(1);
  return row ?? null;
}

/** The names of the applications with these ids (retired ones too), by id; unknown ids are left out. */
export async function findApplicationNames(db: SignonDatabase, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.select({ id: applications.id, name: applications.name }).from(applications).where(inArray(applications.id, [...ids]));
  return new Map(rows.map((row) => [row.id, row.name]));
}
