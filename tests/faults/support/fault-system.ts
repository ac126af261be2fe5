import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPool } from "@tessera/db";
import { dropDatabase, FaultProxy, recreateDatabase } from "@tessera/db/testing";
import type pg from "pg";
import { freePort, importSmallCourse, startSink, signonCli, startShipped, type ServiceProcess } from "@tessera/test-support";

/** The course the Completion load writes to: one chapter, sequential and vertical over six problems. */
export const COURSE_KEY = "course-v1:FaultX+DB101+2026";
export const PROBLEMS = Array.from({ length: 6 }, (_, n) => `block-v1:FaultX+DB101+2026+type@problem+block@p${n}`);
export const LEARNERS = ["learner-0", "learner-1", "learner-2"];
export const PASSWORD = "faults correct horse battery";
/** Every service's bound on one database statement (DATABASE_STATEMENT_TIMEOUT_SECONDS): a stalled statement fails after this long. */
export const STATEMENT_TIMEOUT_SECONDS = 3;
/** How long the load and the probes wait for an answer before a request counts as unanswered. */
export const REQUEST_TIMEOUT_MS = 30_000;

/** Everything the fault test runs against. */
export interface FaultSystem {
  /** The database of this run, reached directly (not through the proxy). */
  databaseUrl: string;
  /** Between every service and PostgreSQL. */
  proxy: FaultProxy;
  /** A pool of the test's own, directly on the database. */
  pool: pg.Pool;
  signon: ServiceProcess;
  completion: ServiceProcess;
  editorial: ServiceProcess;
  services: ServiceProcess[];
  /** The environment of Sign-on's CLI and Completion's (direct connection). */
  cliEnv: Record<string, string>;
  oauthClient: { clientId: string; clientSecret: string; redirectUri: string };
  editorialAppId: string;
  /** A person whose `admin` permission on the editorial app the grid posts toggle. */
  gridUser: { uid: string };
  adminEmail: string;
  userEmail: string;
  /** An access token of `userEmail` for the OAuth client, for `/user.json`. */
  accessToken: string;
  /**
   * Another, that only the outage probes present: never answered before an outage, so never among the answers
   * Sign-on keeps in memory (the load's token can be, while Sign-on still follows the database's changes).
   */
  probeAccessToken: string;
  /** A staff and admin token on Completion. */
  completionToken: string;
  close(): Promise<void>;
}


/**
 * Creates a database of its own on `serverUrl`'s server, puts a `FaultProxy`
 * in front of it, and starts Sign-on, Completion and the editorial app as
 * processes that reach the database only through the proxy, with the
 * accounts, applications, tokens and course the load needs.
 */
