import type pg from "pg";

/** What setting a restore point came to: its name and WAL position, or why none was set. */
export type RestorePointOutcome = { set: true; name: string; lsn: string } | { set: false; name: string; reason: string };

/** A restore point's name: what is about to happen, and when (UTC, to the second), e.g. `signon-migrate-20261206T201500Z`. */
export function restorePointName(what: string, at: Date): string {
  return `${what}-${at.toISOString().replace(/[-:]/g, "").replace(/\.\d{3}/, "")}`;
}

/**
 * Sets a named restore point in the WAL (`pg_create_restore_point`), so the
 * cluster can be restored to just before the work that follows (docs/operations.md,
 * "Restore the cluster to a point in time"). Nothing is set, and the reason
 * says why, where the WAL is not archived (a restore point there could never
 * be restored to), on a standby, or where the database user may not set one.
 * A restore stops at the first restore point of a name: give each its own
 * (the default names carry the time).
 */
export async function setRestorePoint(pool: pg.Pool, name: string): Promise<RestorePointOutcome> {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what a name may not hold
  if (name.length === 0 || Buffer.byteLength(name, "utf8") > 63 || /[\u0000-\u001f\u007f]/.test(name)) {
    return { set: false, name, reason: "a restore point's name is 1 to 63 bytes, with no control characters" };
  }
  const { rows } = await pool.query<{ archive_mode: string; in_recovery: boolean }>(
    "select current_setting('archive_mode') as archive_mode, pg_is_in_recovery() as in_recovery",
  );
  const server = rows[0];
  if (server?.in_recovery === true) return { set: false, name, reason: "the server is a standby; set it on the primary" };
  if (server?.archive_mode === "off") return { set: false, name, reason: "this server does not archive its WAL (archive_mode is off), so nothing could be restored to it" };
  try {
    const result = await pool.query<{ lsn: string }>("select pg_create_restore_point($1)::text as lsn", [name]);
    return { set: true, name, lsn: result.rows[0]?.lsn ?? "" };
  } catch (error) {
    if ((error as { code?: unknown }).code === "42501") {
      return { set: false, name, reason: "the database user may not set restore points (GRANT EXECUTE ON FUNCTION pg_create_restore_point(text) TO it)" };
    }
    throw error;
  }
}

/** The line a command prints for `outcome`. */
export function describeRestorePoint(outcome: RestorePointOutcome): string {
  return outcome.set ? `Set the restore point ${outcome.name} at WAL position ${outcome.lsn}.` : `Set no restore point: ${outcome.reason}.`;
}
