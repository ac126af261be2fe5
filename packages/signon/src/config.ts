import { X509Certificate, createPrivateKey } from "node:crypto";
import { readFileSync } from "node:fs";
import { DEFAULT_MIGRATION_LOCK_ATTEMPTS, DEFAULT_MIGRATION_LOCK_TIMEOUT_MS, DEFAULT_READ_MAX_LAG_MS, DEFAULT_READ_TIMEOUT_MS, parseReadUrls, productionTlsProblem } from "@tessera/db";
import { isIP } from "node:net";
import { domainToASCII } from "node:url";
import { consumerMailDomains } from "./accounts/consumer-mail-domains.js";
import { defaultPasswordHashingCost, type PasswordHashingCost } from "./accounts/password.js";
import type { PushFanOut } from "./repositories/push-deliveries.js";

/** Everything Sign-on needs to know at start-up, read once from the environment. */
export interface SignonConfig {
  /** `production` enforces HTTPS (S16); `development` listens on loopback HTTP only. */
  mode: "development" | "production";
  host: string;
  port: number;
  /** The origin clients use to reach the service; the OAuth issuer. No trailing slash. */
  publicUrl: string;
  /** PostgreSQL connection string, or `null` to use the embedded database in `dataDir`. */
  databaseUrl: string | null;
  /** `DATABASE_READ_URL`: replicas for the administrator lists, `users.csv` and the usage pages; empty: the primary serves them. */
  databaseReadUrls: string[];
  /** A replica further behind the primary than this many milliseconds is skipped. */
  databaseReadMaxLagMs: number;
  /** A read on a replica without a connection, or without an answer, after this many milliseconds skips it for the primary. */
  databaseReadTimeoutMs: number;
  /** Most database connections this process opens; `null`: the pool's default (10 on PostgreSQL, 4 embedded). */
  databasePoolSize: number | null;
  /** A database statement without an answer after this many seconds fails as "database unavailable" (its connection is given up). */
  databaseStatementTimeoutSeconds: number;
  /** How long a migration's statement may wait for a lock before its transaction is rolled back and tried again. */
  databaseMigrationLockTimeoutMs: number;
  /** How many times a migration that met the lock timeout is tried before the start (or `signon migrate`) fails. */
  databaseMigrationLockAttempts: number;
  dataDir: string;
  /** Certificate and key files to serve HTTPS directly, or `null`. */
  tls: { certFile: string; keyFile: string } | null;
  /** Whether a reverse proxy in front sets `X-Forwarded-Proto` and `X-Forwarded-For`. */
  trustProxy: boolean;
  /** A session ends after this many seconds without a request. */
  sessionIdleSeconds: number;
  /** A session ends this many seconds after sign-in, however active. */
  sessionMaxSeconds: number;
  passwordHashing: PasswordHashingCost;
  /** Whether hot-path queries run as named prepared statements. */
  preparedStatements: boolean;
  /** Whether a start with no accounts logs how to create the first administrator (`npm start` creates one itself). */
  firstAdministratorHint: boolean;
  /** Most access-token answers this process keeps in memory (`/user.json`, introspection, userinfo); 0 keeps none. */
  tokenAnswerCacheSize: number;
  /** Bearer token that `GET /metrics` requires, or `null` to leave it open to whoever reaches the port. */
  metricsToken: string | null;
  /** The push delivery worker (S13, S14) run by the server process. */
  pushes: {
    /** Whether this process delivers pushes; changes queue them either way. */
    deliver: boolean;
    /** Most pushes in flight at once. */
    concurrency: number;
    /** A push request that has not answered after this long is a failed attempt. */
    requestTimeoutMs: number;
    /** How often an idle worker looks for due pushes. */
    pollIntervalMs: number;
    /** The first retry waits about this long; each later one twice as long, up to an hour. */
    retryBaseMs: number;
    /** Which applications hear of a person's details, suspension and sign-out (a permission change goes to its own). */
    fanOut: PushFanOut;
  };
  /** Outgoing e-mail (invitations, password resets). */
  mail: {
    /** `smtp://` or `smtps://` URL of the mail server; `null` keeps mails in the development mailbox (`/dev/mail`). */
    smtpUrl: string | null;
    /** The From address. */
    from: string;
    /** Whether mails kept in the development mailbox are also printed to the console. */
    printToConsole: boolean;
  };
  /**
   * 32-byte key that encrypts authenticator secrets at rest (AES-256-GCM), or
   * `null` in development, where a key file in the data directory is used.
   */
  secretKey: Buffer | null;
  /** People who have not signed in for this many days are suspended by the inactivity job. */
  inactivityDays: number;
  /**
   * Sign-on's SAML signing key and certificate (PEM files): with them, requests to organisations' SAML identity
   * providers are signed, and the service provider metadata carries the certificate.
   */
  samlSigning: { certFile: string; keyFile: string } | null;
  /** How long Sign-on waits for an organisation's identity provider (discovery, token, keys) before it shows that the provider did not answer. */
  upstreamTimeoutSeconds: number;
  /** Accounts invited this many days ago (latest invitation) that never chose a password nor signed in are deleted by the hourly job. */
  unusedInvitationDays: number;
  /** Audit events older than this many days are deleted by the hourly job. */
  eventRetentionDays: number;
  /** OpenID Connect signing keys older than this many days are replaced by the hourly job. */
  signingKeyRotationDays: number;
  /** Roles whose holders must use 2-step verification (no exemption lifts it); empty: none. */
  twoStepRequiredRoles: readonly SignonRole[];
  /** Which e-mail addresses new users and e-mail changes may have (see `accounts/email-policy.ts`). */
  emailPolicy: EmailPolicy;
  /**
   * Whom people can contact about their account besides its administrators
   * (`SIGNON_SUPPORT_CONTACT`, one line), named in the mails that tell a
   * suspended person or one whose invitation expired whom to ask; `null`: none.
   */
  supportContact: string | null;
  /** The hourly jobs (inactivity, expired records): first run after start, then every, and the retry during a database outage, in milliseconds. */
  jobs: { firstRunMs: number; intervalMs: number; outageRetryMs: number };
  /** The organisation register fetched on a schedule (`accounts/organisation-register/`). */
  organisationRegister: OrganisationRegisterConfig;
}

