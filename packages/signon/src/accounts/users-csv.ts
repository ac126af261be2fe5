import { stringify } from "csv-stringify/sync";
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

/** The users list as CSV: one header line, then one line per person; times in ISO 8601 UTC. */
export function usersCsv(rows: readonly (UserListRow & { status: readonly UserStatus[] })[]): string {
  const records = rows.map((row) =>
    [
      row.name,
      row.email,
      row.role,
      row.organisationName ?? "",
      row.status.join(" "),
      row.lastSignedInAt?.toISOString() ?? "",
      row.createdAt.toISOString(),
    ].map(neutraliseFormula),
  );
  return stringify([[...usersCsvColumns], ...records]);
}
