import { describe, expect, it } from "vitest";
import { checkMigration, type MigrationRule } from "../src/index.js";

// The check of migrations that run while the previous release serves requests: fed SQL, it names what it refuses.

/** The rules `sql` breaks, in order, one per finding. */
async function rulesOf(sql: string): Promise<MigrationRule[]> {
  return (await checkMigration(sql)).map((finding) => finding.rule);
}

describe("checkMigration lets through what the previous release can live with", () => {
  it.each([
    ["a new table, its keys, indexes and foreign keys", `CREATE TABLE "s"."t" ("id" uuid PRIMARY KEY, "n" text NOT NULL, "u" uuid);
      ALTER TABLE "s"."t" ADD CONSTRAINT "t_u_fk" FOREIGN KEY ("u") REFERENCES "s"."users"("uid");
      CREATE UNIQUE INDEX "t_n_idx" ON "s"."t" USING btree ("n");`],
    ["a nullable column", `ALTER TABLE "s"."users" ADD COLUMN "nickname" text;`],
    ["a NOT NULL column with a constant default", `ALTER TABLE "s"."users" ADD COLUMN "flags" text[] DEFAULT '{}'::text[] NOT NULL;`],
    ["a column defaulting to now(), computed once", `ALTER TABLE "s"."keys" ADD COLUMN "active_from" timestamp with time zone DEFAULT now() NOT NULL;`],
    ["an index built concurrently", `CREATE INDEX CONCURRENTLY IF NOT EXISTS "users_x_idx" ON "s"."users" USING btree ("x");`],
    ["a batch of a backfill", `UPDATE "s"."users" SET "nickname" = "name" WHERE "uid" IN (SELECT "uid" FROM "s"."users" WHERE "nickname" IS NULL LIMIT 1000);`],
    ["a foreign key added NOT VALID, and validated later", `ALTER TABLE "s"."users" ADD CONSTRAINT "users_org_fk" FOREIGN KEY ("org") REFERENCES "s"."orgs"("id") NOT VALID;
      ALTER TABLE "s"."users" VALIDATE CONSTRAINT "users_org_fk";`],
    ["functions, triggers, statistics, comments and ANALYZE", `CREATE FUNCTION s.f(x text) RETURNS text LANGUAGE sql IMMUTABLE RETURN lower(x);
      CREATE TRIGGER t AFTER INSERT ON s.users FOR EACH STATEMENT EXECUTE FUNCTION s.g();
      ALTER TABLE "s"."users" ALTER COLUMN "name" SET STATISTICS 1000;
      COMMENT ON TABLE s.users IS 'people'; ANALYZE "s"."users";`],
    ["a column made nullable, and a new default", `ALTER TABLE s.users ALTER COLUMN x DROP NOT NULL; ALTER TABLE s.users ALTER COLUMN y SET DEFAULT 0;`],
    ["new rows", `INSERT INTO "s"."settings" ("key", "value") VALUES ('a', '1');`],
    ["an empty migration and comments", `-- nothing: DROP TABLE s.users would be refused, were it not a comment\n`],
  ])("%s", async (_name, sql) => {
    expect(await checkMigration(sql)).toEqual([]);
  });
});

