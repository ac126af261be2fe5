import { parseArgs } from "node:util";
import { TESSERA_VERSION } from "@tessera/service-kit";
import { AccountError } from "../accounts/manage-users.js";
import { RegistrationError } from "../applications/register-application.js";
import { ConfigError, loadConfig } from "../config.js";
import { openSignonDatabase } from "../database.js";
import { statementRunner } from "../db/statements.js";
import { commands } from "./commands.js";
import { MIGRATE_USAGE, runMigrateCommand } from "./migrate-command.js";
import { RESTORE_POINT_USAGE, runRestorePointCommand } from "./restore-point-command.js";
import { UsageError, type CliIo } from "./output.js";

function usage(): string {
  return ["Usage:", "  signon --version", `  ${MIGRATE_USAGE}`, `  ${RESTORE_POINT_USAGE}`, ...Object.values(commands).map((command) => `  ${command.usage}`), "", "Connects to DATABASE_URL, or to the embedded database in SIGNON_DATA_DIR (default ./data)."].join("\n");
}

/**
 * Runs one CLI command and returns the exit code: 0 on success, 1 when the
 * command was refused or failed, 2 for a usage mistake. With `--json`, stdout
 * gets exactly one JSON object; errors always go to stderr.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  if (argv.length === 1 && argv[0] === "--version") {
    io.stdout.write(`${TESSERA_VERSION}\n`);
    return 0;
  }
  if (argv[0] === "migrate" || argv[0] === "restore-point") {
    try {
      return await (argv[0] === "migrate" ? runMigrateCommand : runRestorePointCommand)(argv.slice(1), io);
    } catch (error) {
      io.stderr.write(`signon: ${(error as Error).message ?? String(error)}\n`);
      return 1;
    }
  }
  const [group, action, ...rest] = argv;
  const command = commands[`${group ?? ""} ${action ?? ""}`];
  if (!command) {
    io.stderr.write(`${group === undefined || group === "help" || group === "--help" ? "" : `Unknown command: ${argv.slice(0, 2).join(" ")}\n`}${usage()}\n`);
    return group === "help" || group === "--help" ? 0 : 2;
  }
  let values: Record<string, string | boolean | string[] | undefined>;
  try {
    const parsed = parseArgs({ args: [...rest], options: { ...command.options, json: { type: "boolean" } }, strict: true, allowPositionals: command.positionals !== undefined });
    values = parsed.values;
    const names = command.positionals ?? [];
    if (parsed.positionals.length !== names.length) throw new Error(`Expected ${names.join(" ")}`.trim());
    names.forEach((name, index) => (values[name] = parsed.positionals[index]));
  } catch (error) {
    io.stderr.write(`${(error as Error).message}\nUsage: ${command.usage}\n`);
    return 2;
  }
  const json = values.json === true;

  let database: Awaited<ReturnType<typeof openSignonDatabase>> | undefined;
  try {
    const config = loadConfig(io.env, "cli");
    database = await openSignonDatabase(config);
    const statements = statementRunner(database.pool, config.preparedStatements);
    const result = await command.run({ db: database.db, statements, config, now: () => new Date() }, values, io.env);
    io.stdout.write(json ? `${JSON.stringify(result.json)}\n` : `${result.text.join("\n")}\n`);
    return result.exitCode ?? 0;
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`${error.message}\nUsage: ${command.usage}\n`);
      return 2;
    }
    if (error instanceof AccountError || error instanceof RegistrationError || error instanceof ConfigError) {
      io.stderr.write(`signon: ${error.message}\n`);
      return 1;
    }
    io.stderr.write(`signon: ${(error as Error).message ?? String(error)}\n`);
    return 1;
  } finally {
    await database?.close();
  }
}
