import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runMigrations } from "@tessera/db";
import { useTestDatabase } from "@tessera/db/testing";
import { sql } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import { signonMigrations } from "../../src/db/migrations.js";

// A migrations folder holding only the first migration: the database as version 0.1 left it.
const firstOnly = mkdtempSync(join(tmpdir(), "signon-migrations-"));
cpSync(signonMigrations.folder, firstOnly, { recursive: true });
const journalPath = join(firstOnly, "meta", "_journal.json");
const journal = JSON.parse(readFileSync(journalPath, "utf8")) as { entries: unknown[] };
writeFileSync(journalPath, JSON.stringify({ ...journal, entries: journal.entries.slice(0, 1) }));

const database = await useTestDatabase({ migrations: [{ schema: "signon", folder: firstOnly }], label: "signon_upgrade" });
afterAll(async () => {
  await database.close();
  rmSync(firstOnly, { recursive: true, force: true });
});

describe("migration 0001 (tokens keyed by digest)", () => {
  it("keeps the tokens already issued", async () => {
    await database.db.execute(sql`
      with app as (insert into signon.applications (id, name, client_id, client_secret_hash, redirect_uris, supported_permissions, created_at)
                   values (gen_random_uuid(), 'App', 'cid', 'h', '{https://a.example/cb}', '{signin}', now()) returning id),
           person as (insert into signon.users (uid, name, email, updated_at, created_at) values (gen_random_uuid(), 'U', 'u@example.org', now(), now()) returning uid),
           grant_row as (insert into signon.grants (id, kind, user_uid, application_id, created_at)
                         select gen_random_uuid(), 'issued', person.uid, app.id, now() from app, person returning id, user_uid, application_id),
           access as (insert into signon.access_tokens (id, grant_id, token_hash, user_uid, application_id, expires_at, created_at)
                      select gen_random_uuid(), id, 'access-digest', user_uid, application_id, now() + interval '1 hour', now() from grant_row)
      insert into signon.refresh_tokens (id, grant_id, token_hash, created_at) select gen_random_uuid(), id, 'refresh-digest', now() from grant_row`);

    const [report] = await runMigrations(database.pool, [signonMigrations]);
    expect(report).toMatchObject({ schema: "signon", applied: journal.entries.length - 1 });
    const access = await database.pool.query("select token_hash from signon.access_tokens");
    const refresh = await database.pool.query("select token_hash from signon.refresh_tokens");
    expect(access.rows).toEqual([{ token_hash: "access-digest" }]);
    expect(refresh.rows).toEqual([{ token_hash: "refresh-digest" }]);
    await expect(
      database.pool.query("insert into signon.refresh_tokens (grant_id, token_hash, created_at) select grant_id, 'refresh-digest', now() from signon.refresh_tokens"),
    ).rejects.toThrow(/duplicate key/);
  });
});
