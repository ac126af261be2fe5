import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply } from "fastify";
import { signInWithPassword } from "../accounts/sign-in.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import { recordUpstreamRefusal } from "../identity-providers/complete-sign-in.js";
import { providerForAddress, startUpstreamSignIn } from "../identity-providers/home-realm.js";
import { UpstreamUnavailableError } from "../identity-providers/openid-upstream.js";
import { anyIdentityProvider, type IdentityProvider } from "../repositories/identity-providers.js";
import { setUpstreamSignInCookie } from "../http/upstream-sign-in-cookie.js";
import { resolveSession, startSession } from "../accounts/sessions.js";
import { needsSecondFactor } from "../accounts/two-step-sign-in.js";
import { mustSetUpTwoStepNow } from "../accounts/two-step-mandate.js";
import { requireFormBody } from "../http/form-content-type.js";
import { readRememberedBrowserCookie } from "../http/remembered-browser-cookie.js";
import { requestOrigin } from "../http/request-origin.js";
import { readSessionCookie, setSessionCookie } from "../http/session-cookie.js";
import { mailErrorForLog } from "../mail/send-mail.js";
import { formatTime } from "../time-format.js";
import { overLongAnswer } from "../web/over-long-fields.js";
import { twoStepSetUpPath } from "../web/signed-in.js";

const SignInQuery = Type.Object(
  {
    return_to: Type.Optional(Type.String({ maxLength: 4096 })),
    // From an OpenID Connect request: fill in the address, and ask a signed-in person to sign in again.
    login_hint: Type.Optional(Type.String({ maxLength: 254 })),
    prompt: Type.Optional(Type.Literal("login")),
  },
  { additionalProperties: true },
);
const SignInBody = Type.Object(
  {
    _csrf: Type.String({ maxLength: 256 }),
    email: Type.String({ maxLength: 254 }),
    password: Type.String({ maxLength: 1024 }),
    return_to: Type.Optional(Type.String({ maxLength: 4096 })),
    // From an OpenID Connect request asking for a new sign-in: an organisation's provider is asked for one too.
    prompt: Type.Optional(Type.Literal("login")),
  },
  { additionalProperties: false },
);

/**
 * Only a path on this service: never `//host` or `/\host`, which browsers
 * treat as another origin. Control characters and spaces fall back to `/`;
 * other characters beyond ASCII are percent-encoded, since a `Location`
 * header cannot carry them as they are.
 */
export function safeReturnPath(value: string | undefined): string {
  if (value === undefined || !value.startsWith("/") || value.startsWith("//") || value.startsWith("/\\")) return "/";
  if ([...value].some((character) => character.charCodeAt(0) <= 0x20 || character.charCodeAt(0) === 0x7f)) return "/";
  try {
    return value.replace(/[^\x21-\x7e]+/g, (characters) => encodeURIComponent(characters));
  } catch {
    // A lone surrogate cannot be encoded.
    return "/";
  }
}

/**
 * The words of each refusal. An unknown address, a wrong password and a
 * locked account share one answer (S15); a source refused for an address
 * after too many failures is told so, with 429 ({@link tooManyTriesMessage}).
 */
export const signInFailedMessage = "The e-mail address or password is not right.";
const failureMessages = {
  invalid: signInFailedMessage,
  suspended: "This account is suspended. Ask an administrator.",
  new_password_required: "This password no longer works: choose a new one through the link we e-mailed you, or ask for a new link with “Forgotten your password?”.",
  rate_limited: "Too many attempts from your network. Wait a few minutes and try again.",
} as const;

/**
 * The words for a source refused for an address after too many failed tries
 * (S15): that there were too many, and when to try again (the minute the
 * refusal ends, rounded up, and how many minutes away). They depend only on
 * when the refusal ends, which is counted the same way whether or not an
 * account has the address, so they tell nobody whether one has.
 */
export function tooManyTriesMessage(retryAfterSeconds: number, now: Date): string {
  const minutes = Math.max(1, Math.ceil(retryAfterSeconds / 60));
  const at = new Date(Math.ceil((now.getTime() + retryAfterSeconds * 1000) / 60_000) * 60_000);
  return `There have been too many tries to sign in with this e-mail address from your network. Try again after ${formatTime(at)} (in ${minutes === 1 ? "a minute" : `${minutes} minutes`}).`;
}

/** The sign-in form again, with the address as typed and a message by each field over its limit. */
const signInAnswer = overLongAnswer(SignInBody, { email: "an e-mail address", password: "a password" }, async (request, reply, body, errors) =>
  reply
    .code(400)
    .header("cache-control", "no-store")
    .view("sign-in.eta", { title: "Sign in", message: "", errors, email: body.email, returnTo: safeReturnPath(body.return_to), csrfToken: reply.generateCsrf() }),
);

const failureStatus = { invalid: 401, refused: 429, suspended: 401, new_password_required: 401, rate_limited: 429 } as const;

/**
 * Sends the browser to the organisation's provider for an address at its domain, or shows why it cannot go: too many
 * sign-ins from this network, or the provider not answering (a page, and an event for the administrators).
 */
