import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { chmod, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { queryOnce } from "./support/query-once.js";

const serveEntry = fileURLToPath(new URL("../src/postgres-server/serve.ts", import.meta.url));
let parent: string;
const started: ChildProcess[] = [];

beforeAll(async () => {
  parent = await mkdtemp(join(tmpdir(), "tessera-serve-"));
  // Run by root, the server runs as the account "postgres", which must be let through.
  await chmod(parent, 0o711);
});

afterAll(async () => {
  const alive = started.filter((child) => child.exitCode === null && child.signalCode === null);
  for (const child of alive) child.kill("SIGTERM");
  await Promise.all(alive.map((child) => once(child, "exit")));
  await rm(parent, { recursive: true, force: true });
});

interface Served {
  child: ChildProcess;
  url: string;
  stderr: () => string;
}

/** Runs serve.ts as `npm start` would: its own process group, standard input a pipe from here. */
async function serve(home: string): Promise<Served | { code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", serveEntry, "--home", home], { stdio: ["pipe", "pipe", "pipe"], detached: true });
  started.push(child);
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  let stdout = "";
  const line = new Promise<string | undefined>((resolve) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes("\n")) resolve(stdout.split("\n")[0]);
    });
    child.once("exit", () => resolve(undefined));
  });
  const first = await line;
  if (first === undefined) return { code: child.exitCode, stderr };
  return { child, url: (JSON.parse(first) as { url: string }).url, stderr: () => stderr };
}

function served(result: Awaited<ReturnType<typeof serve>>): Served {
  if (!("url" in result)) throw new Error(`serve.ts exited with ${result.code}: ${result.stderr}`);
  return result;
}

describe("serve.ts", () => {
  it("prints the database's URL, refuses a second start on the same folder, and stops cleanly on SIGTERM", async () => {
    const home = join(parent, "one");
    const first = served(await serve(home));
    expect(await queryOnce(first.url, "SELECT current_database() AS name")).toEqual([{ name: "tessera" }]);

    const second = await serve(home);
    expect(second).toEqual({ code: 1, stderr: expect.stringMatching(/^Tessera is already running there: a PostgreSQL server \(pid \d+\) uses .*\n$/) });

    first.child.kill("SIGTERM");
    const [code] = (await once(first.child, "exit")) as [number | null];
    expect(code).toBe(0);
    expect(await readFile(join(home, "postgres.log"), "utf8")).toMatch(/database system is shut down\n$/);
  });

  it("shuts the server down cleanly when the process that started it is killed (kill -9), and starts again with its data", async () => {
    const home = join(parent, "orphaned");
    // The stand-in for `npm start`: starts serve.ts, passes its first line on, and is then killed with its whole group.
    const starter = spawn(
      process.execPath,
      [
        "-e",
        `const child = require("node:child_process").spawn(process.execPath, ["--import", "tsx", ${JSON.stringify(serveEntry)}, "--home", ${JSON.stringify(home)}], { stdio: ["pipe", "inherit", "ignore"], detached: true });
         process.stdin.resume();`,
      ],
      { stdio: ["pipe", "pipe", "inherit"], detached: true },
    );
    started.push(starter);
    const [chunk] = (await once(starter.stdout!, "data")) as [Buffer];
    const { url } = JSON.parse(chunk.toString().split("\n")[0] ?? "") as { url: string };
    await queryOnce(url, "CREATE TABLE acknowledged AS SELECT generate_series(1, 100) AS id");

    process.kill(-starter.pid!, "SIGKILL");
    await once(starter, "exit");
    // serve.ts sees its standard input end and stops the server: the next start is not refused.
    let again: Awaited<ReturnType<typeof serve>> | undefined;
    for (let attempt = 0; attempt < 50; attempt++) {
      again = await serve(home);
      if ("url" in again) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const restarted = served(again!);
    expect(await queryOnce(restarted.url, "SELECT count(*)::int AS n FROM acknowledged")).toEqual([{ n: 100 }]);
    const log = await readFile(join(home, "postgres.log"), "utf8");
    expect(log).not.toMatch(/not properly shut down/);
    restarted.child.kill("SIGTERM");
    await once(restarted.child, "exit");
  });
});
