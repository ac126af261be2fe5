/**
 * STAND-IN for Sign-on, for tests only (this kit's and those of applications
 * built on it): a small Fastify app on 127.0.0.1 that implements just enough
 * of `/oauth/authorize`, `/token` and `/user.json` as DECISIONS S3, S4, S6,
 * S7, S10 and S11 describe. It is not Sign-on (no accounts, no sign-in page,
 * no database: `/oauth/authorize` signs in whoever `signedInUid` names); the
 * end-to-end test of the example application runs against the real one.
 */
import { createHash, randomBytes } from "node:crypto";
import Fastify, { type FastifyInstance, type FastifyReply } from "fastify";
import type { Clock } from "../clock.js";
import type { SignonUserJson } from "../user.js";

export interface StandInClient {
  clientId: string;
  clientSecret: string;
  redirectUri: string;
}

interface IssuedCode {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  uid: string;
  expiresAt: number;
}

interface IssuedToken {
  uid: string;
  /** The application it was issued to. */
  clientId: string;
  expiresAt: number;
  family: string;
  revoked: boolean;
}

export interface StandInOptions {
  client: StandInClient;
  clock: Clock;
  /** `expires_in` of issued access tokens; default 7200. */
  expiresInSeconds?: number;
  /** Issue a new refresh token on refresh (S10); default true. When false, the old one stays valid. */
  rotateRefreshTokens?: boolean;
}

/** The stand-in and what the tests look at. */
export class StandInSignon {
  readonly app: FastifyInstance;
  readonly users = new Map<string, SignonUserJson>();
  /** Every form body posted to `/token`, in order. */
  readonly tokenRequests: Record<string, string>[] = [];
  /** The `user-agent` of every request received. */
  readonly userAgents = new Set<string>();
  /** How many times `/user.json` was asked. */
  userInfoRequests = 0;
  /**
   * An outage of `/user.json`: `unavailable` answers 503 as Sign-on does while
   * its database cannot be reached; `dropped` closes each connection without
   * an answer. `null` (the default): it answers.
   */
  userInfoOutage: "unavailable" | "dropped" | null = null;
  /** The user the authorize endpoint "signs in" (no login page here). */
  signedInUid: string | null = null;
  url = "";

  readonly #codes = new Map<string, IssuedCode>();
  readonly #accessTokens = new Map<string, IssuedToken>();
  readonly #refreshTokens = new Map<string, IssuedToken & { used: boolean }>();
  readonly #options: Required<StandInOptions>;

