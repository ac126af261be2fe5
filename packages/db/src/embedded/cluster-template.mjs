// A freshly initialised PGlite cluster, kept as a tarball in the temporary
// directory, so that in-memory servers (one per test worker) load it in well
// under a second instead of running initdb for several seconds each time.
import { readFile, rename, writeFile } from "node:fs/promises";
import { Blob } from "node:buffer";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { threadId } from "node:worker_threads";
import { PGlite } from "@electric-sql/pglite";

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
 * Opens an in-memory PGlite, from the cached template when there is one;
 * otherwise initialises it and caches the template for the next time.
 * @returns {Promise<PGlite>}
 */
export async function createInMemoryPGlite() {
  const template = join(tmpdir(), `tessera-pglite-${await pgliteVersion()}-template.tar`);
  const cached = await readFile(template).catch(() => null);
  if (cached !== null) {
    try {
      return await PGlite.create({ loadDataDir: new Blob([cached]) });
    } catch {
      // An unusable template: initialise from scratch and replace it below.
    }
  }
  const db = await PGlite.create();
  const dump = await db.dumpDataDir("none");
  const temporary = `${template}.${process.pid}-${threadId}.tmp`;
  await writeFile(temporary, new Uint8Array(await dump.arrayBuffer()));
  await rename(temporary, template);
  return db;
}
