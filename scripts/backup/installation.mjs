// What `npm run backup` and `npm run restore` share: where an installation keeps its data, the embedded database's
// helpers (from the db package's dist/, as npm start takes them), and the time stamp in the names they write.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { needsBuild } from "../build-package.mjs";

/** The repository root. */
export const root = fileURLToPath(new URL("../..", import.meta.url));

/** Tessera's version: the root package.json's (CHANGELOG.md, releases.json). */
export const version = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version;

/**
 * The installation in `home` (the working directory, as for npm start): `dataDir` is its ./data, `clusterDir` the
 * embedded PostgreSQL cluster in it.
 * @param {string} home
 */
export function installationIn(home) {
  const dataDir = resolve(home, "data");
  return { home: resolve(home), dataDir, clusterDir: join(dataDir, "postgres") };
}

/** A UTC time for file names: 20260506T194455Z. @param {Date} time */
export function stamp(time) {
  return time.toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
}

/**
 * The embedded database's modules, built first when the db package's sources changed since its last build (as npm
 * start and npm run migrate do).
 */
export async function embeddedDatabaseModules() {
  const packageDir = join(root, "packages/db");
  if (await needsBuild(packageDir)) {
    console.error("building packages/db (its sources changed since its last build)");
    const code = await new Promise((done) => {
      const child = spawn(process.execPath, [join(root, "scripts/build-package.mjs"), packageDir], { stdio: ["ignore", "ignore", "inherit"] });
      child.once("exit", (status) => done(status));
    });
    if (code !== 0) throw new Error("building packages/db failed; run `npm run build` to see why");
  }
  const load = (file) => import(pathToFileURL(join(packageDir, "dist/postgres-server", file)).href);
  const [embedded, running, user, binaries, directory] = await Promise.all([
    load("embedded-database.js"),
    load("running-server.js"),
    load("server-user.js"),
    load("binaries.js"),
    load("data-directory.js"),
  ]);
  return {
    startEmbeddedDatabase: embedded.startEmbeddedDatabase,
    runningServer: running.runningServer,
    serverProcess: running.serverProcess,
    connectionUrl: running.connectionUrl,
    serverUser: user.serverUser,
    postgresBinaries: binaries.postgresBinaries,
    majorVersion: directory.majorVersion,
  };
}
