import type { ForbiddenHandler } from "@tessera/signon-client/fastify";
import { escapeHtml, page } from "../views/layout.js";

/**
 * The page for a signed-in person who lacks a permission a page needs: which
 * one, who can give it, and ways back.
 */
export function forbiddenPage(signonUrl: string): ForbiddenHandler {
  return (request, reply, required) => {
    const permissions = required.map((permission) => `<code>${escapeHtml(permission)}</code>`).join(", ");
    const body = `<p>This page needs the ${permissions} permission in this application.</p>
<p>An administrator of Editorial can give it to you in Sign-on. Once they have, sign out and in again if it does not show at once.</p>
<p class="way-back"><a href="/">Back to the home page</a> <a href="${escapeHtml(signonUrl)}">Your Sign-on dashboard</a></p>`;
    return reply
      .code(403)
      .type("text/html; charset=utf-8")
      .header("cache-control", "no-store")
      .send(page("You do not have permission to see this page", body, request.signonUser?.name));
  };
}
