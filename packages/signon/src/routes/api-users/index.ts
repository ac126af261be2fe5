import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { AccountError, createApiUser } from "../../accounts/manage-users.js";
import { emailMaxLength, personNameMaxLength } from "../../accounts/user-form.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { requestOrigin } from "../../http/request-origin.js";
import { listApiUsers } from "../../repositories/api-user-tokens.js";
import { isUniqueViolation } from "../../repositories/unique-violation.js";
import { findUserByEmail } from "../../repositories/users.js";
import { overLongAnswer } from "../../web/over-long-fields.js";
import { redirectWithFlash, renderPage } from "../../web/page.js";
import { mayManageApiUsers } from "../../web/policy.js";
import { signedInUser } from "../../web/signed-in.js";
import { guardSection } from "../../web/admin-section.js";
import { KeysetQuery, keysetLinks, keysetPosition } from "../../web/keyset-links.js";
import { readKeysetPage } from "../../repositories/keyset.js";
import apiUserRenewalRoutes from "./renewal.js";
import revokeApiUserTokenRoutes from "./revoke-token.js";
import apiUserTokenRoutes from "./tokens.js";
import { readingContext } from "../../context.js";
import { ownRecentChange } from "../../http/recent-write-cookie.js";

const NewApiUserBody = Type.Object(
  { _csrf: Type.Optional(Type.String({ maxLength: 256 })), name: Type.String({ maxLength: personNameMaxLength }), email: Type.String({ maxLength: emailMaxLength }) },
  { additionalProperties: false },
);

const newApiUserAnswer = overLongAnswer(NewApiUserBody, { name: "a name", email: "an e-mail address" }, (request, reply, body, errors) =>
  renderPage(request, reply, "api-users/new.eta", { title: "New API user: there is a problem", values: { name: body.name, email: body.email }, errors }, 400),
);

const emailPattern = /^[^\s@]+@[^\s@]+$/;

const apiUsersPerPage = 50;

/**
 * The API users section (superadmins): `GET /api-users`,
 * `GET|POST /api-users/new`, and each API user's tokens (see `tokens.ts` and `revoke-token.ts`).
 */
const apiUserRoutes: FastifyPluginAsyncTypebox = async (app) => {
  guardSection(app, mayManageApiUsers);

  app.get("/api-users", { config: { errorFormat: "html", listRead: true }, schema: { querystring: KeysetQuery } }, async (request, reply) => {
    const position = keysetPosition(request.query);
    if (position === null) return renderPage(request, reply, "error.eta", { title: "Bad request", message: "Ask for one page: after an API user, before one, or the last." }, 400);
    const reading = readingContext(app.signon, ownRecentChange(request, app.signon.config));
    const page = await readKeysetPage(position, apiUsersPerPage, (at, limit) => listApiUsers(reading.db, at, limit), (user) => ({ text: user.sortName, uid: user.uid }));
    return renderPage(request, reply, "api-users/list.eta", { title: "API users", apiUsers: page.rows, ...keysetLinks("/api-users", page) });
  });

  app.get("/api-users/new", { config: { errorFormat: "html" } }, async (request, reply) =>
    renderPage(request, reply, "api-users/new.eta", { title: "New API user", values: { name: "", email: "" }, errors: {} }),
  );

  app.post(
    "/api-users/new",
    { config: { errorFormat: "html", overLong: newApiUserAnswer }, schema: { body: NewApiUserBody }, preValidation: requireFormBody, preHandler: app.csrfProtection },
    async (request, reply) => {
      const { _csrf: _ignored, ...values } = request.body;
      const errors: Record<string, string> = {};
      const name = values.name.trim();
      const email = values.email.trim();
      if (name === "" || name.length > personNameMaxLength) errors.name = `Enter a name of 1 to ${personNameMaxLength} characters`;
      if (!emailPattern.test(email) || email.length > emailMaxLength) errors.email = "Enter an e-mail address, such as team@example.org";
      else if (await findUserByEmail(app.signon.db, email)) errors.email = `A user with e-mail ${email} already exists`;
      const showErrors = (found: Record<string, string>) =>
        renderPage(request, reply, "api-users/new.eta", { title: "New API user: there is a problem", values, errors: found }, 400);
      if (Object.keys(errors).length > 0) return showErrors(errors);
      try {
        const user = await createApiUser(app.signon, { name, email }, signedInUser(request).uid, requestOrigin(request));
        return await redirectWithFlash(request, reply, `/api-users/${user.uid}`, {
          kind: "success",
          text: `${user.name} is created. Issue it a token for an application below.`,
        });
      } catch (error) {
        if (error instanceof AccountError) return showErrors({ email: error.message });
        if (isUniqueViolation(error)) return showErrors({ email: `A user with e-mail ${email} already exists` });
        throw error;
      }
    },
  );

  await app.register(apiUserTokenRoutes);
  await app.register(revokeApiUserTokenRoutes);
  await app.register(apiUserRenewalRoutes);
};

export default apiUserRoutes;
