// node-oidc-provider in its minimal configuration: one confidential client
// authenticating with client_secret_post, opaque tokens, kept in memory.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";
import { MapAdapter } from "./map-adapter.js";

export interface PeerServer {
  url: string;
  /** A fresh authorization code for the client. */
  issueCode(): Promise<string>;
  /** A fresh refresh token for the client. */
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
 * hours), so every prepared code is still valid when the load uses it; the
 * provider's default 60 s code lifetime runs out during a run.
 */
export const peerTtl = { AuthorizationCode: 3600, AccessToken: 7200, RefreshToken: 14 * 24 * 3600, Grant: 14 * 24 * 3600 };

export async function startOidcProvider(port = 0): Promise<PeerServer> {
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
      },
    ],
    adapter: MapAdapter,
    ttl: peerTtl,
    pkce: { required: () => false },
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

  const newGrant = async () => {
    const grant = new provider.Grant({ accountId: "bench-user", clientId: client.clientId });
    grant.addOIDCScope("openid offline_access");
    return grant.save();
  };
  return {
    url,
    async issueCode() {
      const grantId = await newGrant();
      return new provider.AuthorizationCode({
        accountId: "bench-user",
        grantId,
        client,
        redirectUri: peerClient.redirect_uri,
        scope: "openid offline_access",
        gty: "authorization_code",
      }).save();
    },
    async issueRefreshToken() {
      const grantId = await newGrant();
      return new provider.RefreshToken({ accountId: "bench-user", grantId, client, scope: "openid offline_access", gty: "authorization_code" }).save();
    },
    async issueAccessToken() {
      const grantId = await newGrant();
      return new provider.AccessToken({ accountId: "bench-user", grantId, client, scope: "openid", gty: "authorization_code" }).save();
    },
    close: () => new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}
