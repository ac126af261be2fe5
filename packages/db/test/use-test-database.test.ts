import pg from "pg";
import { afterAll, beforeEach, describe, expect, inject, it } from "vitest";
import { useTestDatabase } from "../src/testing/index.js";
import { fixtureMigrations } from "./fixtures/fixture-migrations.js";
import * as schema from "./fixtures/schema.js";

const t = await useTestDatabase({ migrations: [fixtureMigrations], schema });
afterAll(() => t.close());
beforeEach(() => t.reset());

describe("useTestDatabase", () => {
  it("gives a migrated database on the server this run uses", async () => {
    expect(t.kind).toBe(process.env["DATABASE_URL"] ? "postgres" : "embedded");
    const [note] = await t.db.insert(schema.notes).values({ title: "first" }).returning();
    expect(note).toEqual({ id: 1, title: "first", done: false, createdAt: expect.any(Date) });
  });

  it.skipIf(process.env["DATABASE_URL"])("uses a database of this worker slot on the run's embedded PostgreSQL server", async () => {
    const server = new URL(inject("tesseraTestServer"));
    const mine = new URL(t.url);
    expect(mine.searchParams.get("host")).toBe(server.searchParams.get("host"));
    expect(mine.pathname).toMatch(new RegExp(`^/fixture_[0-9a-f]{8}_w${process.env["VITEST_POOL_ID"]}$`));
    const { rows } = await t.pool.query<{ version: string }>("SELECT current_setting('server_version_num') AS version");
    expect(rows).toEqual([{ version: expect.stringMatching(/^18\d{4}$/) }]);
  });

  it.skipIf(process.env["DATABASE_URL"])("copies it from a migrated template kept on the server", async () => {
    const digest = /_([0-9a-f]{8})_w\d+$/.exec(new URL(t.url).pathname)?.[1];
    const client = new pg.Client({ connectionString: inject("tesseraTestServer") });
    await client.connect();
    try {
      const { rows } = await client.query<{ datname: string }>("SELECT datname FROM pg_database WHERE starts_with(datname, $1)", [`template_${digest}`]);
      expect(rows).toEqual([{ datname: expect.stringMatching(/^template_[0-9a-f]{16}$/) }]);
    } finally {
      await client.end();
    }
  });

  it("empties the service's tables and restarts their sequences on reset", async () => {
    await t.db.insert(schema.notes).values([{ title: "a" }, { title: "b" }]);
    await t.db.insert(schema.counters).values({ name: "visits", value: 3 });
    await t.reset();
    expect(await t.db.select().from(schema.counters)).toEqual([]);
    const [note] = await t.db.insert(schema.notes).values({ title: "after reset" }).returning({ id: schema.notes.id });
    expect(note).toEqual({ id: 1 });
  });

  it("keeps the migration bookkeeping on reset", async () => {
    await t.reset();
    const { rows } = await t.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM "drizzle"."fixture_migrations"');
    expect(rows).toEqual([{ n: 2 }]);
  });
});