export async function startFaultSystem(serverUrl: string): Promise<FaultSystem> {
  const name = `faults_${randomBytes(6).toString("hex")}`;
  const databaseUrl = await recreateDatabase(serverUrl, name);
  const proxy = await FaultProxy.start(databaseUrl);
  const proxiedUrl = proxy.urlFor(databaseUrl);
  const pool = createPool({ url: databaseUrl, max: 4 });
  const dataDir = mkdtempSync(join(tmpdir(), "tessera-faults-"));
  const sink = await startSink();
  const services: ServiceProcess[] = [];
  const close = async () => {
    await Promise.all(services.map((service) => service.stop()));
    sink.server.closeAllConnections();
    await new Promise<void>((resolve) => sink.server.close(() => resolve()));
    await proxy.close();
    await pool.end();
    await dropDatabase(serverUrl, name);
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const cliEnv = {
      NODE_ENV: "development",
      DATABASE_URL: databaseUrl,
      SIGNON_ARGON2_MEMORY_KIB: "64",
      SIGNON_ARGON2_TIME_COST: "1",
      SIGNON_SECRET_KEY: "fa".repeat(32),
      SIGNON_DATA_DIR: dataDir,
      SIGNON_MAIL_PRINT: "false",
      // The load's superadmin works the permission grid without setting up 2-step verification.
      SIGNON_TWO_STEP_REQUIRED_ROLES: "none",
    };
    const [signonPort, completionPort, editorialPort] = (await Promise.all([freePort(), freePort(), freePort()])) as [number, number, number];
    const signonUrl = `http://127.0.0.1:${signonPort}`;
    const signon = await startShipped("signon", {
      port: signonPort,
      env: {
        ...cliEnv,
        DATABASE_URL: proxiedUrl,
        SIGNON_PUBLIC_URL: signonUrl,
        SIGNON_PUSH_POLL_MS: "50",
        SIGNON_PUSH_RETRY_BASE_MS: "200",
        SIGNON_PUSH_TIMEOUT_SECONDS: "2",
        DATABASE_STATEMENT_TIMEOUT_SECONDS: String(STATEMENT_TIMEOUT_SECONDS),
        // The hourly jobs every 2 s, and 1 s after a failure for want of the database, so they meet the outages.
        SIGNON_JOBS_FIRST_RUN_SECONDS: "1",
        SIGNON_JOBS_INTERVAL_SECONDS: "2",
        SIGNON_JOBS_OUTAGE_RETRY_SECONDS: "1",
      },
    });
    services.push(signon);

    // Accounts and applications, through the CLI on the direct connection.
    const adminEmail = "admin@example.org";
    const userEmail = "ada@example.org";
    await signonCli(cliEnv, "users", "create", "--email", adminEmail, "--name", "Admin", "--password", PASSWORD, "--role", "superadmin");
    await signonCli(cliEnv, "users", "create", "--email", userEmail, "--name", "Ada", "--password", PASSWORD);
    const redirectUri = `${sink.url}/auth/gds/callback`;
    const client = await signonCli(cliEnv, "apps", "create", "--name", "Fault client", "--redirect-uri", redirectUri, "--push-base", sink.url);
    await signonCli(cliEnv, "permissions", "grant", "--email", userEmail, "--app", "Fault client", "--permissions", "signin");
    // An OpenID Connect client too: the load's code exchanges sign ID tokens, and /userinfo is read under the faults.
    await signonCli(cliEnv, "apps", "oidc", "--app", "Fault client", "--oidc-scopes", "openid,profile,email");
    const oauthClient = { clientId: String(client["client_id"]), clientSecret: String(client["client_secret"]), redirectUri };
    const editorialUrl = `http://127.0.0.1:${editorialPort}`;
    const editorialApp = await signonCli(
      cliEnv, "apps", "create", "--name", "Editorial", "--redirect-uri", `${editorialUrl}/auth/gds/callback`,
      "--push-base", `${editorialUrl}/auth/gds/api`, "--permissions", "admin",
    );
    const gridUser = await signonCli(cliEnv, "users", "create", "--email", "grid@example.org", "--name", "Grid", "--password", PASSWORD);
    await signonCli(cliEnv, "permissions", "grant", "--email", "grid@example.org", "--app", "Editorial", "--permissions", "signin");
    const completionApp = await signonCli(cliEnv, "apps", "create", "--name", "completion", "--redirect-uri", `${sink.url}/completion/callback`, "--push-base", sink.url, "--permissions", "staff,admin");
    await signonCli(cliEnv, "api-users", "create", "--email", "loader@example.org", "--name", "Loader");
    await signonCli(cliEnv, "permissions", "grant", "--email", "loader@example.org", "--app", "completion", "--permissions", "signin,staff,admin");
    const completionToken = String((await signonCli(cliEnv, "tokens", "issue", "--email", "loader@example.org", "--app", "completion"))["access_token"]);
    await signonCli(cliEnv, "api-users", "create", "--email", "reader@example.org", "--name", "Reader");
    await signonCli(cliEnv, "permissions", "grant", "--email", "reader@example.org", "--app", "Fault client", "--permissions", "signin");
    const accessToken = String((await signonCli(cliEnv, "tokens", "issue", "--email", "reader@example.org", "--app", "Fault client"))["access_token"]);
    const probeAccessToken = String((await signonCli(cliEnv, "tokens", "issue", "--email", "reader@example.org", "--app", "Fault client"))["access_token"]);
    const { rows } = await pool.query<{ id: string }>("select id from signon.applications where name = 'Editorial'");

    const [completion, editorial] = await Promise.all([
      startShipped("completion", {
        port: completionPort,
        env: {
          DATABASE_URL: proxiedUrl,
          SIGNON_URL: signonUrl,
          COMPLETION_SIGNON_CLIENT_ID: String(completionApp["client_id"]),
          LOG_LEVEL: "info",
          COMPLETION_STALE_WORKER_INTERVAL_MS: "200",
          DATABASE_STATEMENT_TIMEOUT_SECONDS: String(STATEMENT_TIMEOUT_SECONDS),
        },
      }),
      startShipped("editorial", {
        name: "editorial-app",
        port: editorialPort,
        env: {
          DATABASE_URL: proxiedUrl,
          SIGNON_URL: signonUrl,
          EDITORIAL_APP_URL: editorialUrl,
          EDITORIAL_APP_CLIENT_ID: String(editorialApp["client_id"]),
          EDITORIAL_APP_CLIENT_SECRET: String(editorialApp["client_secret"]),
          DATABASE_STATEMENT_TIMEOUT_SECONDS: String(STATEMENT_TIMEOUT_SECONDS),
          EDITORIAL_APP_SESSION_SWEEP_MS: "500",
        },
      }),
    ]);
    services.push(completion, editorial);

    await importSmallCourse(completion.url, completionToken, { key: COURSE_KEY, problems: PROBLEMS, learners: LEARNERS });

    return {
      databaseUrl,
      proxy,
      pool,
      signon,
      completion,
      editorial,
      services,
      cliEnv,
      oauthClient,
      editorialAppId: (rows[0] as { id: string }).id,
      gridUser: { uid: String(gridUser["uid"]) },
      adminEmail,
      userEmail,
      accessToken,
      probeAccessToken,
      completionToken,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
