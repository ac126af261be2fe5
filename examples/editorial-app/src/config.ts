import { readFileSync } from "node:fs";
import { productionTlsProblem } from "@tessera/db";
import type { SignonMockUser } from "@tessera/signon-client";

/** Where the application keeps its users and sessions. */
export interface DatabaseConfig {
  /** A PostgreSQL connection string (`DATABASE_URL`); absent: the embedded PostgreSQL server of `dataDir`. */
  url?: string | undefined;
  /** Folder of the local data, whose embedded PostgreSQL server (in `<dataDir>/postgres`) the other services share; default `./data`. */
  dataDir?: string | undefined;
  /** A statement without an answer after this many seconds fails as "database unavailable" (`DATABASE_STATEMENT_TIMEOUT_SECONDS`, default 30). */
  statementTimeoutSeconds?: number | undefined;
  /** Whether to wait for a database that cannot be reached at start-up instead of failing (the server does). */
  waitWhileUnavailable?: boolean | undefined;
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
  /** How often expired sessions are removed, in milliseconds (`EDITORIAL_APP_SESSION_SWEEP_MS`, default 10 minutes). */
  sessionSweepMs?: number | undefined;
  /**
   * Development without Sign-on (`EDITORIAL_APP_SIGNON_MOCK_USER`): every
   * request is signed in as this stand-in (the client kit's mock mode).
   */
  mockUser?: SignonMockUser | undefined;
  /** `NODE_ENV`, which the client kit checks `mockUser` against (it refuses `production`). */
  nodeEnv?: string | undefined;
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
 * | `DATABASE_URL` (with `NODE_ENV=production`, a server on another machine needs `sslmode=verify-full`) | the embedded PostgreSQL server of `EDITORIAL_APP_DATA_DIR` (`./data`) |
 * | `DATABASE_STATEMENT_TIMEOUT_SECONDS` (a statement without an answer after this long fails, 503) | `30` |
 * | `EDITORIAL_APP_SESSION_SWEEP_MS` (how often expired sessions are removed) | `600000` (10 minutes) |
 * | `EDITORIAL_APP_SIGNON_MOCK_USER` (development without Sign-on: JSON `{"uid","name","email","permissions":[…]}` every request is signed in as; the client id and secret are then optional) | none; refused when `NODE_ENV` is `production` |
 * | `NODE_ENV` (`production` refuses the mock user, and a database on another machine without verified TLS) | `development` |
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
  const mock = mockUser(env);
  const databaseUrl = env["DATABASE_URL"] || undefined;
  const tlsProblem = env["NODE_ENV"] === "production" && databaseUrl !== undefined ? productionTlsProblem(databaseUrl) : null;
  if (tlsProblem !== null) throw new ConfigError(`DATABASE_URL ${tlsProblem}`);
  return {
    signonUrl: url("SIGNON_URL", env["SIGNON_URL"] ?? "http://localhost:3000"),
    ...(mock === undefined ? credentials(env, readFile) : mockCredentials(env)),
    redirectUri: `${appUrl}/auth/gds/callback`,
    database: {
      url: databaseUrl,
      dataDir: env["EDITORIAL_APP_DATA_DIR"] || undefined,
      statementTimeoutSeconds: seconds("DATABASE_STATEMENT_TIMEOUT_SECONDS", env["DATABASE_STATEMENT_TIMEOUT_SECONDS"], 30),
    },
    sessionSweepMs: sweepInterval(env["EDITORIAL_APP_SESSION_SWEEP_MS"]),
    ...(mock === undefined ? {} : { mockUser: mock, nodeEnv: env["NODE_ENV"] ?? "development" }),
    host: env["HOST"] ?? "127.0.0.1",
    port,
  };
}

const MOCK_USER = "EDITORIAL_APP_SIGNON_MOCK_USER";

/**
 * The stand-in of `EDITORIAL_APP_SIGNON_MOCK_USER`: a JSON object shaped like
 * the `user` of Sign-on's `/user.json` (`uid`, `name`, `email`,
 * `permissions`, optional `organisation_slug` and `organisation_content_id`).
 * Refused when `NODE_ENV` is `production`.
 */
function mockUser(env: Record<string, string | undefined>): SignonMockUser | undefined {
  const value = env[MOCK_USER];
  if (value === undefined || value.trim() === "") return undefined;
  if (env["NODE_ENV"] === "production") {
    throw new ConfigError(`${MOCK_USER} must not be set when NODE_ENV is production: it signs every request in without Sign-on`);
  }
  const shape = `a JSON object such as {"uid":"dev-1","name":"Dev Eloper","email":"dev@example.org","permissions":["admin"]}`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new ConfigError(`${MOCK_USER} must be ${shape}, got ${JSON.stringify(value)}`);
  }
  const user = (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) ? parsed : {}) as Record<string, unknown>;
  const text = (field: string) => {
    const given = user[field];
    if (typeof given !== "string" || given.trim() === "") throw new ConfigError(`${MOCK_USER} needs "${field}": ${shape}`);
    return given;
  };
  const optionalText = (field: string) => {
    const given = user[field];
    if (given === undefined || given === null) return null;
    if (typeof given !== "string") throw new ConfigError(`${MOCK_USER}: "${field}" must be a string or null`);
    return given;
  };
  const permissions = user["permissions"] ?? [];
  if (!Array.isArray(permissions) || permissions.some((permission) => typeof permission !== "string" || permission === "")) {
    throw new ConfigError(`${MOCK_USER}: "permissions" must be a list of permission names`);
  }
  return {
    uid: text("uid"),
    name: text("name"),
    email: text("email"),
    permissions: permissions as string[],
    organisationSlug: optionalText("organisation_slug"),
    organisationContentId: optionalText("organisation_content_id"),
  };
}

/** In mock mode Sign-on is never called: its credentials are taken when given, else stand-ins. */
function mockCredentials(env: Record<string, string | undefined>): { clientId: string; clientSecret: string } {
  return { clientId: env["EDITORIAL_APP_CLIENT_ID"] || "signon-mock", clientSecret: env["EDITORIAL_APP_CLIENT_SECRET"] || "signon-mock" };
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

function sweepInterval(value: string | undefined): number {
  if (value === undefined || value === "") return 10 * 60 * 1000;
  const parsed = Number(value);
  if (!/^\d+$/.test(value) || parsed < 100 || parsed > 86_400_000) {
    throw new ConfigError(`EDITORIAL_APP_SESSION_SWEEP_MS must be milliseconds from 100 to 86400000, got ${JSON.stringify(value)}`);
  }
  return parsed;
}

function seconds(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === "") return fallback;
  const parsed = Number(value);
  if (!/^\d+$/.test(value) || parsed < 1 || parsed > 3600) throw new ConfigError(`${name} must be a whole number of seconds from 1 to 3600, got ${JSON.stringify(value)}`);
  return parsed;
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
