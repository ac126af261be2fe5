import { execFile } from "node:child_process";
import { chmod, cp, lstat, mkdir, mkdtemp, readdir, rename, rm } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import type { Logger } from "../logger.js";
import { binariesIn, type PostgresBinaries } from "./binaries.js";
import { PostgresServerError } from "./postgres-server-error.js";
import type { ServerUser } from "./server-user.js";

const run = promisify(execFile);

/** Where a root process copies the PostgreSQL programs when the server's account cannot run them where npm put them. */
export const DEFAULT_BINARY_CACHE = "/var/cache/tessera";

/** What the server needs of a native folder (`pg-symlinks.json` and the rest stay behind). */
const COPIED_FOLDERS = ["bin", "lib", "share"];

/**
 * The binaries as the server's account can run them. A root process runs
 * PostgreSQL as the account `postgres`, which cannot reach the binaries of a
 * checkout that only root can enter (under `/root`, or in a `mktemp -d`
 * folder): they are then copied, once per release, to
 * `<cache>/postgres-<release>` (made under a temporary name and renamed, owned
 * by root, mode 0755), and run from there. No folder's permissions change.
 *
 * @throws {PostgresServerError} `unreachable-binaries` when the copy cannot be
 *   made, or cannot be run either.
 */
export async function runnableBinaries(binaries: PostgresBinaries, user: ServerUser, cache: string, log: Logger): Promise<PostgresBinaries> {
  if (!user.switched) return binaries;
  const inPlace = await whyNotRunnable(binaries.postgres, user);
  if (inPlace === undefined) return binaries;

  const target = path.join(cache, `postgres-${binaries.release}`);
  const refuse = (reason: string) =>
    new PostgresServerError(
      "unreachable-binaries",
      `PostgreSQL runs as the account "${user.name}" (it does not run as root), which cannot run the programs in ${binaries.native} (${inPlace}), ${reason}: install Tessera in a folder that account can enter (not under /root), run it as another user, or set DATABASE_URL to a PostgreSQL server (version 15 or later).`,
    );
  let copied: boolean;
  try {
    copied = await copyOnce(binaries.native, cache, target);
  } catch (error) {
    throw refuse(`and they could not be copied to ${target} (${reasonOf(error)})`);
  }
  if (!(await writableByRootOnly(target))) throw refuse(`and ${target} is not a folder that only root can change`);
  const copy = binariesIn(binaries, target);
  const fromCopy = await whyNotRunnable(copy.postgres, user);
  if (fromCopy !== undefined) throw refuse(`nor their copy in ${target} (${fromCopy})`);
  if (copied) {
    log.info(`database: the account "${user.name}" that runs PostgreSQL cannot run the programs in ${binaries.native}; copied them to ${target} and runs them from there`);
  }
  return copy;
}

/** Undefined when the server's account can run `postgres --version`; otherwise what stopped it. */
async function whyNotRunnable(postgres: string, user: ServerUser): Promise<string | undefined> {
  try {
    await run(postgres, ["--version"], { uid: user.uid, gid: user.gid, env: { ...process.env, LC_ALL: "C" } });
    return undefined;
  } catch (error) {
    return reasonOf(error);
  }
}

function reasonOf(error: unknown): string {
  const { code, stderr, message } = error as NodeJS.ErrnoException & { stderr?: string };
  const lastLine = stderr?.trim().split("\n").at(-1);
  if (lastLine) return lastLine;
  return typeof code === "string" ? code : message;
}

/** Copies `native` to `target` unless a copy is there already; true when this call made it. */
async function copyOnce(native: string, cache: string, target: string): Promise<boolean> {
  if (await exists(target)) return false;
  await mkdir(cache, { recursive: true, mode: 0o755 });
  if (!(await writableByRootOnly(cache))) throw new Error(`${cache} is not a folder that only root can change`);
  const temporary = await mkdtemp(path.join(cache, `.${path.basename(target)}-`));
  try {
    for (const folder of COPIED_FOLDERS) {
      await cp(path.join(native, folder), path.join(temporary, folder), { recursive: true, verbatimSymlinks: true });
    }
    await openToEveryone(temporary);
    try {
      await rename(temporary, target);
      return true;
    } catch (error) {
      // Another start made it meanwhile.
      if (["EEXIST", "ENOTEMPTY"].includes((error as NodeJS.ErrnoException).code ?? "")) return false;
      throw error;
    }
  } finally {
    await rm(temporary, { recursive: true, force: true });
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await lstat(file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw error;
  }
}

/** A real folder (not a link), owned by root, that no other account may write to. */
async function writableByRootOnly(folder: string): Promise<boolean> {
  const stats = await lstat(folder);
  return stats.isDirectory() && stats.uid === 0 && (stats.mode & 0o022) === 0;
}

/** Folders and programs 0755, other files 0644, whatever the umask and the modes in the package were. */
async function openToEveryone(folder: string): Promise<void> {
  await chmod(folder, 0o755);
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    const entryPath = path.join(folder, entry.name);
    if (entry.isDirectory()) await openToEveryone(entryPath);
    else if (entry.isFile()) await chmod(entryPath, (await lstat(entryPath)).mode & 0o111 ? 0o755 : 0o644);
  }
}
