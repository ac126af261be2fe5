// `npm start`: runs Sign-on, Completion and the example application on one machine (ports
// 3000, 3001 and 3002 of 127.0.0.1 unless HOST, SIGNON_PORT, COMPLETION_PORT or
// EDITORIAL_APP_PORT say otherwise; `npm start -- --help` lists the settings). Without
// DATABASE_URL, a PostgreSQL server of its own (the embedded one, on ./data/postgres of the
// working directory, reached through a Unix socket in ./data) starts first: its URL goes to
// the three services as their DATABASE_URL, and it stops last. A ./data written by an
// earlier version (another database engine) is converted into it at the first such start.
//
// On the first start (no `first_start` row in Sign-on's settings) `signon bootstrap
// first-start` creates a superadmin, registers the `completion` and example applications
// (with the URLs of the ports in use), issues a token to the "Demo API client" and writes
// the example application's credentials to ./data/editorial-app.json; then the demo course
// (OLX) and its learners are loaded into Completion. The password and the token are printed
// here once and kept nowhere else. A later start finds the row and creates nothing.
//
// The example application runs inside this process (it is small, and a Node.js process of its
// own would cost some 80 MB): this process runs under the options of
// scripts/start/launcher-options.mjs, which package.json's "start" passes; run without them
// (`node scripts/start.mjs`), it runs itself again with them.
//
// Ctrl-C (SIGINT), SIGTERM or SIGHUP (the terminal closed) stops the example application,
// then Completion, then Sign-on, each letting running requests finish, then the embedded
// database (a fast, clean shutdown). The exit code is 0 when everything stopped cleanly.
// Should this process end without that (SIGKILL), each service notices that its parent is
// gone (scripts/start/exit-with-parent.mjs) and stops by itself, and the database server (run
// from this process, in a process group of its own) is stopped by its guard once they have
// disconnected; should npm end on its own, this script stops
// everything as for Ctrl-C.
//
// The services run as built JavaScript (each package's dist/, written by `npm run build`, which
// `npm install` runs), as a production deployment runs them, under Node's
// --conditions=tessera-built so that the workspace packages they import are their dist/ too.
// A package whose src/ changed since its last build is built again here first.
//
// One npm start per data directory (./data/npm-start.lock), and only on free ports: a second
// one says which and exits with code 1, starting nothing. Logs: readable lines on a terminal,
// JSON lines (with a "service" field) otherwise; TESSERA_LOG_FORMAT chooses.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { createRequire } from "node:module";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import { HELP, readSettings, StartError } from "./start/settings.mjs";
import { forwardLines, serviceLineWriter } from "./start/service-output.mjs";
import { claimDataDirectory, releaseDataDirectory, takenPorts } from "./start/single-instance.mjs";
import { hasLauncherOptions, launcherNodeOptions } from "./start/launcher-options.mjs";
import { httpRequest } from "./start/http-request.mjs";
import { needsBuild } from "./build-package.mjs";
import { BUILT_PACKAGES, SHIPPED_ENTRIES, SHIPPED_NODE_OPTIONS } from "./start/shipped.mjs";

if (!hasLauncherOptions()) await runAgainWithOptions();

/**
 * Runs this script again as a child with the launcher's Node.js options, passes it the signals
 * this process gets (a terminal's Ctrl-C reaches both: the child takes one within a second as
 * one), and ends with its exit code. Never resolves.
 */
function runAgainWithOptions() {
  const child = spawn(process.execPath, [...launcherNodeOptions, fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: "inherit" });
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal));
  child.once("exit", (code, signal) => process.exit(code ?? (signal === null ? 1 : 128 + (signal === "SIGKILL" ? 9 : 15))));
  return new Promise(() => undefined);
}

// Nothing may end this process before the services have stopped, not even a closed terminal.
for (const stream of [process.stdout, process.stderr]) stream.on("error", () => undefined);

let settings;
try {
  settings = readSettings(process.argv.slice(2), process.env, process.stdout.isTTY === true);
} catch (error) {
  if (!(error instanceof StartError)) throw error;
  console.error(error.message);
  process.exit(error.exitCode);
}
if (settings.help) {
  process.stdout.write(HELP);
  process.exit(0);
}
const { ports, urls } = settings;

