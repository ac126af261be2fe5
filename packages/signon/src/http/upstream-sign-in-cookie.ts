import type { FastifyReply, FastifyRequest } from "fastify";
import type { SignonConfig } from "../config.js";
import { ownCookie } from "./own-cookie.js";

/**
 * The `state` of a sign-in sent to an organisation's provider, kept by the browser that was sent: the answer must come
 * back to the same browser. SameSite=Lax, since the provider sends the browser back with a top-level GET from its own
 * site; for as long as the sign-in waits (10 minutes).
 */
const upstreamSignInCookie = ownCookie("signon_upstream", { sameSite: "lax", maxAgeSeconds: () => 10 * 60 });

export function readUpstreamSignInCookie(request: FastifyRequest, config: SignonConfig): string | undefined {
  return upstreamSignInCookie.read(request, config);
}

export function setUpstreamSignInCookie(reply: FastifyReply, config: SignonConfig, state: string): void {
  upstreamSignInCookie.set(reply, config, state);
}

export function clearUpstreamSignInCookie(reply: FastifyReply, config: SignonConfig): void {
  upstreamSignInCookie.clear(reply, config);
}
