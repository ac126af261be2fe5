// `npm run restore -- <file> [--force]`: puts a backup written by `npm run backup` back as ./data of the working
// directory, in a stopped installation; the next `npm start` recovers the database from the backup's WAL and runs.
//
//   --force    ./data holds an installation already: move it aside to ./data.before-restore-<UTC time> (nothing is
//              deleted) and restore in its place
//   --verify   only check the file (every file against its SHA-256 in the manifest); change nothing
//
// It refuses while npm start (or the database server) runs in that directory, and checks the whole archive against
// its manifest, unpacked beside ./data, before it touches ./data. docs/operations.md, "Backing up the embedded
// database", is the runbook.
import { chown, lstat, mkdtemp, readdir, rename, rm, rmdir, unlink } from "node:fs/promises";
import { rmSync } from "node:fs";
import { constants } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { DATA, DamagedBackup, extractArchive } from "./backup/archive.mjs";
import { embeddedDatabaseModules, installationIn, stamp } from "./backup/installation.mjs";
import { runningStart } from "./start/single-instance.mjs";

const USAGE = `Usage: npm run restore -- <file> [--force | --verify]

Restores a backup written by npm run backup as ./data, into a stopped
installation; the next npm start recovers the database from it.
  --force    move an existing ./data aside to ./data.before-restore-<time> first
  --verify   only check the file against its manifest; change nothing
`;

const startedAt = Date.now();
let options;
try {
  options = parseArgs({
    args: process.argv.slice(2),
    options: { force: { type: "boolean" }, verify: { type: "boolean" }, help: { type: "boolean", short: "h" } },
    allowPositionals: true,
    strict: true,
  });
} catch (error) {
  console.error(`npm run restore: ${error.message}\n\n${USAGE}`);
  process.exit(2);
}
if (options.values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
if (options.positionals.length !== 1 || (options.values.force && options.values.verify)) {
  const mistake = options.positionals.length !== 1 ? `name one backup file; got ${options.positionals.length}` : "--force or --verify, not both";
  console.error(`npm run restore: ${mistake}.\n\n${USAGE}`);
  process.exit(2);
}

const installation = installationIn(process.cwd());
const file = resolve(installation.home, options.positionals[0]);

/** The folder the archive is unpacked into, and whether ./data is being swapped for it (two renames: never cut short). */
const underway = { staging: null, switching: false };
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    if (underway.switching) return;
    if (underway.staging !== null) rmSync(underway.staging, { recursive: true, force: true });
    console.error(`npm run restore: stopped by ${signal}; ${installation.dataDir} was not changed.`);
    process.exit(128 + constants.signals[signal]);
  });
}