const root = fileURLToPath(new URL("..", import.meta.url));
/** Tessera's version: the root package.json's (CHANGELOG.md, releases.json). */
const version = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version;
const home = process.cwd();
const dataDir = resolve(home, "data");
const embeddedDatabase = "packages/db/dist/postgres-server/embedded-database.js";
/** Every service's migrations, for the conversion of an earlier version's data. */
const allMigrations = ["signon=packages/signon/migrations", "completion=packages/completion/migrations", "signon_client=packages/signon-client/migrations"];
const exitWithParent = import.meta.resolve("./start/exit-with-parent.mjs");
const credentialsFile = join(dataDir, "editorial-app.json");
const demoCourse = {
  key: "course-v1:TesseraX+DL101+2026",
  olx: join(root, "packages/completion/examples/demo-course/olx"),
  learners: join(root, "packages/completion/examples/demo-course/learners.json"),
};

const services = {
  signon: {
    name: "signon",
    entry: SHIPPED_ENTRIES.signon,
    port: ports.signon,
    ready: "/healthcheck/ready",
    // npm start creates the first administrator itself (and prints it): Sign-on need not say how to.
    env: { SIGNON_HOST: settings.host, SIGNON_PORT: String(ports.signon), SIGNON_PUBLIC_URL: urls.signonPublic, SIGNON_FIRST_ADMINISTRATOR_HINT: "false" },
  },
  completion: {
    name: "completion",
    entry: SHIPPED_ENTRIES.completion,
    port: ports.completion,
    ready: "/healthcheck/ready",
    env: { HOST: settings.host, PORT: String(ports.completion), SIGNON_URL: urls.signon },
  },
  editorial: {
    name: "editorial",
    /** Imported into this process (see startEditorial), not run as a process of its own. */
    entry: SHIPPED_ENTRIES.editorial,
    port: ports.editorial,
    env: {
      HOST: settings.host,
      PORT: String(ports.editorial),
      SIGNON_URL: urls.signonPublic,
      EDITORIAL_APP_URL: urls.editorial,
      EDITORIAL_APP_CREDENTIALS_FILE: credentialsFile,
    },
  },
};

/** DATABASE_URL as given; empty or unset: the embedded server, whose URL `database` holds once it runs. */
const givenDatabaseUrl = process.env.DATABASE_URL || undefined;
/** The embedded database server, once started: `{ url, stop }`. */
let database = null;

/** Services in the order they started. */
const running = [];
/** The example application, while it runs in this process: its Fastify instance, or the promise of it. */
let editorialApp = null;
/** Commands (bootstrap, import) in flight: stopped before any service. */
const commands = new Set();
let stopping = false;
/** The first start's set-up once made, and whether it has been shown: its password and token must be, whatever fails after it. */
let created = null;
let reported = false;

/** Levels of text lines in JSON output (pino's): a service prints warnings, and a crash its trace, on stderr. */
const INFO = 30;
const WARN = 40;

/** Sends a service's stdout and stderr to ours, formatted for where ours goes. */
function showOutput(name, child) {
  forwardLines(child.stdout, serviceLineWriter(name, settings.logFormat, process.stdout, INFO), process.stdout);
  forwardLines(child.stderr, serviceLineWriter(name, settings.logFormat, process.stderr, WARN), process.stderr);
}

function spawnBuilt(name, entry, args, env) {
  return spawn(process.execPath, [...SHIPPED_NODE_OPTIONS, "--import", exitWithParent, join(root, entry), ...args], {
    cwd: home,
    // PGAPPNAME: which service holds which connection, in pg_stat_activity.
    // MALLOC_ARENA_MAX: at most two malloc arenas (glibc; elsewhere it means nothing) instead of up to eight
    // per core, each of which keeps memory its threads freed; a service's heap is V8's, not malloc's.
    env: { MALLOC_ARENA_MAX: "2", ...process.env, ...(database === null ? {} : { DATABASE_URL: database.url }), PGAPPNAME: name, ...env },
    // The IPC channel closes when this process ends, however it ends: the child then stops by itself.
    stdio: ["ignore", "pipe", "pipe", "ipc"],
    // Its own session: the terminal's Ctrl-C and hang-up reach this script only, which stops the rest in order.
    detached: true,
  });
}

function exitOf(child) {
  return new Promise((resolveExit) => child.once("exit", (code, signal) => resolveExit({ code, signal })));
}

function launch(service) {
  // Once stopping, nothing new starts: it would escape the stop that is under way.
  if (stopping) throw new Error(`not starting ${service.name}: stopping`);
  const child = spawnBuilt(service.name, service.entry, [], service.env);
  showOutput(service.name, child);
  const exited = exitOf(child);
  const entry = { service, child, exited, stopRequested: false };
  running.push(entry);
  void exited.then(({ code, signal }) => {
    if (!stopping && !entry.stopRequested) {
      console.error(`${service.name} stopped unexpectedly (${signal ?? `exit code ${code}`}); stopping the others`);
      void stopAll(1);
    }
  });
  return entry;
}

