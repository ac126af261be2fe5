import type { FastifyReply, FastifyRequest } from "fastify";
import { ceremonySeconds } from "../accounts/passkeys/relying-party.js";
import type { SignonConfig } from "../config.js";

/**
 * The cookie that binds a passwordless sign-in's challenge to the browser
 * that asked for it: `__Host-` bound to our origin in production, where
 * cookies are Secure.
 */
export function passkeySignInCookieName(config: SignonConfig): string {
  return config.mode === "production" ? "__Host-signon_passkey" : "signon_passkey";
}

/** The passwordless sign-in binding the browser sent, if any. */
export function readPasskeySignInCookie(request: FastifyRequest, config: SignonConfig): string | undefined {
  return request.cookies[passkeySignInCookieName(config)];
}

/**
 * Sets the binding for as long as a ceremony may take: HttpOnly (no script
 * reads it), SameSite=Strict (no other site's page posts with it), Secure in
 * production.
 */
export function setPasskeySignInCookie(reply: FastifyReply, config: SignonConfig, value: string): void {
  void reply.setCookie(passkeySignInCookieName(config), value, {
    path: "/",
    httpOnly: true,
    sameSite: "strict",
    secure: config.mode === "production",
    maxAge: ceremonySeconds,
  });
}

export function clearPasskeySignInCookie(reply: FastifyReply, config: SignonConfig): void {
  void reply.clearCookie(passkeySignInCookieName(config), { path: "/", httpOnly: true, sameSite: "strict", secure: config.mode === "production" });
}
