import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { beginPasskeySecondFactor, completeSecondFactorWithPasskey } from "../../accounts/passkeys/sign-in.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { requestOrigin } from "../../http/request-origin.js";
import { readSessionCookie } from "../../http/session-cookie.js";
import { mailErrorForLog } from "../../mail/send-mail.js";
import { safeReturnPath } from "../sign-in.js";
import { answerSecondFactor } from "./second-factor-answer.js";
import { showCodeForm } from "./sign-in-code.js";

const OptionsBody = Type.Object({ _csrf: Type.Optional(Type.String({ maxLength: 256 })) }, { additionalProperties: false });
const PasskeyBody = Type.Object(
  {
    _csrf: Type.String({ maxLength: 256 }),
    response: Type.String({ maxLength: 12_000 }),
    remember: Type.Optional(Type.Literal("yes")),
    return_to: Type.Optional(Type.String({ maxLength: 4096 })),
  },
  { additionalProperties: false },
);

const failureMessages = {
  malformed: "Your browser did not use a passkey. Select “Use a passkey” and follow your browser's instructions",
  refused_passkey: "That passkey could not be accepted. Try again with a passkey you added to this account",
  wrong_code: "The code is not right. Enter the code the app shows now",
  reused_code: "That code has been used already. Wait for the app to show a new code and enter it",
} as const;

/**
 * A passkey as the second factor of a sign-in, instead of a code: `POST
 * /sign-in/two-step/passkey/options` hands the code page's script the
 * options (JSON: the person's passkeys, a challenge bound to the
 * half-signed-in session); `POST /sign-in/two-step/passkey` checks the
 * answer and finishes the sign-in as a right code does.
 */
const twoStepPasskeyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post("/sign-in/two-step/passkey/options", { schema: { body: OptionsBody }, preHandler: app.csrfProtection }, async (request, reply) => {
    const options = await beginPasskeySecondFactor(app.signon, readSessionCookie(request, app.signon.config));
    if (options === null) return reply.code(401).header("cache-control", "no-store").send({ error: "no_sign_in", error_description: "No sign-in waits for a passkey here; sign in again" });
    return reply.header("cache-control", "no-store").send(options);
  });

  app.post(
    "/sign-in/two-step/passkey",
    { config: { errorFormat: "html" }, schema: { body: PasskeyBody }, preValidation: requireFormBody, preHandler: app.csrfProtection },
    async (request, reply) => {
      const returnTo = safeReturnPath(request.body.return_to);
      const remember = request.body.remember === "yes";
      const result = await completeSecondFactorWithPasskey(
        app.signon,
        readSessionCookie(request, app.signon.config),
        { response: request.body.response, rememberBrowser: remember },
        requestOrigin(request),
        (error) => request.log.error({ mailError: mailErrorForLog(error) }, "account locked mail could not be sent"),
      );
      return answerSecondFactor(reply, result, returnTo, (reason) =>
        showCodeForm(request, reply, { returnTo, error: failureMessages[reason], remember }, reason === "malformed" ? 400 : 401),
      );
    },
  );
};

export default twoStepPasskeyRoutes;
