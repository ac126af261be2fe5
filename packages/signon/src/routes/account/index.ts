import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { changePassword } from "../../accounts/change-password.js";
import { personNameMaxLength } from "../../accounts/user-form.js";
import { passwordLengths } from "../../accounts/password-policy.js";
import { updateUserDetails } from "../../accounts/manage-users.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { requestOrigin } from "../../http/request-origin.js";
import { mailErrorForLog } from "../../mail/send-mail.js";
import { overLongAnswer } from "../../web/over-long-fields.js";
import { redirectWithFlash, renderPage } from "../../web/page.js";
import { requireSignedIn, signedInUser } from "../../web/signed-in.js";
import { eventCursorPattern, eventsOfUser } from "../../accounts/user-events.js";
import { activityRows, renderAccountPage } from "./account-page.js";
import { newPasswordNouns } from "./new-password-form.js";

// `_csrf` is optional in the schemas so that a form without it gets the CSRF check's 403, not a 400.
const DetailsBody = Type.Object(
  { _csrf: Type.Optional(Type.String({ maxLength: 256 })), name: Type.String({ maxLength: personNameMaxLength }) },
  { additionalProperties: false },
);
/** `before`: the id of the last event of the page before ("Older activity"). */
const ActivityQuery = Type.Object({ before: Type.String({ pattern: eventCursorPattern }) }, { additionalProperties: false });
const PasswordBody = Type.Object(
  {
    _csrf: Type.Optional(Type.String({ maxLength: 256 })),
    current: Type.String({ maxLength: 1024 }),
    password: Type.String({ maxLength: passwordLengths.max }),
    confirmation: Type.String({ maxLength: passwordLengths.max }),
  },
  { additionalProperties: false },
);

const detailsAnswer = overLongAnswer(DetailsBody, { name: "a name" }, (request, reply, body, errors) =>
  renderAccountPage(request, reply, signedInUser(request), { details: { values: { name: body.name }, errors } }, 400),
);
const passwordAnswer = overLongAnswer(PasswordBody, { current: "your current password", ...newPasswordNouns }, (request, reply, _body, errors) =>
  renderPage(request, reply, "account/password.eta", { title: "Change your password", errors }, 400),
);

/**
 * Your account: `GET /account` (details, applications and permissions,
 * recent activity), `GET /account/activity?before=ID` (older activity, a
 * page at a time), `POST /account/details` (the name; the applications
 * are told), `GET/POST /account/password`. The e-mail address changes
 * through `/account/email` (routes/account/email.ts).
 */
const accountRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get("/account", { config: { errorFormat: "html" }, preHandler: requireSignedIn }, async (request, reply) =>
    renderAccountPage(request, reply, signedInUser(request)),
  );

  app.get(
    "/account/activity",
    { config: { errorFormat: "html" }, schema: { querystring: ActivityQuery }, preHandler: requireSignedIn },
    async (request, reply) => {
      const user = signedInUser(request);
      const { events, olderThan } = await eventsOfUser(app.signon, user.uid, Number(request.query.before));
      return renderPage(request, reply, "account/activity.eta", {
        title: "Your activity",
        activity: activityRows(events, user.uid),
        olderHref: olderThan === null ? null : `/account/activity?before=${olderThan}`,
      });
    },
  );

  app.post(
    "/account/details",
    {
      config: { errorFormat: "html", overLong: detailsAnswer },
      schema: { body: DetailsBody },
      preValidation: requireFormBody,
      preHandler: [requireSignedIn, app.csrfProtection],
    },
    async (request, reply) => {
      const user = signedInUser(request);
      const values = { name: request.body.name.trim() };
      if (values.name === "") return renderAccountPage(request, reply, user, { details: { values, errors: { name: "Enter your name" } } }, 400);
      await updateUserDetails(app.signon, user.email, values, user.uid, requestOrigin(request), request.webSession?.idHash ?? null);
      return redirectWithFlash(request, reply, "/account", { kind: "success", text: "Your name has been saved." });
    },
  );

  app.get("/account/password", { config: { errorFormat: "html" }, preHandler: requireSignedIn }, async (request, reply) =>
    renderPage(request, reply, "account/password.eta", { title: "Change your password", errors: {} }),
  );

  app.post(
    "/account/password",
    {
      config: { errorFormat: "html", overLong: passwordAnswer },
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
