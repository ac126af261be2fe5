import { describe, expect, it } from "vitest";
import { pendingSchemaChanges } from "../src/testing/index.js";
import * as driftedSchema from "./fixtures/drifted-schema.js";
import { fixtureMigrations } from "./fixtures/fixture-migrations.js";
import * as schema from "./fixtures/schema.js";

describe("pendingSchemaChanges", () => {
  it("finds nothing when the migrations record the schema module", async () => {
    expect(await pendingSchemaChanges({ schema, folder: fixtureMigrations.folder })).toEqual([]);
  });

  it("lists the statement a schema change without a migration would need", async () => {
    expect(await pendingSchemaChanges({ schema: driftedSchema, folder: fixtureMigrations.folder })).toEqual([
      'ALTER TABLE "fixture"."notes" ADD COLUMN "body" text;',
    ]);
  });
});