async function waitUntilReady(entry, timeoutMs = 60_000) {
  const { service } = entry;
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void entry.exited.then(() => (exited = true));
  while (Date.now() < deadline && !exited && !stopping) {
    try {
      const response = await httpRequest(`${urlOf(service)}${service.ready}`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolveWait) => setTimeout(resolveWait, 50));
  }
  // Also when stopping: what waited for this service must not go on to start the next one.
  throw new Error(stopping ? `${service.name}: stopped before it was ready` : `${service.name} did not become ready on port ${service.port}`);
}

/** Where this script reaches a service. */
function urlOf(service) {
  return service === services.signon ? urls.signon : service === services.completion ? urls.completion : urls.editorial;
}

/**
 * Starts the embedded PostgreSQL server (startEmbeddedDatabase, from the db package's dist/)
 * in a process group of its own, so that Ctrl-C reaches this script only, which stops it
 * last. Its guard stops it when this process ends without doing so (even by kill -9), once
 * the services have disconnected.
 */
async function startDatabase() {
  const migrations = allMigrations.map((pair) => {
    const [schema, folder] = pair.split("=");
    return { schema, folder: join(root, folder) };
  });
  const { startEmbeddedDatabase } = await import(pathToFileURL(join(root, embeddedDatabase)).href);
  const write = serviceLineWriter("database", settings.logFormat, process.stderr);
  const log = { info: (message) => process.stderr.write(write(message, INFO)), warn: (message) => process.stderr.write(write(message, WARN)) };
  let started;
  try {
    started = await startEmbeddedDatabase({ home: dataDir, migrations, log, stopWhenCallerEnds: true });
  } catch (error) {
    // One sentence (a PostgresServerError says what to do): that is the whole story.
    log.warn(error instanceof Error ? error.message : String(error));
    throw new StartError("npm start: the embedded database did not start (see the line above).", 1);
  }
  database = { url: started.url, stop: () => started.stop() };
  void started.server.exited.then(() => {
    if (!stopping) {
      console.error(`the database server stopped unexpectedly (see ${started.server.logFile}); stopping the services`);
      void stopAll(1);
    }
  });
  const { conversion } = started;
  if (conversion !== undefined) {
    const rows = conversion.tables.reduce((sum, table) => sum + table.rows, 0);
    console.log(
      `Converted the data of an earlier version to PostgreSQL: ${conversion.tables.length} tables, ${rows} rows, ` +
        `the same count in every table; the old folder is kept at ${conversion.keptAt}.`,
    );
  }
}

/** Waits, up to 30 s, for the database server of an npm start that was killed to finish stopping. */
async function waitForPreviousDatabase() {
  const deadline = Date.now() + 30_000;
  let told = false;
  for (;;) {
    const pid = postmasterPid();
    if (pid === null || Date.now() > deadline) return;
    if (!told) console.error(`waiting for the database server of the previous npm start (process ${pid}) to stop`);
    told = true;
    await new Promise((resolveWait) => setTimeout(resolveWait, 200));
  }
}

/** The pid of a PostgreSQL server running on ./data/postgres, or null. */
function postmasterPid() {
  try {
    const pid = Number(readFileSync(join(dataDir, "postgres", "postmaster.pid"), "utf8").split("\n")[0]);
    if (!Number.isInteger(pid) || pid <= 0) return null;
    process.kill(pid, 0);
    return pid;
  } catch (error) {
    return error?.code === "EPERM" ? Number(readFileSync(join(dataDir, "postgres", "postmaster.pid"), "utf8").split("\n")[0]) : null;
  }
}

/**
 * Builds again the packages whose sources changed since their last build (none, usually), each in
 * a process of its own: the compiler and esbuild's service (some 400 MB) go away with it instead of
 * staying resident in this process for as long as the services run.
 */
async function buildChanged() {
  for (const folder of BUILT_PACKAGES) {
    const packageDir = join(root, folder);
    if (!(await needsBuild(packageDir))) continue;
    console.error(`npm start: building ${folder} (its sources changed since its last build)`);
    const build = spawn(process.execPath, [join(root, "scripts/build-package.mjs"), packageDir], { stdio: ["ignore", "ignore", "inherit"] });
    const { code, signal } = await exitOf(build);
    if (code !== 0) throw new StartError(`npm start: building ${folder} failed (${signal ?? `exit code ${code}`}); run \`npm run build\` to see why.`, 1);
  }
}

