import { createPrivateKey } from "node:crypto";
import * as client from "openid-client";
import { createRemoteJWKSet, importPKCS8, jwtVerify, type JWTPayload } from "jose";
import type { SignonContext } from "../context.js";
import type { IdentityProvider } from "../repositories/identity-providers.js";
import { openSecret } from "../security/secret-box.js";
import { certificateThumbprints } from "./settings.js";

/** The provider could not be reached, or answered its discovery document wrongly, within the time allowed. */
export class UpstreamUnavailableError extends Error {}

/** How long a provider's discovery document is kept before it is fetched again. */
const discoveryLifetimeMs = 60 * 60 * 1000;

const configurations = new Map<string, { configuration: client.Configuration; updatedAt: number; fetchedAt: number }>();

const keySets = new Map<string, { jwksUri: string; keys: ReturnType<typeof createRemoteJWKSet> }>();

/** Drops what is kept of a provider (its settings changed, or it was disconnected). */
export function forgetProviderConfiguration(providerId: string): void {
  configurations.delete(providerId);
  keySets.delete(`${providerId}:token_endpoint`);
  keySets.delete(`${providerId}:posted`);
}

/** The signature algorithms accepted from a provider: asymmetric ones only (never `none`, never a shared secret). */
export const providerSignatureAlgorithms = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519"];

/**
 * The provider's published keys, fetched within the upstream time limit and kept. A token signed under a key id the
 * kept set lacks fetches the set once more (the provider may have rotated its keys), then is refused.
 */
function providerKeys(ctx: SignonContext, provider: IdentityProvider, jwksUri: string, from: JwtSource): ReturnType<typeof createRemoteJWKSet> {
  const name = `${provider.id}:${from}`;
  const kept = keySets.get(name);
  if (kept && kept.jwksUri === jwksUri) return kept.keys;
  // ID tokens come from the provider's token endpoint, so an unknown key id there is a rotation: fetched again at once.
  // Logout tokens are posted by anyone: a new fetch for an unknown key id at most every 30 seconds.
  const cooldownDuration = from === "token_endpoint" ? 0 : 30_000;
  const keys = createRemoteJWKSet(new URL(jwksUri), { timeoutDuration: ctx.config.upstreamTimeoutSeconds * 1000, cooldownDuration, cacheMaxAge: 10 * 60 * 1000 });
  keySets.set(name, { jwksUri, keys });
  return keys;
}

/** Where a JWT from the provider came from: its token endpoint (an ID token), or a post anyone can make (a logout token). */
export type JwtSource = "token_endpoint" | "posted";

/**
 * Checks a JWT from the provider (an ID token, a logout token) against its published keys, issuer and Sign-on's client
 * id as audience; returns its claims.
 */
export async function verifyProviderJwt(
  ctx: SignonContext,
  provider: IdentityProvider,
  configuration: client.Configuration,
  jwt: string,
  from: JwtSource,
  options: { maxTokenAge?: string } = {},
): Promise<JWTPayload> {
  const jwksUri = configuration.serverMetadata().jwks_uri;
  if (jwksUri === undefined) throw new Error("the provider publishes no keys (jwks_uri)");
  const { payload } = await jwtVerify(jwt, providerKeys(ctx, provider, jwksUri, from), {
    issuer: provider.issuer!,
    audience: provider.clientId!,
    algorithms: providerSignatureAlgorithms,
    clockTolerance: 30,
    currentDate: ctx.now(),
    ...options,
  });
  return payload;
}

function isLoopback(url: URL): boolean {
  return ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname);
}

async function clientAuthentication(ctx: SignonContext, provider: IdentityProvider): Promise<client.ClientAuth> {
  const key = ctx.secretKey ?? ctx.config.secretKey;
  if (!key || provider.clientCredentialSealed === null) throw new UpstreamUnavailableError("the provider's client credential cannot be opened");
  const credential = openSecret(key, provider.clientCredentialSealed);
  switch (provider.clientAuthentication) {
    case "client_secret_post":
      return client.ClientSecretPost(credential);
    case "private_key_jwt": {
      const algorithm = createPrivateKey(credential).asymmetricKeyType === "ec" ? "ES256" : "RS256";
      const privateKey = await importPKCS8(credential, algorithm);
      const thumbprints = provider.clientCertificate === null ? null : certificateThumbprints(provider.clientCertificate);
      return client.PrivateKeyJwt(
        provider.clientKeyId === null ? privateKey : { key: privateKey, kid: provider.clientKeyId },
        thumbprints === null ? {} : { [client.modifyAssertion]: (header) => void Object.assign(header, thumbprints) },
      );
    }
    default:
      return client.ClientSecretBasic(credential);
  }
}

/**
 * Sign-on as a client of the provider: its discovery document (fetched within the upstream time limit, kept an
 * hour), Sign-on's client id and authentication. Plain http only for a loopback issuer in development.
 *
 * @throws UpstreamUnavailableError when the document cannot be fetched or is not the issuer's.
 */
export async function providerConfiguration(ctx: SignonContext, provider: IdentityProvider): Promise<client.Configuration> {
  const kept = configurations.get(provider.id);
  const now = Date.now();
  if (kept && kept.updatedAt === provider.updatedAt.getTime() && now - kept.fetchedAt < discoveryLifetimeMs) return kept.configuration;
  if (provider.issuer === null || provider.clientId === null) throw new UpstreamUnavailableError("the provider has no issuer");
  const issuer = new URL(provider.issuer);
  const insecure = issuer.protocol === "http:" && isLoopback(issuer) && ctx.config.mode === "development";
  let configuration: client.Configuration;
  try {
    configuration = await client.discovery(issuer, provider.clientId, undefined, await clientAuthentication(ctx, provider), {
      timeout: ctx.config.upstreamTimeoutSeconds,
      ...(insecure ? { execute: [client.allowInsecureRequests] } : {}),
    });
  } catch (error) {
    if (error instanceof UpstreamUnavailableError) throw error;
    throw new UpstreamUnavailableError(`discovery failed: ${describeUpstreamError(error)}`);
  }
  configuration.timeout = ctx.config.upstreamTimeoutSeconds;
  configurations.set(provider.id, { configuration, updatedAt: provider.updatedAt.getTime(), fetchedAt: now });
  return configuration;
}

/** A short description of what went wrong with a provider, for the event an administrator reads (never a token). */
export function describeUpstreamError(error: unknown): string {
  if (error instanceof client.AuthorizationResponseError) return `the provider answered ${error.error}${error.error_description ? `: ${error.error_description}` : ""}`;
  if (error instanceof client.ResponseBodyError) return `the provider's token endpoint answered ${error.error} (${String(error.status)})`;
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
    return `${typeof code === "string" ? `${code}: ` : ""}${error.message}${cause}`.slice(0, 500);
  }
  return String(error).slice(0, 500);
}
