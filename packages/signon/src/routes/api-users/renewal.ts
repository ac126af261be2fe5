import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { acknowledgeRenewedToken, renewalRuleText, setTokenAutoRenewal } from "../../accounts/token-renewal.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { redirectWithFlash } from "../../web/page.js";
import { actorOf, isId, sendNotFound } from "../../web/admin-section.js";
import { findApiUserParam, showApiUser } from "./tokens.js";

const Params = Type.Object({ uid: Type.String({ maxLength: 64 }) });
const GrantParams = Type.Object({ uid: Type.String({ maxLength: 64 }), grantId: Type.String({ maxLength: 64 }) });
const AutoRenewalBody = Type.Object(
  { _csrf: Type.Optional(Type.String({ maxLength: 256 })), token_auto_renewal: Type.String({ maxLength: 8 }) },
  { additionalProperties: false },
);
const CsrfOnlyBody = Type.Object({ _csrf: Type.Optional(Type.String({ maxLength: 256 })) }, { additionalProperties: false });

/**
 * `POST /api-users/:uid/auto-renewal` turns automatic renewal of the API
 * user's tokens on (`token_auto_renewal=yes`) or off (`no`);
 * `POST /api-users/:uid/renewed-tokens/:grantId/acknowledge` says a renewed
 * token shown on the page has been copied, so it is forgotten.
 */
const apiUserRenewalRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    "/api-users/:uid/auto-renewal",
    { config: { errorFormat: "html" }, schema: { params: Params, body: AutoRenewalBody }, preValidation: requireFormBody, preHandler: app.csrfProtection },
    async (request, reply) => {
      const apiUser = await findApiUserParam(request, request.params.uid);
      if (!apiUser) return sendNotFound(request, reply, "API user");
      const choice = request.body.token_auto_renewal;
      if (choice !== "yes" && choice !== "no") {
        return showApiUser(request, reply, apiUser, undefined, { token_auto_renewal: "Choose whether tokens are renewed automatically" });
      }
      const updated = await setTokenAutoRenewal(app.signon, apiUser, choice === "yes", actorOf(request));
      return redirectWithFlash(request, reply, `/api-users/${apiUser.uid}`, {
        kind: "success",
        text: updated.tokenAutoRenewal
          ? `${apiUser.name}'s tokens are renewed automatically: ${renewalRuleText}. Each new token is shown here once.`
          : `${apiUser.name}'s tokens are no longer renewed automatically.`,
      });
    },
  );

  app.post(
    "/api-users/:uid/renewed-tokens/:grantId/acknowledge",
    { config: { errorFormat: "html" }, schema: { params: GrantParams, body: CsrfOnlyBody }, preValidation: requireFormBody, preHandler: app.csrfProtection },
    async (request, reply) => {
      const apiUser = await findApiUserParam(request, request.params.uid);
      if (!apiUser || !isId(request.params.grantId)) return sendNotFound(request, reply, "renewed token");
      const acknowledged = await acknowledgeRenewedToken(app.signon, apiUser, request.params.grantId.toLowerCase(), actorOf(request));
      if (!acknowledged) return sendNotFound(request, reply, "renewed token");
      return redirectWithFlash(request, reply, `/api-users/${apiUser.uid}`, { kind: "success", text: "The renewed token is no longer shown. Only its digest is kept." });
    },
  );
};

export default apiUserRenewalRoutes;
