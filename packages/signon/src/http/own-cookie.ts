import type { FastifyReply, FastifyRequest } from "fastify";
import type { SignonConfig } from "../config.js";

/** What a cookie of Sign-on's is set with. */
export interface OwnCookieAttributes {
  path: string;
  httpOnly: boolean;
  sameSite: "lax" | "strict";
  secure: boolean;
}

/** One of Sign-on's cookies: its name and attributes, and how to read, set and clear it. */
export interface OwnCookie {
  name(config: SignonConfig): string;
  attributes(config: SignonConfig): OwnCookieAttributes;
  read(request: FastifyRequest, config: SignonConfig): string | undefined;
  set(reply: FastifyReply, config: SignonConfig, value: string): void;
  clear(reply: FastifyReply, config: SignonConfig): void;
}

/**
 * A cookie of Sign-on's own (S16): `__Host-` bound to our origin in production, where it is Secure; HttpOnly (no
 * script reads it); path `/`; `sameSite` as given; kept for `maxAgeSeconds(config)`, or until the browser closes
 * without it.
 */
export function ownCookie(name: string, options: { sameSite: "lax" | "strict"; maxAgeSeconds?: (config: SignonConfig) => number }): OwnCookie {
  const nameIn = (config: SignonConfig): string => (config.mode === "production" ? `__Host-${name}` : name);
  const attributes = (config: SignonConfig): OwnCookieAttributes => ({ path: "/", httpOnly: true, sameSite: options.sameSite, secure: config.mode === "production" });
  return {
    name: nameIn,
    attributes,
    read: (request, config) => request.cookies[nameIn(config)],
    set(reply, config, value) {
      const maxAge = options.maxAgeSeconds?.(config);
      void reply.setCookie(nameIn(config), value, maxAge === undefined ? attributes(config) : { ...attributes(config), maxAge });
    },
    clear(reply, config) {
      void reply.clearCookie(nameIn(config), attributes(config));
    },
  };
}
