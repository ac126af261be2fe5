import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { findApiUser, revokeApiUserToken } from "../../accounts/api-users.js";
import { requireFormBody } from "../../http/form-content-type.js";
import { listIssuedTokens, type IssuedToken } from "../../repositories/api-user-tokens.js";
import type { User } from "../../repositories/users.js";
import { confirmField, isConfirmed, renderConfirmation, type ConfirmationPage } from "../../web/confirmation.js";
import { redirectWithFlash } from "../../web/page.js";
import { actorOf, formatTime, isId, sendNotFound } from "../../web/admin-section.js";

const Params = Type.Object({ uid: Type.String({ maxLength: 64 }), grantId: Type.String({ maxLength: 64 }) });
const ConfirmBody = Type.Object({ _csrf: Type.Optional(Type.String({ maxLength: 256 })), ...confirmField }, { additionalProperties: false });

/** The confirmation page of `POST /api-users/:uid/tokens/:grantId/revoke`. */
function revokeConfirmation(apiUser: User, token: IssuedToken, now: Date): ConfirmationPage {
  const issued = `the token of ${apiUser.name} for ${token.application}, issued ${formatTime(token.createdAt)}`;
  const expired = token.expiresAt !== null && token.expiresAt <= now;
  return {
    title: `Revoke the token of ${apiUser.name} for ${token.application}`,
    consequences: [
      expired
        ? `This token, ${issued}, expired ${formatTime(token.expiresAt ?? now)}; it is marked revoked as well.`
        : `This token, ${issued}, stops working at once: every request that sends it is refused (401).`,
      `${apiUser.name} keeps its permissions on ${token.application} (${token.permissions.join(", ") || "none"}), and its other tokens keep working.`,
      `The token cannot be shown or used again: to give ${apiUser.name} access again, issue a new token on its page.`,
    ],
    finality: "This cannot be undone.",
    action: `/api-users/${apiUser.uid}/tokens/${token.grantId}/revoke`,
    confirmLabel: `Revoke the token for ${token.application}`,
    cancel: { href: `/api-users/${apiUser.uid}`, label: `Cancel: back to ${apiUser.name}` },
  };
}

/**
 * The API user and its token named by the address, when the token is not
 * revoked yet; otherwise sends the 404 page, or goes back to the API user's
 * page saying that it is revoked already.
 */
async function revocableToken(
  request: FastifyRequest,
  reply: FastifyReply,
  { uid, grantId }: { uid: string; grantId: string },
): Promise<{ apiUser: User; token: IssuedToken } | null> {
  const ctx = request.server.signon;
  const apiUser = isId(uid) ? await findApiUser(ctx, uid) : null;
  if (!apiUser) {
    await sendNotFound(request, reply, "API user");
    return null;
  }
  const token = isId(grantId) ? (await listIssuedTokens(ctx.db, apiUser.uid)).find((candidate) => candidate.grantId === grantId) : undefined;
  if (!token) await sendNotFound(request, reply, "token");
  else if (token.revokedAt !== null) await redirectWithFlash(request, reply, `/api-users/${apiUser.uid}`, { kind: "success", text: "That token is already revoked: it no longer works." });
  else return { apiUser, token };
  return null;
}

/**
 * Revoking an API user's token is two steps: `GET …/tokens/:grantId/revoke`
 * names the token and what revoking it does; only its form's post with
 * `confirm=yes` revokes it. A post without the confirmation gets the
 * confirmation page again (400) and changes nothing.
 */
const revokeApiUserTokenRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get("/api-users/:uid/tokens/:grantId/revoke", { config: { errorFormat: "html" }, schema: { params: Params } }, async (request, reply) => {
    const found = await revocableToken(request, reply, request.params);
    if (!found) return reply;
    return renderConfirmation(request, reply, revokeConfirmation(found.apiUser, found.token, app.signon.now()));
  });

  app.post(
    "/api-users/:uid/tokens/:grantId/revoke",
    { config: { errorFormat: "html" }, schema: { params: Params, body: ConfirmBody }, preValidation: requireFormBody, preHandler: app.csrfProtection },
    async (request, reply) => {
      const found = await revocableToken(request, reply, request.params);
      if (!found) return reply;
      const { apiUser, token } = found;
      if (!isConfirmed(request.body)) return renderConfirmation(request, reply, revokeConfirmation(apiUser, token, app.signon.now()), { unconfirmed: true });
      if (!(await revokeApiUserToken(app.signon, apiUser, token.grantId, actorOf(request)))) return sendNotFound(request, reply, "token");
      return redirectWithFlash(request, reply, `/api-users/${apiUser.uid}`, { kind: "success", text: `The token for ${token.application} is revoked: it no longer works.` });
    },
  );
};

export default revokeApiUserTokenRoutes;
