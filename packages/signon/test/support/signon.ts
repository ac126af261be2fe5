import { useTestDatabase, type TestDatabase } from "@tessera/db/testing";
import type { ServiceLoggerOptions } from "@tessera/service-kit";
import Fastify, { type FastifyInstance, type RouteOptions } from "fastify";
import { afterAll, beforeEach } from "vitest";
import signonApp, { signonServerOptions } from "../../src/app.js";
import { loadConfig, type SignonConfig } from "../../src/config.js";
import type { SignonContext } from "../../src/context.js";
import { statementRunner } from "../../src/db/statements.js";
import { TokenAnswerCache } from "../../src/oauth/token-answer-cache.js";
import { signonMigrations } from "../../src/db/migrations.js";
import * as schema from "../../src/db/schema.js";
import { TestClock } from "./clock.js";

/**
 * Test configuration: development mode, argon2 lowered so tests stay fast, a
 * fixed secret key, mails kept quiet, and no role required to use 2-step
 * verification, so the administrators of tests about other things act
 * without setting it up. The tests of 2-step requirements turn the default
 * back on (`SIGNON_TWO_STEP_REQUIRED_ROLES: "superadmin,admin"`).
 */
export function testConfig(overrides: Record<string, string> = {}): SignonConfig {
  return loadConfig({
    SIGNON_ARGON2_MEMORY_KIB: "64",
    SIGNON_ARGON2_TIME_COST: "1",
    SIGNON_PUBLIC_URL: "http://localhost:3000",
    SIGNON_SECRET_KEY: "5e".repeat(32),
    SIGNON_MAIL_PRINT: "false",
    SIGNON_TWO_STEP_REQUIRED_ROLES: "none",
    ...overrides,
  });
}

/** A migrated database for one test file. Call `close()` in `afterAll` and `reset()` in `beforeEach`. */
export function openTestDatabase(): Promise<TestDatabase<typeof schema>> {
  return useTestDatabase({ migrations: [signonMigrations], schema });
}

/** A Sign-on app on a test database, with a movable clock and the context its domain functions use. */
export interface TestSignon {
  app: FastifyInstance;
  clock: TestClock;
  ctx: SignonContext;
  /** The options of every route the app registered, schemas and config included (HEAD routes too). */
  routes: readonly RouteOptions[];
}

/** Builds a Sign-on app on `database` with a movable clock; `logger` is off unless a test reads the log lines. */
export async function buildTestSignon(
  database: TestDatabase<typeof schema>,
  baseConfig: SignonConfig = testConfig(),
  logger: false | ServiceLoggerOptions = false,
): Promise<TestSignon> {
  const clock = new TestClock();
  // The hot paths run as named prepared statements, as in production.
  const config = { ...baseConfig, preparedStatements: true };
  const app = Fastify(signonServerOptions(config, logger));
  const routes: RouteOptions[] = [];
  app.addHook("onRoute", (route) => {
    routes.push(route);
  });
  const tokenAnswers = new TokenAnswerCache(config.tokenAnswerCacheSize);
  await app.register(signonApp, { config, db: database.db, pool: database.pool, now: clock.now, tokenAnswers });
  await app.ready();
  return { app, clock, ctx: { db: database.db, statements: statementRunner(database.pool, config.preparedStatements), config, now: clock.now, tokenAnswers }, routes };
}

/**
 * The usual set-up of a test file: one Sign-on app on a migrated database, the
 * database emptied before each test, app and database closed after the file.
 */
export async function useTestSignon(): Promise<{ database: TestDatabase<typeof schema>; signon: TestSignon }> {
  const database = await openTestDatabase();
  const signon = await buildTestSignon(database);
  afterAll(async () => {
    await signon.app.close();
    await database.close();
  });
  beforeEach(() => database.reset());
  return { database, signon };
}
