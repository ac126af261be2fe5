import { desc } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { devMails } from "../db/schema.js";

export type DevMail = typeof devMails.$inferSelect;

export async function insertDevMail(db: SignonDatabase, row: typeof devMails.$inferInsert): Promise<void> {
  await db.insert(devMails).values(row);
}

/** The newest mails of the development mailbox, newest first. */
export async function listDevMails(db: SignonDatabase, limit: number): Promise<DevMail[]> {
  return db.select().from(devMails).orderBy(desc(devMails.id)).limit(limit);
}
