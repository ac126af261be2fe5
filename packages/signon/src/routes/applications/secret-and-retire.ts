import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { retireApplication, unretireApplication } from "../../applications/retire-application.js";
import { rotateClientSecret } from "../../applications/rotate-secret.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { findApplicationById } from "../../repositories/application-admin.js";
import { findApplicationReach, reachCountLimit, type ApplicationReach } from "../../repositories/application-reach.js";
import type { Application } from "../../repositories/applications.js";
import { confirmField, isConfirmed, renderConfirmation, type ConfirmationPage } from "../../web/confirmation.js";
import { redirectWithSecret, takeSecret } from "../../web/one-time-secret.js";
import { redirectWithFlash, renderPage } from "../../web/page.js";
import { actorOf, isId, sendNotFound } from "../../web/admin-section.js";
import { countOf } from "../../web/wording.js";

const Params = Type.Object({ id: Type.String({ maxLength: 64 }) });
const ConfirmBody = Type.Object({ _csrf: Type.Optional(Type.String({ maxLength: 256 })), ...confirmField }, { additionalProperties: false });
// `_csrf` is optional so that a form without it gets the CSRF check's 403, not a 400.
const CsrfOnlyBody = Type.Object({ _csrf: Type.Optional(Type.String({ maxLength: 256 })) }, { additionalProperties: false });

/** The confirmation page of `POST /applications/:id/rotate-secret`. */
function rotateConfirmation(application: Application, reach: ApplicationReach): ConfirmationPage {
  return {
    title: `Replace the client secret of ${application.name}`,
    consequences: [
      `The secret ${application.name} uses now stops working at once.`,
      `Until ${application.name} is given the new secret, it cannot finish a sign-in or refresh a token: nobody can sign in to it ` +
        `(${peopleCount(reach.peopleWhoMaySignIn)} may today).`,
      `The new secret is shown once, on the next page. Sign-on keeps only its digest.`,
      `Tokens already issued for ${application.name} keep working.`,
    ],
    finality: "This cannot be undone: the current secret cannot be restored.",
    action: `/applications/${application.id}/rotate-secret`,
    confirmLabel: `Replace the client secret of ${application.name}`,
    cancel: { href: `/applications/${application.id}`, label: `Cancel: back to ${application.name}` },
  };
}

/** The confirmation page of `POST /applications/:id/retire`. */
function retireConfirmation(application: Application, reach: ApplicationReach): ConfirmationPage {
  return {
    title: `Retire ${application.name}`,
    consequences: [
      `${application.name} can no longer sign anyone in: ${peopleCount(reach.peopleWhoMaySignIn)} may sign in to it today.`,
      `Its client secret stops working, and so does every token issued for it, ${countOf(reach.liveApiTokens, "API token", "API tokens")} included.`,
      `No change to a person is sent to ${application.name} any more, and no new token or secret can be issued for it.`,
    ],
    finality: `You can bring ${application.name} back later from its page.`,
    action: `/applications/${application.id}/retire`,
    confirmLabel: `Retire ${application.name}`,
    cancel: { href: `/applications/${application.id}`, label: `Cancel: back to ${application.name}` },
  };
}

/** The application of the address when it is not retired; otherwise sends the 404 page or goes back to it with a message. */
async function liveApplication(request: FastifyRequest, reply: FastifyReply, id: string, refusal: (name: string) => string): Promise<Application | null> {
  const application = isId(id) ? await findApplicationById(request.server.signon.db, id) : null;
  if (!application) await sendNotFound(request, reply, "application");
  else if (application.retired) await redirectWithFlash(request, reply, `/applications/${application.id}`, { kind: "error", text: refusal(application.name) });
  else return application;
  return null;
}

const cannotRotate = (name: string) => `${name} is retired: its secret cannot be replaced.`;
const alreadyRetired = (name: string) => `${name} is already retired.`;

/**
 * Replacing the client secret and retiring an application are two steps:
 * `GET /applications/:id/rotate-secret` and `GET /applications/:id/retire`
 * say what will happen; only their form's post with `confirm=yes` acts. The
 * new secret is shown once, on `GET /applications/:id/secret` (the page the
 * post redirects to, as after registration); a post without the confirmation gets the
 * confirmation page again (400) and changes nothing. `POST
 * /applications/:id/unretire` (the button on a retired application's page)
 * brings a retired application back.
 */
const applicationSecretAndRetireRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const pageOptions = { config: { errorFormat: "html" as const }, schema: { params: Params } };
  const formOptions = {
    config: { errorFormat: "html" as const },
    schema: { params: Params, body: ConfirmBody },
    preValidation: requireFormBody,
    preHandler: app.csrfProtection,
  };

  app.get("/applications/:id/rotate-secret", pageOptions, async (request, reply) => {
    const application = await liveApplication(request, reply, request.params.id, cannotRotate);
    if (!application) return reply;
    return renderConfirmation(request, reply, rotateConfirmation(application, await findApplicationReach(app.signon.db, application.id, app.signon.now())));
  });

  app.post("/applications/:id/rotate-secret", formOptions, async (request, reply) => {
    const application = await liveApplication(request, reply, request.params.id, cannotRotate);
    if (!application) return reply;
    if (!isConfirmed(request.body)) {
      const reach = await findApplicationReach(app.signon.db, application.id, app.signon.now());
      return renderConfirmation(request, reply, rotateConfirmation(application, reach), { unconfirmed: true });
    }
    const rotated = await rotateClientSecret(app.signon, application.id, actorOf(request));
    if (!rotated) return sendNotFound(request, reply, "application");
    return redirectWithSecret(
      request,
      reply,
      `/applications/${application.id}/secret`,
      { kind: "success", text: `The old secret of ${application.name} no longer works. Give it this one.` },
      rotated.clientSecret,
    );
  });

  app.get("/applications/:id/secret", pageOptions, async (request, reply) => {
    const application = isId(request.params.id) ? await findApplicationById(app.signon.db, request.params.id) : null;
    if (!application) return sendNotFound(request, reply, "application");
    const clientSecret = takeSecret(request, `/applications/${application.id}/secret`);
    return renderPage(request, reply, "applications/secret.eta", { title: `Client secret of ${application.name}`, application, clientSecret });
  });

  app.get("/applications/:id/retire", pageOptions, async (request, reply) => {
    const application = await liveApplication(request, reply, request.params.id, alreadyRetired);
    if (!application) return reply;
    return renderConfirmation(request, reply, retireConfirmation(application, await findApplicationReach(app.signon.db, application.id, app.signon.now())));
  });

  app.post("/applications/:id/retire", formOptions, async (request, reply) => {
    const application = await liveApplication(request, reply, request.params.id, alreadyRetired);
    if (!application) return reply;
    if (!isConfirmed(request.body)) {
      const reach = await findApplicationReach(app.signon.db, application.id, app.signon.now());
      return renderConfirmation(request, reply, retireConfirmation(application, reach), { unconfirmed: true });
    }
    const retired = await retireApplication(app.signon, application.id, actorOf(request));
    if (!retired) return sendNotFound(request, reply, "application");
    return redirectWithFlash(request, reply, `/applications/${retired.id}`, {
      kind: "success",
      text: `${retired.name} is retired: it can no longer sign anyone in, and its tokens no longer work.`,
    });
  });

  app.post(
    "/applications/:id/unretire",
    { config: { errorFormat: "html" }, schema: { params: Params, body: CsrfOnlyBody }, preValidation: requireFormBody, preHandler: app.csrfProtection },
    async (request, reply) => {
      const application = isId(request.params.id) ? await findApplicationById(app.signon.db, request.params.id) : null;
      if (!application) return sendNotFound(request, reply, "application");
      const location = `/applications/${application.id}`;
      if (!application.retired) return redirectWithFlash(request, reply, location, { kind: "error", text: `${application.name} is not retired.` });
      const back = await unretireApplication(app.signon, application.id, actorOf(request));
      if (!back) return sendNotFound(request, reply, "application");
      return redirectWithFlash(request, reply, location, {
        kind: "success",
        text: `${back.name} is back in use: it signs people in again, and its client secret and unexpired tokens work again.`,
      });
    },
  );
};

export default applicationSecretAndRetireRoutes;

/** How many people the reach counted, "more than 10,000" past its limit. */
function peopleCount(counted: number): string {
  return counted > reachCountLimit ? `more than ${reachCountLimit.toLocaleString("en-GB")} people` : countOf(counted, "person", "people");
}
