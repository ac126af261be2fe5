import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { resendInvitation } from "../../accounts/invitations.js";
import { AccountError, suspendUser, unlockUser, unsuspendUser } from "../../accounts/manage-users.js";
import { resetTwoStep } from "../../accounts/two-step.js";
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
const SuspendBody = Type.Object({ _csrf: Type.String({ maxLength: 256 }), reason: Type.String({ maxLength: 2000 }) }, { additionalProperties: false });

/** Longest suspension reason kept. */
const reasonMaxLength = 500;

/**
 * Runs an account action on the managed user: refusals of the domain
 * function (`AccountError`) come back as the user page with the message next
 * to the action's form (400); success redirects to the user page with a flash.
 */
async function runAction(
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

/** Suspend, unsuspend, unlock, reset 2-step verification and resend an invitation: small forms on the user page, each a POST to `/users/:uid/<action>`. */
const accountActionRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const options = {
    config: { errorFormat: "html" as const },
    preValidation: requireFormBody,
    preHandler: usersFormGuards(app),
  };

  app.post("/users/:uid/suspend", { ...options, schema: { params: UidParams, body: SuspendBody } }, async (request, reply) => {
    const details = await managedUser(request, reply, request.params.uid);
    if (!details) return reply;
    const actor = signedInUser(request);
    const reason = request.body.reason.trim();
    let problem: string | null = null;
    if (details.user.uid === actor.uid) problem = "You cannot suspend your own account";
    else if (reason === "") problem = "Enter the reason for the suspension";
    else if (reason.length > reasonMaxLength) problem = `Enter a reason of at most ${reasonMaxLength} characters`;
    if (problem !== null) return renderUserPage(request, reply, details, { actionErrors: { reason: problem } });
    return runAction(request, reply, details, "reason", () => suspendUser(app.signon, details.user.email, reason, actor.uid, requestOrigin(request)), `${details.user.name} is suspended.`);
  });

  app.post("/users/:uid/unsuspend", { ...options, schema: { params: UidParams, body: CsrfOnlyBody } }, async (request, reply) => {
    const details = await managedUser(request, reply, request.params.uid);
    if (!details) return reply;
    const actor = signedInUser(request);
    return runAction(request, reply, details, "unsuspend", () => unsuspendUser(app.signon, details.user.email, actor.uid, requestOrigin(request)), `${details.user.name} is no longer suspended.`);
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

  app.post("/users/:uid/reset-two-step", { ...options, schema: { params: UidParams, body: CsrfOnlyBody } }, async (request, reply) => {
    const details = await managedUser(request, reply, request.params.uid);
    if (!details) return reply;
    if (!details.twoStepOn) {
      return renderUserPage(request, reply, details, { actionErrors: { "reset-two-step": `${details.user.name} has not set up 2-step verification` } });
    }
    const actor = signedInUser(request);
    return runAction(
      request,
      reply,
      details,
      "reset-two-step",
      () => resetTwoStep(app.signon, details.user.uid, actor, requestOrigin(request)),
      `2-step verification is reset for ${details.user.name}. They set it up again at their next sign-in.`,
    );
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
