import type { FastifyReply, FastifyRequest } from "fastify";
import { setSessionFlash, type Session } from "../repositories/sessions.js";
import { openSecret, sealSecret, SecretBoxError } from "../security/secret-box.js";

function sealingKey(request: FastifyRequest): Buffer {
  const ctx = request.server.signon;
  const key = ctx.secretKey ?? ctx.config.secretKey;
  if (!key) throw new Error("no secret key: resolve it at start-up (resolveSecretKey) and pass it in the context");
  return key;
}

/**
 * Redirects (303) after a successful post that made a secret (a client
 * secret, an API token), so that reloading the next page posts nothing again.
 * The secret waits in the session's flash, sealed with the service's secret
 * key, for the page at `location` alone: that page shows it once (`takeSecret`),
 * and showing any page clears the flash. Never in the address.
 */
export async function redirectWithSecret(
  request: FastifyRequest,
  reply: FastifyReply,
  location: string,
  flash: Pick<NonNullable<Session["flash"]>, "kind" | "text">,
  secret: string,
): Promise<FastifyReply> {
  const session = request.webSession;
  if (!session) throw new Error("a secret is shown only in a signed-in session");
  const sealed = sealSecret(sealingKey(request), secret);
  await setSessionFlash(request.server.signon.db, session.idHash, { ...flash, secret: { for: location, sealed } });
  return reply.redirect(location, 303);
}

/**
 * The secret that the post before left for this page (`path`), or `null`
 * when there is none, it was left for another page, or it was shown already.
 * The page must then be rendered with `renderPage`, which clears it.
 */
export function takeSecret(request: FastifyRequest, path: string): string | null {
  const waiting = request.webSession?.flash?.secret;
  if (!waiting || waiting.for !== path) return null;
  try {
    return openSecret(sealingKey(request), waiting.sealed);
  } catch (error) {
    // Sealed under a key replaced since: as good as shown.
    if (error instanceof SecretBoxError) return null;
    throw error;
  }
}
