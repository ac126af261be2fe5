import { audit } from "../audit.js";
import type { RequestOrigin, SignonContext } from "../context.js";
import type { Application } from "../repositories/applications.js";
import type { PresentedClient } from "../repositories/token-exchange.js";
import { findClientForAuthentication, type ClientOfRequest, type FoundClient } from "../repositories/client-authentication.js";
import { constantTimeEqual } from "../security/constant-time.js";
import { clientAuthenticationFlood, clientAuthenticationLimit, recordFailure, recordFailureCrossingLimit } from "../security/failure-limit.js";
import { sha256Hex } from "../security/random.js";
import type { ClientCredentials } from "./client-credentials.js";
import { InvalidClientError, TooManyAttemptsError } from "./errors.js";

/** A flood of failed authentications for one client from many addresses (S15), reported once per window. */
export interface ClientAuthenticationFlood {
  applicationId: string;
  applicationName: string;
  clientId: string;
  failures: number;
  windowSeconds: number;
}

/** The keys a failed authentication counts under: the (client id, source address) pair and the source address. */
function limitKeys(clientId: string, origin: RequestOrigin): string[] {
  const source = origin.ip ?? "unknown";
  return [`pair:${clientId.slice(0, 128)}:${source}`, `ip:${source}`];
}

/**
 * Authenticates a client by id and secret (S3), under the brute-force limits
 * of S15: after 10 failures in 10 minutes for a client id from one source
 * address, or for any client ids from one source address, that address gets
 * 429 (for that client, or for all) until the window ends, whatever the
 * secret. A client with the right secret from an address without recent
 * failures is never refused. Over 100 failures for one client id from any
 * addresses in 10 minutes is a flood: audited and passed to `onFlood` once
 * per window, and it refuses nobody.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-2.3.1
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-10.10
 */
export async function authenticateClient(
  ctx: SignonContext,
  credentials: ClientCredentials,
  origin: RequestOrigin,
  onFlood?: (flood: ClientAuthenticationFlood) => void,
): Promise<Application> {
  const now = ctx.now();
  const client = presentedClient(credentials, origin);
  const found = await findClientForAuthentication(ctx.statements, client.clientId, client.keys, client.maxFailures, now);
  return concludeClientAuthentication(ctx, credentials, origin, now, found, onFlood);
}

/**
 * The presented client as a statement that authenticates it before acting
 * for it needs it (see `clientLookup`): its id, its failure counters' keys
 * and their limit, and the digest of the presented secret.
 */
export function presentedClient(credentials: ClientCredentials, origin: RequestOrigin): PresentedClient {
  return {
    clientId: credentials.clientId,
    keys: limitKeys(credentials.clientId, origin).map((key) => `${clientAuthenticationLimit.name}:${key}`),
    maxFailures: clientAuthenticationLimit.maxFailures,
    secretHash: sha256Hex(credentials.clientSecret),
  };
}

/** A client to authenticate within a grant: its credentials, and whom to tell of a flood of failures. */
export interface ClientToAuthenticate {
  credentials: ClientCredentials;
  onFlood?: (flood: ClientAuthenticationFlood) => void;
}

/**
 * The rest of {@link authenticateClient} once the client was looked up
 * (alone, or in the statement that acts for it): the application if the
 * secret matches, it is not retired and the source is not blocked; otherwise
 * the failure is counted and audited, and the error thrown.
 */
export async function concludeClientAuthentication<A extends ClientOfRequest>(
  ctx: SignonContext,
  credentials: ClientCredentials,
  origin: RequestOrigin,
  now: Date,
  { application, blockedUntil }: FoundClient<A>,
  onFlood?: (flood: ClientAuthenticationFlood) => void,
): Promise<A> {
  if (blockedUntil !== null) throw new TooManyAttemptsError((blockedUntil.getTime() - now.getTime()) / 1000);

  const presented = sha256Hex(credentials.clientSecret);
  const secretMatches = constantTimeEqual(presented, application?.clientSecretHash ?? sha256Hex(""));
  if (application && secretMatches && !application.retired) return application;

  const keys = limitKeys(credentials.clientId, origin);
  const overLimit = await recordFailure(ctx.db, clientAuthenticationLimit, keys, now);
  await audit(ctx.db, {
    action: "client_authentication_failed",
    at: now,
    applicationId: application?.id ?? null,
    origin,
    details: { client_id: credentials.clientId.slice(0, 128), method: credentials.method },
  });
  if (application && (await recordFailureCrossingLimit(ctx.db, clientAuthenticationFlood, application.clientId, now))) {
    const flood: ClientAuthenticationFlood = {
      applicationId: application.id,
      applicationName: application.name,
      clientId: application.clientId,
      failures: clientAuthenticationFlood.maxFailures + 1,
      windowSeconds: clientAuthenticationFlood.windowSeconds,
    };
    await audit(ctx.db, {
      action: "client_authentication_flood",
      at: now,
      applicationId: application.id,
      origin,
      details: { failures: flood.failures, window_seconds: flood.windowSeconds },
    });
    onFlood?.(flood);
  }
  // Failures past the limit that passed the check above at the same moment as others are refused like later ones.
  if (overLimit !== null) throw new TooManyAttemptsError(overLimit);
  throw new InvalidClientError("Client authentication failed", { usedBasic: credentials.method === "client_secret_basic" });
}
