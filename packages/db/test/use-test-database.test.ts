import { afterAll, beforeEach, describe, expect, inject, it } from "vitest";
import { useTestDatabase } from "../src/testing/index.js";
import { leaseFromBroker } from "../src/testing/broker.js";
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

  it.skipIf(process.env["DATABASE_URL"])("uses the embedded server of this worker slot from the global setup", async () => {
    const brokerUrl = inject("tesseraTestDatabaseBroker");
    expect(await leaseFromBroker(brokerUrl, process.env["VITEST_POOL_ID"] ?? "")).toBe(t.url);
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
