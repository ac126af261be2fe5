import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { retireApplication } from "../../applications/retire-application.js";
import { rotateClientSecret } from "../../applications/rotate-secret.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { findApplicationById } from "../../repositories/application-admin.js";
import { redirectWithFlash, renderPage } from "../../web/page.js";
import { actorOf, isId, sendNotFound } from "../../web/admin-section.js";

const Params = Type.Object({ id: Type.String({ maxLength: 64 }) });
const CsrfOnlyBody = Type.Object({ _csrf: Type.Optional(Type.String({ maxLength: 256 })) }, { additionalProperties: false });

/**
 * `POST /applications/:id/rotate-secret` replaces the client secret and shows
 * the new one once; `POST /applications/:id/retire` retires the application.
 */
const applicationSecretAndRetireRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const options = {
    config: { errorFormat: "html" as const },
    schema: { params: Params, body: CsrfOnlyBody },
    preValidation: requireFormBody,
    preHandler: app.csrfProtection,
  };

  app.post("/applications/:id/rotate-secret", options, async (request, reply) => {
    const application = isId(request.params.id) ? await findApplicationById(app.signon.db, request.params.id) : null;
    if (!application) return sendNotFound(request, reply, "application");
    if (application.retired) {
      return redirectWithFlash(request, reply, `/applications/${application.id}`, { kind: "error", text: `${application.name} is retired: its secret cannot be replaced.` });
    }
    const rotated = await rotateClientSecret(app.signon, application.id, actorOf(request));
    if (!rotated) return sendNotFound(request, reply, "application");
    return renderPage(request, reply, "applications/secret.eta", {
      title: `New client secret for ${application.name}`,
      intro: "The old secret no longer works. Give the application this one.",
      application: rotated.application,
      clientSecret: rotated.clientSecret,
    });
  });

  app.post("/applications/:id/retire", options, async (request, reply) => {
    const application = isId(request.params.id) ? await retireApplication(app.signon, request.params.id, actorOf(request)) : null;
    if (!application) return sendNotFound(request, reply, "application");
    return redirectWithFlash(request, reply, `/applications/${application.id}`, {
      kind: "success",
      text: `${application.name} is retired: it can no longer sign anyone in, and its tokens no longer work.`,
    });
  });
};

export default applicationSecretAndRetireRoutes;
