import { withStatementTimeout } from "@tessera/db";
import type { CallerResolver } from "./auth/caller.js";
import { COMMANDS, runCli, USAGE } from "./cli/run-cli.js";
import { createContext } from "./context.js";
import { openCompletionDatabaseOrExit, readConfigOrExit } from "./startup.js";

const args = process.argv.slice(2);
if (args[0] === "--help" || args[0] === "help") {
  console.log(USAGE);
  process.exit(0);
}
if (!(COMMANDS as readonly string[]).includes(args[0] ?? "")) {
  console.error(USAGE);
  process.exit(2);
}

const config = readConfigOrExit(process.env);
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
