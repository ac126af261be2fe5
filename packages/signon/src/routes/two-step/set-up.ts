import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import QRCode from "qrcode";
import { beginTwoStepSetup, confirmTwoStepSetup, normaliseOtpCode } from "../../accounts/two-step.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { requestOrigin } from "../../http/request-origin.js";
import { formatTime } from "../../time-format.js";
import { overLongAnswer } from "../../web/over-long-fields.js";
import { redirectWithFlash, renderPage } from "../../web/page.js";
import { requireSignedInForTwoStepSetUp, signedInUser } from "../../web/signed-in.js";
import { safeReturnPath } from "../sign-in.js";

const SetUpQuery = Type.Object({ return_to: Type.Optional(Type.String({ maxLength: 4096 })) }, { additionalProperties: true });
const SetUpBody = Type.Object(
  {
    _csrf: Type.String({ maxLength: 256 }),
    code: Type.String({ maxLength: 32 }),
    return_to: Type.Optional(Type.String({ maxLength: 4096 })),
  },
  { additionalProperties: false },
);

const title = "2-step verification";

const setUpAnswer = overLongAnswer(SetUpBody, { code: "a code" }, (request, reply, body, errors) =>
  showSetUp(request, reply, { error: errors["code"] ?? null, returnTo: returnToOf(body.return_to) }, 400),
);

/**
 * `GET /account/two-step` shows the QR code and key to set up 2-step
 * verification (or that it is on); `POST /account/two-step` turns it on with
 * a code from the authenticator app, then goes on to `return_to` when given.
 * Only an administrator turns it off again. A person who must use it and has
 * not set it up is sent here from every other page (and may only sign out).
 */
const twoStepSetUpRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    "/account/two-step",
    { config: { errorFormat: "html" }, schema: { querystring: SetUpQuery }, preHandler: requireSignedInForTwoStepSetUp },
    async (request, reply) => showSetUp(request, reply, { error: null, returnTo: returnToOf(request.query.return_to) }, 200),
  );

  app.post(
    "/account/two-step",
    {
      config: { errorFormat: "html", overLong: setUpAnswer },
      schema: { body: SetUpBody },
      preValidation: requireFormBody,
      preHandler: [requireSignedInForTwoStepSetUp, app.csrfProtection],
    },
    async (request, reply) => {
      const returnTo = returnToOf(request.body.return_to);
      if (normaliseOtpCode(request.body.code) === null) {
        return showSetUp(request, reply, { error: "Enter the 6-digit code from your authenticator app, using only the digits 0 to 9", returnTo }, 400);
      }
      const result = await confirmTwoStepSetup(app.signon, signedInUser(request).uid, request.body.code, requestOrigin(request));
      if (result.ok) {
        return redirectWithFlash(request, reply, returnTo ?? "/account/two-step", { kind: "success", text: "2-step verification is on. You will enter a code when you sign in." });
      }
      if (result.reason === "too_many_wrong_codes") {
        const minutes = Math.max(1, Math.ceil(result.retryAfterSeconds / 60));
        reply.header("retry-after", String(Math.ceil(result.retryAfterSeconds)));
        const wait = minutes === 1 ? "a minute" : `${minutes} minutes`;
        return showSetUp(request, reply, { error: `Too many wrong codes. Wait ${wait}, then enter the code your authenticator app shows at that time`, returnTo }, 429);
      }
      if (result.reason === "wrong_code") {
        return showSetUp(request, reply, { error: "The code is not right. Check that the time on your phone is correct and enter the code the app shows now", returnTo }, 400);
      }
      return reply.redirect(returnTo ?? "/account/two-step", 303);
    },
  );
};

/** Where to go once 2-step verification is on: a path on this service, or `null` to stay on this page. */
function returnToOf(value: string | undefined): string | null {
  if (value === undefined || value === "") return null;
  const path = safeReturnPath(value);
  return path.startsWith("/account/two-step") ? null : path;
}

async function showSetUp(
  request: FastifyRequest,
  reply: FastifyReply,
  form: { error: string | null; returnTo: string | null },
  status: number,
): Promise<FastifyReply> {
  const user = signedInUser(request);
  const setup = await beginTwoStepSetup(request.server.signon, user);
  if (setup === null) {
    return renderPage(request, reply, "two-step/enabled.eta", { title, enabledAt: formatTime(user.otpEnabledAt ?? new Date()) });
  }
  const qrSvg = await QRCode.toString(setup.uri, { type: "svg", errorCorrectionLevel: "M", margin: 2, width: 200 });
  const secretGroups = setup.secret.replace(/(.{4})/g, "$1 ").trim();
  const required = request.webSession?.twoStepSetUpRequired ?? false;
  return renderPage(request, reply, "two-step/set-up.eta", { title: `Set up ${title}`, qrSvg, secretGroups, required, ...form }, status);
}

export default twoStepSetUpRoutes;
