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

export async function findOrganisationByContentId(db: SignonDatabase, contentId: string): Promise<Organisation | null> {
  const [row] = await db.select().from(organisations).where(eq(organisations.contentId, contentId.toLowerCase())).limit(1);
  return row ?? null;
}

/** The id of the organisation with this slug or, failing that, the only one with this name (in any case); `null` when none or several. */
export async function findOrganisationIdBySlugOrName(db: SignonDatabase, given: string): Promise<string | null> {
  const bySlug = await findOrganisationBySlug(db, given);
  if (bySlug) return bySlug.id;
  const byName = await db.select({ id: organisations.id }).from(organisations).where(sql`lower(${organisations.name}) = lower(${given})`).limit(2);
  return byName.length === 1 ? (byName[0]?.id ?? null) : null;
}

/**
 * The ids of an organisation and of every organisation under it, at any
 * depth (the tree has no cycles; the depth bound only guards against a
 * corrupt row).
 */
export async function listOrganisationSubtreeIds(db: SignonDatabase, rootId: string): Promise<string[]> {
  const result = await db.execute<{ id: string }>(sql`
    with recursive subtree(id, depth) as (
      select id, 0 from ${organisations} where id = ${rootId}
      union all
      select child.id, subtree.depth + 1 from ${organisations} child join subtree on child.parent_id = subtree.id where subtree.depth < 100
    )
    select distinct id from subtree`);
  return result.rows.map((row) => row.id);
}

/** The ids of an organisation and of every organisation above it, nearest first. */
export async function listOrganisationAncestorIds(db: SignonDatabase, id: string): Promise<string[]> {
  const result = await db.execute<{ id: string; depth: number }>(sql`
    with recursive chain(id, parent_id, depth) as (
      select id, parent_id, 0 from ${organisations} where id = ${id}
      union all
      select parent.id, parent.parent_id, chain.depth + 1 from ${organisations} parent join chain on parent.id = chain.parent_id where chain.depth < 100
    )
    select id, depth from chain order by depth`);
  return result.rows.map((row) => row.id);
}

/**
 * Serialises changes to the organisation tree for the rest of the
 * transaction, so two changes checked at once cannot make a cycle together.
 */
export async function lockOrganisationTree(db: SignonDatabase): Promise<void> {
  await db.execute(sql`select pg_advisory_xact_lock(hashtext('signon.organisation_tree'))`);
}
