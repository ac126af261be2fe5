import { randomUUID } from "node:crypto";
import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import { findOrganisationBySlug, insertOrganisation, lockOrganisationTree, type Organisation } from "../repositories/organisations.js";
import { AccountError } from "./manage-users.js";
import { ParentRefusedError, parentRefusal } from "./organisation-tree.js";

const slugPattern = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Creates an organisation (S18): a slug and a content id (a UUID, generated
 * unless given), optionally under a parent and closed. `origin` is recorded
 * in the audit event (none from the command line).
 */
export async function createOrganisation(
  ctx: SignonContext,
  organisation: { slug: string; name: string; contentId?: string | undefined; parentId?: string | null | undefined; closed?: boolean | undefined },
  actorUid: string | null = null,
  origin: RequestOrigin | null = null,
): Promise<Organisation> {
  if (!slugPattern.test(organisation.slug) || organisation.slug.length > 100) {
    throw new AccountError("A slug is lower-case letters and digits separated by single hyphens");
  }
  const name = organisation.name.trim();
  if (name === "" || name.length > 200) throw new AccountError("A name has 1 to 200 characters");
  if (organisation.contentId !== undefined && !uuidPattern.test(organisation.contentId)) throw new AccountError("A content id is a UUID");
  if (await findOrganisationBySlug(ctx.db, organisation.slug)) throw new AccountError(`An organisation with slug ${organisation.slug} already exists`);
  const now = ctx.now();
  return ctx.db.transaction(async (tx) => {
    const parentId = organisation.parentId?.toLowerCase() ?? null;
    if (parentId !== null) {
      await lockOrganisationTree(tx);
      const refusal = await parentRefusal(tx, null, parentId);
      if (refusal !== null) throw new ParentRefusedError(refusal);
    }
    const created = await insertOrganisation(tx, {
      id: randomUUID(),
      slug: organisation.slug,
      name,
      contentId: organisation.contentId?.toLowerCase() ?? randomUUID(),
      parentId,
      closed: organisation.closed ?? false,
      createdAt: now,
    });
    const treeDetails = { ...(parentId === null ? {} : { parent_id: parentId }), ...(created.closed ? { closed: true } : {}) };
    await audit(tx, { action: "organisation_created", at: now, actorUid, origin, details: { slug: created.slug, ...treeDetails } });
    return created;
  });
}

/** Finds an organisation by slug or says plainly that there is none. */
export async function requireOrganisation(ctx: SignonContext, slug: string): Promise<Organisation> {
  const organisation = await findOrganisationBySlug(ctx.db, slug);
  if (!organisation) throw new AccountError(`No organisation has slug ${slug}`);
  return organisation;
}
