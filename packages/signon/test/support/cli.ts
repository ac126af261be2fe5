import { runCli } from "../../src/cli/run-cli.js";

/** What one run of the `signon` command gave: its exit code and everything it printed. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the `signon` command in this process against the database at
 * `databaseUrl`, with password hashing lowered so tests stay fast and `env`
 * added to its environment.
 */
export async function runSignonCli(databaseUrl: string, argv: string[], env: Record<string, string> = {}): Promise<CliRun> {
  let stdout = "";
  let stderr = "";
  const code = await runCli(argv, {
    stdout: { write: (chunk: string) => ((stdout += chunk), true) },
    stderr: { write: (chunk: string) => ((stderr += chunk), true) },
    env: { DATABASE_URL: databaseUrl, SIGNON_ARGON2_MEMORY_KIB: "64", SIGNON_ARGON2_TIME_COST: "1", ...env },
  });
  return { code, stdout, stderr };
}
