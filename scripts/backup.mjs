// `npm run backup [-- <file>]`: a consistent backup of the embedded installation (./data of the working directory,
// as npm start uses it) in one file, `./backups/tessera-<UTC time>.tar.gz` unless another is named, mode 0600.
//
// Taken while npm start runs, without stopping anything: the PostgreSQL cluster as an online base backup through the
// server's socket (scripts/backup/base-backup.mjs), with the WAL it needs to be consistent; beside it the files of
// ./data the installation needs (secret-key, postgres-password, editorial-app.json). When nothing runs, the
// database server is started for the backup's few seconds and stopped again, so the backup is taken the same way.
// The archive's manifest holds each file's SHA-256 (scripts/backup/archive.mjs). `npm run restore -- <file>` puts
// it back; docs/operations.md, "Backing up the embedded database", is the runbook.
import { existsSync, rmSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import { constants } from "node:os";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { DATA, partialFileOf, writeArchive, writeManifest } from "./backup/archive.mjs";
import { takeBaseBackup } from "./backup/base-backup.mjs";
import { embeddedDatabaseModules, installationIn, root, stamp, version } from "./backup/installation.mjs";

const USAGE = `Usage: npm run backup [-- <file>]

Backs up the embedded database and the files beside it in ./data into one
file (default ./backups/tessera-<UTC time>.tar.gz), while npm start runs or not.
Restore it with: npm run restore -- <file>
`;

/** Files of ./data a restored installation does without: the server's log, npm start's lock, the socket and its lock. */
function notNeeded(name) {
  return name === "postgres.log" || name === "npm-start.lock" || name.startsWith(".s.PGSQL.");
}

const startedAt = Date.now();
let options;
try {
  options = parseArgs({ args: process.argv.slice(2), options: { help: { type: "boolean", short: "h" } }, allowPositionals: true, strict: true });
} catch (error) {
  console.error(`npm run backup: ${error.message}\n\n${USAGE}`);
  process.exit(2);
}
if (options.values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
if (options.positionals.length > 1) {
  console.error(`npm run backup: one file at most; got ${options.positionals.length}.\n\n${USAGE}`);
  process.exit(2);
}

const installation = installationIn(process.cwd());
const file = resolve(installation.home, options.positionals[0] ?? join("backups", `tessera-${stamp(new Date(startedAt))}.tar.gz`));

/** What an interruption must undo: the folder the backup is assembled in, and a database server started for it. */
const underway = { staging: null, serverPid: null, written: false };
// Ctrl-C, or a stop: the server started here stops (fast, clean), nothing half-written stays, and the end of this
// process ends the backup session on the server, which drops its slot.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    if (underway.serverPid !== null) {
      try {
        process.kill(underway.serverPid, "SIGINT");
      } catch {
        // gone already
      }
    }
    if (underway.staging !== null) rmSync(underway.staging, { recursive: true, force: true });
    if (!underway.written) rmSync(partialFileOf(file), { force: true });
    console.error(`npm run backup: stopped by ${signal}; ${underway.written ? `${file} was written whole before that.` : "no backup was written."}`);
    process.exit(128 + constants.signals[signal]);
  });
}

