import { runShipped } from "@tessera/test-support";
import type { CliRun } from "./cli.js";

/**
 * Runs the built `signon` command (`dist/bundled/cli.js`, as shipped) in a
 * process of its own against the database at `databaseUrl`, in development
 * mode with password hashing lowered, `env` added (`NODE_ENV` among it to
 * change the mode). Build first (`npm run build`) after changing the sources.
 */
export async function runBuiltSignonCli(databaseUrl: string, argv: string[], env: Record<string, string> = {}): Promise<CliRun> {
  const { code, stdout, stderr } = await runShipped("signon-cli", argv, {
    NODE_ENV: "development",
    DATABASE_URL: databaseUrl,
    SIGNON_ARGON2_MEMORY_KIB: "64",
    SIGNON_ARGON2_TIME_COST: "1",
    SIGNON_SECRET_KEY: "5e".repeat(32),
    SIGNON_MAIL_PRINT: "false",
    ...env,
  });
  return { code: code ?? -1, stdout, stderr };
}
