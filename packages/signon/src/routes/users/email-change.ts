import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { cancelEmailChange } from "../../accounts/email-change.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { requestOrigin } from "../../http/request-origin.js";
import { redirectWithFlash } from "../../web/page.js";
import { signedInUser } from "../../web/signed-in.js";
import { managedUser, UidParams, usersFormGuards } from "./managed-user.js";

const CsrfOnlyBody = Type.Object({ _csrf: Type.String({ maxLength: 256 }) }, { additionalProperties: false });

/** `POST /users/:uid/cancel-email-change`: drops the user's pending e-mail address change; its link stops working. */
const userEmailChangeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    "/users/:uid/cancel-email-change",
    {
      config: { errorFormat: "html" },
      schema: { params: UidParams, body: CsrfOnlyBody },
      preValidation: requireFormBody,
      preHandler: usersFormGuards(app),
    },
    async (request, reply) => {
      const details = await managedUser(request, reply, request.params.uid);
      if (!details) return reply;
      const cancelled = await cancelEmailChange(app.signon, details.user, signedInUser(request).uid, requestOrigin(request));
      const text = cancelled ? "The pending e-mail address change is cancelled; its link no longer works." : "There was no pending e-mail address change.";
      return redirectWithFlash(request, reply, `/users/${details.user.uid}`, { kind: "success", text });
    },
  );
};

export default userEmailChangeRoutes;
