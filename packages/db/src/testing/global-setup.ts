import type { TestProject } from "vitest/node";
import { startTestDatabaseBroker, type TestDatabaseBroker } from "./broker.js";
import { BROKER_KEY } from "./broker-key.js";

interface SharedBroker {
  broker: Promise<TestDatabaseBroker>;
  users: number;
}

/** One broker for every project of a vitest run (each project loads this module on its own). */
const SHARED = Symbol.for("tessera.db.testDatabaseBroker");
const registry = globalThis as { [SHARED]?: SharedBroker };

/**
 * vitest `globalSetup` that makes embedded test databases boot once per worker
 * slot instead of once per test file: add
 * `globalSetup: ["@tessera/db/testing/global-setup"]` to a project's config.
 * Projects that register it share one broker, so a slot's server (about 400 MB)
 * serves the files of every project that run in that slot; each file migrates
 * its own schemas and empties them before use. Without it, `useTestDatabase`
 * starts a server for each file.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // With DATABASE_URL, test files use PostgreSQL and no embedded server is needed up front.
  const prewarm = !process.env["DATABASE_URL"];
  const shared = (registry[SHARED] ??= { broker: startTestDatabaseBroker({ prewarm }), users: 0 });
  shared.users += 1;
  const broker = await shared.broker;
  project.provide(BROKER_KEY, broker.url);
  return async () => {
    shared.users -= 1;
    if (shared.users > 0) return;
    if (registry[SHARED] === shared) delete registry[SHARED];
    await broker.close();
  };
}
