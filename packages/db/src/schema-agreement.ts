import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { generateDrizzleJson, generateMigration, type DrizzleSnapshotJSON } from "drizzle-kit/api";

/** Options of {@link pendingSchemaChanges}. */
export interface SchemaAgreementOptions {
  /** The service's schema module (`import * as schema from "./schema.js"`). */
  schema: Record<string, unknown>;
  /** The drizzle-kit migrations folder of that schema. */
  folder: string;
  /** PostgreSQL schemas to compare, as in drizzle.config's `schemaFilter` (default: all in the module). */
  schemaFilter?: string[];
  /** Column name casing, as in drizzle.config's `casing`. */
  casing?: "snake_case" | "camelCase";
}

interface Journal {
  entries: { idx: number; tag: string }[];
}

/**
 * The SQL statements that `drizzle-kit generate` would write for the schema
 * module now: the difference between the last snapshot of the migrations
 * folder and the schema definitions. An empty list means migrations and
 * schema agree; anything else is a schema change without a migration.
 */
export async function pendingSchemaChanges(options: SchemaAgreementOptions): Promise<string[]> {
  const last = await lastSnapshot(options.folder);
  const current = generateDrizzleJson(options.schema, last.id, options.schemaFilter, options.casing);
  return generateMigration(last, current);
}

async function lastSnapshot(folder: string): Promise<DrizzleSnapshotJSON> {
  const journal = JSON.parse(await readFile(join(folder, "meta", "_journal.json"), "utf8")) as Journal;
  const entry = journal.entries.at(-1);
  if (entry === undefined) throw new Error(`no migrations in ${folder}`);
  const file = join(folder, "meta", `${String(entry.idx).padStart(4, "0")}_snapshot.json`);
  return JSON.parse(await readFile(file, "utf8")) as DrizzleSnapshotJSON;
}
