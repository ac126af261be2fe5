import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { resolveWebSession } from "../../accounts/sessions.js";
import { requestOrigin } from "../../http/request-origin.js";
import { readSessionCookie } from "../../http/session-cookie.js";
import { authenticatedAfterParameter, checkAuthorizationRequest, type OpenIdRequest } from "../../oauth/authorization-request.js";
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
    const { openid } = check.request;
    const sendError = (error: string, description: string) =>
      reply.redirect(
        redirectWithParameters(check.request.redirectUri, { error, error_description: description, state: check.request.state, iss: app.signon.config.publicUrl }),
        302,
      );
    if (openid) {
      // OpenID Connect: prompt, max_age and login_hint (Core §3.1.2.1); prompt=none never shows a page (§3.1.2.6).
      const signedIn = session && !session.awaitingSecondFactor ? session : null;
      const mustSignIn = !signedIn || needsNewSignIn(openid, signedIn.authTime, app.signon.now());
      if (openid.prompt.includes("none")) {
        if (mustSignIn) return sendError("login_required", "The user is not signed in to Sign-on (or not recently enough)");
        if (signedIn.twoStepSetUpRequired) return sendError("interaction_required", "The user must set up 2-step verification first");
      } else if (mustSignIn) {
        return reply.redirect(signInPath(request.url, openid, app.signon.now(), signedIn !== null), 303);
      }
    }
    if (!session || session.awaitingSecondFactor) return reply.redirect(`/sign-in?return_to=${encodeURIComponent(request.url)}`, 303);
    // No code for an application until the 2-step verification required of the person is on; the set-up comes back here.
    if (session.twoStepSetUpRequired) return reply.redirect(twoStepSetUpPath(request.url), 303);
    const { user } = session;
    const { application } = check.request;
    if (!(await userMaySignIn(app.signon.db, user, application.id))) {
      if (openid?.prompt.includes("none")) return sendError("access_denied", `The user may not sign in to ${application.name}`);
      return reply.code(403).view("forbidden.eta", {
        title: `No access to ${application.name}`,
        applicationName: application.name,
        userEmail: user.email,
        csrfToken: reply.generateCsrf(),
      });
    }
    const location = await issueAuthorizationCode(app.signon, check.request, user.uid, requestOrigin(request), { authTime: session.authTime, amr: session.amr });
    return reply.redirect(location, 302);
  };
  const options = { config: { errorFormat: "html" as const }, schema: { querystring: AuthorizeQuery } };
  app.get("/oauth/authorize", options, handler);
  app.get("/authorize", options, handler);
};

/** Whether an OpenID Connect request needs the person to sign in again: `prompt=login`, or a session older than `max_age`. */
function needsNewSignIn(openid: OpenIdRequest, authTime: Date, now: Date): boolean {
  const authSeconds = Math.floor(authTime.getTime() / 1000);
  // Back from the sign-in this request forced: a session started since then satisfies prompt=login and max_age.
  if (openid.authenticatedAfter !== null) return authSeconds < openid.authenticatedAfter;
  if (openid.prompt.includes("login")) return true;
  return openid.maxAge !== null && Math.floor(now.getTime() / 1000) - authSeconds > openid.maxAge;
}

/**
 * The sign-in page for an OpenID Connect request: it comes back to the same
 * request marked with when the new sign-in must have happened (so
 * `prompt=login` and `max_age=0` do not send the person round again), the
 * form shown even to a signed-in person, the e-mail field filled with `login_hint`.
 */
function signInPath(requestUrl: string, openid: OpenIdRequest, now: Date, reauthenticate: boolean): string {
  const url = new URL(requestUrl, "http://signon.invalid");
  url.searchParams.delete(authenticatedAfterParameter);
  url.searchParams.set(authenticatedAfterParameter, String(Math.floor(now.getTime() / 1000)));
  const parameters = new URLSearchParams({ return_to: `${url.pathname}${url.search}` });
  if (reauthenticate) parameters.set("prompt", "login");
  if (openid.loginHint !== null) parameters.set("login_hint", openid.loginHint);
  return `/sign-in?${parameters.toString()}`;
}

export default authorizeRoutes;