/** Where and how often organisations are fetched from a register, and the bounds of one fetch. */
export interface OrganisationRegisterConfig {
  /** The address of the feed's first page, or `null`: organisations come from no register. */
  url: string | null;
  /** A fetch is due this long after the last one that succeeded. */
  intervalMs: number;
  /** A page without its whole answer after this long fails the fetch. */
  pageTimeoutMs: number;
  /** A feed of more pages than this fails. */
  maxPages: number;
  /** A page of more bytes than this fails the fetch. */
  maxPageBytes: number;
}

/**
 * E-mail domains allowed and blocked for new users and e-mail changes, in
 * lower case and ASCII (IDN domains in their `xn--` form). An entry covers the
 * domain and every subdomain of it. Empty `allowed`: every domain not blocked.
 * `blocked` holds the built-in consumer mail services unless configured.
 */
export interface EmailPolicy {
  allowedDomains: readonly string[];
  blockedDomains: readonly string[];
  /** Whether addresses with characters outside ASCII are accepted (an internationalised domain written in its `xn--` form is ASCII). */
  allowNonAscii: boolean;
}

/** The roles of people (S18), as `SIGNON_TWO_STEP_REQUIRED_ROLES` names them. */
export type SignonRole = "superadmin" | "admin" | "super_organisation_admin" | "organisation_admin" | "normal";
const signonRoles: readonly SignonRole[] = ["superadmin", "admin", "super_organisation_admin", "organisation_admin", "normal"];

/** A variable that stops start-up, and why. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    reason: string,
  ) {
    super(`${variable}: ${reason}`);
    this.name = "ConfigError";
  }
}

const loopbackHosts = new Set(["127.0.0.1", "::1", "localhost"]);

/** `DATABASE_READ_URL`'s addresses, each a PostgreSQL URL. */
function readReplicaUrls(env: Record<string, string | undefined>): string[] {
  const urls = parseReadUrls(env.DATABASE_READ_URL);
  for (const text of urls) {
    let protocol: string;
    try {
      protocol = new URL(text).protocol;
    } catch {
      throw new ConfigError("DATABASE_READ_URL", `not a URL: ${text.replace(/\/\/[^@/]*@/, "//…@")}`);
    }
    if (protocol !== "postgres:" && protocol !== "postgresql:") throw new ConfigError("DATABASE_READ_URL", `must use postgres: or postgresql:, not ${protocol}`);
  }
  return urls;
}

