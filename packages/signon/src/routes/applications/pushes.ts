import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { retryFailedPush } from "../../applications/retry-push.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { findApplicationById } from "../../repositories/application-admin.js";
import { listPushesOfApplication } from "../../repositories/application-pushes.js";
import { redirectWithFlash, renderPage } from "../../web/page.js";
import { actorOf, isId, sendNotFound } from "../../web/admin-section.js";

const Params = Type.Object({ id: Type.String({ maxLength: 64 }) });
const RetryParams = Type.Object({ id: Type.String({ maxLength: 64 }), pushId: Type.String({ maxLength: 20 }) });
const CsrfOnlyBody = Type.Object({ _csrf: Type.Optional(Type.String({ maxLength: 256 })) }, { additionalProperties: false });

const shownPushes = 200;

/**
 * `GET /applications/:id/pushes`: delivery status of the pushes to an
 * application (S14). `POST /applications/:id/pushes/:pushId/retry` makes a
 * failed one due again.
 */
const applicationPushRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get("/applications/:id/pushes", { config: { errorFormat: "html" }, schema: { params: Params } }, async (request, reply) => {
    const application = isId(request.params.id) ? await findApplicationById(app.signon.db, request.params.id) : null;
    if (!application) return sendNotFound(request, reply, "application");
    const pushes = await listPushesOfApplication(app.signon.db, application.id, shownPushes);
    return renderPage(request, reply, "applications/pushes.eta", { title: `Pushes to ${application.name}`, application, pushes, limit: shownPushes });
  });

  app.post(
    "/applications/:id/pushes/:pushId/retry",
    { config: { errorFormat: "html" }, schema: { params: RetryParams, body: CsrfOnlyBody }, preValidation: requireFormBody, preHandler: app.csrfProtection },
    async (request, reply) => {
      const { id, pushId } = request.params;
      const application = isId(id) ? await findApplicationById(app.signon.db, id) : null;
      if (!application || !/^[1-9]\d{0,14}$/.test(pushId)) return sendNotFound(request, reply, "push");
      const result = await retryFailedPush(app.signon, application.id, Number(pushId), actorOf(request));
      if (!result.ok && result.reason === "not_found") return sendNotFound(request, reply, "push");
      const location = `/applications/${application.id}/pushes`;
      if (!result.ok) return redirectWithFlash(request, reply, location, { kind: "error", text: "That push has not failed: it is pending or delivered already." });
      return redirectWithFlash(request, reply, location, { kind: "success", text: "The push is due again now." });
    },
  );
};

export default applicationPushRoutes;
