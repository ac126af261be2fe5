import type { FastifyReply, FastifyRequest } from "fastify";
import { ceremonySeconds } from "../accounts/passkeys/relying-party.js";
import type { SignonConfig } from "../config.js";
import { ownCookie } from "./own-cookie.js";

/**
 * The cookie that binds a passwordless sign-in's challenge to the browser that asked for it: SameSite=Strict (no
 * other site's page posts with it), for as long as a ceremony may take.
 */
const passkeySignInCookie = ownCookie("signon_passkey", { sameSite: "strict", maxAgeSeconds: () => ceremonySeconds });

export function passkeySignInCookieName(config: SignonConfig): string {
  return passkeySignInCookie.name(config);
}

/** The passwordless sign-in binding the browser sent, if any. */
export function readPasskeySignInCookie(request: FastifyRequest, config: SignonConfig): string | undefined {
  return passkeySignInCookie.read(request, config);
}

/** Sets the binding: HttpOnly, SameSite=Strict, Secure in production. */
export function setPasskeySignInCookie(reply: FastifyReply, config: SignonConfig, value: string): void {
  passkeySignInCookie.set(reply, config, value);
}

export function clearPasskeySignInCookie(reply: FastifyReply, config: SignonConfig): void {
  passkeySignInCookie.clear(reply, config);
}
