// A freshly initialised PGlite cluster, kept as a tarball in the temporary
// directory, so that new databases (an in-memory one per test worker, a new
// data directory on first start) load it in about a second instead of running
// initdb for several seconds each time.
import { Blob } from "node:buffer";
import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { threadId } from "node:worker_threads";
import { PGlite } from "@electric-sql/pglite";

const IN_MEMORY = "memory://";

/**
 * The version of the installed PGlite: a template is only valid for the
 * version that wrote it.
 * @returns {Promise<string>}
 */
async function pgliteVersion() {
  let dir = dirname(fileURLToPath(import.meta.resolve("@electric-sql/pglite")));
  for (;;) {
    try {
      const manifest = JSON.parse(await readFile(join(dir, "package.json"), "utf8"));
      if (manifest.name === "@electric-sql/pglite") return String(manifest.version);
    } catch {
      // No package.json here: keep walking up.
    }
    const up = dirname(dir);
    if (up === dir) return "unknown";
    dir = up;
  }
}

/**
 * Whether a data directory has yet to be initialised (missing or empty).
 * @param {string} dataDir
 * @returns {Promise<boolean>}
 */
async function isNew(dataDir) {
  try {
    return (await readdir(dataDir)).length === 0;
  } catch (error) {
    if (/** @type {NodeJS.ErrnoException} */ (error).code === "ENOENT") return true;
    throw error;
  }
}

/**
 * Opens PGlite on a data directory (or `memory://`). A new database starts
 * from the cached template when there is one; otherwise it is initialised and
 * becomes the template for the next time. An existing directory opens as is.
 * @param {string} dataDir
 * @returns {Promise<PGlite>}
 */
export async function openPGlite(dataDir) {
  const onDisk = dataDir !== IN_MEMORY;
  if (onDisk && !(await isNew(dataDir))) return PGlite.create({ dataDir });
  if (onDisk) await mkdir(dataDir, { recursive: true });

  const template = join(tmpdir(), `tessera-pglite-${await pgliteVersion()}-template.tar`);
  const cached = await readFile(template).catch(() => null);
  if (cached !== null) {
    try {
      return await PGlite.create({ dataDir, loadDataDir: new Blob([cached]) });
    } catch {
      // An unusable template: initialise from scratch and replace it below.
      if (onDisk) await emptyDirectory(dataDir);
    }
  }
  const db = await PGlite.create({ dataDir });
  const dump = await db.dumpDataDir("none");
  const temporary = `${template}.${process.pid}-${threadId}.tmp`;
  await writeFile(temporary, new Uint8Array(await dump.arrayBuffer()));
  await rename(temporary, template);
  return db;
}

/** @param {string} dir */
async function emptyDirectory(dir) {
  for (const entry of await readdir(dir)) await rm(join(dir, entry), { recursive: true, force: true });
}
