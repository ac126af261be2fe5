import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server";

const base64url = /^[A-Za-z0-9_-]+$/;
/** Longest response field accepted (an attestation object with a certificate chain fits well within it). */
const maxFieldLength = 16_384;

function isBase64url(value: unknown, optional = false): boolean {
  if (value === undefined || value === null) return optional;
  return typeof value === "string" && value.length > 0 && value.length <= maxFieldLength && base64url.test(value);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The parts of `clientDataJSON` read before verification: the challenge it answers. */
function challengeOf(clientDataJSON: string): string | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(clientDataJSON, "base64url").toString("utf8"));
  } catch {
    return null;
  }
  if (!isRecord(parsed) || typeof parsed.challenge !== "string" || !base64url.test(parsed.challenge) || parsed.challenge.length > 512) return null;
  return parsed.challenge;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function hasCredentialShape(value: unknown): value is { id: string; rawId: string; type: "public-key"; response: Record<string, unknown> } {
  return isRecord(value) && isBase64url(value.id) && value.id === value.rawId && value.type === "public-key" && isRecord(value.response) && isBase64url(value.response.clientDataJSON);
}

/**
 * A registration response as the browser script posts it (the JSON form of
 * the `PublicKeyCredential`), with the challenge it answers; `null` when it
 * is not JSON of that shape or a field is not base64url.
 *
 * @see https://www.w3.org/TR/webauthn-3/#dictdef-registrationresponsejson
 */
export function parseRegistrationResponse(text: string): { response: RegistrationResponseJSON; challenge: string } | null {
  const value = parseJson(text);
  if (!hasCredentialShape(value) || !isBase64url(value.response.attestationObject)) return null;
  const transports = value.response.transports;
  if (transports !== undefined && !(Array.isArray(transports) && transports.length <= 10 && transports.every((item) => typeof item === "string" && item.length <= 32))) return null;
  const challenge = challengeOf(value.response.clientDataJSON as string);
  if (challenge === null) return null;
  return { response: value as unknown as RegistrationResponseJSON, challenge };
}

/**
 * An authentication (assertion) response as the browser script posts it,
 * with the challenge it answers; `null` when it is not JSON of that shape.
 *
 * @see https://www.w3.org/TR/webauthn-3/#dictdef-authenticationresponsejson
 */
export function parseAuthenticationResponse(text: string): { response: AuthenticationResponseJSON; challenge: string } | null {
  const value = parseJson(text);
  if (!hasCredentialShape(value)) return null;
  const { authenticatorData, signature, userHandle } = value.response;
  if (!isBase64url(authenticatorData) || !isBase64url(signature) || !isBase64url(userHandle, true)) return null;
  const challenge = challengeOf(value.response.clientDataJSON as string);
  if (challenge === null) return null;
  return { response: value as unknown as AuthenticationResponseJSON, challenge };
}
