import { randomBytes } from "node:crypto";
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
 * The new secret is set at once and is the one this request's later tokens
 * use: pages opened next, in as many tabs as there are, all share it.
 */
export function renewCsrfSecret(reply: FastifyReply, config: SignonConfig): void {
  const name = csrfCookieName(config);
  // 18 random bytes, as the CSRF plugin makes its own; it reads the secret from the request's cookies.
  const secret = randomBytes(18).toString("base64url");
  reply.request.cookies[name] = secret;
  void reply.setCookie(name, secret, csrfCookieOptions(config));
}
