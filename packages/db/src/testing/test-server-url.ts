import { inject } from "vitest";
import { TEST_SERVER_KEY } from "./test-server-key.js";

/**
 * The PostgreSQL server a test file may create databases on:
 * `DATABASE_URL` when set, otherwise the embedded server of the test run
 * (the package's global setup must be registered).
 */
export function testServerUrl(): string {
  const outside = process.env["DATABASE_URL"];
  if (outside) return outside;
  const embedded = inject(TEST_SERVER_KEY) as string | undefined;
  if (!embedded) throw new Error('no test database server: add globalSetup: ["@tessera/db/testing/global-setup"] to the vitest project');
  return embedded;
}
