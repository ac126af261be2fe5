import type { FastifyReply, FastifyRequest } from "fastify";
import { rememberBrowserSeconds } from "../accounts/two-step-sign-in.js";
import type { SignonConfig } from "../config.js";

/** The "remember this browser" cookie's name: `__Host-` bound to our origin in production, where cookies are Secure. */
export function rememberedBrowserCookieName(config: SignonConfig): string {
  return config.mode === "production" ? "__Host-signon_remembered" : "signon_remembered";
}

/** The remembered-browser token the browser sent, if any. */
export function readRememberedBrowserCookie(request: FastifyRequest, config: SignonConfig): string | undefined {
  return request.cookies[rememberedBrowserCookieName(config)];
}

/** Sets the remembered-browser cookie for 30 days: HttpOnly, SameSite=Lax, Secure in production (S16). */
export function setRememberedBrowserCookie(reply: FastifyReply, config: SignonConfig, token: string): void {
  void reply.setCookie(rememberedBrowserCookieName(config), token, {
    path: "/",
    httpOnly: true,
    sameSite: "lax",
    secure: config.mode === "production",
    maxAge: rememberBrowserSeconds,
  });
}
