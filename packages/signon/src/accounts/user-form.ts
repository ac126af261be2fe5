import type { SignonContext } from "../context.js";
import { listOrganisationChoices } from "../repositories/user-form-choices.js";
import { assignableRoles, mayAssignOrganisation, type Actor } from "../web/policy.js";
import { emailPolicyProblem } from "./email-policy.js";
import type { Role } from "./manage-users.js";

/** The fields of the invite and edit forms, as posted. `organisation` is absent where the actor cannot choose one. */
export interface UserFormFields {
  name: string;
  email: string;
  role: string;
  organisation?: string | undefined;
}

/** What the invite and edit forms ask for, checked. */
export interface UserFormValues {
  name: string;
  email: string;
  role: Role;
  organisationId: string | null;
}

const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Whether the actor chooses an organisation on the forms (organisation admins keep people in their own). */
export function choosesOrganisation(actor: Actor): boolean {
  return actor.role === "superadmin" || actor.role === "admin";
}

/**
 * Checks the invite or edit form for this actor: a name, an e-mail address,
 * a role the actor may give and an organisation the actor may assign (`""`:
 * none). A new e-mail address (other than `currentEmail`, the edited user's)
 * must pass the installation's e-mail policy. Returns the values, or
 * messages by field name.
 */
export async function checkUserForm(
  ctx: SignonContext,
  actor: Actor,
  fields: UserFormFields,
  currentEmail?: string,
): Promise<{ ok: true; values: UserFormValues } | { ok: false; errors: Record<string, string> }> {
  const errors: Record<string, string> = {};
  const name = fields.name.trim();
  if (name === "") errors.name = "Enter a name";
  else if (name.length > 200) errors.name = "Enter a name of at most 200 characters";
  const email = fields.email.trim();
  if (!emailPattern.test(email) || email.length > 254) errors.email = "Enter an e-mail address like name@example.org";
  else if (email.toLowerCase() !== currentEmail?.toLowerCase()) {
    const refused = emailPolicyProblem(ctx.config.emailPolicy, email);
    if (refused !== null) errors.email = refused;
  }
  const role = (assignableRoles(actor) as readonly string[]).includes(fields.role) ? (fields.role as Role) : null;
  if (role === null) errors.role = "Choose one of the roles listed";
  let organisationId: string | null;
  if (!choosesOrganisation(actor)) {
    organisationId = actor.organisationId;
    if (fields.organisation !== undefined && fields.organisation !== (actor.organisationId ?? "")) {
      errors.organisation = "You can only put people in your own organisation";
    }
  } else {
    organisationId = fields.organisation === undefined || fields.organisation === "" ? null : fields.organisation;
    const known = organisationId === null || (await listOrganisationChoices(ctx.db)).some((organisation) => organisation.id === organisationId);
    if (!known || !mayAssignOrganisation(actor, organisationId)) errors.organisation = "Choose one of the organisations listed";
  }
  if (Object.keys(errors).length > 0 || role === null) return { ok: false, errors };
  return { ok: true, values: { name, email, role, organisationId } };
}
