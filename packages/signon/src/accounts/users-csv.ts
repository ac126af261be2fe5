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

/** Separates the permission names of one application in its column of the users CSV. */
export const permissionSeparator = ";";

/**
 * The users list as CSV: one header line, then one line per person; times in
 * ISO 8601 UTC. After the fixed columns, one column per application (headed
 * by its name) holding the person's permission names there, sorted and
 * joined by `;`, empty when they hold none.
 */
export function usersCsv(
  rows: readonly (UserListRow & { status: readonly UserStatus[] })[],
  applications: readonly { id: string; name: string }[] = [],
  permissions: ReadonlyMap<string, ReadonlyMap<string, readonly string[]>> = new Map(),
): string {
  const records = rows.map((row) =>
    [
      row.name,
      row.email,
      row.role,
      row.organisationName ?? "",
      row.status.join(" "),
      row.lastSignedInAt?.toISOString() ?? "",
      row.createdAt.toISOString(),
      ...applications.map((application) => (permissions.get(row.uid)?.get(application.id) ?? []).join(permissionSeparator)),
    ].map(neutraliseFormula),
  );
  return stringify([[...usersCsvColumns, ...applications.map((application) => neutraliseFormula(application.name))], ...records]);
}
