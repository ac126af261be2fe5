import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { resendInvitation } from "../../accounts/invitations.js";
import { AccountError, unlockUser, unsuspendUser } from "../../accounts/manage-users.js";
import type { UserDetails } from "../../accounts/user-details.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { requestOrigin } from "../../http/request-origin.js";
import { mailErrorForLog } from "../../mail/send-mail.js";
import { redirectWithFlash } from "../../web/page.js";
import { signedInUser } from "../../web/signed-in.js";
import { invitationMailFailedText } from "./invite.js";
import { managedUser, UidParams, usersFormGuards } from "./managed-user.js";
import { renderUserPage } from "./show.js";

const CsrfOnlyBody = Type.Object({ _csrf: Type.String({ maxLength: 256 }) }, { additionalProperties: false });
/** `new_password`: whether the person must choose a new password (a reset link is mailed); `yes` when left out. */
const UnsuspendBody = Type.Object(
  { _csrf: Type.String({ maxLength: 256 }), new_password: Type.Optional(Type.Union([Type.Literal("yes"), Type.Literal("no")])) },
  { additionalProperties: false },
);

/**
 * Runs an account action on the managed user: refusals of the domain
 * function (`AccountError`) come back as the user page with the message next
 * to the action's form (400); success redirects to the user page with a flash.
 */
export async function runAction(
  request: FastifyRequest,
  reply: FastifyReply,
  details: UserDetails,
  field: string,
  action: () => Promise<unknown>,
  done: string,
): Promise<FastifyReply> {
  try {
    await action();
  } catch (error) {
    if (error instanceof AccountError) return renderUserPage(request, reply, details, { actionErrors: { [field]: error.message } });
    throw error;
  }
  return redirectWithFlash(request, reply, `/users/${details.user.uid}`, { kind: "success", text: done });
}

/**
 * Unsuspend, unlock and resend an invitation: small forms on the user page,
 * each a POST to `/users/:uid/<action>`. Suspending and resetting 2-step
 * verification ask for confirmation first (`suspend.ts`, `reset-two-step.ts`).
 */
const accountActionRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const options = {
    config: { errorFormat: "html" as const },
    preValidation: requireFormBody,
    preHandler: usersFormGuards(app),
  };

  app.post("/users/:uid/unsuspend", { ...options, schema: { params: UidParams, body: UnsuspendBody } }, async (request, reply) => {
    const details = await managedUser(request, reply, request.params.uid);
    if (!details) return reply;
    const actor = signedInUser(request);
    const requireNewPassword = request.body.new_password !== "no";
    const log = request.log;
    const unsuspend = () =>
      unsuspendUser(app.signon, details.user.email, actor.uid, requestOrigin(request), {
        requireNewPassword,
        onMailFailure: (error) => log.error({ mailError: mailErrorForLog(error) }, "new password e-mail could not be sent"),
      });
    const done =
      details.user.passwordHash === null
        ? `${details.user.name} is no longer suspended. They have not accepted their invitation yet: their link works again until it expires, or send a new one.`
        : requireNewPassword
          ? `${details.user.name} is no longer suspended. Their old password no longer works: a link to choose a new one is e-mailed to ${details.user.email}.`
          : `${details.user.name} is no longer suspended.`;
    return runAction(request, reply, details, "unsuspend", unsuspend, done);
  });

  app.post("/users/:uid/unlock", { ...options, schema: { params: UidParams, body: CsrfOnlyBody } }, async (request, reply) => {
    const details = await managedUser(request, reply, request.params.uid);
    if (!details) return reply;
    const actor = signedInUser(request);
    if (!details.locked && details.failures.length === 0) {
      return renderUserPage(request, reply, details, { actionErrors: { unlock: `${details.user.name} is not locked` } });
    }
    return runAction(request, reply, details, "unlock", () => unlockUser(app.signon, details.user.email, actor.uid, requestOrigin(request)), `${details.user.name} is unlocked.`);
  });

  app.post("/users/:uid/resend-invitation", { ...options, schema: { params: UidParams, body: CsrfOnlyBody } }, async (request, reply) => {
    const details = await managedUser(request, reply, request.params.uid);
    if (!details) return reply;
    const actor = signedInUser(request);
    let outcome;
    try {
      outcome = await resendInvitation(app.signon, details.user.uid, actor, requestOrigin(request));
    } catch (error) {
      if (error instanceof AccountError) return renderUserPage(request, reply, details, { actionErrors: { "resend-invitation": error.message } });
      throw error;
    }
    const location = `/users/${details.user.uid}`;
    if (outcome.mailFailure !== undefined) {
      request.log.error({ mailError: mailErrorForLog(outcome.mailFailure) }, "invitation e-mail could not be sent");
      return redirectWithFlash(request, reply, location, { kind: "error", text: invitationMailFailedText });
    }
    return redirectWithFlash(request, reply, location, { kind: "success", text: `A new invitation is sent to ${details.user.email}.` });
  });
};

export default accountActionRoutes;
