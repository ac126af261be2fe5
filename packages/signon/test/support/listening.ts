import { freePort, type TestDatabase } from "@tessera/db/testing";
import { startShipped } from "@tessera/test-support";
import Fastify, { type FastifyInstance } from "fastify";
import signonApp, { signonServerOptions } from "../../src/app.js";
import type { SignonContext } from "../../src/context.js";
import type * as schema from "../../src/db/schema.js";
import { statementRunner } from "../../src/db/statements.js";
import { testConfig } from "./signon.js";

export { freePort };

/** Sign-on's app from the sources, listening on a real port in this process, its issuer equal to its address. */
export async function listenSignon(database: TestDatabase<typeof schema>): Promise<{ app: FastifyInstance; issuer: string; ctx: SignonContext }> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const config = { ...testConfig({ SIGNON_PORT: String(port), SIGNON_PUBLIC_URL: issuer }), preparedStatements: true };
  const app = Fastify(signonServerOptions(config, false));
  await app.register(signonApp, { config, db: database.db, pool: database.pool });
  await app.listen({ host: "127.0.0.1", port });
  const statements = statementRunner(database.pool, config.preparedStatements);
  return { app, issuer, ctx: { db: database.db, statements, config, now: () => new Date() } };
}

/** Sign-on as shipped on a test file's database, and a context on the same database for the test's own set-up. */
export interface ShippedSignon {
  /** Its address, which is also its issuer. */
  issuer: string;
  /** Domain functions' context on the same database (what an operator's command would use). */
  ctx: SignonContext;
  /** Stops the process and starts it again on the same port: a deployment's restart. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts Sign-on as shipped (its built entry point in a process of its own, as `npm start` runs it) on a
 * free port, with the configuration of {@link testConfig}, on `database`.
 */
export async function startShippedSignon(database: TestDatabase<typeof schema>, extraEnv: Record<string, string> = {}): Promise<ShippedSignon> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const config = { ...testConfig({ SIGNON_PORT: String(port), SIGNON_PUBLIC_URL: issuer }), preparedStatements: true };
  const env = {
    NODE_ENV: "development",
    DATABASE_URL: database.url,
    SIGNON_PUBLIC_URL: issuer,
    SIGNON_ARGON2_MEMORY_KIB: "64",
    SIGNON_ARGON2_TIME_COST: "1",
    // The key that seals the signing keys the test's context makes: the same as testConfig's.
    SIGNON_SECRET_KEY: "5e".repeat(32),
    SIGNON_MAIL_PRINT: "false",
    SIGNON_TWO_STEP_REQUIRED_ROLES: "none",
    ...extraEnv,
  };
  let service = await startShipped("signon", { port, env });
  const statements = statementRunner(database.pool, config.preparedStatements);
  return {
    issuer,
    ctx: { db: database.db, statements, config, now: () => new Date() },
    async restart() {
      await service.stop();
      service = await startShipped("signon", { port, env });
    },
    close: () => service.stop(),
  };
}
