import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { dropDatabase, recreateDatabase, testServerUrl } from "@tessera/db/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The version and migration commands as shipped: the built command lines and `npm run migrate`, each in a process
// of its own, against a database of their own.

const root = fileURLToPath(new URL("../../", import.meta.url));
const version = (JSON.parse(readFileSync(`${root}package.json`, "utf8")) as { version: string }).version;
const run = promisify(execFile);
const nodeOptions = ["--conditions=tessera-built", "--max-semi-space-size=2", "--max-old-space-size=512"];
const databaseName = `tessera_upgrade_migrate_w${process.env["VITEST_POOL_ID"] ?? process.pid}`;
let databaseUrl: string;

beforeAll(async () => {
  databaseUrl = await recreateDatabase(testServerUrl(), databaseName);
});
afterAll(() => dropDatabase(testServerUrl(), databaseName));

function command(entry: string, args: string[], env: Record<string, string> = {}) {
  return run(process.execPath, [...nodeOptions, `${root}${entry}`, ...args], { cwd: root, env: { ...process.env, DATABASE_URL: databaseUrl, ...env } });
}

async function countOf(table: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const found = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
    return found.rows[0]?.n ?? 0;
  } finally {
    await client.end();
  }
}

function journalLength(folder: string): number {
  return (JSON.parse(readFileSync(`${root}${folder}/meta/_journal.json`, "utf8")) as { entries: unknown[] }).entries.length;
}

describe("--version", () => {
  it("prints the root package.json's version, for signon and completion", async () => {
    expect((await command("packages/signon/dist/bundled/cli.js", ["--version"])).stdout).toBe(`${version}\n`);
    expect((await command("packages/completion/dist/bundled/cli.js", ["--version"])).stdout).toBe(`${version}\n`);
  });
});

describe("npm run migrate", () => {
  it("applies both services' migrations of the first kind only, then with --post-deploy the post-deploy ones, and says what it did", async () => {
    const first = await run("npm", ["run", "--silent", "migrate"], { cwd: root, env: { ...process.env, DATABASE_URL: databaseUrl } });
    expect(first.stdout.split("\n").filter((line) => line !== "")).toEqual([
      `signon ${version}: Applied ${journalLength("packages/signon/migrations")} migration(s).`,
      `completion ${version}: Applied ${journalLength("packages/completion/migrations")} migration(s).`,
    ]);
    expect(await countOf("drizzle.signon_migrations")).toBe(journalLength("packages/signon/migrations"));
    expect(await countOf("drizzle.completion_migrations")).toBe(journalLength("packages/completion/migrations"));

    const again = await run("npm", ["run", "--silent", "migrate", "--", "--post-deploy"], { cwd: root, env: { ...process.env, DATABASE_URL: databaseUrl } });
    expect(again.stdout.split("\n").filter((line) => line !== "")).toEqual([
      `signon ${version}: Applied 0 migration(s) and ${journalLength("packages/signon/migrations-post-deploy")} post-deploy migration(s).`,
      `completion ${version}: Applied 0 migration(s) and ${journalLength("packages/completion/migrations-post-deploy")} post-deploy migration(s).`,
    ]);
    expect(await countOf("drizzle.signon_post_deploy_migrations")).toBe(journalLength("packages/signon/migrations-post-deploy"));
  });

  it("signon migrate --json says the version and what waits; a wrong option is a usage error", async () => {
    const result = await command("packages/signon/dist/bundled/cli.js", ["migrate", "--json"]);
    expect(JSON.parse(result.stdout)).toEqual({ version, applied: 0, post_deploy_applied: 0, post_deploy_pending: [], changed_since_applied: [], restore_point: null });
    await expect(command("packages/signon/dist/bundled/cli.js", ["migrate", "--all"])).rejects.toMatchObject({ code: 2 });
    await expect(command("packages/completion/dist/bundled/cli.js", ["migrate", "--all"])).rejects.toMatchObject({ code: 2 });
  });

  it("fails with the lock timeout's sentence while a long transaction holds a table a migration changes", async () => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      // A database without Completion's migration 0001 (three columns of enrollments), while a transaction holds enrollments.
      const [, second] = (JSON.parse(readFileSync(`${root}packages/completion/migrations/meta/_journal.json`, "utf8")) as { entries: { when: number }[] }).entries;
      await client.query(`DELETE FROM drizzle.completion_migrations WHERE created_at = $1`, [second?.when]);
      await client.query(`ALTER TABLE completion.enrollments DROP COLUMN course_earned, DROP COLUMN course_possible, DROP COLUMN course_percent`);
      await client.query("BEGIN");
      await client.query("LOCK TABLE completion.enrollments IN ACCESS SHARE MODE");
      const failed = await command("packages/completion/dist/bundled/cli.js", ["migrate"], { DATABASE_MIGRATION_LOCK_TIMEOUT_MS: "200", DATABASE_MIGRATION_LOCK_ATTEMPTS: "2" }).then(
        () => null,
        (error: unknown) => error as { code: number; stderr: string },
      );
      expect(failed?.code).toBe(1);
      expect(failed?.stderr).toMatch(/completion: migration 0001_enrollment_course_progress of schema completion could not take a lock within 200 ms, 2 time\(s\)/);
    } finally {
      await client.query("ROLLBACK");
      await client.end();
    }
  });
});
