import { eq } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { organisations, users } from "../db/schema.js";
import type { Organisation } from "./organisations.js";
import type { User } from "./users.js";

/** Sets or clears a person's own 2-step requirement; returns the user afterwards, or `null` when there is none. */
export async function updateUserTwoStepRequired(db: SignonDatabase, uid: string, required: boolean, now: Date): Promise<User | null> {
  const [row] = await db.update(users).set({ twoStepRequired: required, updatedAt: now }).where(eq(users.uid, uid)).returning();
  return row ?? null;
}

/** Records a person's exemption from 2-step requirements, or removes it (`null`); returns the user afterwards, or `null` when there is none. */
export async function updateUserTwoStepExemption(
  db: SignonDatabase,
  uid: string,
  exemption: { reason: string; until: Date } | null,
  now: Date,
): Promise<User | null> {
  const [row] = await db
    .update(users)
    .set({ twoStepExemptionReason: exemption?.reason ?? null, twoStepExemptUntil: exemption?.until ?? null, updatedAt: now })
    .where(eq(users.uid, uid))
    .returning();
  return row ?? null;
}

/** Sets or clears an organisation's 2-step requirement; returns the organisation afterwards, or `null` when there is none. */
export async function updateOrganisationTwoStepRequired(db: SignonDatabase, id: string, required: boolean): Promise<Organisation | null> {
  const [row] = await db.update(organisations).set({ twoStepRequired: required }).where(eq(organisations.id, id)).returning();
  return row ?? null;
}

/** Whether the organisation requires 2-step verification of its people (`false` for none). */
export async function organisationRequiresTwoStep(db: SignonDatabase, organisationId: string | null): Promise<boolean> {
  if (organisationId === null) return false;
  const [row] = await db.select({ required: organisations.twoStepRequired }).from(organisations).where(eq(organisations.id, organisationId)).limit(1);
  return row?.required ?? false;
}
