import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { startSignon, type RunningSignon } from "@tessera/signon";

const run = promisify(execFile);
const signonCli = fileURLToPath(new URL("../../../../node_modules/@tessera/signon/bin/signon.js", import.meta.url));

/**
 * The real Sign-on with its push delivery worker running (the default of
 * `startSignon`), polling its outbox every 50 ms so that changes made by the
 * CLI in another process go out quickly; with its CLI at hand.
 */
export interface PushingSignon {
  running: RunningSignon;
  url: string;
  cli(...args: string[]): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

export async function startPushingSignon(databaseUrl: string, port: number, embedded: boolean): Promise<PushingSignon> {
  const env: Record<string, string> = {
    NODE_ENV: "development",
    DATABASE_URL: databaseUrl,
    SIGNON_PREPARED_STATEMENTS: String(!embedded),
    SIGNON_PORT: String(port),
    SIGNON_PUBLIC_URL: `http://127.0.0.1:${port}`,
    SIGNON_ARGON2_MEMORY_KIB: "64",
    SIGNON_ARGON2_TIME_COST: "1",
    SIGNON_PUSH_POLL_MS: "50",
  };
  const running = await startSignon(env, { logger: false });
  return {
    running,
    url: running.url,
    async cli(...args) {
      const { stdout } = await run(process.execPath, [signonCli, ...args, "--json"], { env: { ...process.env, ...env } });
      return JSON.parse(stdout) as Record<string, unknown>;
    },
    close: () => running.close(),
  };
}

/** Resolves once `condition` holds, checking every 25 ms; fails after `timeoutMs`. */
export async function eventually(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`not true within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
