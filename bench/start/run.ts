// Time from `npm start` (node scripts/start.mjs) to all three services ready:
// Sign-on (:3000), Completion (:3001) and the example application (:3002).
//
//   1. fresh: an empty data directory, so the first-start set-up runs and the
//      demo course and its learners are loaded before the ready line;
//   2. second start: the same data directory again (set-up skipped).
//
//   node --import tsx bench/start/run.ts      (or: npm run bench -- start)
//
// Each start runs in a new temporary working directory (its ./data is the
// embedded database), is timed from spawn to the line "Tessera is running:",
// checked with one request to each service, then stopped with SIGINT (exit
// code 0 expected). BENCH_START_ROUNDS (default 1) repeats the pair; the
// median is printed. Ports 3000 to 3002 must be free. Target: under 15 s.
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";

const startScript = fileURLToPath(new URL("../../scripts/start.mjs", import.meta.url));
const rounds = Number(process.env.BENCH_START_ROUNDS ?? 1);
const readyLine = "Tessera is running:";
const checks = [
  "http://127.0.0.1:3000/healthcheck/ready",
  "http://127.0.0.1:3001/healthcheck/ready",
  "http://127.0.0.1:3002/healthcheck/ready",
];

function portInUse(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });
}

/** Starts `npm start` in `cwd`, returns the seconds until every service is ready, then stops it. */
async function timeStart(cwd: string): Promise<number> {
  const began = performance.now();
  const child = spawn(process.execPath, [startScript], { cwd, env: { ...process.env, DATABASE_URL: "" }, stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  let output = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  const ready = await new Promise<number>((resolve, reject) => {
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk;
      if (output.includes(readyLine)) resolve(performance.now() - began);
    });
    void exited.then((code) => reject(new Error(`npm start ended with ${code} before it was ready:\n${output.slice(-4000)}`)));
  });
  for (const url of checks) {
    const response = await fetch(url);
    if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  }
  child.kill("SIGINT");
  const code = await exited;
  if (code !== 0) throw new Error(`npm start exited with code ${code} after SIGINT:\n${output.slice(-4000)}`);
  return ready / 1000;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

for (const port of [3000, 3001, 3002]) {
  if (await portInUse(port)) {
    console.error(`Port ${port} is in use: stop what runs there (another npm start?) and run the benchmark again.`);
    process.exit(1);
  }
}

const fresh: number[] = [];
const again: number[] = [];
for (let round = 0; round < rounds; round++) {
  const cwd = await mkdtemp(join(tmpdir(), "tessera-bench-start-"));
  try {
    fresh.push(await timeStart(cwd));
    again.push(await timeStart(cwd));
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
}

const format = (seconds: number) => `${seconds.toFixed(1)} s`;
console.log(`npm start until Sign-on, Completion and the example application are ready (median of ${rounds}; target under 15 s)`);
console.log(`  fresh data directory (first-start set-up, demo course loaded)  ${format(median(fresh))}`);
console.log(`  second start on the same data                                  ${format(median(again))}`);
