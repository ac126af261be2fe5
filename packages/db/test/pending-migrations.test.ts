import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, pendingMigrations, runMigrations, type RunQuery } from "../src/index.js";
import { dropDatabase, recreateDatabase, testServerUrl } from "../src/testing/index.js";
import { fixtureMigrations } from "./fixtures/fixture-migrations.js";

// Runs on the test run's embedded server, or on DATABASE_URL's PostgreSQL server when it is set.
const scratchName = `tessera_db_pending_w${process.env["VITEST_POOL_ID"] ?? process.pid}`;

let pool: pg.Pool;

beforeAll(async () => {
  pool = createPool({ url: await recreateDatabase(testServerUrl(), scratchName), max: 2 });
});

afterAll(async () => {
  await pool.end();
  await dropDatabase(testServerUrl(), scratchName);
});

const runQuery: RunQuery = async (text) => (await pool.query<Record<string, unknown>>(text)).rows;

describe("pendingMigrations", () => {
  it("lists every migration of a set that was never migrated", async () => {
    expect(await pendingMigrations(runQuery, [fixtureMigrations])).toEqual(["0000_create_notes", "0001_add_done"]);
  });

  it("lists nothing once the set is migrated", async () => {
    await runMigrations(pool, [fixtureMigrations]);
    expect(await pendingMigrations(runQuery, [fixtureMigrations])).toEqual([]);
  });

  it("lists a migration whose bookkeeping row is missing", async () => {
    await runMigrations(pool, [fixtureMigrations]);
    await pool.query(`delete from drizzle.fixture_migrations where created_at = (select max(created_at) from drizzle.fixture_migrations)`);
    expect(await pendingMigrations(runQuery, [fixtureMigrations])).toEqual(["0001_add_done"]);
  });
});