  constructor(options: StandInOptions) {
    this.#options = { expiresInSeconds: 7200, rotateRefreshTokens: true, ...options };
    this.app = Fastify({ logger: false });
    this.app.addContentTypeParser(
      "application/x-www-form-urlencoded",
      { parseAs: "string" },
      (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
    );
    this.app.addHook("onRequest", async (request) => {
      this.userAgents.add(request.headers["user-agent"] ?? "");
    });
    this.#routes();
  }

  async listen(): Promise<void> {
    this.url = await this.app.listen({ host: "127.0.0.1", port: 0 });
  }

  close(): Promise<void> {
    return this.app.close();
  }

  /** Adds or replaces a user; returns it. */
  addUser(user: SignonUserJson): SignonUserJson {
    this.users.set(user.uid, user);
    return user;
  }

  /** A pre-issued API token for `uid` (DECISIONS S17) on the application `clientId` (default: the stand-in's client), valid for a year. */
  issueApiToken(uid: string, clientId = this.#options.client.clientId): string {
    const token = randomHex();
    this.#accessTokens.set(token, { uid, clientId, expiresAt: this.#now() + 365 * 86400_000, family: token, revoked: false });
    return token;
  }

  /** Revokes every token of `uid`, as a suspension does. */
  revokeTokensOf(uid: string): void {
    for (const token of [...this.#accessTokens.values(), ...this.#refreshTokens.values()]) {
      if (token.uid === uid) token.revoked = true;
    }
  }

  #now(): number {
    return this.#options.clock.now();
  }

  #issueTokens(uid: string, family: string) {
    const accessToken = randomHex();
    const refreshToken = randomHex();
    const expiresAt = this.#now() + this.#options.expiresInSeconds * 1000;
    const { clientId } = this.#options.client;
    this.#accessTokens.set(accessToken, { uid, clientId, expiresAt, family, revoked: false });
    this.#refreshTokens.set(refreshToken, { uid, clientId, expiresAt: Infinity, family, revoked: false, used: false });
    return {
      access_token: accessToken,
      token_type: "Bearer",
      expires_in: this.#options.expiresInSeconds,
      refresh_token: refreshToken,
      created_at: Math.floor(this.#now() / 1000),
    };
  }

  #revokeFamily(family: string): void {
    for (const token of [...this.#accessTokens.values(), ...this.#refreshTokens.values()]) {
      if (token.family === family) token.revoked = true;
    }
  }

  #routes(): void {
    const { client } = this.#options;
    const tokenError = (reply: FastifyReply, status: number, error: string) =>
      reply.code(status).header("cache-control", "no-store").send({ error, error_description: error });

    this.app.get<{ Querystring: Record<string, string> }>("/oauth/authorize", async (request, reply) => {
      const q = request.query;
      if (q.client_id !== client.clientId || q.redirect_uri !== client.redirectUri) {
        return reply.code(400).type("text/html").send("unknown client or redirect_uri");
      }
      if (!q.state) return reply.code(400).type("text/html").send("state is required");
      if (q.response_type !== "code" || q.code_challenge_method !== "S256" || !q.code_challenge) {
        return reply.code(400).type("text/html").send("response_type=code and an S256 code_challenge are required");
      }
      if (this.signedInUid === null) return reply.code(403).type("text/html").send("nobody is signed in");
      const code = randomHex();
      this.#codes.set(code, {
        clientId: q.client_id,
        redirectUri: q.redirect_uri,
        codeChallenge: q.code_challenge,
        uid: this.signedInUid,
        expiresAt: this.#now() + 600_000,
      });
      const target = new URL(q.redirect_uri);
      target.searchParams.set("code", code);
      target.searchParams.set("state", q.state);
      return reply.redirect(target.toString(), 302);
    });

    this.app.post<{ Body: Record<string, string> }>("/token", async (request, reply) => {
      const form = request.body;
      this.tokenRequests.push({ ...form });
      if (form.client_id !== client.clientId || form.client_secret !== client.clientSecret) {
        return tokenError(reply, 401, "invalid_client");
      }
      if (form.grant_type === "authorization_code") {
        const code = this.#codes.get(form.code ?? "");
        this.#codes.delete(form.code ?? "");
        if (!code || code.expiresAt <= this.#now() || code.redirectUri !== form.redirect_uri) {
          return tokenError(reply, 400, "invalid_grant");
        }
        const challenge = createHash("sha256")
          .update(form.code_verifier ?? "")
          .digest("base64url");
        if (challenge !== code.codeChallenge) return tokenError(reply, 400, "invalid_grant");
        return reply.header("cache-control", "no-store").send(this.#issueTokens(code.uid, randomHex()));
      }
      if (form.grant_type === "refresh_token") {
        const refresh = this.#refreshTokens.get(form.refresh_token ?? "");
        if (!refresh || refresh.revoked) return tokenError(reply, 400, "invalid_grant");
        if (refresh.used) {
          this.#revokeFamily(refresh.family);
          return tokenError(reply, 400, "invalid_grant");
        }
        if (!this.#options.rotateRefreshTokens) {
          const { refresh_token: _kept, ...tokens } = this.#issueTokens(refresh.uid, refresh.family);
          return reply.header("cache-control", "no-store").send(tokens);
        }
        refresh.used = true;
        return reply.header("cache-control", "no-store").send(this.#issueTokens(refresh.uid, refresh.family));
      }
      return tokenError(reply, 400, "unsupported_grant_type");
    });

    this.app.get("/user.json", async (request, reply) => {
      this.userInfoRequests += 1;
      if (this.userInfoOutage === "dropped") {
        reply.hijack();
        request.raw.socket.destroy();
        return reply;
      }
      if (this.userInfoOutage === "unavailable") {
        return reply.code(503).header("retry-after", "1").send({ error: "temporarily_unavailable", error_description: "Sign-on cannot reach its database; try again shortly" });
      }
      const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? "")?.[1];
      const issued = token === undefined ? undefined : this.#accessTokens.get(token);
      const user = issued && this.users.get(issued.uid);
      const { client_id: clientId } = request.query as { client_id?: string };
      const otherApplication = issued !== undefined && clientId !== undefined && clientId !== issued.clientId;
      if (!issued || otherApplication || issued.revoked || issued.expiresAt <= this.#now() || !user || !user.permissions.includes("signin")) {
        return reply.code(401).header("www-authenticate", 'Bearer error="invalid_token"').send({ error: "invalid_token" });
      }
      return { user };
    });
  }
}

function randomHex(): string {
  return randomBytes(32).toString("hex");
}
