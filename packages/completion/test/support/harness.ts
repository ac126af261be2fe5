import { useTestDatabase, type TestDatabase } from "@tessera/db/testing";
import { afterAll, beforeEach } from "vitest";
import { buildApp } from "../../src/app.js";
import { SignonCallerResolver } from "../../src/auth/signon-caller-resolver.js";
import { DEFAULT_AGGREGATOR_TYPES } from "../../src/config.js";
import { createContext, type CompletionContext } from "../../src/context.js";
import { COMPLETION_MIGRATIONS } from "../../src/db/database.js";
import * as schema from "../../src/db/schema.js";
import type { FastifyTypeBox } from "../../src/http/fastify-typebox.js";
import { startSignonStandIn, type SignonStandIn } from "./signon-stand-in.js";

/** What a test file gets: a migrated database, the Sign-on stand-in, the context and the app. */
export interface Harness {
  readonly database: TestDatabase<typeof schema>;
  readonly signon: SignonStandIn;
  readonly ctx: CompletionContext;
  readonly app: FastifyTypeBox;
}

/** Options of {@link useHarness}. */
export interface HarnessOptions {
  readonly rebuildStaleFromScratch?: boolean;
  readonly aggregatorTypes?: readonly string[];
  readonly now?: () => Date;
}

/**
 * Sets up a test file: its own migrated database (emptied before each test),
 * a Sign-on stand-in and the app wired to both. Call at the top level of the
 * file: `const h = await useHarness();`.
 */
export async function useHarness(options: HarnessOptions = {}): Promise<Harness> {
  const database = await useTestDatabase({ migrations: [COMPLETION_MIGRATIONS], schema });
  const signon = await startSignonStandIn();
  const ctx = createContext(
    {
      aggregatorTypes: options.aggregatorTypes ?? DEFAULT_AGGREGATOR_TYPES,
      rebuildStaleFromScratch: options.rebuildStaleFromScratch ?? false,
    },
    database.db,
    new SignonCallerResolver({ signonUrl: signon.url, cacheMs: 0 }),
    options.now ?? (() => new Date("2026-06-01T12:00:00Z")),
  );
  const app = await buildApp(ctx);
  await app.ready();
  beforeEach(() => database.reset());
  afterAll(async () => {
    await app.close();
    await signon.close();
    await database.close();
  });
  return { database, signon, ctx, app };
}
