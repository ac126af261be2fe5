import { describe, expect, it } from "vitest";
import { configFromEnv } from "../src/config.js";

const credentials = { EDITORIAL_APP_CLIENT_ID: "id", EDITORIAL_APP_CLIENT_SECRET: "secret" };

describe("configFromEnv", () => {
  it("fills in the defaults of a local npm start", () => {
    expect(configFromEnv(credentials)).toEqual({
      signonUrl: "http://localhost:3000",
      clientId: "id",
      clientSecret: "secret",
      redirectUri: "http://localhost:3002/auth/gds/callback",
      database: { url: undefined, dataDir: undefined, statementTimeoutSeconds: 30 },
      sessionSweepMs: 600_000,
      host: "127.0.0.1",
      port: 3002,
    });
  });

  it("reads every variable", () => {
    expect(
      configFromEnv({
        ...credentials,
        SIGNON_URL: "https://signon.example.org/",
        EDITORIAL_APP_URL: "https://editorial.example.org",
        DATABASE_URL: "postgres://db/editorial",
        EDITORIAL_APP_DATA_DIR: "/var/lib/tessera",
        DATABASE_STATEMENT_TIMEOUT_SECONDS: "7",
        EDITORIAL_APP_SESSION_SWEEP_MS: "1000",
        HOST: "0.0.0.0",
        PORT: "8080",
      }),
    ).toEqual({
      signonUrl: "https://signon.example.org",
      clientId: "id",
      clientSecret: "secret",
      redirectUri: "https://editorial.example.org/auth/gds/callback",
      database: { url: "postgres://db/editorial", dataDir: "/var/lib/tessera", statementTimeoutSeconds: 7 },
      sessionSweepMs: 1000,
      host: "0.0.0.0",
      port: 8080,
    });
  });

  it("reads the credentials from the file signon apps create --json wrote", () => {
    const files: Record<string, string> = {
      "/data/editorial-app.json": '{"name":"Editorial","client_id":"from-file","client_secret":"file-secret"}',
    };

    const config = configFromEnv({ EDITORIAL_APP_CREDENTIALS_FILE: "/data/editorial-app.json" }, (path) => {
      const text = files[path];
      if (text === undefined) throw new Error("ENOENT");
      return text;
    });

    expect([config.clientId, config.clientSecret]).toEqual(["from-file", "file-secret"]);
  });

  it.each([
    ["/missing.json", /^EDITORIAL_APP_CREDENTIALS_FILE: cannot read \/missing.json as JSON: ENOENT$/],
    ["/not-json.json", /^EDITORIAL_APP_CREDENTIALS_FILE: cannot read \/not-json.json as JSON/],
    ["/no-secret.json", /^EDITORIAL_APP_CREDENTIALS_FILE: \/no-secret.json needs "client_id" and "client_secret" strings$/],
  ])("stops at a credentials file %s that is not usable", (path, message) => {
    const files: Record<string, string> = { "/not-json.json": "client_id=x", "/no-secret.json": '{"client_id":"x"}' };
    const read = (p: string) => {
      const text = files[p];
      if (text === undefined) throw new Error("ENOENT");
      return text;
    };

    expect(() => configFromEnv({ EDITORIAL_APP_CREDENTIALS_FILE: path }, read)).toThrow(message);
  });

  it.each([
    [{ EDITORIAL_APP_CLIENT_ID: undefined }, /^EDITORIAL_APP_CLIENT_ID is required/],
    [{ EDITORIAL_APP_CLIENT_SECRET: "" }, /^EDITORIAL_APP_CLIENT_SECRET is required/],
    [{ SIGNON_URL: "signon" }, /^SIGNON_URL must be an http\(s\) URL, got "signon"$/],
    [{ PORT: "http" }, /^PORT must be a port number, got "http"$/],
  ])("stops at %j with a message naming the variable", (change, message) => {
    expect(() => configFromEnv({ ...credentials, ...change })).toThrow(message);
  });

  it("refuses, in production, a database on another machine without TLS that checks its certificate", () => {
    const production = { ...credentials, NODE_ENV: "production" };
    expect(() => configFromEnv({ ...production, DATABASE_URL: "postgres://editorial@db.internal/editorial" })).toThrow(/^DATABASE_URL reaches db\.internal:5432 without TLS \(it has no sslmode\): in production, add sslmode=verify-full/);
    const verified = "postgres://editorial@db.internal/editorial?sslmode=verify-full&sslrootcert=/etc/tessera/tls/ca.crt";
    expect(configFromEnv({ ...production, DATABASE_URL: verified }).database.url).toBe(verified);
    expect(configFromEnv({ ...production, DATABASE_URL: "postgres://editorial@localhost/editorial" }).database.url).toBe("postgres://editorial@localhost/editorial");
    expect(configFromEnv({ ...credentials, DATABASE_URL: "postgres://editorial@db.internal/editorial" }).database.url).toBe("postgres://editorial@db.internal/editorial");
  });
});
