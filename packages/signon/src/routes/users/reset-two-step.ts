import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { passkeysOf } from "../../accounts/passkeys/manage.js";
import { resetTwoStep } from "../../accounts/two-step.js";
import type { UserDetails } from "../../accounts/user-details.js";
import type { SignonContext } from "../../context.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { requestOrigin } from "../../http/request-origin.js";
import { toldToSignOut } from "../../pushes/fan-out-words.js";
import { listApplicationsPushedAboutUser, type PushFanOut } from "../../repositories/push-deliveries.js";
import { confirmField, isConfirmed, renderConfirmation, type ConfirmationPage } from "../../web/confirmation.js";
import { redirectWithFlash } from "../../web/page.js";
import { signedInUser } from "../../web/signed-in.js";
import { runAction } from "./account-actions.js";
import { managedUser, UidParams, usersFormGuards, usersPageGuards } from "./managed-user.js";
import { renderUserPage } from "./show.js";

const ConfirmBody = Type.Object({ _csrf: Type.String({ maxLength: 256 }), ...confirmField }, { additionalProperties: false });

/** The confirmation page of `POST /users/:uid/reset-two-step`. */
function resetConfirmation(details: UserDetails, fanOut: PushFanOut, applications: string[], passkeyNames: string[]): ConfirmationPage {
  const { user } = details;
  const passkeys =
    passkeyNames.length === 0
      ? "they have no passkeys to remove"
      : `their ${passkeyNames.length === 1 ? "passkey is" : `${passkeyNames.length} passkeys are`} removed (${passkeyNames.map((name) => `“${name}”`).join(", ")})`;
  return {
    title: `Reset 2-step verification for ${user.name}`,
    consequences: [
      `2-step verification of ${user.name} (${user.email}) is turned off: the codes of their authenticator app stop working, ${passkeys}, and every browser they chose to remember is forgotten.`,
      `They are signed out everywhere: their Sign-on sessions end and their tokens are revoked. ${toldToSignOut(fanOut, applications, "now")}.`,
      "At their next sign-in they set up 2-step verification again, with a new key.",
    ],
    finality: "This cannot be undone: the old key cannot be restored.",
    action: `/users/${user.uid}/reset-two-step`,
    confirmLabel: `Reset 2-step verification for ${user.name}`,
    cancel: { href: `/users/${user.uid}`, label: `Cancel: back to ${user.name}` },
  };
}

/** The confirmation page with what the reset ends: their applications' sign-ins and their passkeys, by name. */
async function confirmationFor(ctx: SignonContext, details: UserDetails): Promise<ConfirmationPage> {
  const { fanOut } = ctx.config.pushes;
  const [applications, passkeys] = await Promise.all([listApplicationsPushedAboutUser(ctx.db, details.user.uid, fanOut), passkeysOf(ctx, details.user)]);
  return resetConfirmation(
    details,
    fanOut,
    applications,
    passkeys.map((passkey) => passkey.name),
  );
}

const notSetUp = (details: UserDetails) => `${details.user.name} has not set up 2-step verification`;

/**
 * Resetting 2-step verification (a lost phone) is two steps:
 * `GET /users/:uid/reset-two-step` says what will happen; only its form's
 * post with `confirm=yes` resets. A post without the confirmation gets the
 * confirmation page again (400) and changes nothing.
 */
const resetTwoStepRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get("/users/:uid/reset-two-step", { config: { errorFormat: "html" }, schema: { params: UidParams }, preHandler: usersPageGuards }, async (request, reply) => {
    const details = await managedUser(request, reply, request.params.uid);
    if (!details) return reply;
    if (!details.twoStepOn) return redirectWithFlash(request, reply, `/users/${details.user.uid}`, { kind: "error", text: `${notSetUp(details)}.` });
    return renderConfirmation(request, reply, await confirmationFor(app.signon, details));
  });

  app.post(
    "/users/:uid/reset-two-step",
    { config: { errorFormat: "html" }, schema: { params: UidParams, body: ConfirmBody }, preValidation: requireFormBody, preHandler: usersFormGuards(app) },
    async (request, reply) => {
      const details = await managedUser(request, reply, request.params.uid);
      if (!details) return reply;
      if (!details.twoStepOn) return renderUserPage(request, reply, details, { actionErrors: { "reset-two-step": notSetUp(details) } });
      if (!isConfirmed(request.body)) {
        return renderConfirmation(request, reply, await confirmationFor(app.signon, details), { unconfirmed: true });
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
    },
  );
};

export default resetTwoStepRoutes;
