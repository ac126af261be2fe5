import { audit, type AuditAction } from "../audit.js";
import type { SignonContext } from "../context.js";
import { findOrganisationByContentId, findOrganisationBySlug } from "../repositories/organisations.js";
import { isUniqueViolation } from "../repositories/unique-violation.js";
import { pushesCommitted } from "../pushes/queue.js";
import { AccountError } from "./manage-users.js";
import type { OrganisationImportRow, UnreadableImportRow } from "./organisation-import-file.js";
import { ParentRefusedError } from "./organisation-tree.js";
import { createOrganisation } from "./organisations.js";
import { updateOrganisation } from "./update-organisation.js";

/** What became of one row. */
export type ImportOutcome = "created" | "updated" | "unchanged" | "invalid";

export interface ImportRowResult {
  row: number;
  slug: string | null;
  outcome: ImportOutcome;
  /** Why the row is invalid, or what changed. */
  message?: string;
}

/** How {@link importOrganisations} applies the rows. */
export interface ImportOptions {
  /** Roll everything back once the outcomes are known: they are exactly what a real run would do. */
  dryRun: boolean;
  /** Roll everything back when any row is invalid, so the rows apply together or not at all. */
  allOrNothing?: boolean;
  /**
   * Where the rows come from. `file` (the default) matches organisations by
   * slug and refuses a row whose content id differs from the organisation's.
   * `register` treats the rows as the source of both: a row matches the
   * organisation with its content id, failing that the one with its slug, and
   * that organisation takes the row's slug and content id.
   */
  source?: "file" | "register";
  /** The audit event recorded for the whole run, with the counts added to `details` (default `organisations_imported`). */
  event?: { action: AuditAction; details: Record<string, unknown> };
}

/** Rolls the transaction of a dry run back once its outcomes are known. */
class DryRunDone extends Error {
  constructor(readonly results: ImportRowResult[]) {
    super("dry run");
  }
}

/**
 * Creates or updates organisations from the rows of an import file, matched
 * by slug: running the same file twice changes nothing the second time. A
 * row's parent may come later in the file (rows are applied parents first).
 * A row that cannot be applied (a parent that exists nowhere, a loop, a
 * content id that differs from the organisation's) is reported invalid and
 * the others still apply, unless `allOrNothing`. Everything happens in one
 * transaction with audit events for each change and one for the import;
 * `dryRun` rolls it back, so its outcomes are exactly what a real run would
 * do. Results are in file order.
 */
export async function importOrganisations(
  ctx: SignonContext,
  rows: readonly OrganisationImportRow[],
  unreadable: readonly UnreadableImportRow[],
  options: ImportOptions,
): Promise<ImportRowResult[]> {
  const results = new Map<number, ImportRowResult>();
  for (const bad of unreadable) results.set(bad.row, { row: bad.row, slug: bad.slug, outcome: "invalid", message: bad.message });
  const bySlug = new Map<string, OrganisationImportRow>();
  for (const row of rows) {
    if (bySlug.has(row.slug)) results.set(row.row, { row: row.row, slug: row.slug, outcome: "invalid", message: `The slug ${row.slug} is already on row ${bySlug.get(row.slug)?.row}` });
    else bySlug.set(row.slug, row);
  }
  try {
    await ctx.db.transaction(async (tx) => {
      // Deliveries are woken by the caller's context once committed (a register's new slug or content id queues pushes).
      const inTx: SignonContext = { ...ctx, db: tx, pushesQueued: undefined };
      const done = new Set<string>();
      const failed = new Set<string>();
      let pending = [...bySlug.values()];
      while (pending.length > 0) {
        // A row waits while its parent is a row of the file not yet applied.
        const ready = pending.filter((row) => typeof row.parentSlug !== "string" || !bySlug.has(row.parentSlug) || done.has(row.parentSlug) || failed.has(row.parentSlug));
        if (ready.length === 0) {
          for (const row of pending) results.set(row.row, { row: row.row, slug: row.slug, outcome: "invalid", message: loopMessage(row, bySlug) });
          break;
        }
        for (const row of ready) {
          const result = await applyRow(inTx, row, failed, options.source ?? "file");
          results.set(row.row, result);
          (result.outcome === "invalid" ? failed : done).add(row.slug);
        }
        pending = pending.filter((row) => !ready.includes(row));
      }
      const all = [...results.values()];
      const count = (outcome: ImportOutcome) => all.filter((result) => result.outcome === outcome).length;
      const counts = { created: count("created"), updated: count("updated"), unchanged: count("unchanged"), invalid: count("invalid") };
      await audit(tx, { action: options.event?.action ?? "organisations_imported", at: ctx.now(), details: { ...options.event?.details, ...counts } });
      if (options.dryRun || (options.allOrNothing === true && counts.invalid > 0)) throw new DryRunDone(all);
    });
    if ([...results.values()].some((result) => result.outcome === "updated")) pushesCommitted(ctx);
  } catch (error) {
    if (!(error instanceof DryRunDone)) throw error;
  }
  return [...results.values()].sort((a, b) => a.row - b.row);
}

