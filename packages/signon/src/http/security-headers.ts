import type { FastifyInstance } from "fastify";

/**
 * The content security policy of every response: nothing from elsewhere; our
 * own scripts only (the passkey ceremonies, /assets/passkeys.js), which fetch
 * from this origin; our own stylesheet only (/assets/signon.css, no inline
 * styles); no framing. No form-action: after sign-in the browser is
 * redirected on to a client's redirect URI.
 */
const contentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "connect-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join(";");

/**
 * The security headers of every response (S16), the same for every request:
 * HSTS in production only (plain HTTP is refused there anyway).
 */
export function securityHeaders(production: boolean): Readonly<Record<string, string>> {
  return Object.freeze({
    "content-security-policy": contentSecurityPolicy,
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
    "origin-agent-cluster": "?1",
    "referrer-policy": "no-referrer",
    ...(production ? { "strict-transport-security": "max-age=31536000; includeSubDomains" } : {}),
    "x-content-type-options": "nosniff",
    "x-dns-prefetch-control": "off",
    "x-download-options": "noopen",
    "x-frame-options": "SAMEORIGIN",
    "x-permitted-cross-domain-policies": "none",
    "x-xss-protection": "0",
  });
}

/** Sets {@link securityHeaders} on every response, from one object built at start-up rather than per request. */
export function registerSecurityHeaders(app: FastifyInstance, production: boolean): void {
  const headers = securityHeaders(production);
  app.addHook("onRequest", (_request, reply, done) => {
    reply.headers(headers);
    done();
  });
}
