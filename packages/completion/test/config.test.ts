import { describe, expect, it } from "vitest";
import { ConfigError, readConfig, requireSignonClientId } from "../src/config.js";

describe("readConfig", () => {
  it("has documented defaults", () => {
    expect(readConfig({})).toEqual({
      databaseUrl: undefined,
      databaseReadUrls: [],
      databaseReadMaxLagMs: 5000,
      databaseReadTimeoutMs: 2000,
      databasePoolSize: null,
      databaseStatementTimeoutSeconds: 30,
      databaseMigrationLockTimeoutMs: 5000,
      databaseMigrationLockAttempts: 5,
      signonUrl: "http://127.0.0.1:3000",
      signonClientId: null,
      aggregatorTypes: ["course", "chapter", "sequential", "vertical"],
      rebuildStaleFromScratch: false,
      callerCacheSeconds: 30,
      callerStaleSeconds: 300,
      host: "127.0.0.1",
      port: 3001,
      staleWorkerIntervalMs: 1000,
      preparedStatements: true,
      metricsToken: null,
      trustProxy: false,
    });
  });

  it("reads every variable", () => {
    expect(
      readConfig({
        DATABASE_URL: "postgres://u@db:5432/tessera",
        DATABASE_READ_URL: "postgres://u@replica1:5432/tessera, postgres://u@replica2:5432/tessera",
        DATABASE_READ_MAX_LAG_MS: "2000",
        DATABASE_READ_TIMEOUT_MS: "1500",
        DATABASE_POOL_SIZE: "25",
        DATABASE_STATEMENT_TIMEOUT_SECONDS: "12",
        DATABASE_MIGRATION_LOCK_TIMEOUT_MS: "750",
        DATABASE_MIGRATION_LOCK_ATTEMPTS: "2",
        SIGNON_URL: "https://signon.example.com",
        COMPLETION_SIGNON_CLIENT_ID: "c0mpl3t10n",
        COMPLETION_AGGREGATOR_TYPES: "course, chapter,unit",
        COMPLETION_REBUILD_STALE_FROM_SCRATCH: "TRUE",
        COMPLETION_CALLER_CACHE_SECONDS: "60",
        COMPLETION_CALLER_STALE_SECONDS: "0",
        HOST: "0.0.0.0",
        PORT: "8080",
        COMPLETION_STALE_WORKER_INTERVAL_MS: "0",
        COMPLETION_METRICS_TOKEN: "0123456789abcdef",
        COMPLETION_TRUST_PROXY: "yes",
      }),
    ).toEqual({
      databaseUrl: "postgres://u@db:5432/tessera",
      databaseReadUrls: ["postgres://u@replica1:5432/tessera", "postgres://u@replica2:5432/tessera"],
      databaseReadMaxLagMs: 2000,
      databaseReadTimeoutMs: 1500,
      databasePoolSize: 25,
      databaseStatementTimeoutSeconds: 12,
      databaseMigrationLockTimeoutMs: 750,
      databaseMigrationLockAttempts: 2,
      signonUrl: "https://signon.example.com",
      signonClientId: "c0mpl3t10n",
      aggregatorTypes: ["course", "chapter", "unit"],
      rebuildStaleFromScratch: true,
      callerCacheSeconds: 60,
      callerStaleSeconds: 0,
      host: "0.0.0.0",
      port: 8080,
      staleWorkerIntervalMs: 0,
      preparedStatements: true,
      metricsToken: "0123456789abcdef",
      trustProxy: true,
    });
  });

  it("requires Completion's client id in Sign-on before the server may check tokens", () => {
    expect(() => requireSignonClientId(readConfig({}))).toThrow(/^COMPLETION_SIGNON_CLIENT_ID is required/);
    expect(requireSignonClientId(readConfig({ COMPLETION_SIGNON_CLIENT_ID: " c0mpl3t10n " }))).toBe("c0mpl3t10n");
    expect(() => readConfig({ COMPLETION_SIGNON_CLIENT_ID: "two words" })).toThrow(ConfigError);
  });

  it("runs prepared statements unless turned off", () => {
    expect(
      [{}, { COMPLETION_PREPARED_STATEMENTS: "true" }, { DATABASE_URL: "postgres://db/x", COMPLETION_PREPARED_STATEMENTS: "false" }].map(
        (env) => readConfig(env).preparedStatements,
      ),
    ).toEqual([true, true, false]);
  });

  it.each([
    [{ DATABASE_URL: "mysql://x" }, /DATABASE_URL must use postgres: or postgresql:/],
    [{ DATABASE_READ_URL: "postgres://replica/db mysql://x" }, /DATABASE_READ_URL must use postgres: or postgresql:/],
    [{ DATABASE_READ_MAX_LAG_MS: "-1" }, /DATABASE_READ_MAX_LAG_MS must be an integer from 0 to 3600000/],
    [{ DATABASE_READ_TIMEOUT_MS: "99" }, /DATABASE_READ_TIMEOUT_MS must be an integer from 100 to 3600000/],
    [{ SIGNON_URL: "not a url" }, /SIGNON_URL must be a URL/],
    [{ COMPLETION_AGGREGATOR_TYPES: "chapter" }, /must include course/],
    [{ COMPLETION_AGGREGATOR_TYPES: "course,mean" }, /"mean" is not a block type/],
    [{ COMPLETION_REBUILD_STALE_FROM_SCRATCH: "maybe" }, /COMPLETION_REBUILD_STALE_FROM_SCRATCH must be true or false/],
    [{ COMPLETION_TRUST_PROXY: "proxy" }, /COMPLETION_TRUST_PROXY must be true or false/],
    [{ DATABASE_POOL_SIZE: "0" }, /DATABASE_POOL_SIZE must be an integer from 1 to 1000/],
    [{ COMPLETION_CALLER_CACHE_SECONDS: "61" }, /COMPLETION_CALLER_CACHE_SECONDS must be an integer from 0 to 60/],
    [{ COMPLETION_CALLER_STALE_SECONDS: "3601" }, /COMPLETION_CALLER_STALE_SECONDS must be an integer from 0 to 3600/],
    [{ PORT: "http" }, /PORT must be an integer/],
    [{ COMPLETION_METRICS_TOKEN: "short" }, /COMPLETION_METRICS_TOKEN must be at least 16 characters/],
  ])("refuses %j", (env, message) => {
    expect(() => readConfig(env)).toThrow(ConfigError);
    expect(() => readConfig(env)).toThrow(message);
  });

  describe("the database's TLS with NODE_ENV=production", () => {
    const verified = "sslmode=verify-full&sslrootcert=/etc/tessera/tls/ca.crt";

    it("refuses a database on another machine without TLS that checks its certificate, in one sentence", () => {
      expect(() => readConfig({ NODE_ENV: "production", DATABASE_URL: "postgres://completion@db.internal:5432/completion?sslmode=disable" })).toThrow(
        new ConfigError(
          "DATABASE_URL reaches db.internal:5432 without TLS (sslmode=disable): in production, add sslmode=verify-full&sslrootcert=<the deployment's CA certificate> to it, " +
            "or reach a server on this machine through a Unix socket or a loopback address.",
        ),
      );
      expect(() => readConfig({ NODE_ENV: "production", DATABASE_URL: "postgres://completion@db.internal/completion" })).toThrow(/^DATABASE_URL reaches db\.internal:5432 without TLS \(it has no sslmode\)/);
      expect(() => readConfig({ NODE_ENV: "production", DATABASE_URL: `postgres://completion@db.internal/completion?${verified}`, DATABASE_READ_URL: "postgres://completion@db2.internal/completion?sslmode=no-verify" })).toThrow(
        /^DATABASE_READ_URL asks for sslmode=no-verify, which does not promise that the certificate of db2\.internal:5432 is checked/,
      );
    });

    it("allows verify-full, a database on this machine, and anything outside production", () => {
      expect(readConfig({ NODE_ENV: "production", DATABASE_URL: `postgres://completion@db.internal/completion?${verified}` }).databaseUrl).toBe(`postgres://completion@db.internal/completion?${verified}`);
      expect(readConfig({ NODE_ENV: "production", DATABASE_URL: "postgres://completion@127.0.0.1:5000/completion" }).databaseUrl).toBe("postgres://completion@127.0.0.1:5000/completion");
      expect(readConfig({ NODE_ENV: "production" }).databaseUrl).toBeUndefined();
      expect(readConfig({ NODE_ENV: "development", DATABASE_URL: "postgres://completion@db.internal/completion" }).databaseUrl).toBe("postgres://completion@db.internal/completion");
    });
  });
});
