import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { audit } from "../../audit.js";
import { endSession, resolveWebSession } from "../../accounts/sessions.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { requestOrigin } from "../../http/request-origin.js";
import { clearSessionCookie, readSessionCookie } from "../../http/session-cookie.js";
import { redirectWithParameters } from "../../oauth/issue-code.js";
import { oidcPaths } from "../../oidc/discovery.js";
import { checkEndSessionRequest, EndSessionError, type EndSessionRequest } from "../../oidc/end-session.js";
import { confirmField, isConfirmed } from "../../web/confirmation.js";

const parameterFields = {
  id_token_hint: Type.Optional(Type.String({ maxLength: 8192 })),
  client_id: Type.Optional(Type.String({ maxLength: 512 })),
  post_logout_redirect_uri: Type.Optional(Type.String({ maxLength: 2048 })),
  state: Type.Optional(Type.String({ maxLength: 2048 })),
  logout_hint: Type.Optional(Type.String({ maxLength: 512 })),
  ui_locales: Type.Optional(Type.String({ maxLength: 256 })),
};
// Other parameters are ignored (RP-Initiated Logout §2), but each one sent once.
const EndSessionParameters = Type.Object(parameterFields, { additionalProperties: Type.String({ maxLength: 2048 }), maxProperties: 16 });
type EndSessionParameters = typeof EndSessionParameters.static;
const ConfirmBody = Type.Object({ _csrf: Type.String({ maxLength: 256 }), ...confirmField, ...parameterFields }, { additionalProperties: false });

/**
 * OpenID Connect RP-initiated logout at `end_session_endpoint` (`GET` and
 * `POST /end-session`). With an `id_token_hint` naming the signed-in person,
 * Sign-on signs them out at once; otherwise it asks them first (a form posting
 * to `/end-session/confirm`), so that no other site can sign anyone out. The
 * sign-out is the usual one: the session ends, and every application the
 * person used gets its reauth push and, if it asked for them, a back-channel
 * logout token. Then the browser goes to the registered
 * `post_logout_redirect_uri` with `state`, or to the sign-in page.
 *
 * @see https://openid.net/specs/openid-connect-rpinitiated-1_0.html
 */
const endSessionRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const refuse = (reply: FastifyReply, error: EndSessionError) =>
    reply.code(400).view("error.eta", { title: "This sign-out link is not valid", message: error.message });

  const check = async (parameters: EndSessionParameters, reply: FastifyReply): Promise<EndSessionRequest | null> => {
    try {
      return await checkEndSessionRequest(app.signon, {
        idTokenHint: parameters.id_token_hint,
        clientId: parameters.client_id,
        postLogoutRedirectUri: parameters.post_logout_redirect_uri,
        state: parameters.state,
      });
    } catch (error) {
      if (error instanceof EndSessionError) {
        await refuse(reply, error);
        return null;
      }
      throw error;
    }
  };

  const signOut = async (request: FastifyRequest, reply: FastifyReply, checked: EndSessionRequest) => {
    const sessionId = readSessionCookie(request, app.signon.config);
    const session = await resolveWebSession(app.signon, sessionId);
    if (session) {
      const origin = requestOrigin(request);
      await endSession(app.signon, sessionId, origin);
      await audit(app.signon.db, {
        action: "oidc_logout",
        at: app.signon.now(),
        actorUid: session.user.uid,
        subjectUid: session.user.uid,
        applicationId: checked.application?.id ?? null,
        origin,
      });
    }
    clearSessionCookie(reply, app.signon.config);
    return afterLogout(reply, checked);
  };

  const afterLogout = (reply: FastifyReply, checked: EndSessionRequest) => {
    if (checked.redirectUri === null) return reply.redirect("/sign-in", 303);
    return reply.redirect(checked.state === null ? new URL(checked.redirectUri).href : redirectWithParameters(checked.redirectUri, { state: checked.state }), 303);
  };

  const handler = async (request: FastifyRequest, reply: FastifyReply, parameters: EndSessionParameters) => {
    reply.header("cache-control", "no-store");
    const checked = await check(parameters, reply);
    if (checked === null) return reply;
    const session = await resolveWebSession(app.signon, readSessionCookie(request, app.signon.config));
    // Nobody signed in here: nothing to end.
    if (!session) return afterLogout(reply, checked);
    if (checked.hintSubject === session.user.uid) return signOut(request, reply, checked);
    const hidden = Object.entries(parameterFields)
      .map(([name]) => ({ name, value: parameters[name as keyof typeof parameterFields] }))
      .filter((field): field is { name: string; value: string } => typeof field.value === "string");
    return reply.view("end-session.eta", {
      title: "Sign out of Sign-on?",
      message: checked.application ? `${checked.application.name} asks to sign you out of Sign-on.` : "An application asks to sign you out of Sign-on.",
      hidden,
      csrfToken: reply.generateCsrf(),
    });
  };

  const options = { config: { errorFormat: "html" as const } };
  app.get(oidcPaths.endSession, { ...options, schema: { querystring: EndSessionParameters } }, (request, reply) => handler(request, reply, request.query));
  app.post(oidcPaths.endSession, { ...options, preValidation: requireFormBody, schema: { body: EndSessionParameters } }, (request, reply) =>
    handler(request, reply, request.body),
  );
  app.post(
    `${oidcPaths.endSession}/confirm`,
    { ...options, preValidation: requireFormBody, preHandler: app.csrfProtection, schema: { body: ConfirmBody } },
    async (request, reply) => {
      reply.header("cache-control", "no-store");
      const checked = await check(request.body, reply);
      if (checked === null) return reply;
      if (!isConfirmed(request.body)) return reply.redirect("/", 303);
      return signOut(request, reply, checked);
    },
  );
};

export default endSessionRoutes;
