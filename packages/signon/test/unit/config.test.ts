import { describe, expect, it } from "vitest";
import { consumerMailDomains } from "../../src/accounts/consumer-mail-domains.js";
import { ConfigError, loadConfig } from "../../src/config.js";

describe("loadConfig", () => {
  it("defaults to development on loopback HTTP with the embedded database", () => {
    expect(loadConfig({})).toEqual({
      mode: "development",
      host: "127.0.0.1",
      port: 3000,
      publicUrl: "http://localhost:3000",
      databaseUrl: null,
      databaseReadUrls: [],
      databaseReadMaxLagMs: 5000,
      databaseReadTimeoutMs: 2000,
      databasePoolSize: null,
      databaseStatementTimeoutSeconds: 30,
      databaseMigrationLockTimeoutMs: 5000,
      databaseMigrationLockAttempts: 5,
      dataDir: "./data",
      tls: null,
      trustProxy: false,
      sessionIdleSeconds: 1800,
      sessionMaxSeconds: 43_200,
      signingKeyRotationDays: 90,
      passwordHashing: { memoryCost: 19_456, timeCost: 2, parallelism: 1, importedPepper: null },
      preparedStatements: true,
      firstAdministratorHint: true,
      tokenAnswerCacheSize: 10_000,
      metricsToken: null,
      pushes: { deliver: true, concurrency: 64, requestTimeoutMs: 10_000, pollIntervalMs: 250, retryBaseMs: 5000, fanOut: "token" },
      mail: { smtpUrl: null, from: "Tessera Sign-on <signon@localhost>", printToConsole: true },
      secretKey: null,
      inactivityDays: 45,
      unusedInvitationDays: 90,
      upstreamTimeoutSeconds: 10,
      samlSigning: null,
      eventRetentionDays: 730,
      twoStepRequiredRoles: ["superadmin", "admin"],
      emailPolicy: { allowedDomains: [], blockedDomains: consumerMailDomains, allowNonAscii: false },
      supportContact: null,
      jobs: { firstRunMs: 60_000, intervalMs: 3_600_000, outageRetryMs: 60_000 },
      organisationRegister: { url: null, intervalMs: 86_400_000, pageTimeoutMs: 10_000, maxPages: 100, maxPageBytes: 2_097_152 },
    });
  });

  it("reads the database pool size, refusing one out of range", () => {
    expect(loadConfig({ DATABASE_URL: "postgres://db/signon", DATABASE_POOL_SIZE: "40" }).databasePoolSize).toBe(40);
    expect(() => loadConfig({ DATABASE_POOL_SIZE: "0" })).toThrow(/DATABASE_POOL_SIZE: expected 1 to 1000, got 0/);
    expect(() => loadConfig({ DATABASE_POOL_SIZE: "ten" })).toThrow(/DATABASE_POOL_SIZE: expected a whole number, got ten/);
  });

  it("reads the read replicas and how far behind one may be, refusing what is not a PostgreSQL URL", () => {
    const config = loadConfig({ DATABASE_READ_URL: "postgres://reader@db2:5432/signon,postgres://reader@db3:5432/signon", DATABASE_READ_MAX_LAG_MS: "1500" });
    expect(config.databaseReadTimeoutMs).toBe(2000);
    expect(loadConfig({ DATABASE_READ_TIMEOUT_MS: "750" }).databaseReadTimeoutMs).toBe(750);
    expect(() => loadConfig({ DATABASE_READ_TIMEOUT_MS: "50" })).toThrow(/DATABASE_READ_TIMEOUT_MS: expected 100 to 3600000, got 50/);
    expect(() => loadConfig({ DATABASE_READ_TIMEOUT_MS: "2s" })).toThrow(/DATABASE_READ_TIMEOUT_MS/);
    expect(config.databaseReadUrls).toEqual(["postgres://reader@db2:5432/signon", "postgres://reader@db3:5432/signon"]);
    expect(config.databaseReadMaxLagMs).toBe(1500);
    expect(() => loadConfig({ DATABASE_READ_URL: "mysql://db2/signon" })).toThrow(/DATABASE_READ_URL: must use postgres: or postgresql:, not mysql:/);
    expect(() => loadConfig({ DATABASE_READ_URL: "db2:5432" })).toThrow(/DATABASE_READ_URL/);
    expect(() => loadConfig({ DATABASE_READ_MAX_LAG_MS: "-5" })).toThrow(/DATABASE_READ_MAX_LAG_MS/);
  });

  it("reads the roles that must use 2-step verification, refusing one it does not know", () => {
    expect(loadConfig({ SIGNON_TWO_STEP_REQUIRED_ROLES: "normal, Superadmin,normal" }).twoStepRequiredRoles).toEqual(["superadmin", "normal"]);
    expect(loadConfig({ SIGNON_TWO_STEP_REQUIRED_ROLES: "none" }).twoStepRequiredRoles).toEqual([]);
    expect(() => loadConfig({ SIGNON_TWO_STEP_REQUIRED_ROLES: "admin,owner" })).toThrow(/SIGNON_TWO_STEP_REQUIRED_ROLES: expected roles from .* got owner$/);
    expect(() => loadConfig({ SIGNON_TWO_STEP_REQUIRED_ROLES: "admin," })).toThrow(/SIGNON_TWO_STEP_REQUIRED_ROLES: .* got an empty item$/);
  });

  it("reads the e-mail domain lists in lower-case ASCII, refusing what is not a domain", () => {
    expect(loadConfig({ SIGNON_EMAIL_DOMAINS_ALLOWED: " Example.ORG, *.gov.example,bücher.example,example.org", SIGNON_EMAIL_ALLOW_NON_ASCII: "true" }).emailPolicy).toEqual({
      allowedDomains: ["example.org", "gov.example", "xn--bcher-kva.example"],
      blockedDomains: consumerMailDomains,
      allowNonAscii: true,
    });
    expect(loadConfig({ SIGNON_EMAIL_DOMAINS_BLOCKED: "gmail.com,hotmail.com" }).emailPolicy.blockedDomains).toEqual(["gmail.com", "hotmail.com"]);
    expect(() => loadConfig({ SIGNON_EMAIL_DOMAINS_BLOCKED: "gmail.com,,x" })).toThrow(/SIGNON_EMAIL_DOMAINS_BLOCKED: expected domains .* got ""$/);
    expect(() => loadConfig({ SIGNON_EMAIL_DOMAINS_ALLOWED: "user@example.org" })).toThrow(/SIGNON_EMAIL_DOMAINS_ALLOWED: expected domains/);
  });

  it("blocks the built-in consumer mail services unless SIGNON_EMAIL_DOMAINS_BLOCKED says otherwise", () => {
    expect(consumerMailDomains).toEqual(expect.arrayContaining(["gmail.com", "googlemail.com", "outlook.com", "hotmail.com", "hotmail.co.uk", "live.com", "yahoo.com", "yahoo.co.uk", "icloud.com", "me.com", "aol.com", "proton.me", "protonmail.com", "gmx.com", "gmx.de", "gmx.net"]));
    // Unset: the built-in list, less what the allow list names itself.
    expect(loadConfig({}).emailPolicy.blockedDomains).toEqual(consumerMailDomains);
    expect(loadConfig({ SIGNON_EMAIL_DOMAINS_ALLOWED: "example.org,gmail.com" }).emailPolicy.blockedDomains).toEqual(consumerMailDomains.filter((domain) => domain !== "gmail.com"));
    // Set but empty, or none: nothing blocked.
    expect(loadConfig({ SIGNON_EMAIL_DOMAINS_BLOCKED: "" }).emailPolicy.blockedDomains).toEqual([]);
    expect(loadConfig({ SIGNON_EMAIL_DOMAINS_BLOCKED: "  " }).emailPolicy.blockedDomains).toEqual([]);
    expect(loadConfig({ SIGNON_EMAIL_DOMAINS_BLOCKED: "None" }).emailPolicy.blockedDomains).toEqual([]);
    // Set: that list, where `default` stands for the built-in one.
    expect(loadConfig({ SIGNON_EMAIL_DOMAINS_BLOCKED: "old.example.org" }).emailPolicy.blockedDomains).toEqual(["old.example.org"]);
    expect(loadConfig({ SIGNON_EMAIL_DOMAINS_BLOCKED: "old.example.org, Default" }).emailPolicy.blockedDomains).toEqual(["old.example.org", ...consumerMailDomains]);
  });

  it("reads the support contact, one line of at most 200 characters", () => {
    expect(loadConfig({ SIGNON_SUPPORT_CONTACT: " the service desk, help@example.org " }).supportContact).toBe("the service desk, help@example.org");
    expect(loadConfig({ SIGNON_SUPPORT_CONTACT: "" }).supportContact).toBeNull();
    expect(() => loadConfig({ SIGNON_SUPPORT_CONTACT: "line one\nline two" })).toThrow(/SIGNON_SUPPORT_CONTACT: expected one line of at most 200 characters/);
    expect(() => loadConfig({ SIGNON_SUPPORT_CONTACT: "x".repeat(201) })).toThrow(/SIGNON_SUPPORT_CONTACT/);
  });

  it("reads the hourly jobs' timing", () => {
    expect(loadConfig({ SIGNON_JOBS_FIRST_RUN_SECONDS: "1", SIGNON_JOBS_INTERVAL_SECONDS: "2", SIGNON_JOBS_OUTAGE_RETRY_SECONDS: "3" }).jobs).toEqual({
      firstRunMs: 1000,
      intervalMs: 2000,
      outageRetryMs: 3000,
    });
    expect(() => loadConfig({ SIGNON_JOBS_INTERVAL_SECONDS: "0" })).toThrow(/SIGNON_JOBS_INTERVAL_SECONDS: expected 1 to 86400, got 0/);
  });

  it("reads the statement timeout, refusing one out of range", () => {
    expect(loadConfig({ DATABASE_STATEMENT_TIMEOUT_SECONDS: "5" }).databaseStatementTimeoutSeconds).toBe(5);
    expect(() => loadConfig({ DATABASE_STATEMENT_TIMEOUT_SECONDS: "0" })).toThrow(/DATABASE_STATEMENT_TIMEOUT_SECONDS: expected 1 to 3600, got 0/);
  });

  it("prepares statements unless told not to (behind a pooler that cannot keep them)", () => {
    expect(loadConfig({ DATABASE_URL: "postgres://db/signon" }).preparedStatements).toBe(true);
    expect(loadConfig({}).preparedStatements).toBe(true);
    expect(loadConfig({ DATABASE_URL: "postgres://pooler/signon", SIGNON_PREPARED_STATEMENTS: "false" }).preparedStatements).toBe(false);
  });

  it("keeps access-token answers in memory unless told not to, and keeps none behind a pooler by default", () => {
    expect(loadConfig({}).tokenAnswerCacheSize).toBe(10_000);
    expect(loadConfig({ SIGNON_TOKEN_CACHE_SIZE: "0" }).tokenAnswerCacheSize).toBe(0);
    expect(loadConfig({ SIGNON_PREPARED_STATEMENTS: "false" }).tokenAnswerCacheSize).toBe(0);
    expect(() => loadConfig({ SIGNON_TOKEN_CACHE_SIZE: "-1" })).toThrow(/SIGNON_TOKEN_CACHE_SIZE/);
  });

  it("reads the metrics token, refusing a short one", () => {
    expect(loadConfig({ SIGNON_METRICS_TOKEN: "0123456789abcdef" }).metricsToken).toBe("0123456789abcdef");
    expect(() => loadConfig({ SIGNON_METRICS_TOKEN: "short" })).toThrow(/SIGNON_METRICS_TOKEN: expected at least 16 characters/);
  });

  it("refuses a non-loopback host in development", () => {
    expect(() => loadConfig({ SIGNON_HOST: "0.0.0.0" })).toThrow(/SIGNON_HOST: development mode listens on a loopback address only/);
  });

  it("refuses to start in production without TLS or a trusted proxy", () => {
    expect(() => loadConfig({ NODE_ENV: "production", SIGNON_PUBLIC_URL: "https://signon.example" })).toThrow(ConfigError);
    expect(() => loadConfig({ NODE_ENV: "production", SIGNON_PUBLIC_URL: "https://signon.example" })).toThrow(/SIGNON_TLS_CERT: production mode needs TLS/);
  });

  it("starts in production behind a trusted proxy with an https public URL", () => {
    const config = loadConfig({
      NODE_ENV: "production",
      SIGNON_HOST: "0.0.0.0",
      SIGNON_TRUST_PROXY: "true",
      SIGNON_PUBLIC_URL: "https://signon.example/",
      DATABASE_URL: "postgres://db/signon?sslmode=verify-full&sslrootcert=/etc/tessera/tls/ca.crt",
      SIGNON_SECRET_KEY: "ab".repeat(32),
    });
    expect(config).toMatchObject({ mode: "production", trustProxy: true, publicUrl: "https://signon.example", databaseUrl: "postgres://db/signon?sslmode=verify-full&sslrootcert=/etc/tessera/tls/ca.crt" });
    expect(config.secretKey).toEqual(Buffer.alloc(32, 0xab));
  });

  describe("the database's TLS in production", () => {
    const production = { NODE_ENV: "production", SIGNON_TRUST_PROXY: "true", SIGNON_PUBLIC_URL: "https://signon.example", SIGNON_SECRET_KEY: "ab".repeat(32) };
    const verified = "sslmode=verify-full&sslrootcert=/etc/tessera/tls/ca.crt";

    it("refuses a database on another machine without TLS that checks its certificate, for the server and the command line", () => {
      for (const purpose of ["server", "cli"] as const) {
        expect(() => loadConfig({ ...production, DATABASE_URL: "postgres://signon@db.internal:5432/signon" }, purpose)).toThrow(
          new ConfigError(
            "DATABASE_URL",
            "reaches db.internal:5432 without TLS (it has no sslmode): in production, add sslmode=verify-full&sslrootcert=<the deployment's CA certificate> to it, " +
              "or reach a server on this machine through a Unix socket or a loopback address",
          ),
        );
      }
      expect(() => loadConfig({ ...production, DATABASE_URL: "postgres://signon@db.internal:5432/signon?sslmode=disable" })).toThrow(/^DATABASE_URL: reaches db\.internal:5432 without TLS \(sslmode=disable\)/);
      expect(() => loadConfig({ ...production, DATABASE_URL: "postgres://signon@db.internal:5432/signon?sslmode=require" })).toThrow(/^DATABASE_URL: asks for sslmode=require, which does not promise/);
      expect(() => loadConfig({ ...production, DATABASE_URL: `postgres://signon@db.internal/signon?${verified}`, DATABASE_READ_URL: "postgres://signon@db2.internal/signon" })).toThrow(
        /^DATABASE_READ_URL: reaches db2\.internal:5432 without TLS/,
      );
    });

    it("allows verify-full, and a database on this machine without TLS", () => {
      for (const url of [`postgres://signon@db.internal/signon?${verified}`, "postgres://signon@127.0.0.1:5000/signon", "postgres://postgres@localhost:5432/tessera?host=%2Fsrv%2Fdata"]) {
        expect(loadConfig({ ...production, DATABASE_URL: url, DATABASE_READ_URL: `postgres://signon@db2.internal/signon?${verified}` }).databaseUrl).toBe(url);
      }
      expect(loadConfig(production).databaseUrl).toBeNull();
    });

    it("leaves development alone", () => {
      expect(loadConfig({ DATABASE_URL: "postgres://signon@db.internal:5432/signon" }).databaseUrl).toBe("postgres://signon@db.internal:5432/signon");
    });
  });

  it("requires a secret key of 32 bytes in hex in production", () => {
    const production = { NODE_ENV: "production", SIGNON_TRUST_PROXY: "true", SIGNON_PUBLIC_URL: "https://signon.example" };
    expect(() => loadConfig(production)).toThrow(/SIGNON_SECRET_KEY: required in production/);
    expect(() => loadConfig({ ...production, SIGNON_SECRET_KEY: "short" })).toThrow(/SIGNON_SECRET_KEY: expected 64 hex digits/);
  });

  it("keeps mail in the development mailbox unless an SMTP URL is set", () => {
    expect(loadConfig({}).mail).toEqual({ smtpUrl: null, from: "Tessera Sign-on <signon@localhost>", printToConsole: true });
    expect(loadConfig({ SIGNON_SMTP_URL: "smtp://mail.example:587" }).mail.smtpUrl).toBe("smtp://mail.example:587");
    expect(() => loadConfig({ SIGNON_SMTP_URL: "http://mail.example" })).toThrow(/SIGNON_SMTP_URL: must be an smtp/);
  });

  it("requires an https public URL in production", () => {
    expect(() => loadConfig({ NODE_ENV: "production", SIGNON_TRUST_PROXY: "true" })).toThrow(/SIGNON_PUBLIC_URL: required/);
    expect(() =>
      loadConfig({ NODE_ENV: "production", SIGNON_TRUST_PROXY: "true", SIGNON_PUBLIC_URL: "http://signon.example" }),
    ).toThrow(/SIGNON_PUBLIC_URL: must be https/);
  });

  it("wants both TLS files or neither", () => {
    expect(() => loadConfig({ SIGNON_TLS_CERT: "cert.pem" })).toThrow(/SIGNON_TLS_KEY: set both/);
  });

  it.each([
    ["SIGNON_PORT", "http", /SIGNON_PORT: expected a whole number/],
    ["SIGNON_PORT", "70000", /SIGNON_PORT: expected 0 to 65535/],
    ["SIGNON_TRUST_PROXY", "maybe", /SIGNON_TRUST_PROXY: expected true or false/],
    ["NODE_ENV", "staging", /NODE_ENV: expected production, development or test/],
    ["SIGNON_PUBLIC_URL", "not a url", /SIGNON_PUBLIC_URL: not an absolute URL/],
  ])("names %s when its value %j is wrong", (variable, value, message) => {
    expect(() => loadConfig({ [variable]: value })).toThrow(message);
  });

  it("reads lowered argon2 costs for tests", () => {
    expect(loadConfig({ SIGNON_ARGON2_MEMORY_KIB: "64", SIGNON_ARGON2_TIME_COST: "1" }).passwordHashing).toEqual({
      memoryCost: 64,
      timeCost: 1,
      parallelism: 1,
      importedPepper: null,
    });
  });

  it("reads the pepper of the password hashes imported from GOV.UK Signon", () => {
    expect(loadConfig({ SIGNON_IMPORTED_PASSWORD_PEPPER: "the pepper" }).passwordHashing.importedPepper).toBe("the pepper");
  });
});
