// Time from `npm start` (node <its options> scripts/start.mjs) to all three services ready:
// Sign-on (:3000), Completion (:3001) and the example application (:3002),
// on the embedded PostgreSQL server (DATABASE_URL cleared), and the memory of
// the running npm start right after the first start.
//
//   1. fresh: an empty data directory, so the cluster is created, the
//      first-start set-up runs and the demo course and its learners are
//      loaded before the ready line (goal: under 10 s);
//   2. second start: the same data directory again (set-up skipped; goal:
//      under 3 s).
//
// Memory: the resident set (RSS, from /proc) of npm start's process and every
// process under it, the PostgreSQL server's included, summed, once the first
// start is ready (goal: at most 400 MB). Linux only; elsewhere it is skipped.
//
//   node --import tsx bench/start/run.ts      (or: npm run bench -- start)
//
// Each start runs in a new temporary working directory (its ./data is the
// embedded database), is timed from spawn to the line "Tessera is running:",
// checked with one request to each service, then stopped with SIGINT (exit
// code 0 expected). BENCH_START_ROUNDS (default 1) repeats the pair; the
// median is printed. Ports 3000 to 3002 must be free.
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";

const startScript = fileURLToPath(new URL("../../scripts/start.mjs", import.meta.url));
/** Node.js's options as `npm start` passes them (package.json: `exec node <options> scripts/start.mjs`). */
const startOptions = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { scripts: { start: string } }
).scripts.start
  .split(" ")
  .filter((word) => word.startsWith("--"));
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

/** Parent of each process, from /proc. */
function parents(): Map<number, number> {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // ended meanwhile
    }
  }
  return parentOf;
}

/**
 * RSS in MB of `pid` and every process under it, summed, and how many processes
 * that is; also their PSS (each shared page counted once, split among its
 * sharers), which the sum of RSS overstates: PostgreSQL's processes share its
 * buffers, the Node.js processes their code.
 */
interface Memory {
  mb: number;
  pssMb: number;
  processes: number;
  /** Each process: what it runs (its command line, shortened) and its RSS in MB. */
  each: { what: string; mb: number }[];
}

/** A process's command line, shortened to what tells it apart (the script or program and its role). */
function describe(pid: number): string {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter((part) => part !== "");
    if (argv[0] === process.execPath || argv[0]?.endsWith("/node")) {
      const script = argv.find((part) => /\.(m?js|ts)$/.test(part) && !part.includes("exit-with-parent"));
      return `node ${script ? script.split("/").slice(-3).join("/") : argv.slice(1).join(" ")}`;
    }
    // PostgreSQL names its processes ("postgres: checkpointer", …) through its command line.
    return argv.join(" ").replace(/^\S*\//, "").slice(0, 60);
  } catch {
    return "?";
  }
}

function treeRss(pid: number): Memory {
  const parentOf = parents();
  const tree = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [child, parent] of parentOf) {
      if (tree.has(parent) && !tree.has(child)) {
        tree.add(child);
        grew = true;
      }
    }
  }
  let kb = 0;
  let pssKb = 0;
  const each: Memory["each"] = [];
  for (const member of tree) {
    try {
      const rssKb = Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${member}/status`, "utf8"))?.[1] ?? 0);
      kb += rssKb;
      pssKb += Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${member}/smaps_rollup`, "utf8"))?.[1] ?? 0);
      each.push({ what: describe(member), mb: rssKb / 1024 });
    } catch {
      // ended meanwhile
    }
  }
  return { mb: kb / 1024, pssMb: pssKb / 1024, processes: tree.size, each };
}

/**
 * Starts `npm start` in `cwd`, returns the seconds until every service is ready
 * (and, when asked, the memory of its processes then), then stops it.
 */
async function timeStart(cwd: string, measureMemory = false): Promise<{ seconds: number; memory?: Memory }> {
  const began = performance.now();
  const child = spawn(process.execPath, [...startOptions, startScript], { cwd, env: { ...process.env, DATABASE_URL: "" }, stdio: ["ignore", "pipe", "pipe"] });
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
  const memory = measureMemory && existsSync("/proc/self/status") ? treeRss(child.pid as number) : undefined;
  child.kill("SIGINT");
  const code = await exited;
  if (code !== 0) throw new Error(`npm start exited with code ${code} after SIGINT:\n${output.slice(-4000)}`);
  return { seconds: ready / 1000, ...(memory ? { memory } : {}) };
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
const memory: Memory[] = [];
for (let round = 0; round < rounds; round++) {
  const cwd = await mkdtemp(join(tmpdir(), "tessera-bench-start-"));
  // Run by root, the embedded server runs as the account "postgres", which must be let through.
  await chmod(cwd, 0o711);
  try {
    const first = await timeStart(cwd, true);
    fresh.push(first.seconds);
    if (first.memory) memory.push(first.memory);
    again.push((await timeStart(cwd)).seconds);
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
}

const format = (seconds: number) => `${seconds.toFixed(1)} s`;
console.log(`npm start on the embedded PostgreSQL server until Sign-on, Completion and the example application are ready (median of ${rounds})`);
console.log(`  fresh data directory (cluster created, first-start set-up, demo course loaded)  ${format(median(fresh))}   goal: under 10 s`);
console.log(`  second start on the same data                                                   ${format(median(again))}   goal: under 3 s`);
if (memory.length > 0) {
  const mb = median(memory.map((m) => m.mb));
  const pss = median(memory.map((m) => m.pssMb));
  console.log(`Memory right after the first start: ${mb.toFixed(0)} MB RSS summed over ${memory[0]?.processes} processes (npm start, its services, the PostgreSQL server)   goal: at most 400 MB`);
  console.log(`  (PSS, each shared page counted once: ${pss.toFixed(0)} MB)`);
  // The processes of the first round, largest first.
  for (const { what, mb } of [...memory[0]!.each].sort((a, b) => b.mb - a.mb)) console.log(`    ${mb.toFixed(0).padStart(5)} MB  ${what}`);
}
