import { Type } from "@fastify/type-provider-typebox";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { findUserDetails, type UserDetails } from "../../accounts/user-details.js";
import { renderPage } from "../../web/page.js";
import { mayListUsers, mayManageUser } from "../../web/policy.js";
import { requireRule, requireSignedIn, sendForbidden, signedInUser } from "../../web/signed-in.js";

/**
 * The `:uid` of every page about one user; its form is checked by
 * `managedUser` (a malformed uid is a 404, not a 400). The router refuses
 * parameters longer than 200 characters before this schema.
 */
export const UidParams = Type.Object({ uid: Type.String({ maxLength: 200 }) });

/** preHandlers of the users pages: signed in, and allowed to see the users section. */
export const usersPageGuards = [requireSignedIn, requireRule(mayListUsers)];

/** preHandlers of the users section's forms: signed in, a valid CSRF token, and allowed to see the users section. */
export function usersFormGuards(app: FastifyInstance) {
  return [requireSignedIn, app.csrfProtection, requireRule(mayListUsers)];
}

/** The 404 page of the users section. */
export async function sendUserNotFound(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  return renderPage(request, reply, "error.eta", { title: "Page not found", message: "There is no user at this address." }, 404);
}

/**
 * The person a page is about, when the signed-in actor may manage them.
 * Otherwise sends the 404 page (unknown or malformed uid, or an API user,
 * who has pages of its own) or the 403 page, and returns `null`.
 */
export async function managedUser(request: FastifyRequest, reply: FastifyReply, uid: string): Promise<UserDetails | null> {
  const details = await findUserDetails(request.server.signon, uid);
  if (!details || details.user.isApiUser) {
    await sendUserNotFound(request, reply);
    return null;
  }
  if (!mayManageUser(signedInUser(request), details.user)) {
    await sendForbidden(reply);
    return null;
  }
  return details;
}

/** The error summary entries of a form: each message with the id of its field. */
export function errorSummary(errors: Record<string, string>): { field: string; message: string }[] {
  return Object.entries(errors).map(([field, message]) => ({ field, message }));
}
