import { parseArgs } from "node:util";
import { describeRestorePoint, restorePointName, setRestorePoint } from "@tessera/db";
import { loadConfig } from "../config.js";
import { openSignonDatabase } from "../database.js";
import type { CliIo } from "./output.js";

export const RESTORE_POINT_USAGE = "signon restore-point [NAME] [--json]";

/**
 * `signon restore-point [NAME]`: sets a named restore point in the database
 * cluster's WAL before risky work (a bulk change, a rewrite of URIs), so that
 * the cluster can be restored to just before it (docs/operations.md). The
 * name defaults to `signon-` and the time. Exits 1, saying why, when none
 * could be set (WAL not archived, a standby, no privilege).
 */
export async function runRestorePointCommand(argv: readonly string[], io: CliIo): Promise<number> {
  let parsed: { values: { json?: boolean }; positionals: string[] };
  try {
    parsed = parseArgs({ args: [...argv], options: { json: { type: "boolean" } }, strict: true, allowPositionals: true });
    if (parsed.positionals.length > 1) throw new Error("Expected at most one NAME");
  } catch (error) {
    io.stderr.write(`${(error as Error).message}\nUsage: ${RESTORE_POINT_USAGE}\n`);
    return 2;
  }
  const config = loadConfig(io.env, "cli");
  const database = await openSignonDatabase(config, { info: () => undefined, warn: (line: string) => io.stderr.write(`${line}\n`) }, { migrate: false });
  try {
    const outcome = await setRestorePoint(database.pool, parsed.positionals[0] ?? restorePointName("signon", new Date()));
    if (parsed.values.json === true) io.stdout.write(`${JSON.stringify(outcome)}\n`);
    else (outcome.set ? io.stdout : io.stderr).write(`${describeRestorePoint(outcome)}\n`);
    return outcome.set ? 0 : 1;
  } finally {
    await database.close();
  }
}
