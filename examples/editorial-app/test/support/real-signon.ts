import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { startSignon } from "@tessera/signon";
import type { FastifyInstance } from "fastify";

const run = promisify(execFile);
const signonCli = fileURLToPath(new URL("../../../../node_modules/@tessera/signon/bin/signon.js", import.meta.url));

/** Sign-on's environment for tests: development mode, argon2 lowered so sign-in stays fast. */
function signonEnv(database: { url: string; kind: "embedded" | "postgres" }, port: number): Record<string, string> {
  return {
    NODE_ENV: "development",
    DATABASE_URL: database.url,
    SIGNON_PORT: String(port),
    SIGNON_PUBLIC_URL: `http://127.0.0.1:${port}`,
    SIGNON_ARGON2_MEMORY_KIB: "64",
    SIGNON_ARGON2_TIME_COST: "1",
    // Pushes queued before the application listens are retried soon, not 5 s later.
    SIGNON_PUSH_RETRY_BASE_MS: "100",
  };
}

/** The real Sign-on (`@tessera/signon`), listening on 127.0.0.1:`port`, with its CLI at hand. */
export interface RealSignon {
  app: FastifyInstance;
  url: string;
  /** Runs `signon <args> --json` against the same database and returns the parsed output. */
  cli(...args: string[]): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/** Starts the real Sign-on (its own start-up: config from the environment, migrations, listen) on 127.0.0.1:`port`. */
export async function startRealSignon(
  database: { url: string; kind: "embedded" | "postgres" },
  port: number,
): Promise<RealSignon> {
  const env = signonEnv(database, port);
  const running = await startSignon(env, { logger: false });
  return {
    app: running.app,
    url: running.url,
    async cli(...args) {
      const { stdout } = await run(process.execPath, [signonCli, ...args, "--json"], { env: { ...process.env, ...env } });
      return JSON.parse(stdout) as Record<string, unknown>;
    },
    close: () => running.close(),
  };
}

/** The hidden fields of Sign-on's sign-in form. */
export function signInForm(html: string): { csrf: string; returnTo: string } {
  const csrf = /name="_csrf" value="([^"]*)"/.exec(html)?.[1];
  const returnTo = /name="return_to" value="([^"]*)"/.exec(html)?.[1];
  if (csrf === undefined || returnTo === undefined) throw new Error(`no sign-in form in:\n${html}`);
  return { csrf: decodeEntities(csrf), returnTo: decodeEntities(returnTo) };
}

const namedEntities: Record<string, string> = { amp: "&", quot: '"', lt: "<", gt: ">", apos: "'" };

function decodeEntities(value: string): string {
  return value.replace(/&(#\d+|[a-z]+);/g, (entity, name: string) =>
    name.startsWith("#") ? String.fromCharCode(Number(name.slice(1))) : (namedEntities[name] ?? entity),
  );
}
