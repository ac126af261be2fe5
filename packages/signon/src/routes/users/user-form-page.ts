import type { FastifyReply, FastifyRequest } from "fastify";
import { invitationGrid } from "../../accounts/invitations.js";
import { choosesOrganisation, organisationChoices, type UserFormFields } from "../../accounts/user-form.js";
import { renderPage } from "../../web/page.js";
import { assignableRoles, mayAssignOrganisation } from "../../web/policy.js";
import { signedInUser } from "../../web/signed-in.js";
import { roleLabels } from "./format.js";
import { errorSummary } from "./managed-user.js";

/**
 * What the invite and edit forms need besides their values: the roles the
 * actor may give, the open organisations they may choose (none for
 * organisation admins, who keep people in their own; `keepOrganisationId`,
 * the person's organisation now, even when closed), labels and the error summary.
 */
export async function userFormChoices(request: FastifyRequest, form: UserFormFields, errors: Record<string, string>, keepOrganisationId: string | null = null) {
  const actor = signedInUser(request);
  const organisations = choosesOrganisation(actor) ? await organisationChoices(request.server.signon, actor, keepOrganisationId) : [];
  return {
    form: { ...form, organisation: form.organisation ?? "" },
    roles: assignableRoles(actor),
    roleLabels,
    choosesOrganisation: choosesOrganisation(actor),
    offersNoOrganisation: mayAssignOrganisation(actor, null),
    organisations,
    errors,
    errorSummary: errorSummary(errors),
  };
}

/** The invitation form, empty or with the values (and ticked permissions) and messages of a refused post. */
export async function renderInviteForm(
  request: FastifyRequest,
  reply: FastifyReply,
  form: UserFormFields,
  errors: Record<string, string> = {},
  ticked: readonly string[] = [],
): Promise<FastifyReply> {
  const status = Object.keys(errors).length > 0 ? 400 : 200;
  const grid = await invitationGrid(request.server.signon.db, signedInUser(request), ticked);
  return renderPage(request, reply, "users/new.eta", { title: "Invite a user", grid, ...(await userFormChoices(request, form, errors)) }, status);
}
