import { startDatabase } from "@tessera/db";
import { SignonCallerResolver } from "./auth/signon-caller-resolver.js";
import { COMMANDS, runCli, USAGE } from "./cli/run-cli.js";
import { ConfigError, readConfig } from "./config.js";
import { createContext } from "./context.js";
import { COMPLETION_MIGRATIONS } from "./db/database.js";
import * as schema from "./db/schema.js";

const args = process.argv.slice(2);
if (args[0] === "--help" || args[0] === "help") {
  console.log(USAGE);
  process.exit(0);
}
if (!(COMMANDS as readonly string[]).includes(args[0] ?? "")) {
  console.error(USAGE);
  process.exit(2);
}

let config;
try {
  config = readConfig(process.env);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(`completion: ${error.message}`);
  process.exit(2);
}

const database = await startDatabase({
  url: config.databaseUrl,
  migrations: [COMPLETION_MIGRATIONS],
  schema,
  log: { info: (message: string) => console.error(message), warn: (message: string) => console.error(message) },
});
let code = 1;
try {
  // The CLI never authenticates callers; the resolver is there because the context carries one.
  const callers = new SignonCallerResolver({ signonUrl: config.signonUrl, cacheSeconds: 0 });
  code = await runCli(args, createContext(config, database.db, callers), {
    out: (line) => console.log(line),
    err: (line) => console.error(line),
  });
} finally {
  await database.close();
}
process.exit(code);