try {
  console.log(options.values.verify ? await verify() : await restore());
} catch (error) {
  console.error(`npm run restore: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}

/** Checks the file, unpacked into a folder that is removed again. */
async function verify() {
  await checkReadable();
  const staging = await mkdtemp(join(installation.home, "data.verifying-"));
  underway.staging = staging;
  try {
    const manifest = await unpack(staging);
    return `${file} is whole: its ${Object.keys(manifest.files).length} files match their SHA-256 in its manifest (taken ${manifest.createdAt} by Tessera ${manifest.tessera}, PostgreSQL ${manifest.postgres}).`;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

async function restore() {
  await checkReadable();
  const modules = await embeddedDatabaseModules();
  await checkStopped(modules);
  const existing = await holdsInstallation();
  if (existing && !options.values.force) {
    throw new Error(
      `${installation.dataDir} holds an installation already: to move it aside (to ${installation.dataDir}.before-restore-<time>) and restore in its place, run again with --force.`,
    );
  }
  const staging = await mkdtemp(join(installation.home, "data.restoring-"));
  underway.staging = staging;
  try {
    const manifest = await unpack(staging);
    await checkPostgresVersion(modules, manifest);
    const restored = join(staging, DATA);
    await ownAsTheServer(modules, restored);
    // Again, now that the archive is unpacked: npm start may have been started meanwhile.
    await checkStopped(modules);
    let aside = null;
    underway.switching = true;
    if (existing) {
      aside = `${installation.dataDir}.before-restore-${stamp(new Date())}`;
      await rename(installation.dataDir, aside);
    } else await removeEmptyDataDir();
    try {
      await rename(restored, installation.dataDir);
    } catch (error) {
      if (aside !== null) await rename(aside, installation.dataDir).catch(() => undefined);
      throw new Error(`${installation.dataDir} could not be replaced (${error.message}); nothing was changed.`, { cause: error });
    }
    underway.switching = false;
    const seconds = ((Date.now() - startedAt) / 1000).toFixed(1);
    return [
      `Restored ${file} into ${installation.dataDir} in ${seconds} s: the backup taken ${manifest.createdAt} by Tessera ${manifest.tessera}, the database as of WAL ${manifest.stopLsn}.`,
      ...(aside === null ? [] : [`The data that was there is in ${aside}.`]),
      "The next npm start recovers the database from the backup's WAL and runs.",
    ].join("\n");
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

async function checkReadable() {
  let entry;
  try {
    entry = await lstat(file);
  } catch {
    throw new Error(`there is no backup file at ${file}.`);
  }
  if (!entry.isFile()) throw new Error(`${file} is not a file.`);
}

/** Unpacks and checks the archive into `staging`: its manifest, or a refusal saying what is damaged. */
async function unpack(staging) {
  try {
    return await extractArchive(file, staging);
  } catch (error) {
    if (error instanceof DamagedBackup) throw new Error(`${file} is damaged: ${error.message}; nothing was changed.`, { cause: error });
    throw error;
  }
}

/** Refuses while npm start, or the embedded database server without it, runs on this installation. */
async function checkStopped(modules) {
  const start = await runningStart(installation.dataDir);
  if (start !== null) {
    throw new Error(`npm start is running in ${installation.home} (process ${start.pid}): stop it first (Ctrl-C in its terminal), then restore.`);
  }
  const server = await modules.serverProcess(installation.clusterDir);
  if (server !== undefined) {
    throw new Error(`the database server of ${installation.dataDir} is running (process ${server}) for a command or a backup: wait until it has stopped, then restore.`);
  }
}

/** Whether ./data holds anything but a lock left by an npm start that no longer runs. */
async function holdsInstallation() {
  try {
    return (await readdir(installation.dataDir)).some((name) => name !== "npm-start.lock");
  } catch (error) {
    if (error.code === "ENOENT") return false;
    throw error;
  }
}

/** An empty ./data (or one holding only a stale lock) makes way for the restored one. */
async function removeEmptyDataDir() {
  await unlink(join(installation.dataDir, "npm-start.lock")).catch(() => undefined);
  await rmdir(installation.dataDir).catch((error) => {
    if (error.code !== "ENOENT") throw error;
  });
}

/** The embedded server must be of the backup's major version: refused now rather than at the next npm start. */
async function checkPostgresVersion(modules, manifest) {
  let installed;
  try {
    installed = await modules.majorVersion((await modules.postgresBinaries()).postgres);
  } catch {
    // No binaries for this platform: npm start says so itself.
    return;
  }
  const backedUp = String(manifest.postgres).split(".")[0];
  if (backedUp !== installed) {
    throw new Error(`${file} holds a PostgreSQL ${backedUp} database and this checkout's embedded server is PostgreSQL ${installed}: restore it with a Tessera of that PostgreSQL version; nothing was changed.`);
  }
}

/**
 * Run by root, the embedded server runs as its own account (see packages/db, server-user): the cluster, its
 * password and ./data itself become that account's, as npm start's first start makes them.
 */
async function ownAsTheServer(modules, restored) {
  const user = await modules.serverUser({ info: (message) => console.error(message), warn: (message) => console.error(message) });
  if (!user.switched) return;
  const own = async (path) => {
    await chown(path, user.uid, user.gid);
    const entry = await lstat(path);
    if (entry.isDirectory()) for (const name of await readdir(path)) await own(join(path, name));
  };
  await chown(restored, user.uid, user.gid);
  await own(join(restored, "postgres"));
  await chown(join(restored, "postgres-password"), user.uid, user.gid).catch((error) => {
    if (error.code !== "ENOENT") throw error;
  });
}
