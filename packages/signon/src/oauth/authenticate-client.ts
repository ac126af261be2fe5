import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import type { Application } from "../repositories/applications.js";
import { findClientForAuthentication } from "../repositories/client-authentication.js";
import { constantTimeEqual } from "../security/constant-time.js";
import { clientAuthenticationLimit, recordFailure } from "../security/failure-limit.js";
import { sha256Hex } from "../security/random.js";
import type { ClientCredentials } from "./client-credentials.js";
import { InvalidClientError, TooManyAttemptsError } from "./errors.js";

/**
 * Authenticates a client by id and secret (S3), under the brute-force limit
 * of S15: after 10 failures for a client id or an IP in 10 minutes, every
 * attempt gets 429 until the window ends, whatever the secret.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-2.3.1
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-10.10
 */
export async function authenticateClient(
  ctx: SignonContext,
  credentials: ClientCredentials,
  origin: RequestOrigin,
): Promise<Application> {
  const now = ctx.now();
  const keys = [`client:${credentials.clientId}`, ...(origin.ip ? [`ip:${origin.ip}`] : [])];
  const { application, blockedUntil } = await findClientForAuthentication(
    ctx.statements,
    credentials.clientId,
    keys.map((key) => `${clientAuthenticationLimit.name}:${key}`),
    clientAuthenticationLimit.maxFailures,
    now,
  );
  if (blockedUntil !== null) throw new TooManyAttemptsError((blockedUntil.getTime() - now.getTime()) / 1000);

  const presented = sha256Hex(credentials.clientSecret);
  const secretMatches = constantTimeEqual(presented, application?.clientSecretHash ?? sha256Hex(""));
  if (application && secretMatches && !application.retired) return application;

  const overLimit = await recordFailure(ctx.db, clientAuthenticationLimit, keys, now);
  await audit(ctx.db, {
    action: "client_authentication_failed",
    at: now,
    applicationId: application?.id ?? null,
    origin,
    details: { client_id: credentials.clientId.slice(0, 128), method: credentials.method },
  });
  // Failures past the limit that passed the check above at the same moment as others are refused like later ones.
  if (overLimit !== null) throw new TooManyAttemptsError(overLimit);
  throw new InvalidClientError("Client authentication failed", { usedBasic: credentials.method === "client_secret_basic" });
}
