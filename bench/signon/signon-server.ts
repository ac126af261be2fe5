// Sign-on on a dedicated PostgreSQL database created for the run and dropped after it.
import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { createDrizzle, createPool, runMigrations } from "@tessera/db";
import { dropDatabase, recreateDatabase } from "@tessera/db/testing";
import { signonApp, signonMigrations, signonServerOptions, loadConfig } from "@tessera/signon";
import Fastify from "fastify";
import { createUser } from "../../packages/signon/src/accounts/manage-users.js";
import { grantPermissions } from "../../packages/signon/src/applications/permissions.js";
import { registerApplication } from "../../packages/signon/src/applications/register-application.js";
import { openIdSettingsOf, setOpenIdSettings } from "../../packages/signon/src/oidc/client-settings.js";
import * as schema from "../../packages/signon/src/db/schema.js";
import { statementRunner } from "../../packages/signon/src/db/statements.js";
import { randomHex, sha256Hex } from "../../packages/signon/src/security/random.js";

export interface SignonBenchServer {
  url: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  /** Fresh authorization codes, created in bulk. */
  issueCodes(count: number): Promise<string[]>;
  /** Fresh authorization codes of OpenID Connect requests (scope `openid`, a nonce): their exchange signs an ID token. */
  issueOpenIdCodes(count: number): Promise<string[]>;
  /** Fresh refresh tokens, each of its own grant, created in bulk. */
  issueRefreshTokens(count: number): Promise<string[]>;
  issueAccessToken(): Promise<string>;
  /** Lets PostgreSQL settle after bulk preparation (statistics, a checkpoint), so autovacuum does not run mid-measurement. */
  settle(): Promise<void>;
  close(): Promise<void>;
}

export async function startSignonOnPostgres(serverUrl: string, benchDatabase = "tessera_bench_signon", port = 0): Promise<SignonBenchServer> {
  const url = await recreateDatabase(serverUrl, benchDatabase);
  const pool = createPool({ url, max: 10 });
  await runMigrations(pool, [signonMigrations]);
  const db = createDrizzle(pool, schema);
  const config = loadConfig({ DATABASE_URL: url, SIGNON_PORT: "0", SIGNON_ARGON2_MEMORY_KIB: "64", SIGNON_ARGON2_TIME_COST: "1" });
  const ctx = { db, statements: statementRunner(pool, config.preparedStatements), config, now: () => new Date() };

  const registered = await registerApplication(ctx, { name: "Bench", redirectUris: ["https://client.example/callback"] });
  const { clientSecret } = registered;
  // Also an OpenID Connect client (ID tokens ES256, the default), for the codes of requests with scope openid.
  const application = await setOpenIdSettings(ctx, registered.application, { ...openIdSettingsOf(registered.application), scopes: ["openid", "profile", "email"] }, { uid: null, origin: null });
  const user = await createUser(ctx, { email: "bench@example.org", name: "Bench", password: "bench password 123" });
  await grantPermissions(ctx, { email: user.email, application: "Bench", permissions: ["signin"] });

  const app = Fastify(signonServerOptions(config));
  await app.register(signonApp, { config, db, pool });
  await app.listen({ host: "127.0.0.1", port });
  const address = app.server.address() as AddressInfo;

  const insertGrants = async (count: number, withCode: boolean, openid = false) => {
    const secrets: string[] = [];
    const now = new Date();
    for (let start = 0; start < count; start += 1000) {
      const rows = Array.from({ length: Math.min(1000, count - start) }, () => {
        const secret = randomHex();
        secrets.push(secret);
        return {
          id: randomUUID(),
          kind: "authorization_code",
          userUid: user.uid,
          applicationId: application.id,
          codeHash: withCode ? sha256Hex(secret) : null,
          redirectUri: withCode ? application.redirectUris[0] ?? null : null,
          codeExpiresAt: withCode ? new Date(now.getTime() + 3_600_000) : null,
          codeUsedAt: withCode ? null : now,
          createdAt: now,
          ...(openid ? { scope: "openid profile email", nonce: "bench-nonce", authTime: now, amr: ["pwd"] } : {}),
        };
      });
      await db.insert(schema.grants).values(rows);
      if (!withCode) {
        await db.insert(schema.refreshTokens).values(
          rows.map((row, i) => ({ grantId: row.id, tokenHash: sha256Hex(secrets[start + i] as string), createdAt: now })),
        );
      }
    }
    return secrets;
  };

  return {
    url: `http://127.0.0.1:${address.port}`,
    clientId: application.clientId,
    clientSecret,
    redirectUri: application.redirectUris[0] as string,
    issueCodes: (count) => insertGrants(count, true),
    issueOpenIdCodes: (count) => insertGrants(count, true, true),
    issueRefreshTokens: (count) => insertGrants(count, false),
    async issueAccessToken() {
      const [refreshToken] = await insertGrants(1, false);
      const response = await fetch(`http://127.0.0.1:${address.port}/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: refreshToken as string, client_id: application.clientId, client_secret: clientSecret }),
      });
      return ((await response.json()) as { access_token: string }).access_token;
    },
    async settle() {
      await pool.query("vacuum analyze");
      await pool.query("checkpoint");
    },
    async close() {
      await app.close();
      await pool.end();
      await dropDatabase(serverUrl, benchDatabase);
    },
  };
}