/**
 * Starts the example application inside this process; resolves once it listens (its database
 * migrated: ready). Its log lines are shown as a service's, marked "editorial".
 */
async function startEditorial() {
  if (stopping) throw new Error("not starting editorial: stopping");
  const { env } = services.editorial;
  const write = serviceLineWriter("editorial", settings.logFormat, process.stdout);
  const log = { write: (lines) => { for (const line of lines.split("\n")) if (line !== "") process.stdout.write(write(line)); } };
  // Its connections are named in pg_stat_activity, as the other services' are (PGAPPNAME).
  const databaseUrl = database === null ? process.env.DATABASE_URL : `${database.url}${database.url.includes("?") ? "&" : "?"}application_name=editorial`;
  const starting = import(pathToFileURL(join(root, services.editorial.entry)).href).then(({ startEditorialApp }) =>
    startEditorialApp({ ...process.env, DATABASE_URL: databaseUrl, ...env }, { log }),
  );
  editorialApp = starting;
  const app = await starting;
  if (editorialApp === starting) editorialApp = app;
  return app;
}

/** Stops the example application (running requests finish), if it runs; false when it did not stop cleanly. */
async function stopEditorial() {
  // One still starting (waiting for its database, say) is left to this process's exit after a while.
  const app = await Promise.race([Promise.resolve(editorialApp).catch(() => null), sleep(10_000).then(() => null)]);
  editorialApp = null;
  if (app === null) return true;
  try {
    app.log.info("npm start is stopping: closing");
    await app.close();
    return true;
  } catch (error) {
    console.error(`editorial did not stop cleanly (${error instanceof Error ? error.message : error})`);
    return false;
  }
}

/** Starts a service and resolves once it answers. */
async function start(service) {
  const entry = launch(service);
  await waitUntilReady(entry);
  return entry;
}

/**
 * Runs a command to its end; its stderr is shown, its stdout returned (never shown:
 * it may hold secrets). Rejects when it fails.
 */
async function runCommand(name, entry, args) {
  if (stopping) throw new Error(`not running ${name}: stopping`);
  const child = spawnBuilt(name, entry, args, {});
  forwardLines(child.stderr, serviceLineWriter(name, settings.logFormat, process.stderr, WARN), process.stderr);
  let stdout = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk) => (stdout += chunk));
  const exited = exitOf(child);
  const command = { child, exited };
  commands.add(command);
  const { code, signal } = await exited;
  commands.delete(command);
  if (code !== 0) throw new Error(`${name} ${args.slice(0, 2).join(" ")} failed (${signal ?? `exit code ${code}`})`);
  return stdout;
}

/**
 * The first start's marker (the `first_start` row of Sign-on's settings), read here:
 * `{ status: "done-before", … }` as the set-up command says it, or null when there is none yet
 * (or the database cannot tell yet), for the set-up command to run. A later start so spares
 * a Node.js process that loads all of Sign-on while the services start.
 */
