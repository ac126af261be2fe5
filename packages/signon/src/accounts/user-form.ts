import type { SignonContext } from "../context.js";
import type { Organisation } from "../repositories/organisations.js";
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

/** Longest name of a person, in characters. */
export const personNameMaxLength = 200;
/** Longest e-mail address, in characters (RFC 5321 §4.5.3.1.3: a path of 256 octets, less its angle brackets). */
export const emailMaxLength = 254;

/**
 * Whether the actor chooses an organisation on the forms (organisation
 * admins keep people in their own; super organisation admins choose within
 * their organisation's subtree).
 */
export function choosesOrganisation(actor: Actor): boolean {
  return actor.role === "superadmin" || actor.role === "admin" || actor.role === "super_organisation_admin";
}

/**
 * The organisations the forms offer this actor: those they may assign that
 * are open, by name. `keepId`, the organisation the person is in now, stays
 * offered even when closed (its members stay; nobody new joins).
 */
export async function organisationChoices(ctx: SignonContext, actor: Actor, keepId: string | null = null): Promise<Organisation[]> {
  const all = await listOrganisationChoices(ctx.db);
  return all.filter((organisation) => mayAssignOrganisation(actor, organisation.id) && (!organisation.closed || organisation.id === keepId));
}

/**
 * Checks the invite or edit form for this actor: a name, an e-mail address,
 * a role the actor may give and an open organisation the actor may assign
 * (`""`: none). `current`, when editing: the person's e-mail address (a new
 * one must pass the installation's e-mail policy) and organisation (they may
 * stay in it if it is closed). Returns the values, or
 * messages by field name.
 */
export async function checkUserForm(
  ctx: SignonContext,
  actor: Actor,
  fields: UserFormFields,
  current: { email?: string; organisationId?: string | null } = {},
): Promise<{ ok: true; values: UserFormValues } | { ok: false; errors: Record<string, string> }> {
  const currentOrganisationId = current.organisationId ?? null;
  const errors: Record<string, string> = {};
  const name = fields.name.trim();
  if (name === "") errors.name = "Enter a name";
  else if (name.length > personNameMaxLength) errors.name = `Enter a name of at most ${personNameMaxLength} characters`;
  const email = fields.email.trim();
  if (!emailPattern.test(email) || email.length > emailMaxLength) errors.email = "Enter an e-mail address like name@example.org";
  else if (email.toLowerCase() !== current.email?.toLowerCase()) {
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
    } else if (organisationId !== null && organisationId !== currentOrganisationId && (await isClosed(ctx, organisationId))) {
      errors.organisation = "Your organisation is closed: nobody new can join it";
    }
  } else {
    organisationId = fields.organisation === undefined || fields.organisation === "" ? null : fields.organisation;
    const offered = organisationId === null || (await organisationChoices(ctx, actor, currentOrganisationId)).some((organisation) => organisation.id === organisationId);
    if (!offered || !mayAssignOrganisation(actor, organisationId)) errors.organisation = "Choose one of the organisations listed";
  }
  if (Object.keys(errors).length > 0 || role === null) return { ok: false, errors };
  return { ok: true, values: { name, email, role, organisationId } };
}

async function isClosed(ctx: SignonContext, organisationId: string): Promise<boolean> {
  return (await listOrganisationChoices(ctx.db)).some((organisation) => organisation.id === organisationId && organisation.closed);
}