/**
 * Production sends tokens, sessions and e-mail addresses to the database: to
 * a server on another machine only over TLS that checks its certificate.
 */
function requireDatabaseTls(databaseUrl: string | null, readUrls: readonly string[]): void {
  const problem = databaseUrl === null ? null : productionTlsProblem(databaseUrl);
  if (problem !== null) throw new ConfigError("DATABASE_URL", problem);
  for (const url of readUrls) {
    const readProblem = productionTlsProblem(url);
    if (readProblem !== null) throw new ConfigError("DATABASE_READ_URL", readProblem);
  }
}

/**
 * Reads and validates the configuration. Documented variables (defaults in brackets):
 *
 * - `NODE_ENV` [development]: `production` turns on the HTTPS rules of S16.
 * - `SIGNON_HOST` [127.0.0.1], `SIGNON_PORT` [3000]: where to listen. Development refuses a non-loopback host.
 * - `SIGNON_PUBLIC_URL` [http://localhost:PORT in development; required in production, https]
 * - `DATABASE_URL` [unset: embedded database in `SIGNON_DATA_DIR`, default ./data]. libpq's `sslmode`, `sslrootcert`,
 *   `sslcert` and `sslkey` in it are used as node-postgres reads them. In production, a server on another machine
 *   must be reached with `sslmode=verify-full` (or `verify-ca`); a Unix socket or a loopback address needs no TLS.
 * - `DATABASE_READ_URL` [unset]: one or more replicas (separated by spaces or commas) for the reads that
 *   tolerate a little lag: the administrator lists, `users.csv` and the usage pages; TLS as for `DATABASE_URL`. `DATABASE_READ_MAX_LAG_MS`
 *   [5000]: a replica further behind is skipped. `DATABASE_READ_TIMEOUT_MS` [2000, 100–3,600,000]: a read on a replica
 *   that has no connection, or no answer, after this long is answered by the primary, and the replica is skipped
 *   until its next check answers.
 * - `DATABASE_POOL_SIZE` [10]: most connections this process opens (and as many again to each replica).
 * - `DATABASE_STATEMENT_TIMEOUT_SECONDS` [30]: a statement without an answer after this long fails (503), and its connection is dropped.
 * - `DATABASE_MIGRATION_LOCK_TIMEOUT_MS` [5000, 100–600,000] and `DATABASE_MIGRATION_LOCK_ATTEMPTS` [5, 1–100]: a
 *   migration waits this long for a lock, and is tried this many times, before it fails.
 * - `SIGNON_TLS_CERT`, `SIGNON_TLS_KEY`: PEM files; both or neither.
 * - `SIGNON_TRUST_PROXY` [false]: `true` when a reverse proxy terminates TLS.
 * - `SIGNON_SESSION_IDLE_MINUTES` [30], `SIGNON_SESSION_MAX_HOURS` [12]
 * - `SIGNON_ARGON2_MEMORY_KIB` [19456], `SIGNON_ARGON2_TIME_COST` [2]
 * - `SIGNON_IMPORTED_PASSWORD_PEPPER`: GOV.UK Signon's `DEVISE_PEPPER`, for the password hashes imported from it
 *   (replaced with Sign-on's own at each person's next sign-in); without it, those passwords do not match.
 * - `SIGNON_PREPARED_STATEMENTS` [true]:
 *   `false` behind a connection pooler that cannot keep prepared statements.
 * - `SIGNON_TOKEN_CACHE_SIZE` [10000; 0 when `SIGNON_PREPARED_STATEMENTS=false`]: most access-token answers kept in memory,
 *   forgotten whenever the database notifies a change that could alter them; 0 keeps none (needs `LISTEN`, which a
 *   pooler in transaction mode does not pass on).
 * - `SIGNON_METRICS_TOKEN` [unset: `/metrics` open]: at least 16 characters; `/metrics` then requires `Authorization: Bearer <token>`.
 * - `SIGNON_PUSH_DELIVERY` [true]: `false` stops this process delivering pushes (they still queue).
 * - `SIGNON_PUSH_CONCURRENCY` [64], `SIGNON_PUSH_TIMEOUT_SECONDS` [10], `SIGNON_PUSH_POLL_MS` [250],
 *   `SIGNON_PUSH_RETRY_BASE_MS` [5000]
 * - `SIGNON_PUSH_FAN_OUT` [token]: which applications hear of a person's details, suspension and sign-out: `token`,
 *   those that have issued them a token; `token-or-permission`, also those where they hold a permission.
 * - `SIGNON_SMTP_URL` [unset: development mailbox at /dev/mail], `SIGNON_MAIL_FROM` [Tessera Sign-on <signon@localhost>],
 *   `SIGNON_MAIL_PRINT` [true in development]
 * - `SIGNON_SECRET_KEY` [required in production; development uses `<data dir>/secret-key`]: 64 hex digits.
 * - `SIGNON_INACTIVITY_DAYS` [45]
 * - `SIGNON_UNUSED_INVITATION_DAYS` [90]: never-used invitations are deleted after this many days.
 * - `SIGNON_EVENT_RETENTION_DAYS` [730]: audit events older than this are deleted.
 * - `SIGNON_SIGNING_KEY_ROTATION_DAYS` [90]: OpenID Connect signing keys older than this are replaced.
 * - `SIGNON_TWO_STEP_REQUIRED_ROLES` [superadmin,admin]: comma-separated roles that must use 2-step verification, or `none`.
 * - `SIGNON_EMAIL_DOMAINS_ALLOWED` [unset: any], `SIGNON_EMAIL_DOMAINS_BLOCKED` [unset: the built-in consumer mail services
 *   of `accounts/consumer-mail-domains.ts`, less those the allow list names; empty or `none`: none; the item `default`
 *   stands for the built-in list]: comma-separated domains; an entry covers the domain and its subdomains, the block list
 *   wins. `SIGNON_EMAIL_ALLOW_NON_ASCII` [false].
 * - `SIGNON_SUPPORT_CONTACT` [unset]: one line (at most 200 characters) naming whom people can contact about their
 *   account, in the mails to a suspended person or one whose invitation expired.
 * - `SIGNON_JOBS_FIRST_RUN_SECONDS` [60], `SIGNON_JOBS_INTERVAL_SECONDS` [3600], `SIGNON_JOBS_OUTAGE_RETRY_SECONDS` [60]:
 *   when the hourly jobs first run after start, how often after that, and how soon they try again after failing for want of the database.
 * - `SIGNON_ORGANISATION_REGISTER_URL` [unset: no register]: the first page of an organisation register's feed, https
 *   (http on a loopback host in development only), without credentials. `SIGNON_ORGANISATION_REGISTER_INTERVAL_MINUTES`
 *   [1440]: how long after a fetch that succeeded the next is due. `SIGNON_ORGANISATION_REGISTER_TIMEOUT_SECONDS` [10],
 *   `SIGNON_ORGANISATION_REGISTER_MAX_PAGES` [100], `SIGNON_ORGANISATION_REGISTER_MAX_PAGE_KIB` [2048]: a page without
 *   its whole answer after this long, more pages than this, or a page larger than this fails the fetch, which then changes nothing.
 *
 * The CLI (`purpose: "cli"`) reads the same variables but does not listen, so
 * the listening and HTTPS rules do not apply to it; the database's TLS rule does.
 *
 * @throws ConfigError naming the variable at fault.
 */
