// Sign-on's GET /user.json on the embedded PostgreSQL server (what `npm start`
// runs without DATABASE_URL) and on the outside PostgreSQL server, side by
// side in one run: requests per second and p99 latency at 10 concurrent
// callers, and the ratio embedded / outside (goal: at least 0.90).
//
//   npm run bench -- embedded-db      (outside server: DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres)
//
// Each side is Sign-on in a process of its own on a database of its server
// (tessera_bench_signon, dropped afterwards); the load comes from this
// process. The sides take turns for BENCH_ROUNDS rounds (default 3) of
// BENCH_SECONDS (default 10) after the same warm-up, and each side's median
// round is reported, so a burst of load from elsewhere does not decide it.
import autocannon from "autocannon";
import { forkSide, stopSide, type ForkedSide } from "../support/forked-side.js";
import type { Prepared } from "./serve.js";

const seconds = Number(process.env.BENCH_SECONDS || 10);
const rounds = Number(process.env.BENCH_ROUNDS || 3);
const connections = 10;
const warmUpSeconds = 2;

interface Measured {
  rps: number;
  p99: number;
  non2xx: number;
  errors: number;
}

function start(side: "embedded" | "outside"): Promise<ForkedSide<Prepared>> {
  return forkSide<Prepared>(new URL("./serve.ts", import.meta.url), [side]);
}

async function measure(side: Prepared, duration = seconds): Promise<Measured> {
  const result = await autocannon({ url: `${side.url}/user.json`, connections, duration, headers: { authorization: `Bearer ${side.accessToken}` } });
  return { rps: result.requests.average, p99: result.latency.p99, non2xx: result.non2xx, errors: result.errors };
}

function median(measured: Measured[]): Measured {
  const sorted = [...measured].sort((a, b) => a.rps - b.rps);
  return sorted[Math.floor(sorted.length / 2)] as Measured;
}

const embedded = await start("embedded");
const outside = await start("outside");
let rows: [Prepared, Measured][];
try {
  await measure(embedded.prepared, warmUpSeconds);
  await measure(outside.prepared, warmUpSeconds);
  const embeddedRounds: Measured[] = [];
  const outsideRounds: Measured[] = [];
  for (let round = 0; round < rounds; round++) {
    embeddedRounds.push(await measure(embedded.prepared));
    outsideRounds.push(await measure(outside.prepared));
  }
  rows = [
    [embedded.prepared, median(embeddedRounds)],
    [outside.prepared, median(outsideRounds)],
  ];
} finally {
  await stopSide(embedded.child);
  await stopSide(outside.child);
}

console.log(`\nGET /user.json, ${connections} connections, ${seconds} s per round, median of ${rounds} rounds\n`);
console.log("database                                          req/s   p99 ms");
for (const [side, measured] of rows) {
  console.log(`${side.postgres.padEnd(46)}${measured.rps.toFixed(0).padStart(9)}${measured.p99.toFixed(1).padStart(9)}`);
  if (measured.non2xx > 0 || measured.errors > 0) console.log(`  warning: ${measured.non2xx} non-2xx responses and ${measured.errors} errors`);
}
const ratio = (rows[0]?.[1].rps ?? 0) / (rows[1]?.[1].rps ?? 1);
console.log(`\nembedded / outside: ${(ratio * 100).toFixed(0)}% (goal: at least 90%)`);
