import type { SignonDatabase } from "../db/database.js";
import { AccountError } from "./manage-users.js";
import { findOrganisationById } from "../repositories/organisation-admin.js";
import { listOrganisationSubtreeIds } from "../repositories/organisations.js";

/**
 * Why `parentId` cannot be the parent of `organisationId` (an organisation
 * being created when `null`), or `null` when it can: the parent must exist
 * and must not be the organisation itself or one under it (the tree has no
 * cycles). Call inside the transaction that makes the change, after
 * `lockOrganisationTree`.
 */
export async function parentRefusal(db: SignonDatabase, organisationId: string | null, parentId: string): Promise<string | null> {
  if (!(await findOrganisationById(db, parentId))) return "Choose one of the organisations listed";
  if (organisationId === null) return null;
  if (parentId === organisationId) return "An organisation cannot be its own parent";
  if ((await listOrganisationSubtreeIds(db, organisationId)).includes(parentId)) {
    return "That organisation is under this one: choose one that is not, so the tree has no loop";
  }
  return null;
}

/** A parent refused by `parentRefusal`, thrown where the change is not a form (creation, import). */
export class ParentRefusedError extends AccountError {}
