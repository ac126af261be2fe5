import { Value } from "@sinclair/typebox/value";
import type { BearerVerifierConfig } from "../config.js";
import { SignonUnavailableError } from "../errors.js";
import { signonRequestOptions } from "../http/request-options.js";
import { sendRequest } from "../http/send.js";
import { SignonUserEnvelope, type SignonUserJson } from "../user.js";

/**
 * Asks Sign-on who holds `accessToken` (`GET /user.json` with a Bearer header).
 * Returns `null` when Sign-on says the token is not valid for this application
 * (401); throws `SignonUnavailableError` when it cannot tell.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-2.1
 */
export async function fetchSignonUser(config: BearerVerifierConfig, accessToken: string): Promise<SignonUserJson | null> {
  const options = signonRequestOptions(`GET ${config.paths.userInfo}`, {
    baseUrl: config.signonUrl,
    headers: { accept: "application/json", authorization: `Bearer ${accessToken}` },
  });
  const response = await sendRequest(config.fetch, options, config.requestTimeoutMs);
  if (response.status === 401 || response.status === 403) return null;
  if (response.status === 200 && Value.Check(SignonUserEnvelope, response.json)) return response.json.user;
  throw new SignonUnavailableError(`user endpoint answered HTTP ${response.status} without a usable body`);
}
