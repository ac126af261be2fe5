import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { chmod, mkdtemp, readFile } from "node:fs/promises";
import { removeDataFolder } from "../src/testing/index.js";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isRunning } from "../src/postgres-server/running-server.js";
import { queryOnce } from "./support/query-once.js";

const embeddedDatabase = fileURLToPath(new URL("../src/postgres-server/embedded-database.ts", import.meta.url));
let parent: string;
const started: ChildProcess[] = [];

beforeAll(async () => {
  parent = await mkdtemp(join(tmpdir(), "tessera-guard-"));
  // Run by root, the server runs as the account "postgres", which must be let through.
  await chmod(parent, 0o711);
});

afterAll(async () => {
  for (const child of started) {
    try {
      process.kill(-(child.pid as number), "SIGKILL");
    } catch {
      // gone already
    }
  }
  await removeDataFolder(parent);
});

/**
 * A stand-in for `npm start` in a process group of its own: starts the embedded
 * database with `stopWhenCallerEnds`, prints its URL, and waits to be killed.
 */
async function launcher(home: string): Promise<{ child: ChildProcess; url: string }> {
  const script = `
    const { startEmbeddedDatabase } = await import(${JSON.stringify(embeddedDatabase)});
    const database = await startEmbeddedDatabase({ home: ${JSON.stringify(home)}, migrations: [], stopWhenCallerEnds: true });
    process.stdout.write(JSON.stringify({ url: database.url }) + "\\n");
    setInterval(() => undefined, 1000);`;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"], detached: true });
  started.push(child);
  const [chunk] = (await once(child.stdout!, "data")) as [Buffer];
  return { child, url: (JSON.parse(chunk.toString().split("\n")[0] ?? "") as { url: string }).url };
}

function postmasterPid(home: string): number {
  return Number(readFileSync(join(home, "postgres", "postmaster.pid"), "utf8").split("\n")[0]);
}

async function untilEnded(pid: number, timeoutMs = 30_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isRunning(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  return !isRunning(pid);
}

describe("startEmbeddedDatabase with stopWhenCallerEnds", () => {
  it("outlives a kill of its caller's process group until its last client has gone, then shuts down cleanly", async () => {
    const home = join(parent, "killed");
    const { child, url } = await launcher(home);
    await queryOnce(url, "CREATE TABLE acknowledged AS SELECT generate_series(1, 100) AS id");
    const postmaster = postmasterPid(home);
    // A service still connected, as the services are while they stop.
    const client = new pg.Client({ connectionString: url });
    await client.connect();

    process.kill(-(child.pid as number), "SIGKILL");
    await once(child, "exit");

    // The server was not in the caller's group, and waits for the session that is still open.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(isRunning(postmaster)).toBe(true);
    expect((await client.query<{ n: number }>("SELECT count(*)::int AS n FROM acknowledged")).rows).toEqual([{ n: 100 }]);
    await client.end();

    expect(await untilEnded(postmaster)).toBe(true);
    expect(await readFile(join(home, "postgres.log"), "utf8")).toMatch(/database system is shut down\n$/);

    // Stopped cleanly: the next start needs no recovery, and finds the data.
    const again = await launcher(home);
    expect(await queryOnce(again.url, "SELECT count(*)::int AS n FROM acknowledged")).toEqual([{ n: 100 }]);
    const log = await readFile(join(home, "postgres.log"), "utf8");
    expect(log).not.toMatch(/not properly shut down|was interrupted/);
    process.kill(-(again.child.pid as number), "SIGKILL");
    expect(await untilEnded(postmasterPid(home))).toBe(true);
  });
});
