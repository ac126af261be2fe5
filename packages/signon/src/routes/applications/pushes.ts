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

/** `after`: the id of the last push of the page before ("Next pushes", keyset). */
const PushesQuery = Type.Object({ after: Type.Optional(Type.String({ pattern: "^[1-9][0-9]{0,14}$" })) }, { additionalProperties: false });

/**
 * `GET /applications/:id/pushes`: delivery status of the pushes to an
 * application (S14), 200 a page (keyset: `after` the last push shown). `POST /applications/:id/pushes/:pushId/retry` makes a
 * failed one due again.
 */
const applicationPushRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get("/applications/:id/pushes", { config: { errorFormat: "html" }, schema: { params: Params, querystring: PushesQuery } }, async (request, reply) => {
    const application = isId(request.params.id) ? await findApplicationById(app.signon.db, request.params.id) : null;
    if (!application) return sendNotFound(request, reply, "application");
    const after = request.query.after === undefined ? null : Number(request.query.after);
    const read = await listPushesOfApplication(app.signon.db, application.id, shownPushes + 1, after);
    const pushes = read.slice(0, shownPushes);
    const base = `/applications/${application.id}/pushes`;
    return renderPage(request, reply, "applications/pushes.eta", {
      title: `Pushes to ${application.name}`,
      application,
      pushes,
      limit: shownPushes,
      firstHref: after !== null ? base : null,
      nextHref: read.length > shownPushes ? `${base}?after=${pushes.at(-1)?.id ?? ""}` : null,
    });
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
