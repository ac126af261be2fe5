// The services as shipped on the failover cluster: two Sign-on and two Completion instances and the editorial
// example app (Sign-on's push receiver), each a process of its own whose DATABASE_URL is HAProxy's primary port,
// the Completion and Sign-on instances reading from node2 and node3 directly (DATABASE_READ_URL). First-time
// set-up as tests/faults does it: Sign-on's command line on the primary for the accounts, applications and
// tokens, Completion's import for the course.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { freePort } from "@tessera/db/testing";
import { importSmallCourse, startSink } from "../load-support.js";
import { signonCli, startShipped, type ServiceProcess } from "../shipped.js";
import type { FailoverCluster } from "./cluster.js";

/** The course the Completion load writes to: one chapter, sequential and vertical over six problems. */
export const COURSE_KEY = "course-v1:FailoverX+HA101+2026";
export const PROBLEMS = Array.from({ length: 6 }, (_, n) => `block-v1:FailoverX+HA101+2026+type@problem+block@p${n}`);
export const LEARNERS = ["learner-0", "learner-1", "learner-2"];
export const PASSWORD = "failover correct horse battery";
/** Every service's bound on one database statement: a statement stuck on a lost server fails (503) after this long. */
const STATEMENT_TIMEOUT_SECONDS = 5;

export interface FailoverSystem {
  /** The services' database through HAProxy's primary port. */
  databaseUrl: string;
  /** node2's and node3's PostgreSQL directly, as DATABASE_READ_URL lists them. */
  readUrls: string[];
  /** A small pool of the test's own on the primary (through HAProxy), for the checks after the load. */
  pool: pg.Pool;
  signon: [ServiceProcess, ServiceProcess];
  completion: [ServiceProcess, ServiceProcess];
  editorial: ServiceProcess;
  services: ServiceProcess[];
  oauthClient: { clientId: string; clientSecret: string; redirectUri: string };
  editorialAppId: string;
  /** People whose `admin` permission on the editorial app the grid posts toggle. */
  gridUsers: string[];
  adminEmail: string;
  userEmail: string;
  /** Bearer tokens of an API user holding signin, staff and admin on Completion: one for the writes, and the readers' two (the second first used just before the kill). */
  completionTokens: { writer: string; readers: [string, string] };
  /** The environment of Sign-on's command line against the services' database (`signonCli(system.cliEnv, …)`). */
  cliEnv: Record<string, string>;
  close(): Promise<void>;
}


/** The same server's `name` database: `url` with its path replaced. */
export function inDatabase(url: string, name: string): string {
  return url.replace(/\/[^/]*$/, `/${name}`);
}

