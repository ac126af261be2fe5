import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { inspectAccountLink } from "../../accounts/account-links.js";
import { unlockThroughLink } from "../../accounts/unlock-link.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { requestOrigin } from "../../http/request-origin.js";
import { formatTime } from "../../time-format.js";
import { renderPage } from "../../web/page.js";
import { LinkTokenParams } from "../account/new-password-form.js";
import { sendUnusableLinkPage } from "../account/unusable-link.js";

// `_csrf` is optional in the schema so that a form without it gets the CSRF check's 403, not a 400.
const UnlockBody = Type.Object({ _csrf: Type.Optional(Type.String({ maxLength: 256 })) }, { additionalProperties: false });

/**
 * The unlock link of the mail sent when an account locks (S15), used
 * without signing in: `GET /unlock/:token` asks to confirm (so that a mail
 * scanner fetching the link unlocks nothing), `POST /unlock/:token` unlocks,
 * once; `GET /unlock/done` says it worked.
 */
const unlockRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get("/unlock/done", { config: { errorFormat: "html" } }, async (request, reply) =>
    renderPage(request, reply, "unlock/done.eta", { title: "Your account is unlocked" }),
  );

  app.get("/unlock/:token", { config: { errorFormat: "html" }, schema: { params: LinkTokenParams } }, async (request, reply) => {
    const { token } = request.params;
    const found = await inspectAccountLink(app.signon, token, "unlock");
    if (found.state !== "usable") return sendUnusableLinkPage(request, reply, found.state, "unlock");
    return renderPage(request, reply, "unlock/confirm.eta", { title: "Unlock your account", email: found.user.email, token, until: formatTime(found.link.expiresAt) });
  });

  app.post(
    "/unlock/:token",
    {
      config: { errorFormat: "html" },
      schema: { params: LinkTokenParams, body: UnlockBody },
      preValidation: requireFormBody,
      preHandler: app.csrfProtection,
    },
    async (request, reply) => {
      const result = await unlockThroughLink(app.signon, request.params.token, requestOrigin(request));
      if (!result.ok) return sendUnusableLinkPage(request, reply, result.link, "unlock");
      return reply.header("cache-control", "no-store").redirect("/unlock/done", 303);
    },
  );
};

export default unlockRoutes;
