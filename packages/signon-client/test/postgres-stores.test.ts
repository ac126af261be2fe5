import { pendingSchemaChanges, useTestDatabase } from "@tessera/db/testing";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { PostgresSessionStore, PostgresUserStore, signonClientMigrations, signonClientTables } from "../src/postgres/index.js";
import { storeContract } from "./support/store-contract.js";

const database = await useTestDatabase({ migrations: [signonClientMigrations] });
afterAll(() => database.close());
beforeEach(() => database.reset());

const stores = { users: new PostgresUserStore(database.pool), sessions: new PostgresSessionStore(database.pool) };

storeContract("PostgreSQL", () => stores);

describe("signon_client migrations", () => {
  it("agree with the schema definitions", async () => {
    expect(
      await pendingSchemaChanges({
        schema: signonClientTables,
        folder: signonClientMigrations.folder,
        schemaFilter: ["signon_client"],
      }),
    ).toEqual([]);
  });
});