async function sendToProvider(
  ctx: SignonContext,
  reply: FastifyReply,
  provider: IdentityProvider,
  request: { email: string; returnTo: string; forceAuthentication: boolean },
  origin: RequestOrigin,
): Promise<FastifyReply> {
  try {
    const started = await startUpstreamSignIn(ctx, provider, request, origin);
    if (!started.ok) {
      return reply
        .code(429)
        .header("retry-after", String(Math.ceil(started.retryAfterSeconds)))
        .header("cache-control", "no-store")
        .view("sign-in.eta", { title: "Sign in", message: failureMessages.rate_limited, email: request.email, returnTo: request.returnTo, csrfToken: reply.generateCsrf() });
    }
    setUpstreamSignInCookie(reply, ctx.config, started.state);
    return reply.header("cache-control", "no-store").redirect(started.redirectTo, 303);
  } catch (error) {
    if (!(error instanceof UpstreamUnavailableError)) throw error;
    await recordUpstreamRefusal(ctx, provider, { reason: "provider_unavailable", detail: error.message, email: request.email.trim().toLowerCase() }, origin);
    return reply
      .code(502)
      .header("cache-control", "no-store")
      .view("sign-in-upstream/refused.eta", {
        title: "You are not signed in",
        message: "Your organisation's sign-in service did not answer in time.",
        hint: "Try again in a few minutes. People of other organisations can still sign in.",
      });
  }
}

/**
 * `GET /sign-in` shows the form; `POST /sign-in` checks it and starts a
 * session with a new id. With 2-step verification on (and the browser not
 * remembered), the session waits for the code at `/sign-in/two-step`; when
 * it is required and not set up, the browser goes to its set-up first.
 */
const signInRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get("/sign-in", { config: { errorFormat: "html" }, schema: { querystring: SignInQuery } }, async (request, reply) => {
    const returnTo = safeReturnPath(request.query.return_to);
    if (request.query.prompt !== "login" && (await resolveSession(app.signon, readSessionCookie(request, app.signon.config)))) {
      return reply.redirect(returnTo, 303);
    }
    const email = request.query.login_hint ?? "";
    // An application that named the person: an address of a connected organisation goes straight to its provider.
    const provider = email === "" ? null : await providerForAddress(app.signon, email);
    const forceAuthentication = request.query.prompt === "login";
    if (provider !== null) return sendToProvider(app.signon, reply, provider, { email, returnTo, forceAuthentication }, requestOrigin(request));
    const upstream = await anyIdentityProvider(app.signon.db);
    return reply.header("cache-control", "no-store").view("sign-in.eta", { title: "Sign in", message: "", email, returnTo, upstream, forceAuthentication, csrfToken: reply.generateCsrf() });
  });

  app.post(
    "/sign-in",
    { config: { errorFormat: "html", overLong: signInAnswer }, schema: { body: SignInBody }, preValidation: requireFormBody, preHandler: app.csrfProtection },
    async (request, reply) => {
      const returnTo = safeReturnPath(request.body.return_to);
      const origin = requestOrigin(request);
      // Logged without the address or the mail.
      const log = request.log;
      // Identifier first: an address at a connected organisation's domain signs in at its provider, whatever was typed as a password.
      const provider = await providerForAddress(app.signon, request.body.email);
      if (provider !== null) return sendToProvider(app.signon, reply, provider, { email: request.body.email, returnTo, forceAuthentication: request.body.prompt === "login" }, origin);
      if (request.body.password === "") {
        return reply
          .code(400)
          .header("cache-control", "no-store")
          .view("sign-in.eta", { title: "Sign in", message: "", errors: { password: "Enter your password." }, email: request.body.email, returnTo, csrfToken: reply.generateCsrf() });
      }
      const result = await signInWithPassword(app.signon, { email: request.body.email, password: request.body.password }, origin, (error) =>
        log.error({ mailError: mailErrorForLog(error) }, "account locked mail could not be sent"),
      );
      if (!result.ok) {
        if (result.reason === "rate_limited" || result.reason === "refused") reply.header("retry-after", String(Math.ceil(result.retryAfterSeconds)));
        return reply
          .code(failureStatus[result.reason])
          .header("cache-control", "no-store")
          .view("sign-in.eta", {
            title: "Sign in",
            message: result.reason === "refused" ? tooManyTriesMessage(result.retryAfterSeconds, app.signon.now()) : failureMessages[result.reason],
            email: request.body.email,
            returnTo,
            csrfToken: reply.generateCsrf(),
          });
      }
      const awaitingSecondFactor = await needsSecondFactor(app.signon, result.user, readRememberedBrowserCookie(request, app.signon.config));
      const sessionId = await startSession(app.signon, result.user, readSessionCookie(request, app.signon.config), origin, { awaitingSecondFactor });
      setSessionCookie(reply, app.signon.config, sessionId);
      if (awaitingSecondFactor) return reply.redirect(`/sign-in/two-step?return_to=${encodeURIComponent(returnTo)}`, 303);
      if (await mustSetUpTwoStepNow(app.signon, result.user)) return reply.redirect(twoStepSetUpPath(returnTo), 303);
      return reply.redirect(returnTo, 303);
    },
  );
};

export default signInRoutes;
