import { and, desc, eq, gt, max, or, sql } from "drizzle-orm";
import type { SignonDatabase } from "../db/database.js";
import { signInFailures } from "../db/schema.js";

/** What failed: a password, or a 2-step code after a right password. */
export type SignInFailureKind = "password" | "two_step_code";

/** One (e-mail address, source address, kind) count, as administrators see it. */
export type SignInFailureRow = typeof signInFailures.$inferSelect;

/** How many failures of a kind a source may make for one e-mail address before it is refused for it. */
export interface SignInFailureLimit {
  maxFailures: number;
  /** The counting window, from the first failure. */
  windowSeconds: number;
  /** How long the source is refused for the address once it reaches `maxFailures`. */
  blockSeconds: number;
}

/**
 * Counts one failure of `kind` for (email, source): in one statement, so
 * failures on several instances at once all count. A window that has ended
 * starts again at 1. The failure that reaches the limit sets `blocked_until`
 * (unless a block is running). Returns the row after the count.
 */
export async function countSignInFailure(
  db: SignonDatabase,
  key: { email: string; source: string; kind: SignInFailureKind },
  limit: SignInFailureLimit,
  now: Date,
): Promise<{ failures: number; blockedUntil: Date | null }> {
  const nowSql = sql`${now.toISOString()}::timestamptz`;
  const expired = sql`${signInFailures.windowEndsAt} <= ${nowSql}`;
  const counted = sql`case when ${expired} then 1 else ${signInFailures.failures} + 1 end`;
  const blockUntil = new Date(now.getTime() + limit.blockSeconds * 1000);
  const [row] = await db
    .insert(signInFailures)
    .values({
      ...key,
      failures: 1,
      windowEndsAt: new Date(now.getTime() + limit.windowSeconds * 1000),
      blockedUntil: limit.maxFailures <= 1 ? blockUntil : null,
      lastFailedAt: now,
    })
    .onConflictDoUpdate({
      target: [signInFailures.email, signInFailures.source, signInFailures.kind],
      set: {
        failures: counted,
        windowEndsAt: sql`case when ${expired} then excluded.window_ends_at else ${signInFailures.windowEndsAt} end`,
        blockedUntil: sql`case when ${counted} >= ${limit.maxFailures} and (${signInFailures.blockedUntil} is null or ${signInFailures.blockedUntil} <= ${nowSql}) then ${blockUntil.toISOString()}::timestamptz else ${signInFailures.blockedUntil} end`,
        lastFailedAt: now,
      },
    })
    .returning({ failures: signInFailures.failures, blockedUntil: signInFailures.blockedUntil });
  if (!row) throw new Error("upsert returned no row");
  return row;
}

/** The end of the latest block of `source` for `email` (any kind) still running at `now`, or `null`. */
export async function findSignInBlock(db: SignonDatabase, email: string, source: string, now: Date): Promise<Date | null> {
  const [row] = await db
    .select({ until: max(signInFailures.blockedUntil) })
    .from(signInFailures)
    .where(and(eq(signInFailures.email, email), eq(signInFailures.source, source), gt(signInFailures.blockedUntil, now)));
  return row?.until ?? null;
}

/** The counts for `email` that still matter at `now` (window open or block running), most failures first. */
export async function listSignInFailures(db: SignonDatabase, email: string, now: Date): Promise<SignInFailureRow[]> {
  return db
    .select()
    .from(signInFailures)
    .where(and(eq(signInFailures.email, email), or(gt(signInFailures.windowEndsAt, now), gt(signInFailures.blockedUntil, now))))
    .orderBy(desc(signInFailures.failures), desc(signInFailures.lastFailedAt));
}

/** Forgets the counts of `email`: of one source (and kind) when given, otherwise of every source. */
export async function deleteSignInFailures(
  db: SignonDatabase,
  email: string,
  only: { source: string; kind?: SignInFailureKind } | null = null,
): Promise<void> {
  const conditions = [eq(signInFailures.email, email)];
  if (only) conditions.push(eq(signInFailures.source, only.source));
  if (only?.kind) conditions.push(eq(signInFailures.kind, only.kind));
  await db.delete(signInFailures).where(and(...conditions));
}
