// The services as shipped on the failover cluster: two Sign-on and two Completion instances and the editorial
// example app (Sign-on's push receiver), each a process of its own whose DATABASE_URL is HAProxy's primary port,
// the Completion and Sign-on instances reading from node2 and node3 directly (DATABASE_READ_URL). First-time
// set-up as tests/faults does it (first-time-set-up.ts): Sign-on's command line on the primary for the accounts,
// applications and tokens, Completion's import for the course.
import type pg from "pg";
import { inDatabase } from "./database-url.js";
import { freePort } from "@tessera/db/testing";
import { signonCli, startShipped, type ServiceProcess } from "../shipped.js";
import type { FailoverCluster } from "./cluster.js";
import { applicationId, createLoadAccounts, importLoadCourse } from "./first-time-set-up.js";
import { completionEnv, editorialEnv } from "./service-env.js";
import { openServiceWorkspace } from "./service-workspace.js";

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


/** Waits for every start; keeps each service that started in `services` (so that closing stops it), then throws the first failure. */
async function startTogether(services: ServiceProcess[], starts: Promise<ServiceProcess>[]): Promise<ServiceProcess[]> {
  const settled = await Promise.allSettled(starts);
  for (const started of settled) if (started.status === "fulfilled") services.push(started.value);
  for (const started of settled) if (started.status === "rejected") throw started.reason;
  return settled.map((started) => (started as PromiseFulfilledResult<ServiceProcess>).value);
}

/** Starts every service on a new database of the cluster, with the accounts, applications, tokens and course the load needs. */
export async function startFailoverSystem(cluster: FailoverCluster): Promise<FailoverSystem> {
  const databaseName = "tessera";
  const databaseUrl = await cluster.createDatabase(databaseName);
  const replicas = cluster.nodes.filter((node) => node.name !== "node1");
  const readUrls = replicas.map((node) => inDatabase(node.url, databaseName));
  const workspace = await openServiceWorkspace(databaseUrl, { folderPrefix: "tessera-failover-services-", secretKey: "fa".repeat(32), pool: { connectionTimeoutMillis: 5000 } });
  const { pool, receiver, cliEnv } = workspace;
  const services: ServiceProcess[] = [];
  const close = async () => {
    await Promise.all(services.map((service) => service.stop()));
    await workspace.close();
  };
  try {
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
    const signon = (await startTogether(services, [
      startShipped("signon", { name: "signon-1", port: signonPort1, env: signonEnv }),
      startShipped("signon", { name: "signon-2", port: signonPort2, env: signonEnv }),
    ])) as [ServiceProcess, ServiceProcess];

    // Accounts and applications, through the command line on the primary.
    const editorialUrl = `http://127.0.0.1:${editorialPort}`;
    const accounts = await createLoadAccounts((...args) => signonCli(cliEnv, ...args), {
      clientName: "Failover client",
      receiverUrl: receiver.url,
      editorialUrl,
      gridEmails: ["grid-1@example.org", "grid-2@example.org", "grid-3@example.org"],
    });
    const editorialAppId = await applicationId(pool, "Editorial");

    const completionAt = (signonInstance: ServiceProcess) => ({ ...readEnv, ...completionEnv({ databaseUrl, signonUrl: signonInstance.url, clientId: accounts.completionClientId }) });
    const [completion1, completion2, editorial] = (await startTogether(services, [
      startShipped("completion", { name: "completion-1", port: completionPort1, env: completionAt(signon[0]) }),
      startShipped("completion", { name: "completion-2", port: completionPort2, env: completionAt(signon[1]) }),
      startShipped("editorial", {
        name: "editorial-app",
        port: editorialPort,
        env: {
          ...editorialEnv({ databaseUrl, signonUrl: signon[0].url, editorialUrl, client: accounts.editorialClient }),
          DATABASE_STATEMENT_TIMEOUT_SECONDS: String(STATEMENT_TIMEOUT_SECONDS),
        },
      }),
    ])) as [ServiceProcess, ServiceProcess, ServiceProcess];

    await importLoadCourse(completion1.url, accounts.completionTokens.writer);

    return {
      databaseUrl,
      readUrls,
      pool,
      signon,
      completion: [completion1, completion2],
      editorial,
      services,
      oauthClient: accounts.oauthClient,
      editorialAppId,
      gridUsers: accounts.gridUsers,
      adminEmail: accounts.adminEmail,
      userEmail: accounts.userEmail,
      completionTokens: accounts.completionTokens,
      cliEnv,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
