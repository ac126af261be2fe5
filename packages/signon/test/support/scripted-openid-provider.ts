// An OpenID Connect provider over real HTTP whose answers a test scripts: the person it vouches for, and what is wrong
// with its ID token (another issuer or audience, expired, signed by another key, `alg: none`, an unknown key id). It
// checks what a provider checks of Sign-on (client secret, redirect URI, PKCE), so a test that passes has Sign-on
// behave as a client must. For the journeys a real provider runs (oidc-provider) in the browser tests.
import { createHash, createPublicKey, generateKeyPairSync, randomBytes, type KeyObject } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, SignJWT, type JWTPayload } from "jose";

export interface ScriptedPerson {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
  amr?: string[];
  acr?: string;
  sid?: string;
}

/** What the next ID tokens get wrong, if anything. */
export interface IdTokenScript {
  claims?: (claims: JWTPayload) => JWTPayload;
  /** `other`: a key the provider does not publish (its kid is published); `unknown_kid`: a new key under a new kid, published only after `publishNewKey()`; `none`: unsigned. */
  signing?: "good" | "other" | "unknown_kid" | "none";
  /** The authorization endpoint answers with this error instead of a code. */
  authorizationError?: string;
  /** Each answer waits this long (a slow provider). */
  delayMs?: number;
}

export interface ScriptedProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  person: ScriptedPerson;
  script: IdTokenScript;
  /** How many times the key set was fetched. */
  jwksFetches: number;
  /** The last authorization request's parameters. */
  lastAuthorization: URLSearchParams | null;
  /** Starts publishing the key `unknown_kid` signs with. */
  publishNewKey(): void;
  /** A logout token for Sign-on's back-channel logout, signed with the provider's key (`claims` edits it). */
  logoutToken(claims: JWTPayload, signing?: "good" | "other" | "none"): Promise<string>;
  close(): Promise<void>;
}

function key(kid: string): { privateKey: KeyObject; kid: string } {
  return { privateKey: generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey, kid };
}

function unsigned(claims: JWTPayload): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${part({ alg: "none", typ: "JWT" })}.${part(claims)}.`;
}

async function body(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function json(response: ServerResponse, status: number, value: unknown): void {
  response.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  response.end(JSON.stringify(value));
}

/** Starts the provider on a free loopback port, with Sign-on's client (`redirectUri` its callback). */
export async function startScriptedProvider(redirectUri: string): Promise<ScriptedProvider> {
  const published = [key("key-1")];
  const other = key("key-1");
  const rotated = key("key-2");
  const codes = new Map<string, { nonce: string; challenge: string; redirectUri: string }>();
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider: ScriptedProvider = {
    issuer,
    clientId: "signon-client",
    clientSecret: randomBytes(24).toString("hex"),
    person: { sub: "person-1" },
    script: {},
    jwksFetches: 0,
    lastAuthorization: null,
    publishNewKey: () => void published.push(rotated),
    async logoutToken(claims, signing = "good") {
      const full = { iss: issuer, aud: provider.clientId, iat: Math.floor(Date.now() / 1000), jti: randomBytes(8).toString("hex"), events: { "http://schemas.openid.net/event/backchannel-logout": {} }, ...claims };
      if (signing === "none") return unsigned(full);
      const signer = signing === "other" ? other : published[0]!;
      return new SignJWT(full).setProtectedHeader({ alg: "RS256", kid: signer.kid, typ: "logout+jwt" }).sign(signer.privateKey);
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };

  async function idToken(nonce: string): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const base: JWTPayload = { iss: issuer, aud: provider.clientId, iat: now, exp: now + 300, nonce, ...provider.person };
    const claims = provider.script.claims ? provider.script.claims(base) : base;
    const signing = provider.script.signing ?? "good";
    if (signing === "none") return unsigned(claims);
    const signer = signing === "other" ? other : signing === "unknown_kid" ? rotated : published[0]!;
    return new SignJWT(claims).setProtectedHeader({ alg: "RS256", kid: signer.kid }).sign(signer.privateKey);
  }

  server.on("request", (request, response) => {
    void (async () => {
      if (provider.script.delayMs) await new Promise((resolve) => setTimeout(resolve, provider.script.delayMs));
      const url = new URL(request.url ?? "/", issuer);
      if (url.pathname === "/.well-known/openid-configuration") {
        return json(response, 200, {
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          jwks_uri: `${issuer}/jwks`,
          userinfo_endpoint: `${issuer}/userinfo`,
          response_types_supported: ["code"],
          subject_types_supported: ["public"],
          id_token_signing_alg_values_supported: ["RS256"],
          code_challenge_methods_supported: ["S256"],
          backchannel_logout_supported: true,
          backchannel_logout_session_supported: true,
        });
      }
      if (url.pathname === "/jwks") {
        provider.jwksFetches += 1;
        const keys = await Promise.all(published.map(async (entry) => ({ ...(await exportJWK(createPublicKey(entry.privateKey))), kid: entry.kid, alg: "RS256", use: "sig" })));
        return json(response, 200, { keys });
      }
      if (url.pathname === "/authorize") {
        provider.lastAuthorization = url.searchParams;
        const target = new URL(url.searchParams.get("redirect_uri") ?? redirectUri);
        const state = url.searchParams.get("state") ?? "";
        if (provider.script.authorizationError) {
          target.search = new URLSearchParams({ error: provider.script.authorizationError, state }).toString();
        } else {
          const code = randomBytes(16).toString("hex");
          codes.set(code, { nonce: url.searchParams.get("nonce") ?? "", challenge: url.searchParams.get("code_challenge") ?? "", redirectUri: target.href });
          target.search = new URLSearchParams({ code, state }).toString();
        }
        response.writeHead(302, { location: target.href });
        return response.end();
      }
      if (url.pathname === "/token" && request.method === "POST") {
        const form = new URLSearchParams(await body(request));
        // client_secret_basic: each half form-encoded (RFC 6749 §2.3.1), then base64.
        const basic = /^Basic (.+)$/.exec(request.headers.authorization ?? "")?.[1];
        const [id = "", secret = ""] = basic === undefined ? [] : Buffer.from(basic, "base64").toString("utf8").split(":").map((part) => decodeURIComponent(part.replace(/\+/g, " ")));
        if (id !== provider.clientId || secret !== provider.clientSecret) return json(response, 401, { error: "invalid_client" });
        const code = codes.get(form.get("code") ?? "");
        codes.delete(form.get("code") ?? "");
        const verifier = form.get("code_verifier") ?? "";
        if (!code || code.redirectUri !== form.get("redirect_uri") || createHash("sha256").update(verifier).digest("base64url") !== code.challenge) {
          return json(response, 400, { error: "invalid_grant" });
        }
        return json(response, 200, { access_token: randomBytes(16).toString("hex"), token_type: "Bearer", expires_in: 300, id_token: await idToken(code.nonce) });
      }
      if (url.pathname === "/userinfo") return json(response, 200, { ...provider.person });
      response.writeHead(404).end();
    })().catch((error: unknown) => {
      response.writeHead(500).end(String(error));
    });
  });
  return provider;
}
