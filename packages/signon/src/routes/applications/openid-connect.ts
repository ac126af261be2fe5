import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { applicationFormValues } from "../../applications/application-fields.js";
import { clientAuthenticationPressure } from "../../applications/client-authentication-pressure.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { OpenIdSettingsError, setOpenIdSettings } from "../../oidc/client-settings.js";
import { findApplicationById } from "../../repositories/application-admin.js";
import { actorOf, isId, sendNotFound } from "../../web/admin-section.js";
import { overLongAnswer } from "../../web/over-long-fields.js";
import { redirectWithFlash, renderPage } from "../../web/page.js";

const Params = Type.Object({ id: Type.String({ maxLength: 64 }) });
const OpenIdBody = Type.Object(
  {
    _csrf: Type.Optional(Type.String({ maxLength: 256 })),
    scope_openid: Type.Optional(Type.String({ maxLength: 8 })),
    scope_profile: Type.Optional(Type.String({ maxLength: 8 })),
    scope_email: Type.Optional(Type.String({ maxLength: 8 })),
    id_token_alg: Type.Optional(Type.String({ maxLength: 16 })),
    // Twenty URIs of 400 characters; more than a form body (16 KiB) carries would be a limit no form reaches.
    post_logout_redirect_uris: Type.Optional(Type.String({ maxLength: 8000 })),
    backchannel_logout_uri: Type.Optional(Type.String({ maxLength: 2048 })),
  },
  { additionalProperties: false },
);

/** The application's page with the OpenID Connect form as posted and a message by each field over its limit (400). */
const openIdAnswer = overLongAnswer(
  OpenIdBody,
  { post_logout_redirect_uris: { noun: "post-logout redirect URIs", unit: "characters in all" }, backchannel_logout_uri: "a back-channel logout URI" },
  async (request, reply, body, errors) => {
    const id = (request.params as { id: string }).id;
    const application = isId(id) ? await findApplicationById(request.server.signon.db, id) : null;
    if (!application) return sendNotFound(request, reply, "application");
    const scopes = (["openid", "profile", "email"] as const).filter((scope) => body[`scope_${scope}`] === "yes");
    return renderPage(
      request,
      reply,
      "applications/edit.eta",
      {
        title: `${application.name}: there is a problem`,
        application,
        pressure: await clientAuthenticationPressure(request.server.signon, application),
        values: applicationFormValues(application),
        errors: {},
        openIdForm: {
          values: {
            scopes,
            idTokenAlg: body.id_token_alg ?? application.idTokenSignedResponseAlg,
            postLogoutRedirectUris: body.post_logout_redirect_uris ?? "",
            backchannelLogoutUri: body.backchannel_logout_uri ?? "",
          },
          errors,
        },
      },
      400,
    );
  },
);

/**
 * `POST /applications/:id/openid-connect`: the application's OpenID Connect
 * registration, from the form on its page (scopes, ID token algorithm,
 * post-logout redirect URIs one a line, back-channel logout URI). Without
 * `openid` ticked it is not an OpenID Connect client.
 */
const applicationOpenIdRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    "/applications/:id/openid-connect",
    { config: { errorFormat: "html", overLong: openIdAnswer }, schema: { params: Params, body: OpenIdBody }, preValidation: requireFormBody, preHandler: app.csrfProtection },
    async (request, reply) => {
      const application = isId(request.params.id) ? await findApplicationById(app.signon.db, request.params.id) : null;
      if (!application) return sendNotFound(request, reply, "application");
      const body = request.body;
      const openid = body.scope_openid === "yes";
      const scopes = openid ? (["openid", "profile", "email"] as const).filter((scope) => scope === "openid" || body[`scope_${scope}`] === "yes") : [];
      const lines = (body.post_logout_redirect_uris ?? "").split(/\r?\n/).map((line) => line.trim()).filter((line) => line !== "");
      const backchannel = (body.backchannel_logout_uri ?? "").trim();
      const path = `/applications/${application.id}`;
      try {
        await setOpenIdSettings(
          app.signon,
          application,
          { scopes, idTokenAlg: body.id_token_alg ?? application.idTokenSignedResponseAlg, postLogoutRedirectUris: lines, backchannelLogoutUri: backchannel === "" ? null : backchannel },
          actorOf(request),
        );
      } catch (error) {
        if (error instanceof OpenIdSettingsError) {
          return renderPage(request, reply, "error.eta", { title: "The OpenID Connect settings were not saved", message: `${error.message}. Go back to ${application.name} and correct them.` }, 400);
        }
        throw error;
      }
      return redirectWithFlash(request, reply, path, { kind: "success", text: `${application.name}: OpenID Connect settings saved.` });
    },
  );
};

export default applicationOpenIdRoutes;