/** Why a row waiting for its parent never got it: the row is on a loop of parents, or under one. */
function loopMessage(row: OrganisationImportRow, bySlug: ReadonlyMap<string, OrganisationImportRow>): string {
  const seen = new Set<string>();
  let slug: string | null | undefined = row.slug;
  while (typeof slug === "string" && !seen.has(slug)) {
    seen.add(slug);
    slug = bySlug.get(slug)?.parentSlug;
  }
  return slug === row.slug ? "Its parents form a loop" : `Its parent ${String(row.parentSlug)} is on a loop of parents, or under one`;
}

async function applyRow(ctx: SignonContext, row: OrganisationImportRow, failedSlugs: ReadonlySet<string>, source: "file" | "register"): Promise<ImportRowResult> {
  const base = { row: row.row, slug: row.slug };
  const parent = typeof row.parentSlug === "string" ? await findOrganisationBySlug(ctx.db, row.parentSlug) : null;
  if (typeof row.parentSlug === "string" && !parent) {
    // A parent whose own row was invalid may still exist from before: then the row attaches to it as it is.
    const message = failedSlugs.has(row.parentSlug) ? `Its parent ${row.parentSlug} is invalid` : `No organisation has the slug ${row.parentSlug}`;
    return { ...base, outcome: "invalid", message };
  }
  const byContentId = source === "register" && row.contentId !== undefined ? await findOrganisationByContentId(ctx.db, row.contentId) : null;
  const existing = byContentId ?? (await findOrganisationBySlug(ctx.db, row.slug));
  try {
    if (!existing) {
      await createOrganisation(ctx, { slug: row.slug, name: row.name, contentId: row.contentId, parentId: parent?.id ?? null, closed: row.closed ?? false });
      return { ...base, outcome: "created" };
    }
    if (source === "file" && row.contentId !== undefined && row.contentId !== existing.contentId) {
      return { ...base, outcome: "invalid", message: `Its content id differs from the organisation's (${existing.contentId}); a content id never changes` };
    }
    const result = await updateOrganisation(
      ctx,
      existing.id,
      {
        name: row.name,
        slug: row.slug,
        parent: row.parentSlug === undefined ? undefined : (parent?.id ?? ""),
        closed: row.closed,
        contentId: source === "register" ? row.contentId : undefined,
      },
      { uid: null, origin: null },
    );
    if (!result) return { ...base, outcome: "invalid", message: "The organisation disappeared during the import" };
    if (!result.ok) return { ...base, outcome: "invalid", message: Object.values(result.errors).join("; ") };
    const changed = [
      result.organisation.slug !== existing.slug ? "slug" : null,
      result.organisation.contentId !== existing.contentId ? "content id" : null,
      result.organisation.name !== existing.name ? "name" : null,
      result.organisation.parentId !== existing.parentId ? "parent" : null,
      result.organisation.closed !== existing.closed ? "closed" : null,
    ].filter((field) => field !== null);
    return changed.length === 0 ? { ...base, outcome: "unchanged" } : { ...base, outcome: "updated", message: `changed: ${changed.join(", ")}` };
  } catch (error) {
    if (error instanceof ParentRefusedError || error instanceof AccountError) return { ...base, outcome: "invalid", message: error.message };
    // Only the content id can collide here: the slug was looked up above, in this transaction (a register's rows change content ids through the update, which says so).
    if (isUniqueViolation(error)) return { ...base, outcome: "invalid", message: "Another organisation has this content id" };
    throw error;
  }
}
