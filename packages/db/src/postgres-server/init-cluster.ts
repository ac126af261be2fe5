import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chown, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { PostgresServerError, USE_DATABASE_URL } from "./postgres-server-error.js";
import type { ServerUser } from "./server-user.js";

/** The database superuser every embedded cluster has. */
export const SUPERUSER = "postgres";

/** Where the superuser's password is kept: beside the data directory, mode 0600. */
export function passwordFile(dataDir: string): string {
  return path.join(path.dirname(dataDir), "postgres-password");
}

/**
 * Creates a cluster in `dataDir` (missing or empty) with `initdb`: superuser
 * `postgres`; connections over the Unix socket trusted (the socket's folder is
 * private to the server's account), TCP connections only with the superuser's
 * random password, which is written to {@link passwordFile}. UTF-8, with
 * PostgreSQL's own C.UTF-8 locale (code-point order and Unicode case), so the
 * cluster behaves the same on every machine.
 */
export async function initCluster(initdb: string, dataDir: string, user: ServerUser, options: { sync: boolean }): Promise<void> {
  const pwfile = passwordFile(dataDir);
  await writeFile(pwfile, `${randomBytes(24).toString("base64url")}\n`, { mode: 0o600 });
  if (user.switched) await chown(pwfile, user.uid, user.gid);
  const args = [
    `--pgdata=${dataDir}`,
    `--username=${SUPERUSER}`,
    `--pwfile=${pwfile}`,
    "--auth-local=trust",
    "--auth-host=scram-sha-256",
    "--encoding=UTF8",
    // Sorted by code point as in C, on every machine alike; upper and lower case of every script (C folds only ASCII:
    // a search for ZOË would miss Zoë).
    "--locale=C",
    "--locale-provider=builtin",
    "--builtin-locale=C.UTF-8",
    "--no-instructions",
    ...(options.sync ? [] : ["--no-sync"]),
  ];
  const output = await runAs(initdb, args, user);
  if (output.code !== 0) {
    const reason = output.text.split("\n").find((line) => line.startsWith("initdb: error:")) ?? output.text.trim().split("\n").at(-1);
    throw new PostgresServerError(
      "failed",
      `Could not create the embedded PostgreSQL cluster in ${dataDir} (${reason ?? `initdb exited with ${output.code}`}), ${USE_DATABASE_URL}.`,
    );
  }
}

/** The superuser's password from {@link passwordFile}. */
export async function readPassword(dataDir: string): Promise<string> {
  return (await readFile(passwordFile(dataDir), "utf8")).trim();
}

/** Runs a PostgreSQL program as the server's account and collects what it prints. */
export function runAs(program: string, args: string[], user: ServerUser): Promise<{ code: number; text: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, {
      ...(user.switched ? { uid: user.uid, gid: user.gid } : {}),
      env: { ...process.env, LC_ALL: "C" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let text = "";
    child.stdout.on("data", (chunk: Buffer) => (text += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (text += chunk.toString()));
    // Not a raw EACCES or ENOENT for a person: which program, and what stopped it.
    child.once("error", (error: NodeJS.ErrnoException) =>
      reject(new PostgresServerError("failed", `Could not run ${program} (${error.code ?? error.message}), ${USE_DATABASE_URL}.`)),
    );
    child.once("close", (code) => resolve({ code: code ?? -1, text }));
  });
}
