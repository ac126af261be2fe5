import type { TestProject } from "vitest/node";
import { TEST_SERVER_KEY } from "./test-server-key.js";
import { startTestServer, type TestServer } from "./test-server.js";

interface SharedServer {
  server: Promise<TestServer>;
  users: number;
}

/** One server for every project of a vitest run (each project loads this module on its own). */
const SHARED = Symbol.for("tessera.db.testServer");
const registry = globalThis as { [SHARED]?: SharedServer };

/**
 * vitest `globalSetup` that starts one embedded PostgreSQL server for the
 * whole test run: add `globalSetup: ["@tessera/db/testing/global-setup"]` to a
 * project's config. Every project that registers it shares the server;
 * `useTestDatabase` gives each worker slot its own database on it. With
 * `DATABASE_URL` set, tests use that server and none is started.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (process.env["DATABASE_URL"]) return async () => {};
  const shared = (registry[SHARED] ??= { server: startTestServer(), users: 0 });
  shared.users += 1;
  const server = await shared.server;
  project.provide(TEST_SERVER_KEY, server.url);
  return async () => {
    shared.users -= 1;
    if (shared.users > 0) return;
    if (registry[SHARED] === shared) delete registry[SHARED];
    await server.stop();
  };
}
