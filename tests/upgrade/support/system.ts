// The documented deployment on one PostgreSQL database, for the rolling upgrade: two Sign-on and two Completion
// instances and the editorial example app, each a shipped process of the release it runs (this tree or an earlier
// release's checkout), Sign-on and Completion behind nginx (support/nginx.ts). Completion and the editorial app
// call Sign-on through nginx, as docs/deployment.md says; Sign-on pushes to the editorial app and to a counting
// receiver directly. First-time set-up with the running release's own command line, as an operator of that
// release does, through the drill kit's (the failover drills' accounts, applications and course, and what only
// this test uses). `replace` is step 4 of docs/operations.md, "Upgrading without downtime".
import { spawn } from "node:child_process";
import { join } from "node:path";
import { freePort, repositoryRoot, signonCliAt, startShipped, type ServiceProcess, type ShippedService } from "@tessera/test-support";
import {
  applicationId,
  completionEnv,
  CountingReceiver,
  createLoadAccounts,
  editorialEnv,
  importLoadCourse,
  openServiceWorkspace,
  PASSWORD,
  type FailoverSystem,
} from "@tessera/test-support/drill";
import { startDrainProbe, type DrainFigures } from "./drain-probe.js";
import { startNginx, type Nginx } from "./nginx.js";

/** People who turn 2-step verification on, for the remembered-browser checks. */
export const TWO_STEP_EMAILS = ["remember-1@example.org", "remember-2@example.org"];

/** A release the instances run: its version and the checkout it runs from. */
export interface RunnableRelease {
  version: string;
  root: string;
}

/** One instance: what it runs, where, with what configuration. */
export interface Instance {
  name: string;
  service: ShippedService;
  /** Its nginx upstream (`signon`, `completion`), or null for the editorial app, which nginx does not front. */
  upstream: "signon" | "completion" | null;
  port: number;
  env: Record<string, string>;
  process: ServiceProcess;
  release: RunnableRelease;
}

/** How one instance was replaced: how long each part took, and how it ended. */
export interface Replacement {
  instance: string;
  from: string;
  to: string;
  /** nginx reloaded without it and its old workers gone. */
  outOfNginxMs: number;
  /** From SIGTERM to its exit, and how it exited. */
  drainMs: number;
  exit: string;
  /** From starting the new one to `/healthcheck/ready` answering 200 with its version. */
  readyMs: number;
  /** What requests on kept-alive connections to it met from just before SIGTERM until it exited. */
  drained: DrainFigures;
}

export interface UpgradeSystem extends FailoverSystem {
  nginx: Nginx;
  instances: Instance[];
  /** Receives the pushes to the counting application, counting each. */
  counter: CountingReceiver;
  counterAppId: string;
  /** People the test makes inactive for long enough, one at a time, for the hourly inactivity job to suspend. */
  inactiveEmails: string[];
  /** A person whose permissions only the mixed-version checks change. */
  mixedUserUid: string;
  /** People whose permission on the counting application the administrator in Chromium changes. */
  browserGridUsers: string[];
  /** Sign-on's configuration of the command line (the database, the secret key). */
  cliEnv: Record<string, string>;
  /** Replaces `name` by `release` as docs/operations.md step 4 says. */
  replace(name: string, release: RunnableRelease): Promise<Replacement>;
  /** Runs `npm run migrate [-- --post-deploy]` of this tree (its built command lines), as an operator does. */
  migrate(postDeploy: boolean): Promise<string>;
}


/** The version `/healthcheck/ready` of `url` answers with 200 (`""` from a release before 0.2.0, which answers none), or null. */
async function readyVersion(url: string): Promise<string | null> {
  try {
    const response = await fetch(`${url}/healthcheck/ready`);
    const body = (await response.json()) as { version?: string };
    return response.status === 200 ? (body.version ?? "") : null;
  } catch {
    return null;
  }
}