/** Starts every service on a new database of the cluster, with the accounts, applications, tokens and course the load needs. */
export async function startFailoverSystem(cluster: FailoverCluster): Promise<FailoverSystem> {
  const databaseName = "tessera";
  const databaseUrl = await cluster.createDatabase(databaseName);
  const replicas = cluster.nodes.filter((node) => node.name !== "node1");
  const readUrls = replicas.map((node) => inDatabase(node.url, databaseName));
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2, connectionTimeoutMillis: 5000 });
  pool.on("error", () => {});
  const dataDir = mkdtempSync(join(tmpdir(), "tessera-failover-services-"));
  const receiver = await startSink();
  const services: ServiceProcess[] = [];
  const close = async () => {
    await Promise.all(services.map((service) => service.stop()));
    receiver.server.closeAllConnections();
    await new Promise<void>((resolve) => receiver.server.close(() => resolve()));
    await pool.end();
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
    const readEnv = { DATABASE_READ_URL: readUrls.join(" "), DATABASE_READ_MAX_LAG_MS: "5000", DATABASE_STATEMENT_TIMEOUT_SECONDS: String(STATEMENT_TIMEOUT_SECONDS) };
    const [signonPort1, signonPort2, completionPort1, completionPort2, editorialPort] = (await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()])) as [
      number,
      number,
      number,
      number,
      number,
    ];
    // Both instances behind one public address, as behind a load balancer: the first instance's.
    const publicUrl = `http://127.0.0.1:${signonPort1}`;
    const signonEnv = {
      ...cliEnv,
      ...readEnv,
      SIGNON_PUBLIC_URL: publicUrl,
      SIGNON_PUSH_POLL_MS: "50",
      SIGNON_PUSH_RETRY_BASE_MS: "200",
      SIGNON_PUSH_TIMEOUT_SECONDS: "2",
    };
    // Both at once on the empty database: their migrations take turns under the advisory lock.
    const signons = await Promise.allSettled([
      startShipped("signon", { name: "signon-1", port: signonPort1, env: signonEnv }),
      startShipped("signon", { name: "signon-2", port: signonPort2, env: signonEnv }),
    ]);
    for (const started of signons) if (started.status === "fulfilled") services.push(started.value);
    for (const started of signons) if (started.status === "rejected") throw started.reason;
    const signon = services.slice() as [ServiceProcess, ServiceProcess];

    // Accounts and applications, through the command line on the primary.
    const cli = (...args: string[]) => signonCli(cliEnv, ...args);
    const adminEmail = "admin@example.org";
    const userEmail = "ada@example.org";
    const redirectUri = `${receiver.url}/auth/gds/callback`;
    const editorialUrl = `http://127.0.0.1:${editorialPort}`;
    const gridEmails = ["grid-1@example.org", "grid-2@example.org", "grid-3@example.org"];
    const [client, editorialApp, completionApp, ...gridUsers] = await Promise.all([
      cli("apps", "create", "--name", "Failover client", "--redirect-uri", redirectUri, "--push-base", receiver.url),
      cli("apps", "create", "--name", "Editorial", "--redirect-uri", `${editorialUrl}/auth/gds/callback`, "--push-base", `${editorialUrl}/auth/gds/api`, "--permissions", "admin"),
      cli("apps", "create", "--name", "completion", "--redirect-uri", `${receiver.url}/completion/callback`, "--push-base", receiver.url, "--permissions", "staff,admin"),
      ...gridEmails.map((email, n) => cli("users", "create", "--email", email, "--name", `Grid ${n + 1}`, "--password", PASSWORD)),
    ]);
    await Promise.all([
      cli("users", "create", "--email", adminEmail, "--name", "Admin", "--password", PASSWORD, "--role", "superadmin"),
      cli("users", "create", "--email", userEmail, "--name", "Ada", "--password", PASSWORD),
      cli("api-users", "create", "--email", "loader@example.org", "--name", "Loader"),
    ]);
    await Promise.all([
      cli("permissions", "grant", "--email", userEmail, "--app", "Failover client", "--permissions", "signin"),
      cli("permissions", "grant", "--email", "loader@example.org", "--app", "completion", "--permissions", "signin,staff,admin"),
    ]);
    const [writer, reader1, reader2] = await Promise.all(
      [1, 2, 3].map(async () => String((await cli("tokens", "issue", "--email", "loader@example.org", "--app", "completion"))["access_token"])),
    );
    const { rows } = await pool.query<{ id: string }>("select id from signon.applications where name = 'Editorial'");

    const completionEnv = (signonInstance: ServiceProcess) => ({
      ...readEnv,
      DATABASE_URL: databaseUrl,
      SIGNON_URL: signonInstance.url,
      COMPLETION_SIGNON_CLIENT_ID: String(completionApp!["client_id"]),
      COMPLETION_STALE_WORKER_INTERVAL_MS: "200",
      LOG_LEVEL: "warn",
    });
    const others = await Promise.allSettled([
      startShipped("completion", { name: "completion-1", port: completionPort1, env: completionEnv(signon[0]) }),
      startShipped("completion", { name: "completion-2", port: completionPort2, env: completionEnv(signon[1]) }),
      startShipped("editorial", {
        name: "editorial-app",
        port: editorialPort,
        env: {
          DATABASE_URL: databaseUrl,
          SIGNON_URL: signon[0].url,
          EDITORIAL_APP_URL: editorialUrl,
          EDITORIAL_APP_CLIENT_ID: String(editorialApp!["client_id"]),
          EDITORIAL_APP_CLIENT_SECRET: String(editorialApp!["client_secret"]),
          DATABASE_STATEMENT_TIMEOUT_SECONDS: String(STATEMENT_TIMEOUT_SECONDS),
          LOG_LEVEL: "warn",
        },
      }),
    ]);
    for (const started of others) if (started.status === "fulfilled") services.push(started.value);
    for (const started of others) if (started.status === "rejected") throw started.reason;
    const [, , completion1, completion2, editorial] = services as [ServiceProcess, ServiceProcess, ServiceProcess, ServiceProcess, ServiceProcess];

    await importSmallCourse(completion1.url, writer!, { key: COURSE_KEY, problems: PROBLEMS, learners: LEARNERS });

    return {
      databaseUrl,
      readUrls,
      pool,
      signon,
      completion: [completion1, completion2],
      editorial,
      services,
      oauthClient: { clientId: String(client!["client_id"]), clientSecret: String(client!["client_secret"]), redirectUri },
      editorialAppId: (rows[0] as { id: string }).id,
      gridUsers: gridUsers.map((user) => String(user["uid"])),
      adminEmail,
      userEmail,
      completionTokens: { writer: writer!, readers: [reader1!, reader2!] },
      cliEnv,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