try {
  const written = await backUp();
  const seconds = ((Date.now() - startedAt) / 1000).toFixed(1);
  const { size } = await stat(file);
  const shown = relative(process.cwd(), file).startsWith("..") ? file : relative(process.cwd(), file);
  console.log(
    [
      `Wrote ${file} (${(size / 1e6).toFixed(1)} MB, ${Object.keys(written.manifest.files).length} files) in ${seconds} s:`,
      `  the database as of WAL ${written.manifest.stopLsn} (an online base backup from ${written.manifest.startLsn}, ${written.manifest.walSegments.length} WAL segment(s))`,
      `  and ${written.beside.length > 0 ? written.beside.join(", ") : "no other file"} from ${installation.dataDir}.`,
      ...(written.startedHere ? ["The database server was not running: it was started for the backup and stopped again."] : []),
      `Restore it into a stopped installation with: npm run restore -- ${shown}`,
    ].join("\n"),
  );
} catch (error) {
  console.error(`npm run backup: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}

/** Takes the backup into `file`; what it holds. */
async function backUp() {
  if (process.env.DATABASE_URL) {
    throw new Error(
      "DATABASE_URL is set, so Tessera's data is on that PostgreSQL server: back it up with pg_dump (docs/deployment.md, Backups); npm run backup copies the embedded database in ./data.",
    );
  }
  if (!existsSync(join(installation.clusterDir, "PG_VERSION"))) {
    throw new Error(`${installation.dataDir} holds no embedded database (npm start makes it at its first start): there is nothing to back up.`);
  }
  if (existsSync(file)) throw new Error(`${file} exists already: name another file.`);
  if (file.startsWith(`${installation.dataDir}${sep}`)) throw new Error(`${file} is inside ${installation.dataDir}, which a restore replaces: name a file outside it.`);
  const modules = await embeddedDatabaseModules();
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  // Beside the archive: on the same disk, and gone whatever happens.
  const staging = await mkdtemp(join(dirname(file), `.${basename(file)}-`));
  underway.staging = staging;
  try {
    await mkdir(join(staging, DATA), { mode: 0o700 });
    const server = await openServer(modules);
    let taken;
    try {
      taken = await baseBackup(server.url, join(staging, DATA, "postgres"));
    } finally {
      await server.stop();
    }
    const beside = [];
    for (const entry of await readdir(installation.dataDir, { withFileTypes: true })) {
      if (!entry.isFile() || notNeeded(entry.name)) continue;
      await copyFile(join(installation.dataDir, entry.name), join(staging, DATA, entry.name));
      beside.push(entry.name);
    }
    const manifest = await writeManifest(staging, {
      tessera: version,
      createdAt: new Date(startedAt).toISOString(),
      postgres: taken.postgres,
      startLsn: taken.startLsn,
      stopLsn: taken.stopLsn,
      timeline: taken.timeline,
      walSegments: taken.walSegments,
      from: installation.dataDir,
    });
    await writeArchive(staging, file);
    underway.written = true;
    return { manifest, beside, startedHere: server.startedHere };
  } finally {
    await rm(staging, { recursive: true, force: true });
    underway.staging = null;
  }
}

/**
 * The embedded server of the installation: the one running (npm start's, or a command's), or else one started here
 * for the backup, which `stop` stops again.
 */
async function openServer(modules) {
  for (let attempt = 0; ; attempt++) {
    const running = await modules.runningServer(installation.clusterDir);
    if (running !== undefined) return { url: modules.connectionUrl(running, "postgres"), startedHere: false, stop: async () => undefined };
    try {
      const started = await modules.startEmbeddedDatabase({ home: installation.dataDir, migrations: [], convert: false });
      underway.serverPid = started.server.pid;
      const stop = async () => {
        await started.stop();
        underway.serverPid = null;
      };
      return { url: started.server.url, startedHere: true, stop };
    } catch (error) {
      // Starting elsewhere meanwhile (npm start, or a command): use that one once it is ready.
      if (error?.problem === "already-running" && attempt < 120) {
        await sleep(250);
        continue;
      }
      throw error;
    }
  }
}

/** The online base backup into `target`, in one session of its own. */
async function baseBackup(url, target) {
  const pg = createRequire(join(root, "packages/db/package.json"))("pg");
  const client = new pg.Client({ connectionString: url, application_name: "npm run backup" });
  // An error of the connection (the server stopped) fails the query under way: that is where it is reported.
  client.on("error", () => undefined);
  await client.connect();
  try {
    const { rows } = await client.query("SELECT current_setting('server_version') AS version");
    const taken = await takeBaseBackup(client, { dataDir: installation.clusterDir, target, label: `npm run backup ${basename(file)}` });
    return { ...taken, postgres: String(rows[0].version) };
  } finally {
    // Also when the copy failed: the end of the session ends the backup and drops its slot.
    await client.end().catch(() => undefined);
  }
}
