// node-oidc-provider in its minimal configuration: one confidential client
// authenticating with client_secret_post, opaque tokens, kept in memory (or,
// through postgres-adapter.ts, in PostgreSQL).
import { generateKeyPairSync } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Provider, { type Adapter } from "oidc-provider";
import { MapAdapter } from "./map-adapter.js";

export interface PeerServer {
  url: string;
  /** A fresh authorization code for the client: of a plain OAuth 2 request, or of an OpenID Connect one (scope openid: its exchange signs an ID token). */
  issueCode(openid: boolean): Promise<string>;
  /** A fresh refresh token for the client, of a plain OAuth 2 grant. */
  issueRefreshToken(): Promise<string>;
  /** An access token the userinfo endpoint accepts. */
  issueAccessToken(): Promise<string>;
  close(): Promise<void>;
}

export const peerClient = {
  client_id: "bench-client",
  client_secret: "bench-secret-bench-secret-bench-secret",
  redirect_uri: "https://client.example/callback",
};

/**
 * Lifetimes the same as Sign-on's bench data (codes an hour, access tokens two
 * hours, ID tokens an hour), so every prepared code is still valid when the load uses it; the
 * provider's default 60 s code lifetime runs out during a run.
 */
export const peerTtl = { AuthorizationCode: 3600, AccessToken: 7200, IdToken: 3600, RefreshToken: 14 * 24 * 3600, Grant: 14 * 24 * 3600 };

/** Scopes of the peer's grants: with `openid` an exchange also signs an ID token, which Sign-on's plain OAuth 2 exchanges do not. */
const plainScope = "offline_access";
const openIdScope = "openid offline_access";

/** Starts the peer on `port` (0: any free one), keeping its codes, tokens and grants in memory or through `adapter`. */
export async function startOidcProvider(port = 0, adapter: new (model: string) => Adapter = MapAdapter): Promise<PeerServer> {
  // An ES256 signing key, as Sign-on's default, so that an ID token costs each side the same signature.
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const signingKey = { ...privateKey.export({ format: "jwk" }), alg: "ES256", use: "sig", kid: "bench-es256" };
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(url, {
    clients: [
      {
        client_id: peerClient.client_id,
        client_secret: peerClient.client_secret,
        redirect_uris: [peerClient.redirect_uri],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_post",
        id_token_signed_response_alg: "ES256",
      },
    ],
    jwks: { keys: [signingKey] },
    adapter,
    ttl: peerTtl,
    pkce: { required: () => false },
    // Each refresh retires the refresh token used and issues a new one, as Sign-on's does; the provider's
    // default rotates a confidential client's refresh tokens only once 70% of their lifetime has passed.
    rotateRefreshToken: true,
    features: { devInteractions: { enabled: false } },
    findAccount: (_ctx, sub) => Promise.resolve({ accountId: sub, claims: () => ({ sub, email: "bench@example.org", name: "Bench" }) }),
    cookies: { keys: ["bench-cookie-key-bench-cookie-key"] },
  });
  const handle = provider.callback();
  server.on("request", (request, response) => {
    void handle(request, response);
  });
  const client = await provider.Client.find(peerClient.client_id);
  if (!client) throw new Error("oidc-provider: bench client missing");

  const newGrant = async (scope: string) => {
    const grant = new provider.Grant({ accountId: "bench-user", clientId: client.clientId });
    grant.addOIDCScope(scope);
    return grant.save();
  };
  return {
    url,
    async issueCode(openid) {
      const scope = openid ? openIdScope : plainScope;
      const grantId = await newGrant(scope);
      return new provider.AuthorizationCode({ accountId: "bench-user", grantId, client, redirectUri: peerClient.redirect_uri, scope, gty: "authorization_code" }).save();
    },
    async issueRefreshToken() {
      const grantId = await newGrant(plainScope);
      return new provider.RefreshToken({ accountId: "bench-user", grantId, client, scope: plainScope, gty: "authorization_code" }).save();
    },
    async issueAccessToken() {
      const grantId = await newGrant(openIdScope);
      return new provider.AccessToken({ accountId: "bench-user", grantId, client, scope: "openid", gty: "authorization_code" }).save();
    },
    close: () => new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}
