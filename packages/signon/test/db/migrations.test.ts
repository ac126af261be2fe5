import { pendingSchemaChanges } from "@tessera/db/testing";
import { sql } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import { signonMigrations } from "../../src/db/migrations.js";
import * as schema from "../../src/db/schema.js";
import { openTestDatabase } from "../support/signon.js";

const database = await openTestDatabase();
afterAll(() => database.close());

describe("signon migrations", () => {
  it("agree with the schema definitions (no change is waiting for a migration)", async () => {
    expect(await pendingSchemaChanges({ schema, folder: signonMigrations.folder, schemaFilter: ["signon"] })).toEqual([]);
  });

  it("create every table of the schema module in the signon schema", async () => {
    const result = await database.db.execute<{ table_name: string }>(
      sql`select table_name from information_schema.tables where table_schema = 'signon' order by table_name`,
    );
    expect(result.rows.map((row) => row.table_name)).toEqual([
      "access_tokens",
      "account_links",
      "application_usage_months",
      "applications",
      "audit_events",
      "dev_mails",
      "email_changes",
      "failure_counters",
      "grants",
      "identity_providers",
      "invitation_batch_rows",
      "invitation_batches",
      "invitation_permissions",
      "organisations",
      "passkey_challenges",
      "passkeys",
      "password_history",
      "push_deliveries",
      "refresh_tokens",
      "remembered_browsers",
      "renewed_tokens",
      "sessions",
      "settings",
      "sign_in_failures",
      "signing_keys",
      "signon_import_ledger",
      "upstream_identities",
      "upstream_messages_seen",
      "upstream_sign_ins",
      "user_application_syncs",
      "user_permissions",
      "users",
    ]);
  });

  it("refuse two users whose e-mail addresses differ only in case", async () => {
    const now = new Date();
    await database.db.insert(schema.users).values({ uid: crypto.randomUUID(), name: "A", email: "Same@Example.org", createdAt: now, updatedAt: now });
    await expect(
      database.db.insert(schema.users).values({ uid: crypto.randomUUID(), name: "B", email: "same@example.ORG", createdAt: now, updatedAt: now }),
    ).rejects.toThrow();
  });
});