async function firstStartDone() {
  const pg = createRequire(join(root, "packages/db/package.json"))("pg");
  const client = new pg.Client({ connectionString: database?.url ?? givenDatabaseUrl, application_name: "npm start" });
  client.on("error", () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query("SELECT value FROM signon.settings WHERE key = 'first_start'");
    const value = rows[0]?.value;
    if (value === null || typeof value !== "object") return null;
    // Set-ups before the marker kept the client id: the application the set-up named `completion`.
    const named = value.completionClientId
      ? [{ client_id: value.completionClientId }]
      : (await client.query("SELECT client_id FROM signon.applications WHERE name = 'completion'")).rows;
    return {
      status: "done-before",
      completed_at: String(value.completedAt ?? ""),
      admin_email: String(value.adminEmail ?? ""),
      completion_app: named[0] === undefined ? null : { client_id: String(named[0].client_id) },
    };
  } catch {
    // No such table yet (a new database), or no answer: the set-up command finds out, and says what is wrong.
    return null;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The first-start set-up in Sign-on: what it created, or `{ status: "done-before" }`. */
async function bootstrap() {
  const args = ["bootstrap", "first-start", "--json", "--credentials-file", credentialsFile];
  args.push("--completion-url", urls.completion, "--example-app-url", urls.editorial);
  if (settings.adminEmail) args.push("--admin-email", settings.adminEmail);
  return JSON.parse(await runCommand("bootstrap", SHIPPED_ENTRIES["signon-cli"], args));
}

/**
 * Completion as it starts for this installation: with the client id of its application in Sign-on
 * (COMPLETION_SIGNON_CLIENT_ID), so that it accepts only tokens issued to it.
 */
function completionOf(setUp) {
  const clientId = process.env.COMPLETION_SIGNON_CLIENT_ID || setUp.completion_app?.client_id;
  if (!clientId) {
    throw new StartError(
      "npm start: Sign-on has no application named completion, so Completion cannot tell which tokens are its own.\n" +
        "Set COMPLETION_SIGNON_CLIENT_ID to its client id (signon apps show --app NAME).",
      1,
    );
  }
  services.completion.env.COMPLETION_SIGNON_CLIENT_ID = clientId;
  return services.completion;
}

/** Loads the demo course (OLX) with the CLI and its learners through the API, with the demo client's token. */
async function loadDemoCourse(token) {
  await runCommand("completion", SHIPPED_ENTRIES["completion-cli"], ["import-olx", demoCourse.olx, "--course-key", demoCourse.key]);
  const response = await httpRequest(`${urls.completion}/api/completion/v1/admin/import`, {
    method: "PUT",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: await readFile(demoCourse.learners, "utf8"),
  });
  if (!response.ok) throw new Error(`loading the demo learners failed: ${response.status} ${response.text}`);
  return JSON.parse(response.text);
}

/** What the first start printed: `loaded` is undefined when the demo course could not be loaded. */
function firstStartReport(created, loaded) {
  return [
    "",
    "First start: the set-up below was created; the password and the token are shown only now",
    "(Sign-on keeps their hashes).",
    `  Superadmin     ${created.admin.email}`,
    `  Password       ${created.admin.password}`,
    `                 signs in at ${urls.signonPublic}/sign-in; holds signin and admin on completion and ${created.example_app.name}`,
    "                 sets up 2-step verification (an authenticator app) at the first sign-in, as superadmins must",
    `  API token      ${created.api_client.access_token}`,
    `                 ${created.api_client.name} (${created.api_client.email}) on completion: signin, staff, admin`,
    `  Applications   completion; ${created.example_app.name} (credentials in ${created.example_app.credentials_file}, mode 0600)`,
    loaded === undefined
      ? `  Demo course    ${demoCourse.key}: not known to be loaded (see the errors above)`
      : `  Demo course    ${demoCourse.key}: ${loaded.users} learners, ${loaded.enrollments} enrollments, ${loaded.completions} completions`,
  ];
}

async function stopAll(exitCode) {
  if (stopping) return;
  stopping = true;
  let clean = true;
  for (const { child, exited } of [...commands]) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  }
  // The example application, then Completion, then Sign-on: whatever order they started in.
  if (!(await stopEditorial())) clean = false;
  const stopOrder = [services.completion, services.signon];
  const inStopOrder = [...running].sort((a, b) => stopOrder.indexOf(a.service) - stopOrder.indexOf(b.service));
  for (const { service, child, exited } of inStopOrder) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    const { code, signal } = await exited;
    if (code !== 0) {
      clean = false;
      console.error(`${service.name} did not stop cleanly (${signal ?? `exit code ${code}`})`);
    }
  }
  // The database last: a fast shutdown with its checkpoint, so the next start needs no recovery.
  if (database !== null) {
    try {
      await database.stop();
    } catch (error) {
      clean = false;
      console.error(`the database server did not stop cleanly (${error instanceof Error ? error.message : error})`);
    }
  }
  process.exit(exitCode === 0 && !clean ? 1 : exitCode);
}

let firstSignalAt = null;
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    // One Ctrl-C can arrive twice: the terminal signals the whole foreground group (npm and this script), and npm
    // passes it on. So only a signal more than a second after the first counts as a second Ctrl-C: while a
    // service is slow to stop, it kills what is left (the "exit" handler below) and gives up.
    const now = Date.now();
    if (firstSignalAt === null) firstSignalAt = now;
    else if (now - firstSignalAt < 1000) return;
    else {
      console.error("stopping at once: services still running are killed");
      process.exit(1);
    }
    void stopAll(0);
  });
}
// Run by npm (`npm start`): should npm end without passing a signal on (killed on its own), npm start is over too.
if (process.env.npm_lifecycle_event === "start") {
  const npm = process.ppid;
  setInterval(() => {
    if (process.ppid === npm || stopping) return;
    console.error("npm has ended: stopping the services");
    void stopAll(1);
  }, 1000).unref();
}
process.on("exit", () => {
  if (instanceLock !== null) releaseDataDirectory(instanceLock);
  // The set-up was committed, so a later start makes none: when what followed it failed, this is the
  // last chance to show its password and token (writes to a terminal or pipe are synchronous here).
  if (created !== null && !reported) console.log([...firstStartReport(created, undefined), ""].join("\n"));
  for (const { child } of [...running, ...commands]) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});


