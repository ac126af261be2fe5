import { eq } from "drizzle-orm";
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
