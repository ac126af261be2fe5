// `npm start`: runs Sign-on (:3000), Completion (:3001) and the example application
// (:3002) on one machine. Without DATABASE_URL all three share the embedded database in
// ./data/pglite (of the working directory), served by the Sign-on process.
//
// On the first start (no `first_start` row in Sign-on's settings) `signon bootstrap
// first-start` creates a superadmin, registers the `completion` and example applications,
// issues a token to the "Demo API client" and writes the example application's credentials
// to ./data/editorial-app.json; then the demo course (OLX) and its learners are loaded into
// Completion. The password and the token are printed here once and kept nowhere else.
// A later start finds the row and creates nothing.
//
// Ctrl-C (SIGINT) or SIGTERM stops the example application, then Completion, then Sign-on,
// each letting running requests finish, so the embedded database closes last and cleanly.
// The exit code is 0 when every service stopped cleanly.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const home = process.cwd();
const dataDir = resolve(home, "data");
const tsx = import.meta.resolve("tsx");
const credentialsFile = join(dataDir, "editorial-app.json");
const demoCourse = {
  key: "course-v1:TesseraX+DL101+2026",
  olx: join(root, "packages/completion/examples/demo-course/olx"),
  learners: join(root, "packages/completion/examples/demo-course/learners.json"),
};

const services = {
  signon: {
    name: "signon",
    entry: "packages/signon/src/server.ts",
    port: 3000,
    ready: "/healthcheck/ready",
    env: { SIGNON_PORT: "3000" },
  },
  completion: {
    name: "completion",
    entry: "packages/completion/src/server.ts",
    port: 3001,
    ready: "/healthcheck/ready",
    env: { PORT: "3001", SIGNON_URL: "http://127.0.0.1:3000" },
  },
  editorial: {
    name: "editorial",
    entry: "examples/editorial-app/src/server.ts",
    port: 3002,
    ready: "/healthcheck/ready",
    env: { PORT: "3002", EDITORIAL_APP_URL: "http://127.0.0.1:3002", EDITORIAL_APP_CREDENTIALS_FILE: credentialsFile },
  },
};

/** Services in the order they started; stopped in the reverse order. */
const running = [];
/** Commands (bootstrap, import) in flight: stopped before any service. */
const commands = new Set();
let stopping = false;
/** The first start's set-up once made, and whether it has been shown: its password and token must be, whatever fails after it. */
let created = null;
let reported = false;

function prefixLines(name, stream, target) {
  let rest = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk) => {
    const lines = (rest + chunk).split("\n");
    rest = lines.pop() ?? "";
    for (const line of lines) target.write(`${name.padEnd(10)} | ${line}\n`);
  });
  stream.on("end", () => {
    if (rest !== "") target.write(`${name.padEnd(10)} | ${rest}\n`);
  });
}

function spawnTs(entry, args, env) {
  return spawn(process.execPath, ["--import", tsx, join(root, entry), ...args], {
    cwd: home,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    // Its own process group: the terminal's Ctrl-C reaches this script only, which stops the rest in order.
    detached: true,
  });
}

function exitOf(child) {
  return new Promise((resolveExit) => child.once("exit", (code, signal) => resolveExit({ code, signal })));
}

function launch(service) {
  // Once stopping, nothing new starts: it would escape the stop that is under way.
  if (stopping) throw new Error(`not starting ${service.name}: stopping`);
  const child = spawnTs(service.entry, [], service.env);
  prefixLines(service.name, child.stdout, process.stdout);
  prefixLines(service.name, child.stderr, process.stderr);
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
      const response = await fetch(`http://127.0.0.1:${service.port}${service.ready}`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolveWait) => setTimeout(resolveWait, 100));
  }
  // Also when stopping: what waited for this service must not go on to start the next one.
  throw new Error(stopping ? `${service.name}: stopped before it was ready` : `${service.name} did not become ready on port ${service.port}`);
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
  const child = spawnTs(entry, args, {});
  prefixLines(name, child.stderr, process.stderr);
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