export function loadConfig(
  env: Record<string, string | undefined> = process.env,
  purpose: "server" | "cli" = "server",
): SignonConfig {
  const mode = readMode(env);
  const port = readInteger(env, "SIGNON_PORT", 3000, { min: 0, max: 65_535 });
  const host = env.SIGNON_HOST?.trim() || "127.0.0.1";
  const certFile = env.SIGNON_TLS_CERT?.trim() || null;
  const keyFile = env.SIGNON_TLS_KEY?.trim() || null;
  if ((certFile === null) !== (keyFile === null)) {
    throw new ConfigError(certFile ? "SIGNON_TLS_KEY" : "SIGNON_TLS_CERT", "set both SIGNON_TLS_CERT and SIGNON_TLS_KEY, or neither");
  }
  const tls = certFile && keyFile ? { certFile, keyFile } : null;
  const trustProxy = readBoolean(env, "SIGNON_TRUST_PROXY", false);

  if (purpose === "server" && mode === "development" && !loopbackHosts.has(host)) {
    throw new ConfigError("SIGNON_HOST", `development mode listens on a loopback address only, not ${host}; set NODE_ENV=production to serve other hosts`);
  }
  if (purpose === "server" && mode === "production" && tls === null && !trustProxy) {
    throw new ConfigError("SIGNON_TLS_CERT", "production mode needs TLS: set SIGNON_TLS_CERT and SIGNON_TLS_KEY, or SIGNON_TRUST_PROXY=true behind a proxy that terminates TLS");
  }
  if (host !== "localhost" && isIP(host) === 0 && host !== "0.0.0.0") {
    throw new ConfigError("SIGNON_HOST", `not an IP address: ${host}`);
  }

  const publicUrl = readPublicUrl(env, purpose === "server" ? mode : "development", port);
  const databaseUrl = env.DATABASE_URL?.trim() || null;
  const databaseReadUrls = readReplicaUrls(env);
  if (mode === "production") requireDatabaseTls(databaseUrl, databaseReadUrls);
  const preparedStatements = readBoolean(env, "SIGNON_PREPARED_STATEMENTS", true);
  const smtpUrl = readSmtpUrl(env);
  const secretKey = readSecretKey(env);
  if (purpose === "server" && mode === "production" && secretKey === null) {
    throw new ConfigError("SIGNON_SECRET_KEY", "required in production: 64 hex digits (for example from `openssl rand -hex 32`)");
  }
  return {
    mode,
    host,
    port,
    publicUrl,
    databaseUrl,
    databaseReadUrls,
    databaseReadMaxLagMs: readInteger(env, "DATABASE_READ_MAX_LAG_MS", DEFAULT_READ_MAX_LAG_MS, { min: 0, max: 3_600_000 }),
    databaseReadTimeoutMs: readInteger(env, "DATABASE_READ_TIMEOUT_MS", DEFAULT_READ_TIMEOUT_MS, { min: 100, max: 3_600_000 }),
    databasePoolSize: env.DATABASE_POOL_SIZE?.trim() ? readInteger(env, "DATABASE_POOL_SIZE", 10, { min: 1, max: 1000 }) : null,
    databaseStatementTimeoutSeconds: readInteger(env, "DATABASE_STATEMENT_TIMEOUT_SECONDS", 30, { min: 1, max: 3600 }),
    databaseMigrationLockTimeoutMs: readInteger(env, "DATABASE_MIGRATION_LOCK_TIMEOUT_MS", DEFAULT_MIGRATION_LOCK_TIMEOUT_MS, { min: 100, max: 600_000 }),
    databaseMigrationLockAttempts: readInteger(env, "DATABASE_MIGRATION_LOCK_ATTEMPTS", DEFAULT_MIGRATION_LOCK_ATTEMPTS, { min: 1, max: 100 }),
    dataDir: env.SIGNON_DATA_DIR?.trim() || "./data",
    tls,
    trustProxy,
    sessionIdleSeconds: readInteger(env, "SIGNON_SESSION_IDLE_MINUTES", 30, { min: 1, max: 24 * 60 }) * 60,
    sessionMaxSeconds: readInteger(env, "SIGNON_SESSION_MAX_HOURS", 12, { min: 1, max: 24 * 30 }) * 3600,
    passwordHashing: {
      memoryCost: readInteger(env, "SIGNON_ARGON2_MEMORY_KIB", defaultPasswordHashingCost.memoryCost, { min: 8, max: 4_194_304 }),
      timeCost: readInteger(env, "SIGNON_ARGON2_TIME_COST", defaultPasswordHashingCost.timeCost, { min: 1, max: 100 }),
      parallelism: defaultPasswordHashingCost.parallelism,
      importedPepper: env.SIGNON_IMPORTED_PASSWORD_PEPPER || null,
    },
    preparedStatements,
    firstAdministratorHint: readBoolean(env, "SIGNON_FIRST_ADMINISTRATOR_HINT", true),
    tokenAnswerCacheSize: readInteger(env, "SIGNON_TOKEN_CACHE_SIZE", preparedStatements ? 10_000 : 0, { min: 0, max: 10_000_000 }),
    metricsToken: readMetricsToken(env),
    pushes: {
      deliver: readBoolean(env, "SIGNON_PUSH_DELIVERY", true),
      concurrency: readInteger(env, "SIGNON_PUSH_CONCURRENCY", 64, { min: 1, max: 1000 }),
      requestTimeoutMs: readInteger(env, "SIGNON_PUSH_TIMEOUT_SECONDS", 10, { min: 1, max: 300 }) * 1000,
      pollIntervalMs: readInteger(env, "SIGNON_PUSH_POLL_MS", 250, { min: 10, max: 60_000 }),
      retryBaseMs: readInteger(env, "SIGNON_PUSH_RETRY_BASE_MS", 5000, { min: 10, max: 3_600_000 }),
      fanOut: readPushFanOut(env),
    },
    mail: {
      smtpUrl,
      from: env.SIGNON_MAIL_FROM?.trim() || "Tessera Sign-on <signon@localhost>",
      printToConsole: readBoolean(env, "SIGNON_MAIL_PRINT", mode === "development"),
    },
    secretKey,
    inactivityDays: readInteger(env, "SIGNON_INACTIVITY_DAYS", 45, { min: 1, max: 3650 }),
    upstreamTimeoutSeconds: readInteger(env, "SIGNON_UPSTREAM_TIMEOUT_SECONDS", 10, { min: 1, max: 60 }),
    samlSigning: readSamlSigning(env, purpose),
    unusedInvitationDays: readInteger(env, "SIGNON_UNUSED_INVITATION_DAYS", 90, { min: 1, max: 3650 }),
    eventRetentionDays: readInteger(env, "SIGNON_EVENT_RETENTION_DAYS", 730, { min: 30, max: 36_500 }),
    signingKeyRotationDays: readInteger(env, "SIGNON_SIGNING_KEY_ROTATION_DAYS", 90, { min: 1, max: 3650 }),
    twoStepRequiredRoles: readTwoStepRequiredRoles(env),
    emailPolicy: readEmailPolicy(env),
    supportContact: readSupportContact(env),
    jobs: {
      firstRunMs: readInteger(env, "SIGNON_JOBS_FIRST_RUN_SECONDS", 60, { min: 1, max: 86_400 }) * 1000,
      intervalMs: readInteger(env, "SIGNON_JOBS_INTERVAL_SECONDS", 3600, { min: 1, max: 86_400 }) * 1000,
      outageRetryMs: readInteger(env, "SIGNON_JOBS_OUTAGE_RETRY_SECONDS", 60, { min: 1, max: 3600 }) * 1000,
    },
    organisationRegister: {
      url: readOrganisationRegisterUrl(env, mode),
      intervalMs: readInteger(env, "SIGNON_ORGANISATION_REGISTER_INTERVAL_MINUTES", 1440, { min: 1, max: 44_640 }) * 60_000,
      pageTimeoutMs: readInteger(env, "SIGNON_ORGANISATION_REGISTER_TIMEOUT_SECONDS", 10, { min: 1, max: 300 }) * 1000,
      maxPages: readInteger(env, "SIGNON_ORGANISATION_REGISTER_MAX_PAGES", 100, { min: 1, max: 10_000 }),
      maxPageBytes: readInteger(env, "SIGNON_ORGANISATION_REGISTER_MAX_PAGE_KIB", 2048, { min: 1, max: 102_400 }) * 1024,
    },
  };
}

