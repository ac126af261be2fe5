import { and, eq, gt } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { rememberedBrowsers } from "../db/schema.js";

/** Remembers a browser for a user until `expiresAt`; only the digest of the cookie value is stored. */
export async function insertRememberedBrowser(
  db: SignonDatabase,
  row: { tokenHash: string; userUid: string; expiresAt: Date; createdAt: Date },
): Promise<void> {
  await db.insert(rememberedBrowsers).values(row);
}

/** Whether the browser with this cookie digest is remembered for this user and has not expired. */
export async function isBrowserRemembered(db: SignonDatabase, tokenHash: string, userUid: string, now: Date): Promise<boolean> {
  const [row] = await db
    .select({ tokenHash: rememberedBrowsers.tokenHash })
    .from(rememberedBrowsers)
    .where(and(eq(rememberedBrowsers.tokenHash, tokenHash), eq(rememberedBrowsers.userUid, userUid), gt(rememberedBrowsers.expiresAt, now)))
    .limit(1);
  return row !== undefined;
}

/** Forgets every browser remembered for a user (2-step verification reset). */
export async function deleteRememberedBrowsersOfUser(db: SignonDatabase, userUid: string): Promise<void> {
  await db.delete(rememberedBrowsers).where(eq(rememberedBrowsers.userUid, userUid));
}
