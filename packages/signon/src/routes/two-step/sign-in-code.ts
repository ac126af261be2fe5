import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { resolveWebSession } from "../../accounts/sessions.js";
import { completeSecondFactor } from "../../accounts/two-step-sign-in.js";
import { normaliseOtpCode } from "../../accounts/two-step.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { requestOrigin } from "../../http/request-origin.js";
import { readSessionCookie } from "../../http/session-cookie.js";
import { renderPage } from "../../web/page.js";
import { mailErrorForLog } from "../../mail/send-mail.js";
import { overLongAnswer } from "../../web/over-long-fields.js";
import { safeReturnPath } from "../sign-in.js";
import { answerSecondFactor, signInAgain } from "./second-factor-answer.js";

const CodeQuery = Type.Object({ return_to: Type.Optional(Type.String({ maxLength: 4096 })) }, { additionalProperties: true });
const CodeBody = Type.Object(
  {
    _csrf: Type.String({ maxLength: 256 }),
    code: Type.String({ maxLength: 32 }),
    remember: Type.Optional(Type.Literal("yes")),
    return_to: Type.Optional(Type.String({ maxLength: 4096 })),
  },
  { additionalProperties: false },
);

const title = "Enter your verification code";
const failureMessages = {
  wrong_code: "The code is not right. Enter the code the app shows now",
  reused_code: "That code has been used already. Wait for the app to show a new code and enter it",
} as const;

/**
 * The page that asks a half-signed-in browser for its second factor: the
 * code form when the person has an authenticator app, the passkey button
 * when they have a passkey, or both.
 */
export async function showCodeForm(
  request: FastifyRequest,
  reply: FastifyReply,
  form: { returnTo: string; error: string | null; remember: boolean },
  status: number,
): Promise<FastifyReply> {
  const session = await resolveWebSession(request.server.signon, readSessionCookie(request, request.server.signon.config));
  const user = session?.user;
  const methods = { code: user === undefined || user.otpEnabledAt !== null, passkey: user !== undefined && user.passkeyCount > 0 };
  return renderPage(request, reply, "two-step/code.eta", { title: methods.code ? title : "Use your passkey", ...form, methods }, status);
}

const codeFormAnswer = overLongAnswer(CodeBody, { code: "a code" }, (request, reply, body, errors) =>
  showCodeForm(request, reply, { returnTo: safeReturnPath(body.return_to), error: errors["code"] ?? null, remember: body.remember === "yes" }, 400),
);

/**
 * `GET /sign-in/two-step` asks a half-signed-in browser (password checked)
 * for its 2-step code; `POST /sign-in/two-step` checks it, finishes the
 * sign-in under a new session id, optionally remembers the browser, and goes
 * on to `return_to`.
 */
const twoStepSignInRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get("/sign-in/two-step", { config: { errorFormat: "html" }, schema: { querystring: CodeQuery } }, async (request, reply) => {
    const returnTo = safeReturnPath(request.query.return_to);
    const session = await resolveWebSession(app.signon, readSessionCookie(request, app.signon.config));
    if (!session) return signInAgain(reply, returnTo);
    if (!session.awaitingSecondFactor) return reply.redirect(returnTo, 303);
    return showCodeForm(request, reply, { returnTo, error: null, remember: false }, 200);
  });

  app.post(
    "/sign-in/two-step",
    { config: { errorFormat: "html", overLong: codeFormAnswer }, schema: { body: CodeBody }, preValidation: requireFormBody, preHandler: app.csrfProtection },
    async (request, reply) => {
      const returnTo = safeReturnPath(request.body.return_to);
      const remember = request.body.remember === "yes";
      if (normaliseOtpCode(request.body.code) === null) {
        const error = "Enter the 6-digit code from your authenticator app, using only the digits 0 to 9";
        return showCodeForm(request, reply, { returnTo, error, remember }, 400);
      }
      const result = await completeSecondFactor(
        app.signon,
        readSessionCookie(request, app.signon.config),
        { code: request.body.code, rememberBrowser: remember },
        requestOrigin(request),
        (error) => request.log.error({ mailError: mailErrorForLog(error) }, "account locked mail could not be sent"),
      );
      return answerSecondFactor(reply, result, returnTo, (reason) =>
        showCodeForm(request, reply, { returnTo, error: failureMessages[reason], remember }, 401),
      );
    },
  );
};

export default twoStepSignInRoutes;
