import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { resolveWebSession } from "../../accounts/sessions.js";
import { requestOrigin } from "../../http/request-origin.js";
import { readSessionCookie } from "../../http/session-cookie.js";
import { checkAuthorizationRequest } from "../../oauth/authorization-request.js";
import { issueAuthorizationCode, redirectWithParameters } from "../../oauth/issue-code.js";
import { userMaySignIn } from "../../oauth/user-may-sign-in.js";
import { twoStepSetUpPath } from "../../web/signed-in.js";

// Parameters are read one by one (a repeated one is an error), so the schema only bounds their number.
const AuthorizeQuery = Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())]), { maxProperties: 32 });

/**
 * `GET /oauth/authorize` (alias `GET /authorize`): the Authorization Code
 * flow's front door. Signs the user in if needed, has them set up 2-step
 * verification first when it is required of them, refuses users without
 * `signin` (S9), and redirects back with a code and the same `state`.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.1
 */
const authorizeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const handler = async (request: FastifyRequest<{ Querystring: Record<string, string | string[]> }>, reply: FastifyReply) => {
    reply.header("cache-control", "no-store");
    const check = await checkAuthorizationRequest(app.signon, request.query);
    if (check.kind === "error-page") {
      return reply.code(400).view("error.eta", { title: "This sign-in link is not valid", message: check.message });
    }
    if (check.kind === "error-redirect") {
      const parameters = { error: check.error, error_description: check.description, state: check.state, iss: app.signon.config.publicUrl };
      return reply.redirect(redirectWithParameters(check.redirectUri, parameters), 302);
    }
    const session = await resolveWebSession(app.signon, readSessionCookie(request, app.signon.config));
    if (!session || session.awaitingSecondFactor) return reply.redirect(`/sign-in?return_to=${encodeURIComponent(request.url)}`, 303);
    // No code for an application until the 2-step verification required of the person is on; the set-up comes back here.
    if (session.twoStepSetUpRequired) return reply.redirect(twoStepSetUpPath(request.url), 303);
    const { user } = session;
    const { application } = check.request;
    if (!(await userMaySignIn(app.signon.db, user, application.id))) {
      return reply.code(403).view("forbidden.eta", {
        title: `No access to ${application.name}`,
        applicationName: application.name,
        userEmail: user.email,
        csrfToken: reply.generateCsrf(),
      });
    }
    const location = await issueAuthorizationCode(app.signon, check.request, user.uid, requestOrigin(request));
    return reply.redirect(location, 302);
  };
  const options = { config: { errorFormat: "html" as const }, schema: { querystring: AuthorizeQuery } };
  app.get("/oauth/authorize", options, handler);
  app.get("/authorize", options, handler);
};

export default authorizeRoutes;
