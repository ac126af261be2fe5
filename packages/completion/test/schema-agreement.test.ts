import { pendingSchemaChanges } from "@tessera/db/testing";
import { describe, expect, it } from "vitest";
import { COMPLETION_MIGRATIONS } from "../src/db/database.js";
import * as schema from "../src/db/schema.js";

describe("migrations", () => {
  it("agree with the schema definitions (no change without a migration)", async () => {
    expect(await pendingSchemaChanges({ schema, folder: COMPLETION_MIGRATIONS.folder, schemaFilter: ["completion"] })).toEqual([]);
  });
});
