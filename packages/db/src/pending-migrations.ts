import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { BOOKKEEPING_SCHEMA, migrationSource, type MigrationKind, type MigrationSet } from "./migrations.js";

/** Runs one fixed SQL statement (no parameters) and returns its rows: a `pg.Pool`'s `query`, or drizzle's `execute`, adapted. */
export type RunQuery = (text: string) => Promise<readonly Record<string, unknown>[]>;

interface JournalEntry {
  tag: string;
  when: number;
}

const journals = new Map<string, readonly JournalEntry[]>();

/** The journal of a migrations folder; it does not change while a process runs, so it is read once. */
function journalOf(folder: string): readonly JournalEntry[] {
  let entries = journals.get(folder);
  if (entries === undefined && !existsSync(join(folder, "meta", "_journal.json"))) return [];
  if (entries === undefined) {
    const journal = JSON.parse(readFileSync(join(folder, "meta", "_journal.json"), "utf8")) as { entries: JournalEntry[] };
    entries = journal.entries.map(({ tag, when }) => ({ tag, when }));
    journals.set(folder, entries);
  }
  return entries;
}

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

function quoteLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/**
 * The tags of the migrations of one kind (default: the regular ones) of `sets`
 * that the database has not recorded as applied (an empty list: the database
 * is up to date). Reads the bookkeeping tables only, takes no lock and changes
 * nothing, so readiness probes may call it often. A missing bookkeeping table
 * means nothing of that set is applied.
 */
export async function pendingMigrations(runQuery: RunQuery, sets: readonly MigrationSet[], kind: MigrationKind = "regular"): Promise<string[]> {
  const pending: string[] = [];
  for (const set of sets) {
    const source = migrationSource(set, kind);
    if (source === null) continue;
    const table = `${quoteIdentifier(BOOKKEEPING_SCHEMA)}.${quoteIdentifier(source.table)}`;
    const [found] = await runQuery(`select to_regclass(${quoteLiteral(table)}) is not null as "exists"`);
    const recorded = new Set<number>();
    if (found?.["exists"] === true) {
      for (const row of await runQuery(`select created_at from ${table}`)) recorded.add(Number(row["created_at"]));
    }
    for (const entry of journalOf(source.folder)) {
      if (!recorded.has(entry.when)) pending.push(entry.tag);
    }
  }
  return pending;
}
