import type { FastifyReply, FastifyRequest } from "fastify";
import type { SignonConfig } from "../config.js";
import { renewCsrfSecret } from "./csrf-secret.js";
import { ownCookie } from "./own-cookie.js";

/** The session cookie: SameSite=Lax, for the session's longest life. */
const sessionCookie = ownCookie("signon_session", { sameSite: "lax", maxAgeSeconds: (config) => config.sessionMaxSeconds });

/** The session cookie's name: `__Host-` bound to our origin in production, where cookies are Secure. */
export function sessionCookieName(config: SignonConfig): string {
  return sessionCookie.name(config);
}

/** The session id the browser sent, if any. */
export function readSessionCookie(request: FastifyRequest, config: SignonConfig): string | undefined {
  return sessionCookie.read(request, config);
}

/** Sets the session cookie: HttpOnly, SameSite=Lax, Secure in production (S16); with a new session, a new CSRF secret. */
export function setSessionCookie(reply: FastifyReply, config: SignonConfig, sessionId: string): void {
  sessionCookie.set(reply, config, sessionId);
  renewCsrfSecret(reply, config);
}

/** Clears the session cookie; with the session's end, a new CSRF secret. */
export function clearSessionCookie(reply: FastifyReply, config: SignonConfig): void {
  sessionCookie.clear(reply, config);
  renewCsrfSecret(reply, config);
}