/**
 * `SIGNON_ORGANISATION_REGISTER_URL`: an absolute https URL without
 * credentials or fragment; http only on a loopback host in development, as
 * for push URLs. Unset or empty: `null`.
 */
function readOrganisationRegisterUrl(env: Record<string, string | undefined>, mode: SignonConfig["mode"]): string | null {
  const name = "SIGNON_ORGANISATION_REGISTER_URL";
  const raw = env[name]?.trim();
  if (!raw) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, "not an absolute URL");
  }
  if (url.username || url.password) throw new ConfigError(name, "must not carry credentials (they would be written wherever the address is)");
  if (url.hash) throw new ConfigError(name, "must not have a fragment");
  if (url.protocol === "https:") return url.href;
  if (url.protocol === "http:" && loopbackHosts.has(url.hostname.replace(/^\[|\]$/g, ""))) {
    if (mode === "development") return url.href;
    throw new ConfigError(name, "must use https in production (http on a loopback host is allowed in development only)");
  }
  throw new ConfigError(name, "must use https");
}

function readEmailPolicy(env: Record<string, string | undefined>): EmailPolicy {
  const allowedDomains = readDomains(env, "SIGNON_EMAIL_DOMAINS_ALLOWED");
  return { allowedDomains, blockedDomains: readBlockedDomains(env, allowedDomains), allowNonAscii: readBoolean(env, "SIGNON_EMAIL_ALLOW_NON_ASCII", false) };
}

