import { readFileSync } from "node:fs";

/** Where the application keeps its users and sessions. */
export interface DatabaseConfig {
  /** A PostgreSQL connection string (`DATABASE_URL`); absent: the embedded PostgreSQL server of `dataDir`. */
  url?: string | undefined;
  /** Folder of the local data, whose embedded PostgreSQL server (in `<dataDir>/postgres`) the other services share; default `./data`. */
  dataDir?: string | undefined;
}

/** Everything the editorial application needs, read once at start-up. */
export interface EditorialAppConfig {
  /** Base URL of Sign-on, e.g. `http://localhost:3000`. */
  signonUrl: string;
  clientId: string;
  clientSecret: string;
  /** This application's callback as registered in Sign-on, e.g. `http://localhost:3002/auth/gds/callback`. */
  redirectUri: string;
  database: DatabaseConfig;
}

/** Where `server.ts` listens. */
export interface ListenConfig {
  host: string;
  port: number;
}

/** A configuration variable that is missing or unusable; the message names it. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

/**
 * Reads the configuration from environment variables:
 *
 * | Variable | Default |
 * |---|---|
 * | `SIGNON_URL` | `http://localhost:3000` |
 * | `EDITORIAL_APP_CLIENT_ID` | required, unless in the credentials file |
 * | `EDITORIAL_APP_CLIENT_SECRET` | required, unless in the credentials file |
 * | `EDITORIAL_APP_CREDENTIALS_FILE` | none: the JSON that `signon apps create --json` prints (`client_id`, `client_secret`) |
 * | `EDITORIAL_APP_URL` (its public origin; the callback is `{url}/auth/gds/callback`) | `http://localhost:{PORT}` |
 * | `DATABASE_URL` | the embedded PostgreSQL server of `EDITORIAL_APP_DATA_DIR` (`./data`) |
 * | `HOST`, `PORT` | `127.0.0.1`, `3002` |
 */
export function configFromEnv(
  env: Record<string, string | undefined>,
  readFile: (path: string) => string = (path) => readFileSync(path, "utf8"),
): EditorialAppConfig & ListenConfig {
  const port = Number(env["PORT"] ?? "3002");
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ConfigError(`PORT must be a port number, got ${JSON.stringify(env["PORT"])}`);
  }
  const appUrl = url("EDITORIAL_APP_URL", env["EDITORIAL_APP_URL"] ?? `http://localhost:${port}`);
  return {
    signonUrl: url("SIGNON_URL", env["SIGNON_URL"] ?? "http://localhost:3000"),
    ...credentials(env, readFile),
    redirectUri: `${appUrl}/auth/gds/callback`,
    database: { url: env["DATABASE_URL"] || undefined, dataDir: env["EDITORIAL_APP_DATA_DIR"] || undefined },
    host: env["HOST"] ?? "127.0.0.1",
    port,
  };
}

function credentials(
  env: Record<string, string | undefined>,
  readFile: (path: string) => string,
): { clientId: string; clientSecret: string } {
  const file = env["EDITORIAL_APP_CREDENTIALS_FILE"];
  if (file === undefined || file === "" || env["EDITORIAL_APP_CLIENT_ID"]) {
    return { clientId: required(env, "EDITORIAL_APP_CLIENT_ID"), clientSecret: required(env, "EDITORIAL_APP_CLIENT_SECRET") };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFile(file));
  } catch (error) {
    throw new ConfigError(`EDITORIAL_APP_CREDENTIALS_FILE: cannot read ${file} as JSON: ${(error as Error).message}`);
  }
  const { client_id: clientId, client_secret: clientSecret } = (parsed ?? {}) as Record<string, unknown>;
  if (typeof clientId !== "string" || clientId === "" || typeof clientSecret !== "string" || clientSecret === "") {
    throw new ConfigError(`EDITORIAL_APP_CREDENTIALS_FILE: ${file} needs "client_id" and "client_secret" strings`);
  }
  return { clientId, clientSecret };
}

function required(env: Record<string, string | undefined>, name: string): string {
  const value = env[name];
  if (value === undefined || value === "") {
    throw new ConfigError(`${name} is required: the credentials Sign-on issued for this application (signon apps create)`);
  }
  return value;
}

function url(name: string, value: string): string {
  try {
    const parsed = new URL(value);
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new Error("not http(s)");
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL, got ${JSON.stringify(value)}`);
  }
  return value.replace(/\/+$/, "");
}
