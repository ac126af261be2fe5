import { and, eq, isNull, lt, or } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { users } from "../db/schema.js";
import type { User } from "./users.js";

/** Stores a sealed authenticator secret for a user who is setting up 2-step verification (not yet on). */
export async function storePendingOtpSecret(db: SignonDatabase, uid: string, sealedSecret: string, now: Date): Promise<void> {
  await db
    .update(users)
    .set({ otpSecretEncrypted: sealedSecret, updatedAt: now })
    .where(and(eq(users.uid, uid), isNull(users.otpEnabledAt)));
}

/**
 * Turns 2-step verification on with the secret being set up, recording the
 * time step of the confirming code. Returns `false` when it was already on.
 */
export async function enableOtp(db: SignonDatabase, uid: string, step: number, now: Date): Promise<boolean> {
  const rows = await db
    .update(users)
    .set({ otpEnabledAt: now, lastOtpStep: step, updatedAt: now })
    .where(and(eq(users.uid, uid), isNull(users.otpEnabledAt)))
    .returning({ uid: users.uid });
  return rows.length > 0;
}

/**
 * Accepts a code's time step, once: succeeds only when no code of this step
 * or a later one was accepted before.
 */
export async function acceptOtpStep(db: SignonDatabase, uid: string, step: number, now: Date): Promise<boolean> {
  const rows = await db
    .update(users)
    .set({ lastOtpStep: step, updatedAt: now })
    .where(and(eq(users.uid, uid), or(isNull(users.lastOtpStep), lt(users.lastOtpStep, step))))
    .returning({ uid: users.uid });
  return rows.length > 0;
}

/** Turns 2-step verification off: forgets the secret and the last accepted step. */
export async function clearOtp(db: SignonDatabase, uid: string, now: Date): Promise<User | null> {
  const [row] = await db
    .update(users)
    .set({ otpSecretEncrypted: null, otpEnabledAt: null, lastOtpStep: null, updatedAt: now })
    .where(eq(users.uid, uid))
    .returning();
  return row ?? null;
}
