import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { changePassword } from "../../accounts/change-password.js";
import { AccountError, updateUserDetails } from "../../accounts/manage-users.js";
import type { FieldErrors } from "../../accounts/password-policy.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { requestOrigin } from "../../http/request-origin.js";
import { mailErrorForLog } from "../../mail/send-mail.js";
import { redirectWithFlash, renderPage } from "../../web/page.js";
import { requireSignedIn, signedInUser } from "../../web/signed-in.js";
import { renderAccountPage } from "./account-page.js";

// `_csrf` is optional in the schemas so that a form without it gets the CSRF check's 403, not a 400.
const DetailsBody = Type.Object(
  { _csrf: Type.Optional(Type.String({ maxLength: 256 })), name: Type.String({ maxLength: 200 }), email: Type.String({ maxLength: 254 }) },
  { additionalProperties: false },
);
const PasswordBody = Type.Object(
  {
    _csrf: Type.Optional(Type.String({ maxLength: 256 })),
    current: Type.String({ maxLength: 1024 }),
    password: Type.String({ maxLength: 1024 }),
    confirmation: Type.String({ maxLength: 1024 }),
  },
  { additionalProperties: false },
);

const emailShape = /^[^\s@]+@[^\s@]+$/;

/**
 * Your account: `GET /account` (details, applications and permissions,
 * recent activity), `POST /account/details` (name and e-mail address; the
 * applications are told), `GET/POST /account/password`.
 */
const accountRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get("/account", { config: { errorFormat: "html" }, preHandler: requireSignedIn }, async (request, reply) =>
    renderAccountPage(request, reply, signedInUser(request)),
  );

  app.post(
    "/account/details",
    {
      config: { errorFormat: "html" },
      schema: { body: DetailsBody },
      preValidation: requireFormBody,
      preHandler: [requireSignedIn, app.csrfProtection],
    },
    async (request, reply) => {
      const user = signedInUser(request);
      const values = { name: request.body.name.trim(), email: request.body.email.trim() };
      const errors: FieldErrors = {};
      if (values.name === "") errors.name = "Enter your name";
      if (!emailShape.test(values.email)) errors.email = values.email === "" ? "Enter your e-mail address" : "Enter an e-mail address like name@example.org";
      if (Object.keys(errors).length === 0) {
        try {
          await updateUserDetails(app.signon, user.email, values, user.uid, requestOrigin(request), request.webSession?.idHash ?? null);
          return await redirectWithFlash(request, reply, "/account", { kind: "success", text: "Your details have been saved." });
        } catch (error) {
          if (!(error instanceof AccountError)) throw error;
          errors.email = error.message.startsWith("A user with e-mail") ? "Another account already uses this e-mail address" : error.message;
        }
      }
      return renderAccountPage(request, reply, user, { values, errors }, 400);
    },
  );

  app.get("/account/password", { config: { errorFormat: "html" }, preHandler: requireSignedIn }, async (request, reply) =>
    renderPage(request, reply, "account/password.eta", { title: "Change your password", errors: {} }),
  );

  app.post(
    "/account/password",
    {
      config: { errorFormat: "html" },
      schema: { body: PasswordBody },
      preValidation: requireFormBody,
      preHandler: [requireSignedIn, app.csrfProtection],
    },
    async (request, reply) => {
      const session = request.webSession;
      if (!session) throw new Error("requireSignedIn set no session");
      const result = await changePassword(
        app.signon,
        session.user,
        session.idHash,
        { current: request.body.current, password: request.body.password, confirmation: request.body.confirmation },
        requestOrigin(request),
        (error) => request.log.error({ mailError: mailErrorForLog(error) }, "account locked mail could not be sent"),
      );
      if (!result.ok) return renderPage(request, reply, "account/password.eta", { title: "Change your password", errors: result.errors }, 400);
      return redirectWithFlash(request, reply, "/account", { kind: "success", text: "Your password has been changed. You are signed out everywhere else." });
    },
  );
};

export default accountRoutes;
