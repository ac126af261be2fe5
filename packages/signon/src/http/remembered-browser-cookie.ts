import type { FastifyReply, FastifyRequest } from "fastify";
import { rememberBrowserSeconds } from "../accounts/two-step-sign-in.js";
import type { SignonConfig } from "../config.js";
import { ownCookie } from "./own-cookie.js";

/** The "remember this browser" cookie: SameSite=Lax, for 30 days. */
const rememberedBrowserCookie = ownCookie("signon_remembered", { sameSite: "lax", maxAgeSeconds: () => rememberBrowserSeconds });

/** The "remember this browser" cookie's name: `__Host-` bound to our origin in production, where cookies are Secure. */
export function rememberedBrowserCookieName(config: SignonConfig): string {
  return rememberedBrowserCookie.name(config);
}

/** The remembered-browser token the browser sent, if any. */
export function readRememberedBrowserCookie(request: FastifyRequest, config: SignonConfig): string | undefined {
  return rememberedBrowserCookie.read(request, config);
}

/** Sets the remembered-browser cookie for 30 days: HttpOnly, SameSite=Lax, Secure in production (S16). */
export function setRememberedBrowserCookie(reply: FastifyReply, config: SignonConfig, token: string): void {
  rememberedBrowserCookie.set(reply, config, token);
}
