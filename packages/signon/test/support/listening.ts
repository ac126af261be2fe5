import { freePort, type TestDatabase } from "@tessera/db/testing";
import Fastify, { type FastifyInstance } from "fastify";
import signonApp, { signonServerOptions } from "../../src/app.js";
import type { SignonContext } from "../../src/context.js";
import type * as schema from "../../src/db/schema.js";
import { statementRunner } from "../../src/db/statements.js";
import { testConfig } from "./signon.js";

export { freePort };

/** Sign-on listening on a real port, its issuer equal to its address. */
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
