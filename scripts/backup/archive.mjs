// The backup file: one gzip-compressed tar archive (written and read by the npm package `tar`) holding
// manifest.json, then data/: the installation's ./data as a restore puts it back. The manifest lists every folder,
// and every file with its size and SHA-256, so that a damaged archive is found before anything is restored from it.
import { createHash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { link, open, readdir, readFile, unlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { pipeline } from "node:stream/promises";
import { create, extract } from "tar";

/** The manifest's name in the archive, and the first entry of it. */
export const MANIFEST = "manifest.json";
/** The folder of the archive that becomes ./data. */
export const DATA = "data";
/** What the manifest's `format` says; a restore refuses any other. */
export const FORMAT = "tessera-backup 1";

/** What is wrong with a backup file: its message says what, for a sentence that ends "…: nothing was changed". */
export class DamagedBackup extends Error {}

/**
 * Writes manifest.json into `staging` (which holds data/): `about` (versions, time, LSNs), then every folder of
 * data/, and every file with its size and SHA-256. Returns the manifest.
 * @param {string} staging
 * @param {Record<string, unknown>} about
 */
export async function writeManifest(staging, about) {
  const { files, folders } = await listTree(staging, DATA);
  /** @type {Record<string, { size: number, sha256: string }>} */
  const digests = {};
  for (const file of files) digests[file] = await digestOf(join(staging, file));
  const manifest = { format: FORMAT, ...about, folders, files: digests };
  await writeFile(join(staging, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
  return manifest;
}

/**
 * Packs `staging` (manifest.json first, then data/) into `file`, mode 0600 (it holds the installation's secrets),
 * flushed to disk. Written beside it first and linked into place at the end: a backup cut short leaves no file that
 * looks whole, and an existing file is never replaced.
 * @param {string} staging
 * @param {string} file
 */
export async function writeArchive(staging, file) {
  const partial = partialFileOf(file);
  try {
    await pipeline(create({ gzip: true, cwd: staging, portable: true }, [MANIFEST, DATA]), createWriteStream(partial, { flags: "wx", mode: 0o600 }));
    await flush(partial);
    await link(partial, file);
    await flush(dirname(file));
  } finally {
    await unlink(partial).catch(() => undefined);
  }
}

/** Where {@link writeArchive} writes `file` until it is whole. @param {string} file */
export function partialFileOf(file) {
  return `${file}.partial`;
}

/**
 * Unpacks `file` into the empty folder `into` and checks what came out against the manifest: every folder and
 * file it lists, each file's size and SHA-256, and nothing else. Returns the manifest.
 * @param {string} file
 * @param {string} into
 * @throws {DamagedBackup} when the archive cannot be read whole or does not match its manifest
 */
export async function extractArchive(file, into) {
  try {
    await extract({ file, cwd: into, strict: true, preserveOwner: false });
  } catch (error) {
    throw new DamagedBackup(`it cannot be read whole (${error.message})`);
  }
  let manifest;
  try {
    manifest = JSON.parse(await readFile(join(into, MANIFEST), "utf8"));
  } catch {
    throw new DamagedBackup(`it has no readable ${MANIFEST}`);
  }
  if (manifest?.format !== FORMAT) throw new DamagedBackup(`it is not a backup written by npm run backup (its ${MANIFEST} says format ${JSON.stringify(manifest?.format)})`);
  const found = await listTree(into, DATA);
  const [files, folders] = [new Set(found.files), new Set(found.folders)];
  const listed = Object.keys(manifest.files ?? {});
  const missing = [...listed.filter((path) => !files.has(path)), ...(manifest.folders ?? []).filter((path) => !folders.has(path))];
  if (missing.length > 0) {
    throw new DamagedBackup(`${missing[0]}${missing.length > 1 ? ` and ${missing.length - 1} more listed in its manifest are` : ", listed in its manifest, is"} missing`);
  }
  const extra = found.files.filter((path) => !Object.hasOwn(manifest.files, path));
  if (extra.length > 0) throw new DamagedBackup(`${extra[0]} is not listed in its manifest`);
  for (const path of listed) {
    const expected = manifest.files[path];
    const actual = await digestOf(join(into, path));
    if (actual.size !== expected.size || actual.sha256 !== expected.sha256) throw new DamagedBackup(`${path} does not match its SHA-256 in the manifest`);
  }
  return manifest;
}

/**
 * The files and folders under `top` of `root`, as paths relative to `root` with "/" between names, sorted.
 * Anything but a file or a folder (a link, a socket) is a mistake here.
 */
async function listTree(root, top) {
  const files = [];
  const folders = [top];
  const walk = async (relative) => {
    let entries;
    try {
      entries = await readdir(join(root, relative), { withFileTypes: true });
    } catch (error) {
      if (error.code === "ENOENT") throw new DamagedBackup(`it has no folder ${relative}`);
      throw error;
    }
    for (const entry of entries) {
      const path = `${relative}/${entry.name}`;
      if (entry.isDirectory()) {
        folders.push(path);
        await walk(path);
      } else if (entry.isFile()) files.push(path);
      else throw new DamagedBackup(`${path} is neither a file nor a folder`);
    }
  };
  await walk(top);
  return { files: files.sort(), folders: folders.sort() };
}

/** @param {string} path */
async function digestOf(path) {
  const hash = createHash("sha256");
  let size = 0;
  for await (const chunk of createReadStream(path)) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { size, sha256: hash.digest("hex") };
}

/** fsync: the file (or folder: its entries) is on disk before the backup is said to be written. */
async function flush(path) {
  const handle = await open(path, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
