import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import { findOrganisationById, listMemberUids, updateOrganisationRow } from "../repositories/organisation-admin.js";
import { findOrganisationBySlug, lockOrganisationTree, type Organisation } from "../repositories/organisations.js";
import { queuePushes } from "../repositories/push-deliveries.js";
import { isUniqueViolation, violatedConstraint } from "../repositories/unique-violation.js";
import { pushesCommitted } from "../pushes/queue.js";
import type { FieldErrors } from "../applications/application-fields.js";
import { parentRefusal } from "./organisation-tree.js";

const slugPattern = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** Longest name and slug of an organisation, in characters. */
export const organisationFieldLimits = { name: 200, slug: 100 } as const;

/** Checks an organisation's name and slug as typed; returns them trimmed, or a message per field. */
export function checkOrganisationFields(input: { name: string; slug: string }): { ok: true; name: string; slug: string } | { ok: false; errors: FieldErrors } {
  const errors: FieldErrors = {};
  const name = input.name.trim();
  const slug = input.slug.trim();
  if (name === "" || name.length > organisationFieldLimits.name) errors.name = `Enter a name of 1 to ${organisationFieldLimits.name} characters`;
  if (slug === "" || slug.length > organisationFieldLimits.slug || !slugPattern.test(slug)) {
    errors.slug = `Enter a slug of up to ${organisationFieldLimits.slug} lower-case letters and digits, separated by single hyphens`;
  }
  return Object.keys(errors).length > 0 ? { ok: false, errors } : { ok: true, name, slug };
}

/** What the organisation form sends: `parent` is an organisation id or `""` (none), absent to keep it; `closed` absent to keep it. */
export interface OrganisationInput {
  name: string;
  slug: string;
  parent?: string | undefined;
  closed?: boolean | undefined;
  /** A new content id (a UUID), set only by the organisation register; absent keeps it. */
  contentId?: string | undefined;
}

/**
 * Changes an organisation's name, slug (unique), parent (no cycles), closed
 * flag or content id (unique). A new slug or content id is part of each
 * member's `/user.json`, so every member's applications are told (S13).
 * Returns the organisation afterwards, field errors, or `null` when there is
 * no such organisation.
 */
export async function updateOrganisation(
  ctx: SignonContext,
  id: string,
  input: OrganisationInput,
  actor: { uid: string | null; origin: RequestOrigin | null },
): Promise<{ ok: true; organisation: Organisation } | { ok: false; errors: FieldErrors } | null> {
  const current = await findOrganisationById(ctx.db, id);
  if (!current) return null;
  const checked = checkOrganisationFields(input);
  if (!checked.ok) return checked;
  const holder = await findOrganisationBySlug(ctx.db, checked.slug);
  if (holder && holder.id !== id) return { ok: false, errors: { slug: `Another organisation has the slug ${checked.slug}` } };
  const changes: { name?: string; slug?: string; parentId?: string | null; closed?: boolean; contentId?: string } = {};
  if (checked.name !== current.name) changes.name = checked.name;
  if (checked.slug !== current.slug) changes.slug = checked.slug;
  if (input.parent !== undefined) {
    const parentId = input.parent === "" ? null : input.parent.toLowerCase();
    if (parentId !== current.parentId) changes.parentId = parentId;
  }
  if (input.closed !== undefined && input.closed !== current.closed) changes.closed = input.closed;
  if (input.contentId !== undefined && input.contentId.toLowerCase() !== current.contentId) changes.contentId = input.contentId.toLowerCase();
  if (Object.keys(changes).length === 0) return { ok: true, organisation: current };
  const now = ctx.now();
  const organisation = await ctx.db.transaction(async (tx) => {
    if (changes.parentId !== undefined && changes.parentId !== null) {
      await lockOrganisationTree(tx);
      const refusal = await parentRefusal(tx, id, changes.parentId);
      if (refusal !== null) return { refusal };
    }
    const updated = await updateOrganisationRow(tx, id, changes);
    if (!updated) return null;
    const parentDetails = changes.parentId === undefined ? {} : { parent_id: changes.parentId };
    const closedDetails = changes.closed === undefined ? {} : { closed: changes.closed };
    await audit(tx, {
      action: "organisation_updated",
      at: now,
      actorUid: actor.uid,
      origin: actor.origin,
      details: {
        organisation_id: id,
        changed: Object.keys(changes).sort(),
        ...(changes.slug ? { previous_slug: current.slug, slug: changes.slug } : {}),
        ...(changes.contentId ? { previous_content_id: current.contentId, content_id: changes.contentId } : {}),
        ...parentDetails,
        ...closedDetails,
      },
    });
    if (changes.slug !== undefined || changes.contentId !== undefined) {
      for (const uid of await listMemberUids(tx, id)) {
        await queuePushes(tx, { userUid: uid, kinds: ["update"], targets: { applicationsOfUser: ctx.config.pushes.fanOut }, now });
      }
    }
    return updated;
  }).catch((error: unknown) => {
    // Another organisation took the slug between the check above and this change, or has the content id.
    if (isUniqueViolation(error)) return violatedConstraint(error) === "organisations_content_id_unique" ? ("content_id_taken" as const) : ("slug_taken" as const);
    throw error;
  });
  if (organisation === "slug_taken") return { ok: false, errors: { slug: `Another organisation has the slug ${checked.slug}` } };
  if (organisation === "content_id_taken") return { ok: false, errors: { content_id: `Another organisation has the content id ${changes.contentId ?? ""}` } };
  if (!organisation) return null;
  if ("refusal" in organisation) return { ok: false, errors: { parent: organisation.refusal } };
  if (changes.slug !== undefined || changes.contentId !== undefined) pushesCommitted(ctx);
  return { ok: true, organisation };
}