function readSupportContact(env: Record<string, string | undefined>): string | null {
  const raw = env.SIGNON_SUPPORT_CONTACT?.trim();
  if (!raw) return null;
  // eslint-disable-next-line no-control-regex -- a line break or other control character would break the mails' layout
  if (raw.length > 200 || /[\x00-\x1f\x7f]/.test(raw)) throw new ConfigError("SIGNON_SUPPORT_CONTACT", "expected one line of at most 200 characters");
  return raw;
}

function readPushFanOut(env: Record<string, string | undefined>): PushFanOut {
  const value = env.SIGNON_PUSH_FAN_OUT?.trim() || "token";
  if (value === "token" || value === "token-or-permission") return value;
  throw new ConfigError("SIGNON_PUSH_FAN_OUT", `must be token or token-or-permission, not ${JSON.stringify(value.slice(0, 40))}`);
}

function readSmtpUrl(env: Record<string, string | undefined>): string | null {
  const raw = env.SIGNON_SMTP_URL?.trim();
  if (!raw) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError("SIGNON_SMTP_URL", "not an absolute URL");
  }
  if (url.protocol !== "smtp:" && url.protocol !== "smtps:") throw new ConfigError("SIGNON_SMTP_URL", "must be an smtp:// or smtps:// URL");
  return raw;
}

