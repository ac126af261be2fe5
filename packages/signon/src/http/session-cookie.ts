import type { FastifyReply, FastifyRequest } from "fastify";
import type { SignonConfig } from "../config.js";

/** The session cookie's name: `__Host-` bound to our origin in production, where cookies are Secure. */
export function sessionCookieName(config: SignonConfig): string {
  return config.mode === "production" ? "__Host-signon_session" : "signon_session";
}

/** The session id the browser sent, if any. */
export function readSessionCookie(request: FastifyRequest, config: SignonConfig): string | undefined {
  return request.cookies[sessionCookieName(config)];
}

/** Sets the session cookie: HttpOnly, SameSite=Lax, Secure in production (S16). */
export function setSessionCookie(reply: FastifyReply, config: SignonConfig, sessionId: string): void {
  void reply.setCookie(sessionCookieName(config), sessionId, {
    path: "/",
    httpOnly: true,
    sameSite: "lax",
    secure: config.mode === "production",
    maxAge: config.sessionMaxSeconds,
  });
}

export function clearSessionCookie(reply: FastifyReply, config: SignonConfig): void {
  void reply.clearCookie(sessionCookieName(config), { path: "/", httpOnly: true, sameSite: "lax", secure: config.mode === "production" });
}