/** The data directory's npm-start.lock, once this process holds it. */
let instanceLock = null;
/** Whether that lock was left by an npm start that no longer runs (killed): its database server may still be stopping. */
let previousKilled = false;

/** Refuses, plainly, to start beside another npm start in this directory or on ports something holds. */
async function checkAlone() {
  let claim;
  try {
    claim = await claimDataDirectory(dataDir, { signon: urls.signonPublic });
  } catch (error) {
    if (error?.code !== "EACCES" && error?.code !== "EPERM") throw error;
    throw new StartError(
      `npm start: ${dataDir} belongs to another account and cannot be written: start Tessera as its owner, or in another directory.`,
      1,
    );
  }
  if (claim.heldBy) {
    const { pid, signon } = claim.heldBy;
    throw new StartError(
      `npm start is already running in ${home}${pid ? ` (process ${pid}${signon ? `, Sign-on at ${signon}` : ""})` : ""}.\n` +
        "Use that one, or stop it first (Ctrl-C in its terminal).",
      1,
    );
  }
  instanceLock = claim.path;
  previousKilled = claim.tookOver === true;
  const taken = await takenPorts(settings.host, [
    { name: "Sign-on (SIGNON_PORT)", port: ports.signon },
    { name: "Completion (COMPLETION_PORT)", port: ports.completion },
    { name: "the example application (EDITORIAL_APP_PORT)", port: ports.editorial },
  ]);
  if (taken.length > 0) {
    throw new StartError(
      taken.map(({ name, port }) => `npm start: port ${port} on ${settings.host}, for ${name}, is in use (another npm start, or another program).`).join("\n") +
        "\nStop what listens there, or choose other ports (npm start -- --help).",
      1,
    );
  }
}

try {
  await checkAlone();
  await buildChanged();
  if (givenDatabaseUrl === undefined) {
    if (previousKilled) await waitForPreviousDatabase();
    await startDatabase();
  }
  // All at once: the migrations take turns (an advisory lock), Completion needs nothing from
  // the set-up, and the example application only its credentials file, there already on a
  // later start. The first start's set-up applies Sign-on's migrations itself if it comes first.
  const signon = start(services.signon);
  const early = existsSync(credentialsFile) ? startEditorial() : null;
  // Awaited below, or left when something else failed first (which stops everything anyway).
  early?.catch(() => undefined);
  const settingUp = firstStartDone().then((done) => done ?? bootstrap());
  // Completion checks bearer tokens as the `completion` application: it starts once the set-up says which that is.
  const completion = settingUp.then((setUp) => start(completionOf(setUp)));
  const [setUp] = await Promise.all([settingUp, signon, completion]);
  const report = [];
  if (setUp.status === "created") {
    created = setUp;
    // A credentials file left from older data holds another client secret: start again with the new one.
    const editorial = early === null ? startEditorial() : early.then(stopEditorial).then(() => startEditorial());
    const [, loaded] = await Promise.all([editorial, loadDemoCourse(setUp.api_client.access_token)]);
    report.push(...firstStartReport(setUp, loaded));
  } else {
    await (early ?? startEditorial());
    report.push("", `Reusing the data in ${dataDir}: the first start was done on ${setUp.completed_at} (superadmin ${setUp.admin_email}).`);
  }
  if (!stopping) {
    console.log(
      [
        ...report,
        "",
        "Tessera is running:",
        `  Sign-on      ${urls.signonPublic} (sign in at this address: passkeys work only at the public URL)`,
        `  Completion   ${urls.completion}/api/completion/v1/`,
        `  Editorial    ${urls.editorial} (example application)`,
        `  Version      ${version} (CHANGELOG.md)`,
        "Press Ctrl-C to stop.",
        "",
      ].join("\n"),
    );
    reported = true;
  }
} catch (error) {
  if (error instanceof StartError) {
    console.error(error.message);
    process.exit(error.exitCode);
  }
  if (!stopping) {
    console.error(error instanceof Error ? error.message : error);
    await stopAll(1);
  }
}