function readSamlSigning(env: Record<string, string | undefined>, purpose: "server" | "cli"): SignonConfig["samlSigning"] {
  const certFile = env.SIGNON_SAML_SIGNING_CERT?.trim() || null;
  const keyFile = env.SIGNON_SAML_SIGNING_KEY?.trim() || null;
  if ((certFile === null) !== (keyFile === null)) {
    throw new ConfigError(certFile ? "SIGNON_SAML_SIGNING_KEY" : "SIGNON_SAML_SIGNING_CERT", "set both SIGNON_SAML_SIGNING_CERT and SIGNON_SAML_SIGNING_KEY, or neither");
  }
  if (certFile === null || keyFile === null) return null;
  // The server reads them at each SAML sign-in: a file it cannot use stops start-up rather than every such sign-in.
  if (purpose === "server") {
    try {
      new X509Certificate(readFileSync(certFile));
    } catch {
      throw new ConfigError("SIGNON_SAML_SIGNING_CERT", `${certFile} is not a readable X.509 certificate in PEM`);
    }
    try {
      createPrivateKey(readFileSync(keyFile));
    } catch {
      throw new ConfigError("SIGNON_SAML_SIGNING_KEY", `${keyFile} is not a readable private key in PEM`);
    }
  }
  return { certFile, keyFile };
}

function readSecretKey(env: Record<string, string | undefined>): Buffer | null {
  const raw = env.SIGNON_SECRET_KEY?.trim();
  if (!raw) return null;
  if (!/^[0-9a-fA-F]{64}$/.test(raw)) throw new ConfigError("SIGNON_SECRET_KEY", "expected 64 hex digits (32 bytes)");
  return Buffer.from(raw, "hex");
}

function readMode(env: Record<string, string | undefined>): SignonConfig["mode"] {
  const value = env.NODE_ENV?.trim() || "development";
  if (value === "production") return "production";
  if (value === "development" || value === "test") return "development";
  throw new ConfigError("NODE_ENV", `expected production, development or test, got ${value}`);
}

