import { randomBytes } from "node:crypto";
import type { FastifyReply } from "fastify";
import type { SignonConfig } from "../config.js";
import { ownCookie } from "./own-cookie.js";

/** The cookie holding the browser's CSRF secret, for as long as the browser runs; the CSRF plugin reads and sets it. */
export const csrfCookie = ownCookie("signon_csrf", { sameSite: "lax" });

/**
 * Gives the browser a new CSRF secret when its session begins or ends: a form
 * loaded before (signed out, or as someone else) is refused as expired
 * afterwards, and a secret planted before sign-in is worth nothing after it.
 * The new secret is set at once and is the one this request's later tokens
 * use: pages opened next, in as many tabs as there are, all share it.
 */
export function renewCsrfSecret(reply: FastifyReply, config: SignonConfig): void {
  // 18 random bytes, as the CSRF plugin makes its own; it reads the secret from the request's cookies.
  const secret = randomBytes(18).toString("base64url");
  reply.request.cookies[csrfCookie.name(config)] = secret;
  csrfCookie.set(reply, config, secret);
}
