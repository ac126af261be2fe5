import { Readable } from "node:stream";
import type { UserListRow, UserStatus } from "../repositories/user-search.js";

/** The header of the users CSV export. */
export const usersCsvColumns = ["name", "email", "role", "organisation", "status", "last_sign_in", "created_at"] as const;

/**
 * A cell a spreadsheet would read as a formula (`=`, `+`, `-`, `@`, tab or
 * carriage return first) gets a leading `'`, so opening the export runs
 * nothing.
 *
 * @see https://owasp.org/www-community/attacks/CSV_Injection
 */
export function neutraliseFormula(cell: string): string {
  return /^[=+\-@\t\r]/.test(cell) ? `'${cell}` : cell;
}

/** Separates the permission names of one application in its column of the users CSV. */
export const permissionSeparator = ";";

/**
 * People read from the database per round trip of the export's cursor, which
 * asks for the next batch while this one is written out. Small on purpose:
 * less of a batch is still being read when the young generation is
 * collected, so less moves to the old one (over 100,000 people, +20–24 MiB of
 * RSS at 100 a batch against +87 at 1,000). Over a million people, 250 took
 * 9.0–9.7 s against 10.7–10.9 at 100 and 9.3–9.5 at 500, each at +9–12 MiB
 * (`npm run bench -- scale`; see "The users list at scale" in the README).
 */
export const csvBatchSize = 250;

/**
 * The users CSV as a stream for a response. `Readable.from` reads one batch
 * ahead (its `highWaterMark` is 1 line-batch) and `pipe` waits for the
 * response's `drain`, so a batch is read from `rows` only when the response
 * has taken the ones before: about one batch waits in memory, however slowly
 * the client reads and however many people there are.
 */
export function usersCsvStream(...args: Parameters<typeof usersCsv>): Readable {
  return Readable.from(usersCsv(...args));
}

/**
 * The users list as CSV, a batch of lines at a time: one header line, then
 * one line per person; times in ISO 8601 UTC. After the fixed columns, one
 * column per application of `columns` (headed by its name) holding the
 * person's permission names there that `columns` shows, sorted and joined
 * by `;`, empty when they hold none. `rows` are batches of people with their
 * permissions as `<application id>:<permission>`.
 */
export async function* usersCsv(
  rows: AsyncIterable<readonly (UserListRow & { status: readonly UserStatus[]; permissions: readonly string[] })[]>,
  columns: readonly { application: { id: string; name: string }; permissions: readonly string[] }[] = [],
): AsyncGenerator<string, void, undefined> {
  yield csvLine([...usersCsvColumns, ...columns.map(({ application }) => neutraliseFormula(application.name))]);
  // Worked out once: which column each application's permissions go to, and which of them it shows.
  const columnOf = new Map(columns.map(({ application }, index) => [application.id, index]));
  const shownIn = columns.map(({ permissions }) => new Set(permissions));
  for await (const batch of rows) {
    let lines = "";
    for (const row of batch) {
      const cells = [
        row.name,
        row.email,
        row.role,
        row.organisationName ?? "",
        row.status.join(" "),
        row.lastSignedInAt?.toISOString() ?? "",
        row.createdAt.toISOString(),
        ...permissionCells(row.permissions, columnOf, shownIn),
      ];
      lines += csvLine(cells.map(neutraliseFormula));
    }
    yield lines;
  }
}

/** A person's permission cells, one per column: the names `shownIn` it shows there, sorted, joined by `;`. */
function permissionCells(permissions: readonly string[], columnOf: ReadonlyMap<string, number>, shownIn: readonly ReadonlySet<string>[]): string[] {
  const held: string[][] = shownIn.map(() => []);
  for (const entry of permissions) {
    const at = entry.indexOf(":");
    const column = columnOf.get(entry.slice(0, at));
    const permission = entry.slice(at + 1);
    if (column !== undefined && shownIn[column]?.has(permission)) held[column]?.push(permission);
  }
  return held.map((names) => (names.length > 1 ? names.sort() : names).join(permissionSeparator));
}

/** One CSV line (RFC 4180, `\n` ended): a cell holding a comma, a quote or a line break is quoted, its quotes doubled. */
export function csvLine(cells: readonly string[]): string {
  return `${cells.map((cell) => (/[",\r\n]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell)).join(",")}\n`;
}
