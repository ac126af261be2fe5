// One npm start per data directory, and none on ports something else holds: a second start says so plainly.
import { readFileSync, unlinkSync } from "node:fs";
import { mkdir, open, readFile, unlink } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";

/** @param {number} pid */
function isRunning(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === "EPERM";
  }
}

/**
 * Takes `<dataDir>/npm-start.lock` for this process. Returns its path (and
 * `tookOver`: whether a lock left by a process that no longer runs was taken
 * over), or the record of the npm start that holds it (`{ pid, signon }`).
 * @param {string} dataDir
 * @param {{ signon: string }} about what a second start should be told
 */
export async function claimDataDirectory(dataDir, about) {
  await mkdir(dataDir, { recursive: true });
  const path = join(dataDir, "npm-start.lock");
  let tookOver = false;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(path, "wx");
      await handle.writeFile(JSON.stringify({ pid: process.pid, ...about }));
      await handle.close();
      return { path, tookOver };
    } catch (error) {
      if (error.code !== "EEXIST") throw error;
    }
    const holder = await liveHolder(path);
    if (holder !== null) return { heldBy: holder };
    tookOver = true;
    await unlink(path).catch(() => undefined);
  }
  return { heldBy: { pid: null } };
}

/**
 * The npm start that runs in `dataDir` now (`{ pid, signon }` from its lock), or null: for a command that must not
 * run beside it (`npm run restore`). Takes nothing.
 * @param {string} dataDir
 */
export function runningStart(dataDir) {
  return liveHolder(join(dataDir, "npm-start.lock"));
}

/** The record in the lock at `path` when another process that still runs wrote it, else null. @param {string} path */
async function liveHolder(path) {
  let holder = null;
  try {
    holder = JSON.parse(await readFile(path, "utf8"));
  } catch {
    // missing, written half, or being removed: held by nobody
  }
  return holder !== null && typeof holder.pid === "number" && holder.pid !== process.pid && isRunning(holder.pid) ? holder : null;
}

/** Removes the lock when it is this process's (also from an "exit" handler: synchronous). @param {string} path */
export function releaseDataDirectory(path) {
  try {
    if (JSON.parse(readFileSync(path, "utf8")).pid === process.pid) unlinkSync(path);
  } catch {
    // already gone
  }
}

/** Whether something listens on `host:port` already. @param {string} host @param {number} port */
function portTaken(host, port) {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", (error) => resolve(error.code === "EADDRINUSE" || error.code === "EACCES"));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(false)));
  });
}

/**
 * The named ports on `host` that something holds already.
 * @param {string} host
 * @param {{ name: string, port: number }[]} wanted
 */
export async function takenPorts(host, wanted) {
  const taken = [];
  for (const entry of wanted) if (await portTaken(host, entry.port)) taken.push(entry);
  return taken;
}
