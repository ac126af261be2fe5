import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { giveUpAccess, heldApplication, type HeldApplication } from "../../accounts/give-up-access.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { requestOrigin } from "../../http/request-origin.js";
import { isId } from "../../web/admin-section.js";
import { confirmField, isConfirmed, renderConfirmation, type ConfirmationPage } from "../../web/confirmation.js";
import { redirectWithFlash, renderPage } from "../../web/page.js";
import { requireSignedIn, signedInUser } from "../../web/signed-in.js";

const Params = Type.Object({ id: Type.String({ maxLength: 64 }) });
const ConfirmBody = Type.Object({ _csrf: Type.Optional(Type.String({ maxLength: 256 })), ...confirmField }, { additionalProperties: false });

/** The confirmation page of `POST /account/applications/:id/give-up`. */
function giveUpConfirmation(application: HeldApplication): ConfirmationPage {
  const signIn = application.permissions.includes("signin");
  return {
    title: `Give up your access to ${application.name}`,
    consequences: [
      `Your permissions on ${application.name} are removed: ${application.permissions.join(", ")}.`,
      signIn
        ? `You can no longer sign in to ${application.name}, and ${application.name} is told to end your session there.`
        : `${application.name} is told of the change.`,
      "Your other applications and your Sign-on account stay as they are.",
    ],
    finality: "You cannot undo this yourself: to get the access back, ask an administrator.",
    action: `/account/applications/${application.id}/give-up`,
    confirmLabel: `Give up access to ${application.name}`,
    cancel: { href: "/account", label: "Cancel: back to your account" },
  };
}

/** The application of the address when the signed-in person holds something there, else the 404 page. */
async function heldOrNotFound(request: FastifyRequest, reply: FastifyReply, id: string): Promise<HeldApplication | null> {
  const held = isId(id) ? await heldApplication(request.server.signon, signedInUser(request), id) : null;
  if (!held) {
    await renderPage(request, reply, "error.eta", { title: "Page not found", message: "You hold no permission on that application, or there is no such application." }, 404);
    return null;
  }
  return held;
}

/**
 * Giving up your own access to an application is two steps:
 * `GET /account/applications/:id/give-up` says what will happen; only its
 * form's post with `confirm=yes` removes every permission held there (a
 * post without it gets the confirmation page again, 400, changing nothing).
 */
const giveUpAccessRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get("/account/applications/:id/give-up", { config: { errorFormat: "html" }, schema: { params: Params }, preHandler: requireSignedIn }, async (request, reply) => {
    const held = await heldOrNotFound(request, reply, request.params.id);
    return held ? renderConfirmation(request, reply, giveUpConfirmation(held)) : reply;
  });

  app.post(
    "/account/applications/:id/give-up",
    {
      config: { errorFormat: "html" },
      schema: { params: Params, body: ConfirmBody },
      preValidation: requireFormBody,
      preHandler: [requireSignedIn, app.csrfProtection],
    },
    async (request, reply) => {
      const held = await heldOrNotFound(request, reply, request.params.id);
      if (!held) return reply;
      if (!isConfirmed(request.body)) return renderConfirmation(request, reply, giveUpConfirmation(held), { unconfirmed: true });
      const given = await giveUpAccess(app.signon, signedInUser(request), held.id, requestOrigin(request));
      const text = given ? `You no longer have access to ${given.name}.` : `You no longer have access to ${held.name}.`;
      return redirectWithFlash(request, reply, "/account", { kind: "success", text });
    },
  );
};

export default giveUpAccessRoutes;
