import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { checkInvitationPermissions, inviteUser } from "../../accounts/invitations.js";
import { AccountError } from "../../accounts/manage-users.js";
import { checkUserForm, emailMaxLength, personNameMaxLength } from "../../accounts/user-form.js";
import { fieldValues } from "../../http/form-body.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { requestOrigin } from "../../http/request-origin.js";
import { mailErrorForLog } from "../../mail/send-mail.js";
import { overLongAnswer } from "../../web/over-long-fields.js";
import { redirectWithFlash } from "../../web/page.js";
import { signedInUser } from "../../web/signed-in.js";
import { usersFormGuards, usersPageGuards } from "./managed-user.js";
import { renderInviteForm } from "./user-form-page.js";

/** The flash after an invitation whose e-mail could not be sent: the account exists, the link can be sent again. */
export const invitationMailFailedText = "The invitation e-mail could not be sent. Use Resend invitation.";

/** The invite form as posted; `organisation` only where the actor chooses one. */
export const UserFormBody = Type.Object(
  {
    _csrf: Type.String({ maxLength: 256 }),
    name: Type.String({ maxLength: personNameMaxLength }),
    email: Type.String({ maxLength: emailMaxLength }),
    role: Type.String({ maxLength: 50 }),
    organisation: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { additionalProperties: false },
);

/** The invite form as posted: the user's fields and the permission boxes ticked. */
const InviteBody = Type.Object(
  {
    ...UserFormBody.properties,
    permissions: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Array(Type.String({ maxLength: 200 }), { maxItems: 1000 })])),
  },
  { additionalProperties: false },
);

/** What the messages call the typed fields of the invite and edit forms. */
export const userFormNouns = { name: "a name", email: "an e-mail address" };

const inviteAnswer = overLongAnswer(InviteBody, userFormNouns, (request, reply, body, errors) => {
  const { _csrf: _token, permissions: sent, ...form } = body;
  return renderInviteForm(request, reply, form, errors, fieldValues(sent));
});

/**
 * `GET /users/new` shows the invitation form (with the permission grid of
 * what the actor may grant); `POST /users/new` creates the account, records
 * the permissions to grant on acceptance and mails the invitation.
 */
const inviteUserRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get("/users/new", { config: { errorFormat: "html" }, preHandler: usersPageGuards }, async (request, reply) => {
    return renderInviteForm(request, reply, { name: "", email: "", role: "normal" });
  });

  app.post(
    "/users/new",
    {
      config: { errorFormat: "html", overLong: inviteAnswer },
      schema: { body: InviteBody },
      preValidation: requireFormBody,
      preHandler: usersFormGuards(app),
    },
    async (request, reply) => {
      const actor = signedInUser(request);
      const { _csrf: _token, permissions: sent, ...form } = request.body;
      const ticked = fieldValues(sent);
      const checked = await checkUserForm(app.signon, actor, form);
      if (!checked.ok) return renderInviteForm(request, reply, form, checked.errors, ticked);
      try {
        await checkInvitationPermissions(app.signon.db, actor, ticked);
      } catch (error) {
        if (error instanceof AccountError) return renderInviteForm(request, reply, form, { permissions: error.message }, ticked);
        throw error;
      }
      try {
        const { user, mailFailure } = await inviteUser(app.signon, { ...checked.values, permissions: ticked }, actor, requestOrigin(request));
        if (mailFailure !== undefined) {
          request.log.error({ mailError: mailErrorForLog(mailFailure) }, "invitation e-mail could not be sent");
          return redirectWithFlash(request, reply, `/users/${user.uid}`, { kind: "error", text: invitationMailFailedText });
        }
        return redirectWithFlash(request, reply, `/users/${user.uid}`, { kind: "success", text: `Invitation sent to ${user.email}.` });
      } catch (error) {
        if (error instanceof AccountError) return renderInviteForm(request, reply, form, { email: error.message }, ticked);
        throw error;
      }
    },
  );
};

export default inviteUserRoutes;
