import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { beginPasswordlessSignIn, signInWithPasskey } from "../accounts/passkeys/sign-in.js";
import { requireFormBody } from "../http/form-content-type.js";
import { clearPasskeySignInCookie, readPasskeySignInCookie, setPasskeySignInCookie } from "../http/passkey-sign-in-cookie.js";
import { requestOrigin } from "../http/request-origin.js";
import { readSessionCookie, setSessionCookie } from "../http/session-cookie.js";
import { mailErrorForLog } from "../mail/send-mail.js";
import { safeReturnPath } from "./sign-in.js";

const OptionsBody = Type.Object({ _csrf: Type.Optional(Type.String({ maxLength: 256 })) }, { additionalProperties: false });
const PasskeyBody = Type.Object(
  {
    _csrf: Type.String({ maxLength: 256 }),
    response: Type.String({ maxLength: 12_000 }),
    return_to: Type.Optional(Type.String({ maxLength: 4096 })),
  },
  { additionalProperties: false },
);

const failureMessages = {
  malformed: "Your browser did not use a passkey. Select “Sign in with a passkey” and follow your browser's instructions.",
  invalid: "That passkey could not sign you in. Try again, or sign in with your e-mail address and password.",
  refused: "That passkey could not sign you in. Try again, or sign in with your e-mail address and password.",
  suspended: "This account is suspended. Ask an administrator.",
  new_password_required: "This account must choose a new password first: use the link we e-mailed you, or “Forgotten your password?”.",
  rate_limited: "Too many attempts from your network. Wait a few minutes and try again.",
  through_provider: "Your organisation signs you in with its own account: type your e-mail address above and select “Sign in”.",
} as const;
const failureStatus = { malformed: 400, invalid: 401, refused: 429, suspended: 401, new_password_required: 401, rate_limited: 429, through_provider: 403 } as const;

/**
 * Sign-in with a passkey alone: `POST /sign-in/passkey/options` hands the
 * sign-in page's script the options (JSON; a challenge without a list of
 * credentials, user verification required) and binds the challenge to the
 * browser with an HttpOnly, SameSite=Strict cookie; `POST /sign-in/passkey`
 * checks the browser's answer (to a challenge bound to that cookie, used
 * once) and starts a fully signed-in session, then goes on to `return_to`.
 * A refusal shows the sign-in page again with a message.
 */
const passkeySignInRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post("/sign-in/passkey/options", { schema: { body: OptionsBody }, preHandler: app.csrfProtection }, async (request, reply) => {
    const result = await beginPasswordlessSignIn(app.signon, requestOrigin(request), readPasskeySignInCookie(request, app.signon.config));
    if (!result.ok) {
      return reply
        .code(429)
        .header("retry-after", String(Math.ceil(result.retryAfterSeconds)))
        .send({ error: "slow_down", error_description: "Too many sign-in attempts from this address; try again later" });
    }
    setPasskeySignInCookie(reply, app.signon.config, result.browserBinding);
    return reply.header("cache-control", "no-store").send(result.options);
  });

  app.post(
    "/sign-in/passkey",
    { config: { errorFormat: "html" }, schema: { body: PasskeyBody }, preValidation: requireFormBody, preHandler: app.csrfProtection },
    async (request, reply) => {
      const returnTo = safeReturnPath(request.body.return_to);
      const result = await signInWithPasskey(
        app.signon,
        { response: request.body.response, browserBinding: readPasskeySignInCookie(request, app.signon.config) },
        readSessionCookie(request, app.signon.config),
        requestOrigin(request),
        (error) => request.log.error({ mailError: mailErrorForLog(error) }, "account locked mail could not be sent"),
      );
      if (!result.ok) {
        if (result.reason === "rate_limited" || result.reason === "refused") reply.header("retry-after", String(Math.ceil(result.retryAfterSeconds)));
        const message = failureMessages[result.reason];
        return reply
          .code(failureStatus[result.reason])
          .header("cache-control", "no-store")
          .view("sign-in.eta", { title: "Sign in", message, email: "", returnTo, csrfToken: reply.generateCsrf() });
      }
      setSessionCookie(reply, app.signon.config, result.sessionId);
      clearPasskeySignInCookie(reply, app.signon.config);
      return reply.header("cache-control", "no-store").redirect(returnTo, 303);
    },
  );
};

export default passkeySignInRoutes;
