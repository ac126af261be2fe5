import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { findApiUser, issueApiUserToken } from "../../accounts/api-users.js";
import { AccountError } from "../../accounts/manage-users.js";
import { renewalRuleText, renewedTokensToShow, tokenExpiryWarningDays } from "../../accounts/token-renewal.js";
import { splitList } from "../../applications/application-fields.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { requestOrigin } from "../../http/request-origin.js";
import { listIssuedTokens } from "../../repositories/api-user-tokens.js";
import { listLiveApplications } from "../../repositories/application-admin.js";
import type { User } from "../../repositories/users.js";
import { redirectWithSecret, takeSecret } from "../../web/one-time-secret.js";
import { overLongAnswer } from "../../web/over-long-fields.js";
import { renderPage } from "../../web/page.js";
import { signedInUser } from "../../web/signed-in.js";
import { isId, sendNotFound } from "../../web/admin-section.js";

const Params = Type.Object({ uid: Type.String({ maxLength: 64 }) });
const IssueBody = Type.Object(
  {
    _csrf: Type.Optional(Type.String({ maxLength: 256 })),
    application_id: Type.String({ maxLength: 64 }),
    permissions: Type.String({ maxLength: 2000 }),
    // A whole number from 1 to 3650.
    expires_in_days: Type.String({ maxLength: 4 }),
  },
  { additionalProperties: false },
);

/** An issued token as it waits, sealed, for the page that shows it once. */
interface IssuedToken {
  accessToken: string;
  expiresAt: string;
  application: string;
  permissions: string[];
}

type IssueForm = { application_id: string; permissions: string; expires_in_days: string };
const emptyIssueForm: IssueForm = { application_id: "", permissions: "", expires_in_days: "730" };

export async function showApiUser(
  request: FastifyRequest,
  reply: FastifyReply,
  apiUser: User,
  form: { values: IssueForm; errors: Record<string, string> } = { values: emptyIssueForm, errors: {} },
  /** Errors of the other forms of the page (automatic renewal). */
  actionErrors: Record<string, string> = {},
): Promise<FastifyReply> {
  const ctx = request.server.signon;
  const [issued, applications, renewed] = await Promise.all([listIssuedTokens(ctx.db, apiUser.uid), listLiveApplications(ctx.db), renewedTokensToShow(ctx, apiUser.uid)]);
  const now = ctx.now();
  const warnBefore = now.getTime() + tokenExpiryWarningDays * 86_400_000;
  const tokens = issued.map((token) => {
    const live = token.revokedAt === null && token.expiresAt !== null && token.expiresAt > now;
    const daysLeft = live && token.expiresAt ? Math.ceil((token.expiresAt.getTime() - now.getTime()) / 86_400_000) : null;
    return { ...token, expiringSoon: live && token.expiresAt !== null && token.expiresAt.getTime() <= warnBefore, daysLeft };
  });
  const failed = Object.keys(form.errors).length + Object.keys(actionErrors).length > 0;
  return renderPage(
    request,
    reply,
    "api-users/show.eta",
    {
      title: failed ? `${apiUser.name}: there is a problem` : apiUser.name,
      apiUser,
      tokens,
      expiringCount: tokens.filter((token) => token.expiringSoon).length,
      warningDays: tokenExpiryWarningDays,
      renewalRule: renewalRuleText,
      renewed,
      applications,
      now,
      ...form,
      actionErrors,
    },
    failed ? 400 : 200,
  );
}

export async function findApiUserParam(request: FastifyRequest, uid: string): Promise<User | null> {
  return isId(uid) ? findApiUser(request.server.signon, uid) : null;
}

const issueAnswer = overLongAnswer(
  IssueBody,
  { permissions: { noun: "permissions", unit: "characters in all" }, expires_in_days: { noun: "a number of days", unit: "digits" } },
  async (request, reply, body, errors) => {
    const apiUser = await findApiUserParam(request, (request.params as { uid: string }).uid);
    if (!apiUser) return sendNotFound(request, reply, "API user");
    const { _csrf: _ignored, ...values } = body;
    return showApiUser(request, reply, apiUser, { values, errors });
  },
);

/**
 * `GET /api-users/:uid`: an API user with its tokens and a form to issue one;
 * `POST /api-users/:uid/tokens` issues a token and redirects to `GET
 * /api-users/:uid/new-token`, which shows it once (revoking one is in
 * `revoke-token.ts`).
 */
const apiUserTokenRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get("/api-users/:uid", { config: { errorFormat: "html" }, schema: { params: Params } }, async (request, reply) => {
    const apiUser = await findApiUserParam(request, request.params.uid);
    if (!apiUser) return sendNotFound(request, reply, "API user");
    return showApiUser(request, reply, apiUser);
  });

  app.get("/api-users/:uid/new-token", { config: { errorFormat: "html" }, schema: { params: Params } }, async (request, reply) => {
    const apiUser = await findApiUserParam(request, request.params.uid);
    if (!apiUser) return sendNotFound(request, reply, "API user");
    const waiting = takeSecret(request, `/api-users/${apiUser.uid}/new-token`);
    const token = waiting === null ? null : (JSON.parse(waiting) as IssuedToken);
    return renderPage(request, reply, "api-users/token.eta", {
      title: token ? `Token for ${token.application}` : `New token for ${apiUser.name}`,
      apiUser,
      token: token && { ...token, expiresAt: new Date(token.expiresAt) },
    });
  });

  app.post(
    "/api-users/:uid/tokens",
    { config: { errorFormat: "html", overLong: issueAnswer }, schema: { params: Params, body: IssueBody }, preValidation: requireFormBody, preHandler: app.csrfProtection },
    async (request, reply) => {
      const apiUser = await findApiUserParam(request, request.params.uid);
      if (!apiUser) return sendNotFound(request, reply, "API user");
      const { _csrf: _ignored, ...values } = request.body;
      const errors: Record<string, string> = {};
      const applications = await listLiveApplications(app.signon.db);
      const application = applications.find((candidate) => candidate.id === values.application_id);
      const permissions = splitList(values.permissions);
      if (!application) errors.application_id = "Choose an application that is not retired";
      else {
        const unsupported = permissions.filter((permission) => !application.supportedPermissions.includes(permission));
        if (unsupported.length > 0) errors.permissions = `${application.name} does not support ${unsupported.join(", ")}`;
      }
      const days = /^\d{1,4}$/.test(values.expires_in_days.trim()) ? Number(values.expires_in_days.trim()) : Number.NaN;
      if (!(days >= 1 && days <= 3650)) errors.expires_in_days = "Enter a whole number of days from 1 to 3650";
      if (apiUser.suspendedAt !== null) errors.application_id = "This API user is suspended: no token can be issued";
      if (!application || Object.keys(errors).length > 0) return showApiUser(request, reply, apiUser, { values, errors });
      try {
        const issued = await issueApiUserToken(
          app.signon,
          { user: apiUser, applicationId: application.id, permissions, expiresInDays: days },
          signedInUser(request).uid,
          requestOrigin(request),
        );
        const shown: IssuedToken = { ...issued, expiresAt: issued.expiresAt.toISOString() };
        return await redirectWithSecret(
          request,
          reply,
          `/api-users/${apiUser.uid}/new-token`,
          { kind: "success", text: `A token for ${issued.application} is issued to ${apiUser.name}.` },
          JSON.stringify(shown),
        );
      } catch (error) {
        if (error instanceof AccountError) return showApiUser(request, reply, apiUser, { values, errors: { application_id: error.message } });
        throw error;
      }
    },
  );
};

export default apiUserTokenRoutes;
