import { afterAll, describe, expect, it } from "vitest";
import { databaseSchemaDrift, useTestDatabase } from "../src/testing/index.js";
import * as driftedSchema from "./fixtures/drifted-schema.js";
import { fixtureMigrations } from "./fixtures/fixture-migrations.js";
import * as schema from "./fixtures/schema.js";

const t = await useTestDatabase({ migrations: [fixtureMigrations] });
afterAll(() => t.close());

describe("databaseSchemaDrift", () => {
  it("finds nothing between a database built from the migrations and the schema module", async () => {
    expect(await databaseSchemaDrift(t.pool, { schema, schemaFilter: ["fixture"] })).toEqual([]);
  });

  it("lists what the database lacks when the schema module has changed", async () => {
    expect(await databaseSchemaDrift(t.pool, { schema: driftedSchema, schemaFilter: ["fixture"] })).toEqual([
      'ALTER TABLE "fixture"."notes" ADD COLUMN "body" text;',
    ]);
  });

  it("notices a database that differs from the migration snapshots, as a hand-edited migration leaves it", async () => {
    await t.pool.query("ALTER TABLE fixture.counters ALTER COLUMN value DROP DEFAULT");
    try {
      expect(await databaseSchemaDrift(t.pool, { schema, schemaFilter: ["fixture"] })).toEqual([
        'ALTER TABLE "fixture"."counters" ALTER COLUMN "value" SET DEFAULT 0;',
      ]);
    } finally {
      await t.pool.query("ALTER TABLE fixture.counters ALTER COLUMN value SET DEFAULT 0");
    }
  });
});
