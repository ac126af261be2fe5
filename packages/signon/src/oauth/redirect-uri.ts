const loopbackHosts = new Set(["127.0.0.1", "[::1]", "localhost"]);

/**
 * Why a URI cannot be registered as a redirect URI, or `null` when it can.
 * It must be absolute, without a fragment, and `https://`; `http://` is
 * allowed for a loopback host only in development (S8).
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-3.1.2
 */
export function redirectUriProblem(uri: string, options: { allowLoopbackHttp: boolean }): string | null {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return "is not an absolute URI";
  }
  if (uri.includes("#")) return "must not contain a fragment";
  if (url.username || url.password) return "must not contain credentials";
  if (url.protocol === "https:") return null;
  if (url.protocol === "http:" && loopbackHosts.has(url.hostname)) {
    return options.allowLoopbackHttp ? null : "must use https (http on a loopback host is allowed in development only)";
  }
  return "must use https";
}

/**
 * Whether a requested `redirect_uri` is one of the registered ones: an exact
 * string comparison, no normalisation (S8).
 *
 * @see https://www.rfc-editor.org/rfc/rfc9700#section-4.1.3
 */
export function isRegisteredRedirectUri(requested: string, registered: readonly string[]): boolean {
  return registered.includes(requested);
}
