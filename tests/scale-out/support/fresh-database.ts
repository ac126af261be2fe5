import { randomBytes } from "node:crypto";
import { dropDatabase, recreateDatabase } from "@tessera/db/testing";

/** A database of its own on the server of `DATABASE_URL`, dropped by `drop()`. */
export interface FreshDatabase {
  /** Its connection string. */
  url: string;
  drop(): Promise<void>;
}

/**
 * Creates `scale_out_<random>` on the server `serverUrl` points at, so this
 * test never shares tables with the other suites running on `test`.
 */
export async function createFreshDatabase(serverUrl: string): Promise<FreshDatabase> {
  const name = `scale_out_${randomBytes(6).toString("hex")}`;
  const url = await recreateDatabase(serverUrl, name);
  return { url, drop: () => dropDatabase(serverUrl, name) };
}
