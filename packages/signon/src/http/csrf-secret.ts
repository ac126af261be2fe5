import type { FastifyReply } from "fastify";
import type { SignonConfig } from "../config.js";

/** The cookie holding the browser's CSRF secret: `__Host-` bound to our origin in production, where it is Secure. */
export function csrfCookieName(config: SignonConfig): string {
  return config.mode === "production" ? "__Host-signon_csrf" : "signon_csrf";
}

/** The CSRF secret cookie's attributes: HttpOnly, SameSite=Lax, path `/`, Secure in production. */
export function csrfCookieOptions(config: SignonConfig): { path: string; httpOnly: boolean; sameSite: "lax"; secure: boolean } {
  return { path: "/", httpOnly: true, sameSite: "lax", secure: config.mode === "production" };
}

/**
 * Gives the browser a new CSRF secret when its session begins or ends: a form
 * loaded before (signed out, or as someone else) is refused as expired
 * afterwards, and a secret planted before sign-in is worth nothing after it.
 * A page rendered later in the same response gets a token of the new secret.
 */
export function renewCsrfSecret(reply: FastifyReply, config: SignonConfig): void {
  const name = csrfCookieName(config);
  // The plugin reads the secret from the request's cookies: without it, the next token made comes with a new one.
  delete reply.request.cookies[name];
  void reply.clearCookie(name, csrfCookieOptions(config));
}