function readPublicUrl(env: Record<string, string | undefined>, mode: SignonConfig["mode"], port: number): string {
  const raw = env.SIGNON_PUBLIC_URL?.trim();
  if (!raw) {
    if (mode === "production") throw new ConfigError("SIGNON_PUBLIC_URL", "required in production (the https origin clients use)");
    return `http://localhost:${port}`;
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError("SIGNON_PUBLIC_URL", `not an absolute URL: ${raw}`);
  }
  if (mode === "production" && url.protocol !== "https:") {
    throw new ConfigError("SIGNON_PUBLIC_URL", "must be https in production");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new ConfigError("SIGNON_PUBLIC_URL", "must be an http or https URL");
  }
  if (url.search || url.hash || url.username) {
    throw new ConfigError("SIGNON_PUBLIC_URL", "must not have a query, fragment or credentials");
  }
  return url.href.replace(/\/+$/, "");
}

function readInteger(
  env: Record<string, string | undefined>,
  name: string,
  fallback: number,
  range: { min: number; max: number },
): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `expected a whole number, got ${raw}`);
  const value = Number(raw);
  if (value < range.min || value > range.max) {
    throw new ConfigError(name, `expected ${range.min} to ${range.max}, got ${raw}`);
  }
  return value;
}

function readBoolean(env: Record<string, string | undefined>, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (!raw) return fallback;
  if (raw === "true" || raw === "1") return true;
  if (raw === "false" || raw === "0") return false;
  throw new ConfigError(name, `expected true or false, got ${raw}`);
}

function readTwoStepRequiredRoles(env: Record<string, string | undefined>): SignonRole[] {
  const raw = env.SIGNON_TWO_STEP_REQUIRED_ROLES?.trim().toLowerCase();
  if (!raw) return ["superadmin", "admin"];
  if (raw === "none") return [];
  const named = raw.split(",").map((role) => role.trim());
  const unknown = named.filter((role) => !signonRoles.includes(role as SignonRole));
  if (unknown.length > 0) {
    throw new ConfigError("SIGNON_TWO_STEP_REQUIRED_ROLES", `expected roles from ${signonRoles.join(", ")} separated by commas, or none; got ${unknown.join(", ") || "an empty item"}`);
  }
  // In the order of `signonRoles`, each once.
  return signonRoles.filter((role) => named.includes(role));
}

function readMetricsToken(env: Record<string, string | undefined>): string | null {
  const raw = env.SIGNON_METRICS_TOKEN?.trim();
  if (!raw) return null;
  if (raw.length < 16 || /\s/.test(raw)) throw new ConfigError("SIGNON_METRICS_TOKEN", "expected at least 16 characters without spaces (for example from `openssl rand -hex 32`)");
  return raw;
}

/**
 * `SIGNON_EMAIL_DOMAINS_BLOCKED`: unset, the built-in list of consumer mail
 * services, less any domain the allow list names itself; empty or `none`, no
 * domain; otherwise the domains listed, where the item `default` stands for
 * the built-in list.
 */
function readBlockedDomains(env: Record<string, string | undefined>, allowed: readonly string[]): string[] {
  const name = "SIGNON_EMAIL_DOMAINS_BLOCKED";
  const raw = env[name];
  if (raw === undefined) return consumerMailDomains.filter((domain) => !allowed.includes(domain));
  if (raw.trim() === "" || raw.trim().toLowerCase() === "none") return [];
  return readDomains(env, name, consumerMailDomains);
}

/** A comma-separated list of domains, in lower-case ASCII, each once; the item `default` (when given) stands for `defaults`. */
function readDomains(env: Record<string, string | undefined>, name: string, defaults?: readonly string[]): string[] {
  const raw = env[name]?.trim();
  if (!raw) return [];
  const domains: string[] = [];
  for (const item of raw.split(",")) {
    if (defaults !== undefined && item.trim().toLowerCase() === "default") {
      for (const domain of defaults) if (!domains.includes(domain)) domains.push(domain);
      continue;
    }
    const entry = item.trim().replace(/^\*?\./, "");
    const ascii = entry === "" ? "" : domainToASCII(entry);
    if (ascii === "" || !/^[a-z0-9-]+(\.[a-z0-9-]+)*$/.test(ascii)) {
      throw new ConfigError(name, `expected domains such as example.org separated by commas, got ${JSON.stringify(item.trim())}`);
    }
    if (!domains.includes(ascii)) domains.push(ascii);
  }
  return domains;
}
