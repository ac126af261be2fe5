import { describeMigrateOutcome, describeRestorePoint, migrateDatabase, restorePointName, setRestorePoint, withStatementTimeout } from "@tessera/db";
import { TESSERA_VERSION } from "@tessera/service-kit";
import type { CallerResolver } from "./auth/caller.js";
import { COMMANDS, runCli, USAGE } from "./cli/run-cli.js";
import { createContext } from "./context.js";
import { COMPLETION_MIGRATIONS } from "./db/database.js";
import { openCompletionDatabaseOrExit, readConfigOrExit } from "./startup.js";

const args = process.argv.slice(2);
if (args.length === 1 && args[0] === "--version") {
  console.log(TESSERA_VERSION);
  process.exit(0);
}
if (args[0] === "--help" || args[0] === "help") {
  console.log(USAGE);
  process.exit(0);
}
if (!(COMMANDS as readonly string[]).includes(args[0] ?? "")) {
  console.error(USAGE);
  process.exit(2);
}

const config = readConfigOrExit(process.env);
if (args[0] === "migrate") process.exit(await migrate(args.slice(1)));
if (args[0] === "restore-point") process.exit(await restorePoint(args.slice(1)));
// Progress goes to stderr: stdout carries only the command's own output.
const database = await openCompletionDatabaseOrExit(config, {
  info: (message) => console.error(message),
  warn: (message) => console.error(message),
});
let code = 1;
try {
  // The CLI never authenticates callers: the context's resolver accepts no token.
  const callers: CallerResolver = { resolveCaller: () => Promise.resolve(null) };
  // Loads and recomputations over every course may run long statements: the service's bound does not apply.
  code = await withStatementTimeout(null, () =>
    runCli(args, createContext(config, database.db, callers), {
      out: (line) => console.log(line),
      err: (line) => console.error(line),
    }),
  );
} finally {
  await database.close();
}
process.exit(code);

/**
 * `completion migrate [--post-deploy]`: the migrations of the first kind (what a new instance applies at its start;
 * the release before can run against them), then with `--post-deploy` the post-deploy ones, which must wait until
 * no instance of the release before remains. Says what still waits.
 */
async function migrate(options: readonly string[]): Promise<number> {
  const postDeploy = options.includes("--post-deploy");
  if (options.some((option) => option !== "--post-deploy")) {
    console.error(USAGE);
    return 2;
  }
  const log = { info: (line: string) => console.error(line), warn: (line: string) => console.error(line) };
  const database = await openCompletionDatabaseOrExit(config, log, { migrate: false });
  try {
    const outcome = await migrateDatabase(database.pool, [COMPLETION_MIGRATIONS], {
      postDeploy,
      lockTimeoutMs: config.databaseMigrationLockTimeoutMs,
      lockAttempts: config.databaseMigrationLockAttempts,
      log,
      restorePointPrefix: "completion-migrate",
    });
    for (const line of describeMigrateOutcome(outcome, "completion migrate", postDeploy)) console.log(`completion ${TESSERA_VERSION}: ${line}`);
    return 0;
  } catch (error) {
    console.error(`completion: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  } finally {
    await database.close();
  }
}

/**
 * `completion restore-point [NAME]`: sets a named restore point in the database cluster's WAL before risky work, so
 * that the cluster can be restored to just before it (docs/operations.md). The name defaults to `completion-` and
 * the time. Exits 1, saying why, when none could be set (WAL not archived, a standby, no privilege).
 */
async function restorePoint(argv: string[]): Promise<number> {
  if (argv.length > 1 || argv.some((arg) => arg.startsWith("-"))) {
    console.error("Usage: completion restore-point [NAME]");
    return 2;
  }
  const database = await openCompletionDatabaseOrExit(config, { info: () => undefined, warn: (line) => console.error(line) }, { migrate: false });
  try {
    const outcome = await setRestorePoint(database.pool, argv[0] ?? restorePointName("completion", new Date()));
    if (outcome.set) console.log(describeRestorePoint(outcome));
    else console.error(describeRestorePoint(outcome));
    return outcome.set ? 0 : 1;
  } finally {
    await database.close();
  }
}
