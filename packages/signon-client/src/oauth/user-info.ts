import { Value } from "@sinclair/typebox/value";
import type { BearerVerifierConfig } from "../config.js";
import { SignonUnavailableError } from "../errors.js";
import { signonRequestOptions } from "../http/request-options.js";
import { sendRequest } from "../http/send.js";
import { SignonUserEnvelope, type SignonUserJson } from "../user.js";

/**
 * Asks Sign-on who holds `accessToken` (`GET /user.json?client_id=…` with a
 * Bearer header). The `client_id` is this application's: Sign-on answers 401
 * for a token issued to any other application (DECISIONS S11), as it does for
 * an unknown, expired or revoked one. Returns `null` when Sign-on says the
 * token is not valid for this application; throws `SignonUnavailableError`
 * when it cannot tell.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-2.1
 */
export async function fetchSignonUser(config: BearerVerifierConfig, accessToken: string): Promise<SignonUserJson | null> {
  const options = signonRequestOptions(`GET ${config.paths.userInfo}`, {
    baseUrl: config.signonUrl,
    headers: { accept: "application/json", authorization: `Bearer ${accessToken}` },
    query: { client_id: config.clientId },
  });
  const response = await sendRequest(config.fetch, options, config.requestTimeoutMs);
  if (response.status === 401 || response.status === 403) return null;
  if (response.status === 200 && Value.Check(SignonUserEnvelope, response.json)) return response.json.user;
  throw new SignonUnavailableError(`user endpoint answered HTTP ${response.status} without a usable body`, { status: response.status });
}