describe("checkMigration refuses what would break the previous release or stall its requests", () => {
  it.each<[string, string, MigrationRule[]]>([
    ["dropping a column", `ALTER TABLE "s"."users" DROP COLUMN "legacy";`, ["drop-column"]],
    ["dropping a table", `DROP TABLE "s"."old_sessions";`, ["drop"]],
    ["dropping an index, even concurrently", `DROP INDEX CONCURRENTLY "s"."users_x_idx";`, ["drop"]],
    ["dropping a constraint", `ALTER TABLE "s"."t" DROP CONSTRAINT "t_kind_check";`, ["drop"]],
    ["renaming a column", `ALTER TABLE "s"."users" RENAME COLUMN "name" TO "full_name";`, ["rename"]],
    ["renaming a table", `ALTER TABLE "s"."users" RENAME TO "people";`, ["rename"]],
    ["moving a table to another schema", `ALTER TABLE s.users SET SCHEMA archive;`, ["rename"]],
    ["SET NOT NULL", `ALTER TABLE "s"."users" ALTER COLUMN "email" SET NOT NULL;`, ["set-not-null"]],
    ["a NOT NULL column without a default", `ALTER TABLE "s"."users" ADD COLUMN "code" text NOT NULL;`, ["not-null-without-default"]],
    ["a new check constraint", `ALTER TABLE "s"."users" ADD CONSTRAINT "users_role_check" CHECK (role in ('a', 'b'));`, ["new-constraint"]],
    ["a new check constraint, even NOT VALID", `ALTER TABLE "s"."users" ADD CONSTRAINT "c" CHECK (x > 0) NOT VALID;`, ["new-constraint"]],
    ["a new unique index", `CREATE UNIQUE INDEX CONCURRENTLY "users_code_key" ON "s"."users" ("code");`, ["new-constraint"]],
    ["a new primary key", `ALTER TABLE "s"."tokens" ADD PRIMARY KEY ("hash");`, ["new-constraint"]],
    ["ALTER COLUMN TYPE", `ALTER TABLE "s"."users" ALTER COLUMN "age" SET DATA TYPE bigint;`, ["alter-column-type"]],
    ["ALTER COLUMN TYPE USING", `ALTER TABLE s.users ALTER COLUMN id TYPE uuid USING id::uuid;`, ["alter-column-type"]],
    ["a column with a volatile default", `ALTER TABLE "s"."users" ADD COLUMN "token" uuid DEFAULT gen_random_uuid() NOT NULL;`, ["volatile-default"]],
    ["a column with a default from a sequence", `ALTER TABLE s.users ADD COLUMN n bigint DEFAULT nextval('s.seq');`, ["volatile-default"]],
    ["a serial column", `ALTER TABLE s.users ADD COLUMN n bigserial;`, ["volatile-default"]],
    ["an identity column", `ALTER TABLE s.users ADD COLUMN n integer GENERATED ALWAYS AS IDENTITY;`, ["volatile-default"]],
    ["a stored generated column", `ALTER TABLE s.users ADD COLUMN l text GENERATED ALWAYS AS (lower(name)) STORED;`, ["volatile-default"]],
    ["dropping a default", `ALTER TABLE s.users ALTER COLUMN kind DROP DEFAULT;`, ["drop-default"]],
    ["a foreign key validated under lock", `ALTER TABLE "s"."users" ADD CONSTRAINT "users_org_fk" FOREIGN KEY ("org") REFERENCES "s"."orgs"("id");`, ["validated-under-lock"]],
    ["an index built while writes wait", `CREATE INDEX "users_name_idx" ON "s"."users" USING btree (lower("name"));`, ["index-not-concurrent"]],
    ["rewriting a hot table: VACUUM FULL", `VACUUM FULL s.users;`, ["rewrite"]],
    ["rewriting a hot table: CLUSTER", `CLUSTER s.users USING users_pkey;`, ["rewrite"]],
    ["rewriting a hot table: SET TABLESPACE", `ALTER TABLE s.users SET TABLESPACE slow;`, ["rewrite"]],
    ["rewriting a hot table: REINDEX", `REINDEX TABLE s.users;`, ["rewrite"]],
    ["rewriting a hot table: an UPDATE of every row", `UPDATE "s"."users" SET "nickname" = "name";`, ["unbatched-write"]],
    ["an UPDATE with a LIMIT but no filter of rows left to do", `UPDATE s.users SET n = 1 WHERE uid IN (SELECT uid FROM s.users LIMIT 10);`, ["unbatched-write"]],
    ["a DELETE of many rows", `DELETE FROM s.audit WHERE at < now() - interval '1 year';`, ["unbatched-write"]],
    ["TRUNCATE", `TRUNCATE s.sessions;`, ["truncate"]],
    ["LOCK TABLE", `LOCK TABLE s.users IN SHARE MODE;`, ["lock"]],
    ["a DO block, whatever its comment says", `-- safe: only adds a column\nDO $$ BEGIN EXECUTE 'ALTER TABLE s.users DROP COLUMN x'; END $$;`, ["opaque"]],
    ["a call of a function of the schema", `SELECT "s"."rebuild_everything"(NULL);`, ["opaque"]],
    ["its own transaction control", `BEGIN; ALTER TABLE s.users ADD COLUMN x text; COMMIT;`, ["transaction-control", "transaction-control"]],
    ["a setting that would undo the lock timeout", `SET lock_timeout = 0;`, ["setting"]],
    ["CONCURRENTLY mixed with ordinary statements", `ALTER TABLE s.users ADD COLUMN x text; CREATE INDEX CONCURRENTLY users_x_idx ON s.users (x);`, ["mixed"]],
    ["a statement it does not know", `ALTER TABLE s.users DISABLE TRIGGER ALL;`, ["unknown"]],
  ])("%s", async (_name, sql, rules) => {
    expect(await rulesOf(sql)).toEqual(rules);
  });

  it("says what the statement is and what to write instead", async () => {
    expect(await checkMigration(`ALTER TABLE "s"."users" DROP COLUMN "legacy";`)).toEqual([
      {
        rule: "drop-column",
        statement: 'ALTER TABLE "s"."users" DROP COLUMN "legacy"',
        why: "drops s.users.legacy: the previous release still reads or writes it; it belongs in migrations-post-deploy, run once no instance of the previous release remains",
      },
    ]);
  });

  it("finds every breaking statement of a migration, not the first only", async () => {
    expect(
      await rulesOf(`ALTER TABLE "s"."a" ADD COLUMN "x" text;--> statement-breakpoint
        ALTER TABLE "s"."a" DROP COLUMN "y", ALTER COLUMN "z" SET NOT NULL;--> statement-breakpoint
        CREATE INDEX "a_x_idx" ON "s"."a" ("x");`),
    ).toEqual(["drop-column", "set-not-null", "index-not-concurrent"]);
  });

  it("exempts a table created by the same migration, but not one created earlier", async () => {
    const sql = `CREATE TABLE s.fresh (id int);
      ALTER TABLE s.fresh ALTER COLUMN id SET NOT NULL;
      CREATE INDEX fresh_idx ON s.fresh (id);
      ALTER TABLE s.older ALTER COLUMN id SET NOT NULL;`;
    expect(await rulesOf(sql)).toEqual(["set-not-null"]);
  });

  it("refuses SQL that PostgreSQL cannot parse", async () => {
    await expect(checkMigration("ALTER TABEL s.users ADD COLUMN x text;")).rejects.toThrow(/syntax error/);
  });
});
