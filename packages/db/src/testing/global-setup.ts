import type { TestProject } from "vitest/node";
import { startTestDatabaseBroker } from "./broker.js";
import { BROKER_KEY } from "./broker-key.js";

/**
 * vitest `globalSetup` that makes embedded test databases boot once per worker
 * slot instead of once per test file: add
 * `globalSetup: ["@tessera/db/testing/global-setup"]` to a project's config.
 * Without it, {@link useTestDatabase} starts a server for each file.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const broker = await startTestDatabaseBroker();
  project.provide(BROKER_KEY, broker.url);
  return () => broker.close();
}
