import { and, eq, inArray, isNull, sql } from "drizzle-orm";
import type { Queryable } from "../db/database.js";
import { learners } from "../db/schema.js";

/** A learner record. */
export interface LearnerRow {
  readonly id: number;
  readonly username: string;
  readonly email: string;
  readonly signonUid: string | null;
}

const columns = { id: learners.id, username: learners.username, email: learners.email, signonUid: learners.signonUid };

/** The learner with this username, or null. */
export async function findLearnerByUsername(q: Queryable, username: string): Promise<LearnerRow | null> {
  const rows = await q.select(columns).from(learners).where(eq(learners.username, username));
  return rows[0] ?? null;
}

/** Learners by username, for bulk loads. */
export async function findLearnersByUsername(q: Queryable, usernames: readonly string[]): Promise<Map<string, LearnerRow>> {
  const found = new Map<string, LearnerRow>();
  for (let at = 0; at < usernames.length; at += 5000) {
    const rows = await q.select(columns).from(learners).where(inArray(learners.username, usernames.slice(at, at + 5000)));
    for (const row of rows) found.set(row.username, row);
  }
  return found;
}

/** The usernames of learners by id, for bulk loads. */
export async function findUsernamesById(q: Queryable, ids: readonly number[]): Promise<Map<number, string>> {
  const found = new Map<number, string>();
  for (let at = 0; at < ids.length; at += 5000) {
    const rows = await q.select({ id: learners.id, username: learners.username }).from(learners).where(inArray(learners.id, ids.slice(at, at + 5000)));
    for (const row of rows) found.set(row.id, row.username);
  }
  return found;
}

/** The learner linked to a Sign-on uid, or null. */
export async function findLearnerBySignonUid(q: Queryable, uid: string): Promise<LearnerRow | null> {
  const [linked] = await q.select(columns).from(learners).where(eq(learners.signonUid, uid));
  return linked ?? null;
}

/**
 * The learner of a Sign-on user: the one linked to its uid, or else the one
 * with its e-mail (case-insensitive) and no uid yet, which is linked now.
 * Null when there is none.
 */
export async function linkSignonUser(q: Queryable, user: { uid: string; email: string }): Promise<LearnerRow | null> {
  const linked = await findLearnerBySignonUid(q, user.uid);
  if (linked !== null) return linked;
  const byEmail = await q
    .update(learners)
    .set({ signonUid: user.uid })
    .where(
      and(
        isNull(learners.signonUid),
        eq(
          learners.id,
          sql`(select min(${learners.id}) from ${learners} where lower(${learners.email}) = lower(${user.email}) and ${learners.signonUid} is null)`,
        ),
      ),
    )
    .returning(columns);
  return byEmail[0] ?? null;
}

/** Creates or updates learners by id. */
export async function upsertLearners(q: Queryable, rows: readonly LearnerRow[]): Promise<void> {
  for (let at = 0; at < rows.length; at += 1000) {
    await q
      .insert(learners)
      .values(rows.slice(at, at + 1000).map((row) => ({ ...row })))
      .onConflictDoUpdate({
        target: learners.id,
        set: { username: sql`excluded.username`, email: sql`excluded.email`, signonUid: sql`coalesce(excluded.signon_uid, ${learners.signonUid})` },
      });
  }
}
