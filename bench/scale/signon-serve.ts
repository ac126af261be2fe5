// Sign-on for the scale bench, in a process of its own so that its memory (the users.csv export) is measured
// apart from the load: argv[2] is the database (migrated and filled by signon.ts). Sends { url, email, password }
// once listening, then waits for "stop".
import type { AddressInfo } from "node:net";
import { createDrizzle, createPool } from "@tessera/db";
import { loadConfig, signonApp, signonServerOptions } from "@tessera/signon";
import Fastify from "fastify";
import { createUser } from "../../packages/signon/src/accounts/manage-users.js";
import * as schema from "../../packages/signon/src/db/schema.js";
import { findUserByEmail } from "../../packages/signon/src/repositories/users.js";
import { statementRunner } from "../../packages/signon/src/db/statements.js";

/** What the server hands to the load. */
export interface ScaleServer {
  url: string;
  email: string;
  password: string;
}

const url = process.argv[2] as string;
const pool = createPool({ url, max: 10 });
const db = createDrizzle(pool, schema);
const config = loadConfig({
  DATABASE_URL: url,
  SIGNON_PORT: "0",
  SIGNON_ARGON2_MEMORY_KIB: "64",
  SIGNON_ARGON2_TIME_COST: "1",
  SIGNON_TWO_STEP_REQUIRED_ROLES: "none",
});
const ctx = { db, statements: statementRunner(pool, config.preparedStatements), config, now: () => new Date() };
const password = "bench password 123";
// A kept database (BENCH_SCALE_KEEP=1) has the administrator of its first run already.
const admin = (await findUserByEmail(db, "bench-admin@bench.example")) ?? (await createUser(ctx, { email: "bench-admin@bench.example", name: "Bench Administrator", role: "superadmin", password }));

const app = Fastify(signonServerOptions(config, false));
await app.register(signonApp, { config, db, pool });
await app.listen({ host: "127.0.0.1", port: 0 });
const address = app.server.address() as AddressInfo;
process.send?.({ url: `http://127.0.0.1:${address.port}`, email: admin.email, password } satisfies ScaleServer);
process.on("message", (message) => {
  if (message !== "stop") return;
  void app
    .close()
    .then(() => pool.end())
    .finally(() => process.exit(0));
});
