import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import QRCode from "qrcode";
import { beginTwoStepSetup, confirmTwoStepSetup, normaliseOtpCode } from "../../accounts/two-step.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { requestOrigin } from "../../http/request-origin.js";
import { redirectWithFlash, renderPage } from "../../web/page.js";
import { requireSignedIn, signedInUser } from "../../web/signed-in.js";

const SetUpBody = Type.Object(
  {
    _csrf: Type.String({ maxLength: 256 }),
    code: Type.String({ maxLength: 32 }),
  },
  { additionalProperties: false },
);

const title = "2-step verification";

/**
 * `GET /account/two-step` shows the QR code and key to set up 2-step
 * verification (or that it is on); `POST /account/two-step` turns it on with
 * a code from the authenticator app. Only an administrator turns it off again.
 */
const twoStepSetUpRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get("/account/two-step", { config: { errorFormat: "html" }, preHandler: requireSignedIn }, async (request, reply) => {
    return showSetUp(request, reply, null, 200);
  });

  app.post(
    "/account/two-step",
    {
      config: { errorFormat: "html" },
      schema: { body: SetUpBody },
      preValidation: requireFormBody,
      preHandler: [requireSignedIn, app.csrfProtection],
    },
    async (request, reply) => {
      if (normaliseOtpCode(request.body.code) === null) {
        return showSetUp(request, reply, "Enter the 6-digit code from your authenticator app, using only the digits 0 to 9", 400);
      }
      const result = await confirmTwoStepSetup(app.signon, signedInUser(request).uid, request.body.code, requestOrigin(request));
      if (result.ok) {
        return redirectWithFlash(request, reply, "/account/two-step", { kind: "success", text: "2-step verification is on. You will enter a code when you sign in." });
      }
      if (result.reason === "too_many_wrong_codes") {
        const minutes = Math.max(1, Math.ceil(result.retryAfterSeconds / 60));
        reply.header("retry-after", String(Math.ceil(result.retryAfterSeconds)));
        const wait = minutes === 1 ? "a minute" : `${minutes} minutes`;
        return showSetUp(request, reply, `Too many wrong codes. Wait ${wait}, then enter the code your authenticator app shows at that time`, 429);
      }
      if (result.reason === "wrong_code") {
        return showSetUp(request, reply, "The code is not right. Check that the time on your phone is correct and enter the code the app shows now", 400);
      }
      return reply.redirect("/account/two-step", 303);
    },
  );
};

async function showSetUp(request: FastifyRequest, reply: FastifyReply, error: string | null, status: number): Promise<FastifyReply> {
  const user = signedInUser(request);
  const setup = await beginTwoStepSetup(request.server.signon, user);
  if (setup === null) {
    return renderPage(request, reply, "two-step/enabled.eta", { title, enabledAt: (user.otpEnabledAt ?? new Date()).toUTCString() });
  }
  const qrSvg = await QRCode.toString(setup.uri, { type: "svg", errorCorrectionLevel: "M", margin: 2, width: 200 });
  const secretGroups = setup.secret.replace(/(.{4})/g, "$1 ").trim();
  return renderPage(request, reply, "two-step/set-up.eta", { title: `Set up ${title}`, qrSvg, secretGroups, error }, status);
}

export default twoStepSetUpRoutes;