/** Starts the whole system of `release` on the empty database `databaseUrl`, with the accounts, applications, tokens and course the load needs. */
export async function startUpgradeSystem(databaseUrl: string, release: RunnableRelease): Promise<UpgradeSystem> {
  const workspace = await openServiceWorkspace(databaseUrl, { folderPrefix: "tessera-upgrade-services-", secretKey: "ab".repeat(32) });
  const { pool, receiver, cliEnv } = workspace;
  const counter = new CountingReceiver();
  await counter.start();
  const instances: Instance[] = [];
  let nginx: Nginx | null = null;
  const close = async () => {
    await Promise.all(instances.map((instance) => instance.process.stop()));
    await nginx?.stop();
    await counter.stop();
    await workspace.close();
  };
  try {
    const [signonPort1, signonPort2, completionPort1, completionPort2, editorialPort, signonFront, completionFront] = await Promise.all(
      Array.from({ length: 7 }, () => freePort()),
    );
    const signonUrl = `http://127.0.0.1:${signonFront}`;
    const editorialUrl = `http://127.0.0.1:${editorialPort}`;
    const signonEnv = {
      ...cliEnv,
      SIGNON_PUBLIC_URL: signonUrl,
      SIGNON_PUSH_POLL_MS: "100",
      SIGNON_PUSH_RETRY_BASE_MS: "200",
      SIGNON_PUSH_TIMEOUT_SECONDS: "5",
      // The hourly jobs every few seconds, on every instance of either release at once.
      SIGNON_JOBS_FIRST_RUN_SECONDS: "2",
      SIGNON_JOBS_INTERVAL_SECONDS: "3",
      LOG_LEVEL: "warn",
    };
    const start = async (instance: Omit<Instance, "process">) => {
      const started = await startShipped(instance.service, { root: instance.release.root, name: instance.name, port: instance.port, env: instance.env });
      instances.push({ ...instance, process: started });
    };
    await start({ name: "signon-1", service: "signon", upstream: "signon", port: signonPort1!, env: signonEnv, release });
    await start({ name: "signon-2", service: "signon", upstream: "signon", port: signonPort2!, env: signonEnv, release });
    nginx = await startNginx({
      signon: { port: signonFront!, instances: [signonPort1!, signonPort2!], maxBodySize: "1m" },
      completion: { port: completionFront!, instances: [completionPort1!, completionPort2!], maxBodySize: "50m" },
    });

    // Accounts and applications through the running release's command line: the load's (the first three grid
    // users are the load's, the other three the Chromium administrator's), then this test's own.
    const cli = (...args: string[]) => signonCliAt({ root: release.root }, cliEnv, ...args);
    const gridEmails = [1, 2, 3, 4, 5, 6].map((n) => `grid-${n}@example.org`);
    const inactiveEmails = Array.from({ length: 16 }, (_, n) => `inactive-${n + 1}@example.org`);
    const accounts = await createLoadAccounts(cli, { clientName: "Upgrade client", receiverUrl: receiver.url, editorialUrl, gridEmails });
    await Promise.all([
      cli("apps", "create", "--name", "Counter", "--redirect-uri", `${counter.url}/auth/gds/callback`, "--push-base", `${counter.url}/auth/gds/api`, "--permissions", "editor"),
      cli("users", "create", "--email", "browser-admin@example.org", "--name", "Browser admin", "--password", PASSWORD, "--role", "superadmin"),
      cli("users", "create", "--email", "mixed@example.org", "--name", "Mixed", "--password", PASSWORD),
      ...TWO_STEP_EMAILS.map((email, n) => cli("users", "create", "--email", email, "--name", `Remembered ${n + 1}`, "--password", PASSWORD)),
      ...inactiveEmails.map((email, n) => cli("users", "create", "--email", email, "--name", `Inactive ${n + 1}`, "--password", PASSWORD)),
    ]);
    await Promise.all(gridEmails.slice(3).map((email) => cli("permissions", "grant", "--email", email, "--app", "Counter", "--permissions", "signin")));

    const completionInstanceEnv = { ...completionEnv({ databaseUrl, signonUrl, clientId: accounts.completionClientId }), COMPLETION_TRUST_PROXY: "true" };
    await start({ name: "completion-1", service: "completion", upstream: "completion", port: completionPort1!, env: completionInstanceEnv, release });
    await start({ name: "completion-2", service: "completion", upstream: "completion", port: completionPort2!, env: completionInstanceEnv, release });
    await start({
      name: "editorial-app",
      service: "editorial",
      upstream: null,
      port: editorialPort!,
      env: editorialEnv({ databaseUrl, signonUrl, editorialUrl, client: accounts.editorialClient }),
      release,
    });
    const front = nginx;
    await importLoadCourse(front.url("completion"), accounts.completionTokens.writer);

    // What the load talks to: nginx, for both "instances" of each service.
    const frontOf = (upstream: "signon" | "completion"): ServiceProcess => {
      const url = front.url(upstream);
      return {
        name: `nginx (${upstream})`,
        url,
        port: Number(new URL(url).port),
        pid: 0,
        exit: () => null,
        output: () => "",
        outageLines: () => [],
        stop: async () => {},
        kill: async () => {},
      };
    };
    const signonFrontProcess = frontOf("signon");
    const completionFrontProcess = frontOf("completion");

    const replace = async (name: string, to: RunnableRelease): Promise<Replacement> => {
      const index = instances.findIndex((instance) => instance.name === name);
      const old = instances[index];
      if (old === undefined) throw new Error(`no instance ${name}`);
      let began = Date.now();
      if (old.upstream !== null) await front.setInstance(old.upstream, old.port, false);
      const outOfNginxMs = Date.now() - began;
      // A client still holding kept-alive connections to it (nginx's old workers have let theirs go) sees it drain.
      const probe = startDrainProbe(old.process.url, "/healthcheck/live");
      await new Promise((resolve) => setTimeout(resolve, 300));
      began = Date.now();
      await old.process.stop(30_000);
      const drained = await probe.finish();
      const drainMs = Date.now() - began;
      const exit = old.process.exit() ?? "running";
      began = Date.now();
      const started = await startShipped(old.service, { root: to.root, name: old.name, port: old.port, env: old.env });
      instances[index] = { ...old, process: started, release: to };
      // Step 4: back in once /healthcheck/ready answers 200 with the new version.
      const deadline = Date.now() + 60_000;
      const isReady = (version: string | null) => version === to.version || (version === "" && to.root !== repositoryRoot);
      while (!isReady(await readyVersion(started.url))) {
        if (Date.now() > deadline) throw new Error(`${name} did not answer ready with version ${to.version}:\n${started.output()}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const readyMs = Date.now() - began;
      if (old.upstream !== null) await front.setInstance(old.upstream, old.port, true);
      return { instance: name, from: old.release.version, to: to.version, outOfNginxMs, drainMs, exit, readyMs, drained };
    };

    const migrate = async (postDeploy: boolean): Promise<string> => {
      // What `npm run migrate [-- --post-deploy]` runs, with Sign-on's configuration in the environment.
      const result = await runNode([join(repositoryRoot, "scripts/migrate.mjs"), ...(postDeploy ? ["--post-deploy"] : [])], { ...process.env, ...cliEnv });
      if (result.code !== 0) throw new Error(`npm run migrate${postDeploy ? " -- --post-deploy" : ""} failed (${result.code}):\n${result.output}`);
      return result.output.trim();
    };

    return {
      databaseUrl,
      readUrls: [],
      pool,
      signon: [signonFrontProcess, signonFrontProcess],
      completion: [completionFrontProcess, completionFrontProcess],
      editorial: instances.find((instance) => instance.name === "editorial-app")!.process,
      services: instances.map((instance) => instance.process),
      oauthClient: accounts.oauthClient,
      editorialAppId: await applicationId(pool, "Editorial"),
      gridUsers: accounts.gridUsers.slice(0, 3),
      adminEmail: accounts.adminEmail,
      userEmail: accounts.userEmail,
      completionTokens: accounts.completionTokens,
      close,
      nginx: front,
      instances,
      counter,
      counterAppId: await applicationId(pool, "Counter"),
      inactiveEmails,
      mixedUserUid: (await pool.query<{ uid: string }>("select uid from signon.users where email = 'mixed@example.org'")).rows[0]!.uid,
      browserGridUsers: accounts.gridUsers.slice(3),
      cliEnv,
      replace,
      migrate,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Runs Node.js with `args` in the repository root to its end; its exit code and output. */
function runNode(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: repositoryRoot, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, output }));
  });
}
