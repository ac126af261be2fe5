import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { suspendUser } from "../../accounts/manage-users.js";
import type { UserDetails } from "../../accounts/user-details.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { requestOrigin } from "../../http/request-origin.js";
import { toldToSignOut } from "../../pushes/fan-out-words.js";
import { listApplicationsPushedAboutUser, type PushFanOut } from "../../repositories/push-deliveries.js";
import { confirmField, isConfirmed, renderConfirmation, type ConfirmationPage } from "../../web/confirmation.js";
import { overLongAnswer } from "../../web/over-long-fields.js";
import { redirectWithFlash } from "../../web/page.js";
import { signedInUser } from "../../web/signed-in.js";
import { runAction } from "./account-actions.js";
import { managedUser, UidParams, usersFormGuards, usersPageGuards } from "./managed-user.js";
import { renderUserPage } from "./show.js";

/** Longest suspension reason kept. */
const reasonMaxLength = 500;

const SuspendBody = Type.Object(
  { _csrf: Type.String({ maxLength: 256 }), reason: Type.Optional(Type.String({ maxLength: reasonMaxLength })), ...confirmField },
  { additionalProperties: false },
);

/** The confirmation page of `POST /users/:uid/suspend`, where the reason is given. */
function suspendConfirmation(details: UserDetails, fanOut: PushFanOut, applications: string[], reason: { value: string; error?: string }): ConfirmationPage {
  const { user } = details;
  return {
    title: `Suspend ${user.name}`,
    consequences: [
      `${user.name} (${user.email}) can no longer sign in, to Sign-on or to any application.`,
      "Their Sign-on sessions end at once and every token they hold is revoked.",
      `${toldToSignOut(fanOut, applications, "now")}.`,
      "The reason is kept on their page and in the event log.",
    ],
    finality: "You can unsuspend them later, but the sessions and tokens ended now stay ended.",
    action: `/users/${user.uid}/suspend`,
    confirmLabel: `Suspend ${user.name}`,
    cancel: { href: `/users/${user.uid}`, label: `Cancel: back to ${user.name}` },
    field: { name: "reason", label: "Reason for the suspension", maxLength: reasonMaxLength, ...reason },
  };
}

/** Why this person cannot be suspended by this actor now, or `null`. */
function suspendRefusal(details: UserDetails, actorUid: string): string | null {
  if (details.user.uid === actorUid) return "You cannot suspend your own account";
  if (details.user.suspendedAt !== null) return `${details.user.email} is already suspended`;
  return null;
}

/** The confirmation page again, with the reason as typed and its limit by the field; the user page when they cannot be suspended. */
const reasonAnswer = overLongAnswer(SuspendBody, { reason: "a reason" }, async (request, reply, body, errors) => {
  const details = await managedUser(request, reply, (request.params as { uid: string }).uid);
  if (!details) return reply;
  const refusal = suspendRefusal(details, signedInUser(request).uid);
  if (refusal !== null) return renderUserPage(request, reply, details, { actionErrors: { reason: refusal } });
  const { fanOut } = request.server.signon.config.pushes;
  const applications = await listApplicationsPushedAboutUser(request.server.signon.db, details.user.uid, fanOut);
  const field = { value: body.reason ?? "", ...(errors["reason"] === undefined ? {} : { error: errors["reason"] }) };
  return renderConfirmation(request, reply, suspendConfirmation(details, fanOut, applications, field), { unconfirmed: !isConfirmed(body) });
});

/**
 * Suspending is two steps: `GET /users/:uid/suspend` says what will happen
 * and asks for the reason; only its form's post with `confirm=yes` and a
 * reason suspends. A post without the confirmation gets that page again
 * (400) and changes nothing.
 */
const suspendUserRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get("/users/:uid/suspend", { config: { errorFormat: "html" }, schema: { params: UidParams }, preHandler: usersPageGuards }, async (request, reply) => {
    const details = await managedUser(request, reply, request.params.uid);
    if (!details) return reply;
    const refusal = suspendRefusal(details, signedInUser(request).uid);
    if (refusal !== null) return redirectWithFlash(request, reply, `/users/${details.user.uid}`, { kind: "error", text: `${refusal}.` });
    const { fanOut } = app.signon.config.pushes;
    const applications = await listApplicationsPushedAboutUser(app.signon.db, details.user.uid, fanOut);
    return renderConfirmation(request, reply, suspendConfirmation(details, fanOut, applications, { value: "" }));
  });

  app.post(
    "/users/:uid/suspend",
    { config: { errorFormat: "html", overLong: reasonAnswer }, schema: { params: UidParams, body: SuspendBody }, preValidation: requireFormBody, preHandler: usersFormGuards(app) },
    async (request, reply) => {
      const details = await managedUser(request, reply, request.params.uid);
      if (!details) return reply;
      const actor = signedInUser(request);
      const refusal = suspendRefusal(details, actor.uid);
      if (refusal !== null) return renderUserPage(request, reply, details, { actionErrors: { reason: refusal } });
      const reason = (request.body.reason ?? "").trim();
      const confirmed = isConfirmed(request.body);
      let problem: string | undefined;
      if (reason === "") problem = "Enter the reason for the suspension";
      else if (reason.length > reasonMaxLength) problem = `Enter a reason of at most ${reasonMaxLength} characters`;
      if (!confirmed || problem !== undefined) {
        const { fanOut } = app.signon.config.pushes;
        const applications = await listApplicationsPushedAboutUser(app.signon.db, details.user.uid, fanOut);
        const field = { value: request.body.reason ?? "", ...(confirmed && problem !== undefined ? { error: problem } : {}) };
        return renderConfirmation(request, reply, suspendConfirmation(details, fanOut, applications, field), { unconfirmed: !confirmed });
      }
      return runAction(request, reply, details, "reason", () => suspendUser(app.signon, details.user.email, reason, actor.uid, requestOrigin(request)), `${details.user.name} is suspended.`);
    },
  );
};

export default suspendUserRoutes;