/** The first-start set-up in Sign-on: what it created, or `{ status: "done-before" }`. */
async function bootstrap() {
  const args = ["bootstrap", "first-start", "--json", "--credentials-file", credentialsFile];
  if (process.env.TESSERA_ADMIN_EMAIL) args.push("--admin-email", process.env.TESSERA_ADMIN_EMAIL);
  return JSON.parse(await runCommand("bootstrap", "packages/signon/src/cli.ts", args));
}

/** Loads the demo course (OLX) with the CLI and its learners through the API, with the demo client's token. */
async function loadDemoCourse(token) {
  await runCommand("completion", "packages/completion/src/cli.ts", ["import-olx", demoCourse.olx, "--course-key", demoCourse.key]);
  const response = await fetch(`http://127.0.0.1:${services.completion.port}/api/completion/v1/admin/import`, {
    method: "PUT",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: await readFile(demoCourse.learners, "utf8"),
  });
  if (!response.ok) throw new Error(`loading the demo learners failed: ${response.status} ${await response.text()}`);
  return response.json();
}

/** What the first start printed: `loaded` is undefined when the demo course could not be loaded. */
function firstStartReport(created, loaded) {
  return [
    "",
    "First start: the set-up below was created; the password and the token are shown only now",
    "(Sign-on keeps their hashes).",
    `  Superadmin     ${created.admin.email}`,
    `  Password       ${created.admin.password}`,
    `                 signs in at http://localhost:3000/sign-in; holds signin and admin on completion and ${created.example_app.name}`,
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
  for (const { service, child, exited } of [...running].reverse()) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    const { code, signal } = await exited;
    if (code !== 0) {
      clean = false;
      console.error(`${service.name} did not stop cleanly (${signal ?? `exit code ${code}`})`);
    }
  }
  process.exit(exitCode === 0 && !clean ? 1 : exitCode);
}

let firstSignalAt = null;
for (const signal of ["SIGINT", "SIGTERM"]) {
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
process.on("exit", () => {
  // The set-up was committed, so a later start makes none: when what followed it failed, this is the
  // last chance to show its password and token (writes to a terminal or pipe are synchronous here).
  if (created !== null && !reported) console.log([...firstStartReport(created, undefined), ""].join("\n"));
  for (const { child } of [...running, ...commands]) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

/** Stops one service (SIGTERM, waits for it) and forgets it. */
async function stopOne(entry) {
  entry.stopRequested = true;
  running.splice(running.indexOf(entry), 1);
  entry.child.kill("SIGTERM");
  await entry.exited;
}

try {
  await start(services.signon);
  // Completion needs nothing from the set-up, and the example application only its credentials
  // file: when that is there already (a later start), all three go at once.
  const early = existsSync(credentialsFile) ? start(services.editorial) : null;
  const [setUp] = await Promise.all([bootstrap(), start(services.completion)]);
  const report = [];
  if (setUp.status === "created") {
    created = setUp;
    // A credentials file left from older data holds another client secret: start again with the new one.
    const editorial = early === null ? start(services.editorial) : early.then(stopOne).then(() => start(services.editorial));
    const [, loaded] = await Promise.all([editorial, loadDemoCourse(setUp.api_client.access_token)]);
    report.push(...firstStartReport(setUp, loaded));
  } else {
    await (early ?? start(services.editorial));
    report.push("", `Reusing the data in ${dataDir}: the first start was done on ${setUp.completed_at} (superadmin ${setUp.admin_email}).`);
  }
  if (!stopping) {
    console.log(
      [
        ...report,
        "",
        "Tessera is running:",
        "  Sign-on      http://localhost:3000",
        "  Completion   http://127.0.0.1:3001/api/completion/v1/",
        "  Editorial    http://127.0.0.1:3002 (example application)",
        "Press Ctrl-C to stop.",
        "",
      ].join("\n"),
    );
    reported = true;
  }
} catch (error) {
  if (!stopping) {
    console.error(error instanceof Error ? error.message : error);
    await stopAll(1);
  }
}
