import type { FastifyBaseLogger } from "fastify";
import type { ClientAuthenticationFlood } from "../../oauth/authenticate-client.js";

/**
 * Writes the one warning of a flood of failed client authentications (S15):
 * which application, how many failures in how long. Never the secrets tried.
 */
export function logClientAuthenticationFlood(log: FastifyBaseLogger): (flood: ClientAuthenticationFlood) => void {
  return (flood) =>
    log.warn(
      { application: flood.applicationName, clientId: flood.clientId, failures: flood.failures, windowSeconds: flood.windowSeconds },
      "client authentication flood: over 100 failures for one client from many addresses; the client itself is not slowed",
    );
}
