import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { acceptBackchannelLogout } from "../../identity-providers/backchannel-logout.js";
import { completeUpstreamSignIn, recordUpstreamRefusal } from "../../identity-providers/complete-sign-in.js";
import { finishOpenIdSignIn } from "../../identity-providers/openid-sign-in.js";
import { acceptSamlAnswer, finishSamlSignIn, serviceProviderMetadata } from "../../identity-providers/saml-sign-in.js";
import { acceptSamlLogout, type SamlLogoutResult } from "../../identity-providers/saml-logout.js";
import type { IdentityProvider } from "../../repositories/identity-providers.js";
import type { UpstreamPerson, UpstreamRefusal } from "../../identity-providers/upstream-person.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { readRememberedBrowserCookie } from "../../http/remembered-browser-cookie.js";
import { requestOrigin } from "../../http/request-origin.js";
import { readSessionCookie, setSessionCookie } from "../../http/session-cookie.js";
import { clearUpstreamSignInCookie, readUpstreamSignInCookie } from "../../http/upstream-sign-in-cookie.js";
import { twoStepSetUpPath } from "../../web/signed-in.js";

/** What a person is told for each refusal, and what they can do about it. */
const refusalWords: Record<UpstreamRefusal | "no_sign_in" | "provider_refused" | "invalid_answer" | "provider_unavailable", { status: number; message: string; hint?: string }> = {
  no_sign_in: { status: 400, message: "This sign-in has already been used, has expired, or was started in another browser.", hint: "Start again from the sign-in page." },
  provider_refused: { status: 403, message: "Your organisation's sign-in service did not sign you in.", hint: "If you think it should have, ask your organisation's IT service." },
  invalid_answer: {
    status: 400,
    message: "Your organisation's sign-in service sent an answer that Sign-on could not check, so you are not signed in.",
    hint: "Try again. If it happens again, tell an administrator: the sign-in service may be set up wrongly.",
  },
  provider_unavailable: {
    status: 502,
    message: "Your organisation's sign-in service did not answer in time.",
    hint: "Try again in a few minutes. People of other organisations can still sign in.",
  },
  email_missing: { status: 403, message: "Your organisation's sign-in service did not give your e-mail address.", hint: "Ask an administrator to check how it is set up." },
  email_unverified: { status: 403, message: "Your organisation's sign-in service did not confirm your e-mail address.", hint: "Ask your organisation's IT service to confirm it." },
  domain_not_connected: { status: 403, message: "Your e-mail address is not at a domain your organisation's sign-in service answers for here." },
  other_organisation: { status: 403, message: "Your Sign-on account belongs to another organisation.", hint: "Ask an administrator to move it." },
  no_account: { status: 403, message: "You do not have a Sign-on account yet.", hint: "Ask an administrator of your organisation to invite you." },
  linked_elsewhere: { status: 403, message: "Your Sign-on account is already linked to another person at your organisation's sign-in service.", hint: "Ask an administrator." },
  api_user: { status: 403, message: "You do not have a Sign-on account yet.", hint: "Ask an administrator of your organisation to invite you." },
  suspended: { status: 403, message: "This account is suspended.", hint: "Ask an administrator." },
};

function refusedPage(reply: FastifyReply, reason: keyof typeof refusalWords): FastifyReply {
  const words = refusalWords[reason];
  return reply
    .code(words.status)
    .header("cache-control", "no-store")
    .view("sign-in-upstream/refused.eta", { title: "You are not signed in", message: words.message, hint: words.hint ?? "" });
}

const CallbackQuery = Type.Object(
  {
    state: Type.Optional(Type.String({ maxLength: 512 })),
    code: Type.Optional(Type.String({ maxLength: 4096 })),
    error: Type.Optional(Type.String({ maxLength: 256 })),
    error_description: Type.Optional(Type.String({ maxLength: 1024 })),
    iss: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: true },
);
const LogoutParams = Type.Object({ providerId: Type.String({ format: "uuid" }) });
const SamlAnswerBody = Type.Object({ SAMLResponse: Type.String({ minLength: 1, maxLength: 200_000 }), RelayState: Type.Optional(Type.String({ maxLength: 512 })) }, { additionalProperties: true });
const SamlLogoutQuery = Type.Object(
  {
    SAMLRequest: Type.Optional(Type.String({ maxLength: 100_000 })),
    RelayState: Type.Optional(Type.String({ maxLength: 1024 })),
    SigAlg: Type.Optional(Type.String({ maxLength: 200 })),
    Signature: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: false },
);
const SamlLogoutBody = Type.Object({ SAMLRequest: Type.String({ minLength: 1, maxLength: 200_000 }), RelayState: Type.Optional(Type.String({ maxLength: 1024 })) }, { additionalProperties: true });
const SamlCompleteQuery = Type.Object({ state: Type.String({ maxLength: 512 }) }, { additionalProperties: false });
const LogoutBody = Type.Object({ logout_token: Type.String({ minLength: 1, maxLength: 16_384 }) }, { additionalProperties: true });
const LogoutError = Type.Object({ error: Type.String(), error_description: Type.String() });

/**
 * Sign-in through an organisation's own OpenID Connect provider: `GET /sign-in/upstream/callback` takes the provider's
 * answer (the sign-in form sent the person there), and `POST /sign-in/upstream/{provider}/backchannel-logout` takes its
 * logout tokens.
 */
const upstreamSignInRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get("/sign-in/upstream/callback", { config: { errorFormat: "html" }, schema: { querystring: CallbackQuery } }, async (request, reply) => {
    const ctx = app.signon;
    const origin = requestOrigin(request);
    const browserState = readUpstreamSignInCookie(request, ctx.config);
    clearUpstreamSignInCookie(reply, ctx.config);
    const currentUrl = new URL(request.url, ctx.config.publicUrl);
    const answer = await finishOpenIdSignIn(ctx, browserState, currentUrl);
    if (!answer.ok) {
      await recordUpstreamRefusal(ctx, answer.provider, { reason: answer.reason, detail: answer.detail, email: answer.email }, origin);
      return refusedPage(reply, answer.reason);
    }
    return signIn(request, reply, answer.provider, answer);
  });

  /** Signs in the person a checked answer vouched for, and sends the browser on. */
  async function signIn(request: FastifyRequest, reply: FastifyReply, provider: IdentityProvider, answer: { person: UpstreamPerson; returnTo: string }) {
    const ctx = app.signon;
    const signedIn = await completeUpstreamSignIn(
      ctx,
      provider,
      answer,
      { previousSessionId: readSessionCookie(request, ctx.config), rememberToken: readRememberedBrowserCookie(request, ctx.config) },
      requestOrigin(request),
    );
    if (!signedIn.ok) return refusedPage(reply, signedIn.reason);
    setSessionCookie(reply, ctx.config, signedIn.sessionId);
    reply.header("cache-control", "no-store");
    if (signedIn.next === "second_factor") return reply.redirect(`/sign-in/two-step?return_to=${encodeURIComponent(signedIn.returnTo)}`, 303);
    if (signedIn.next === "set_up_two_step") return reply.redirect(twoStepSetUpPath(signedIn.returnTo), 303);
    return reply.redirect(signedIn.returnTo, 303);
  }

  // SAML: the provider's site posts the answer here (HTTP-POST binding). It is checked at once; the browser then comes
  // back to /sign-in/upstream/saml/complete, a top-level GET that carries the SameSite=Lax cookie with its state.
  app.post(
    "/sign-in/upstream/saml/acs",
    { config: { errorFormat: "html" }, bodyLimit: 256 * 1024, schema: { body: SamlAnswerBody }, preValidation: requireFormBody },
    async (request, reply) => {
      const answer = await acceptSamlAnswer(app.signon, request.body);
      if (!answer.ok) {
        await recordUpstreamRefusal(app.signon, answer.provider, { reason: answer.reason, detail: answer.detail, email: answer.email }, requestOrigin(request));
        return refusedPage(reply, answer.reason);
      }
      return reply.header("cache-control", "no-store").redirect(`/sign-in/upstream/saml/complete?state=${encodeURIComponent(answer.state)}`, 303);
    },
  );

  app.get("/sign-in/upstream/saml/complete", { config: { errorFormat: "html" }, schema: { querystring: SamlCompleteQuery } }, async (request, reply) => {
    const ctx = app.signon;
    const browserState = readUpstreamSignInCookie(request, ctx.config);
    clearUpstreamSignInCookie(reply, ctx.config);
    const finished = await finishSamlSignIn(ctx, browserState, request.query.state);
    if (!finished.ok) {
      await recordUpstreamRefusal(ctx, null, { reason: "no_sign_in", detail: finished.detail }, requestOrigin(request));
      return refusedPage(reply, "no_sign_in");
    }
    return signIn(request, reply, finished.provider, finished);
  });

  // SAML single logout from the provider, by HTTP-Redirect or HTTP-POST.
  const samlLogoutAnswer = (reply: FastifyReply, result: SamlLogoutResult) => {
    reply.header("cache-control", "no-store");
    if (result.ok) return reply.redirect(result.redirectTo, 303);
    return reply.code(400).view("sign-in-upstream/refused.eta", { title: "You are not signed out", message: "This sign-out request from your organisation's sign-in service could not be checked.", hint: "Sign out of Sign-on from its own pages." });
  };
  app.get(
    "/sign-in/upstream/:providerId/saml/logout",
    { config: { errorFormat: "html" }, schema: { params: LogoutParams, querystring: SamlLogoutQuery } },
    async (request, reply) => {
      const originalQuery = request.url.includes("?") ? request.url.slice(request.url.indexOf("?") + 1) : "";
      const query = Object.fromEntries(Object.entries(request.query).filter((entry): entry is [string, string] => typeof entry[1] === "string"));
      return samlLogoutAnswer(reply, await acceptSamlLogout(app.signon, request.params.providerId, { binding: "redirect", query, originalQuery }, requestOrigin(request)));
    },
  );
  app.post(
    "/sign-in/upstream/:providerId/saml/logout",
    { config: { errorFormat: "html" }, bodyLimit: 256 * 1024, schema: { params: LogoutParams, body: SamlLogoutBody }, preValidation: requireFormBody },
    async (request, reply) => samlLogoutAnswer(reply, await acceptSamlLogout(app.signon, request.params.providerId, { binding: "post", body: request.body }, requestOrigin(request))),
  );

  /** Sign-on's SAML service provider metadata, for the identity providers' administrators. */
  app.get("/sign-in/upstream/saml/metadata", async (_request, reply) =>
    reply.header("content-type", "application/samlmetadata+xml").header("cache-control", "public, max-age=3600").send(serviceProviderMetadata(app.signon)),
  );

  app.post(
    "/sign-in/upstream/:providerId/backchannel-logout",
    {
      schema: { params: LogoutParams, body: LogoutBody, response: { 200: Type.Object({}), 400: LogoutError } },
      preValidation: requireFormBody,
    },
    async (request, reply) => {
      const result = await acceptBackchannelLogout(app.signon, request.params.providerId, request.body.logout_token, requestOrigin(request));
      reply.header("cache-control", "no-store");
      if (!result.ok) return reply.code(400).send({ error: "invalid_request", error_description: "The logout token was not accepted." });
      return {};
    },
  );
};

export default upstreamSignInRoutes;
