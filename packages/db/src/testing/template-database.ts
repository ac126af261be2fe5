import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { runMigrations, type MigrationSet } from "../migrations.js";
import { createPool } from "../pool.js";
import { withDatabase } from "./postgres-database.js";

/** Any fixed number: the advisory lock that makes template and worker databases one at a time. */
const TEMPLATE_LOCK = 7_310_019;

/**
 * The database `<label>_<migrations digest>_w<slot>` on a test server,
 * created on first use as a copy of a template database that has the
 * migrations applied (made once per server and set of migrations, by whichever
 * worker needs it first). A later file of the same worker slot finds the
 * database there and gets it as the previous file left it: the caller empties
 * it. Returns its connection string.
 */
export async function workerDatabaseFromTemplate(
  serverUrl: string,
  migrations: readonly MigrationSet[],
  label: string,
  slot: string,
): Promise<string> {
  const digest = await migrationsDigest(migrations);
  const template = `template_${digest}`;
  const worker = `${label}_${digest.slice(0, 8)}_w${slot}`.toLowerCase().replace(/[^a-z0-9_]/g, "_").slice(0, 63);
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [TEMPLATE_LOCK]);
    const existing = await databasesAmong(client, [template, worker]);
    if (!existing.has(worker)) {
      if (!existing.has(template)) await createTemplate(client, serverUrl, template, migrations);
      await client.query(`CREATE DATABASE ${quote(worker)} TEMPLATE ${quote(template)}`);
    }
  } finally {
    await client.end();
  }
  return withDatabase(serverUrl, worker);
}

async function createTemplate(client: pg.Client, serverUrl: string, template: string, migrations: readonly MigrationSet[]): Promise<void> {
  // Built under another name, so that a worker that dies half-way leaves no template behind.
  const building = `${template}_building`;
  await client.query(`DROP DATABASE IF EXISTS ${quote(building)} WITH (FORCE)`);
  await client.query(`CREATE DATABASE ${quote(building)}`);
  // Two connections: a migration built step by step (CREATE INDEX CONCURRENTLY) holds the lock on one and works on the other.
  const pool = createPool({ url: withDatabase(serverUrl, building), max: 2 });
  try {
    // Both kinds: the schema definitions describe the database after the post-deploy migrations.
    await runMigrations(pool, migrations);
    await runMigrations(pool, migrations, { kind: "post-deploy" });
  } finally {
    await pool.end();
  }
  await client.query(`ALTER DATABASE ${quote(building)} RENAME TO ${quote(template)}`);
}

async function databasesAmong(client: pg.Client, names: string[]): Promise<Set<string>> {
  const { rows } = await client.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname = ANY($1::text[])", [names]);
  return new Set(rows.map((row) => row.datname));
}

/** 16 hex digits that change whenever a set's schema, table or any file of its folder does. */
async function migrationsDigest(migrations: readonly MigrationSet[]): Promise<string> {
  const hash = createHash("sha256");
  for (const set of migrations) {
    hash.update(`${set.schema}\0${set.table ?? ""}\0${set.postDeployTable ?? ""}\0`);
    for (const folder of [set.folder, ...(set.postDeployFolder === undefined ? [] : [set.postDeployFolder])]) {
      hash.update(`${folder === set.folder ? "regular" : "post-deploy"}\0`);
      for (const file of await filesUnder(folder)) {
        hash.update(`${path.relative(folder, file)}\0`);
        hash.update(await readFile(file));
      }
    }
  }
  return hash.digest("hex").slice(0, 16);
}

async function filesUnder(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { withFileTypes: true, recursive: true }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return [];
    throw error;
  });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name))
    .sort();
}

function quote(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
