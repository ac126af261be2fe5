import type { FastifyReply, FastifyRequest } from "fastify";
import type { SignonConfig } from "../config.js";

/** One of Sign-on's cookies: its name, and how to read, set and clear it. */
export interface OwnCookie {
  name(config: SignonConfig): string;
  read(request: FastifyRequest, config: SignonConfig): string | undefined;
  set(reply: FastifyReply, config: SignonConfig, value: string): void;
  clear(reply: FastifyReply, config: SignonConfig): void;
}

/**
 * A cookie of Sign-on's own (S16): `__Host-` bound to our origin in production, where it is Secure; HttpOnly (no
 * script reads it); path `/`; `sameSite` as given; kept for `maxAgeSeconds(config)`.
 */
export function ownCookie(name: string, options: { sameSite: "lax" | "strict"; maxAgeSeconds: (config: SignonConfig) => number }): OwnCookie {
  const nameIn = (config: SignonConfig): string => (config.mode === "production" ? `__Host-${name}` : name);
  const attributes = (config: SignonConfig) => ({ path: "/", httpOnly: true, sameSite: options.sameSite, secure: config.mode === "production" });
  return {
    name: nameIn,
    read: (request, config) => request.cookies[nameIn(config)],
    set(reply, config, value) {
      void reply.setCookie(nameIn(config), value, { ...attributes(config), maxAge: options.maxAgeSeconds(config) });
    },
    clear(reply, config) {
      void reply.clearCookie(nameIn(config), attributes(config));
    },
  };
}
