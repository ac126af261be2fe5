import { signonMigrations } from "@tessera/signon";
import { schemaEmptier, useTestDatabase, type TestDatabase } from "@tessera/db/testing";
import { afterAll, beforeEach } from "vitest";
import { buildApp, type AppOptions } from "../../src/app.js";
import { SignonCallerResolver } from "../../src/auth/signon-caller-resolver.js";
import { DEFAULT_AGGREGATOR_TYPES } from "../../src/config.js";
import { createContext, type CompletionContext } from "../../src/context.js";
import { COMPLETION_MIGRATIONS } from "../../src/db/database.js";
import * as schema from "../../src/db/schema.js";
import type { FastifyTypeBox } from "../../src/http/fastify-typebox.js";
import { startRealSignon, type RealSignon } from "./real-signon.js";

/** What a test file gets: a migrated database, the real Sign-on on it, the context and the app. */
export interface Harness {
  readonly database: TestDatabase<typeof schema>;
  readonly signon: RealSignon;
  readonly ctx: CompletionContext;
  readonly app: FastifyTypeBox;
  /** Empties the `completion` schema (what runs before each test). */
  readonly emptyCompletion: () => Promise<void>;
}

/** Options of {@link useHarness}. */
export interface HarnessOptions {
  readonly rebuildStaleFromScratch?: boolean;
  readonly aggregatorTypes?: readonly string[];
  readonly now?: () => Date;
  /** How long an answer of Sign-on's `/user.json` is reused (default 0: permission changes show at once). */
  readonly callerCacheSeconds?: number;
  /** Serve Sign-on's push receivers under `/auth/gds/api`, as `server.ts` does. */
  readonly signonPushes?: boolean;
  /** Further options of the app (`metricsToken`, `onRoute`, …). */
  readonly app?: Omit<AppOptions, "signonPushes">;
}

/**
 * Sets up a test file: its own database with the schemas `signon` and
 * `completion` migrated, the real Sign-on started on it (once per file, with
 * the `completion` application registered), and the app wired to both,
 * checking every bearer token with Sign-on (no cache, so permission changes
 * show at once). Before each test the `completion` schema is emptied; Sign-on's
 * users and tokens stay for the whole file. Call at the top level of the file:
 * `const h = await useHarness();`.
 */
export async function useHarness(options: HarnessOptions = {}): Promise<Harness> {
  const database = await useTestDatabase({ migrations: [signonMigrations, COMPLETION_MIGRATIONS], schema });
  const signon = await startRealSignon(database);
  const callers = new SignonCallerResolver({ signonUrl: signon.url, clientId: signon.clientId, cacheSeconds: options.callerCacheSeconds ?? 0 });
  const ctx = createContext(
    {
      aggregatorTypes: options.aggregatorTypes ?? DEFAULT_AGGREGATOR_TYPES,
      rebuildStaleFromScratch: options.rebuildStaleFromScratch ?? false,
      preparedStatements: true,
    },
    database.db,
    callers,
    options.now ?? (() => new Date("2026-06-01T12:00:00Z")),
  );
  const app = await buildApp(ctx, { ...options.app, ...(options.signonPushes === true ? { signonPushes: callers.verifier } : {}) });
  await app.ready();
  const emptyCompletion = schemaEmptier(database.pool, [COMPLETION_MIGRATIONS.schema]);
  beforeEach(() => emptyCompletion());
  afterAll(async () => {
    await app.close();
    await signon.close();
    await database.close();
  });
  return { database, signon, ctx, app, emptyCompletion };
}
