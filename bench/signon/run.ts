// Sign-on against node-oidc-provider, side by side: requests per second and
// p99 latency of POST /token (authorization_code with fresh codes; the same
// for OpenID Connect codes, whose exchange signs an ES256 ID token on both
// sides; and refresh_token with fresh refresh tokens) and of GET /user.json
// (the peer's userinfo endpoint), 10 connections for 10 seconds each.
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench -- signon
//
// Each server runs in a process of its own; the load comes from this one.
// The sides take turns for BENCH_ROUNDS rounds (default 3) and each side's
// median round is reported, so a burst of load from elsewhere on the machine
// does not decide the ratio.
// Sign-on runs as shipped (request logging on) on a database it creates on
// that PostgreSQL server (tessera_bench_signon, or BENCH_SIGNON_DATABASE) and
// drops afterwards. The peer runs twice: with its data in memory (the
// comparison the verdict is about), and with every code, token and grant a
// durable row in PostgreSQL (tessera_bench_peer, or BENCH_PEER_DATABASE), as
// it runs in production. The peer's plain codes and refresh tokens are of
// grants without `openid`, so that, as Sign-on's, their exchange signs no ID
// token; and, as Sign-on's, each refresh retires the refresh token used. BENCH_SECONDS shortens a trial run; BENCH_FRESH sets how many fresh
// codes and refresh tokens each side prepares (half of it for the peer
// on PostgreSQL, which prepares them one row at a time). BENCH_SIGNON_PORT,
// BENCH_PEER_PORT and BENCH_PEER_POSTGRES_PORT set the servers' ports
// (default: any free port), so a run can go beside other work.
// The peer keeps codes an hour (as Sign-on's prepared codes), so none runs out
// during the run. Each side's non-2xx responses and connection errors are
// counted over all its rounds; a row with any is reported "not valid" with no ratio.
// A fourth side, the floor (floor-server.ts), takes its turn on the authorization_code row: Fastify with
// Sign-on's logging and form parser, one durable insert per request and nothing else, in the database
// tessera_bench_floor (BENCH_FLOOR_DATABASE) on port BENCH_FLOOR_PORT. Sign-on's exchange does all of
// that and more, so the floor's ratio to the peer in memory bounds ours.
// A second table gives each side's CPU time per request in its median round, from /proc (Linux): its
// process with every thread, and for the sides on PostgreSQL the server's processes, which are counted
// only when that server runs on this machine (so give it no other work during the run).
import autocannon from "autocannon";
import { forkSide, stopSide, type ForkedSide } from "../support/forked-side.js";
import { commandCpuSeconds, processCpuSeconds } from "../support/process-cpu.js";
import type { Prepared } from "./serve.js";

const seconds = Number(process.env.BENCH_SECONDS || 10);
const rounds = Number(process.env.BENCH_ROUNDS || 3);
const connections = 10;
const warmUpSeconds = 2;
// Codes and refresh tokens are single-use: prepare enough for every round at up to 8,000 requests a second.
const fresh = Number(process.env.BENCH_FRESH || rounds * (seconds + warmUpSeconds) * 8_000);
const freshOnPostgres = Math.ceil(fresh / 2);

type Side = "signon" | "oidc-provider" | "oidc-provider-postgres" | "floor";

interface Measured {
  rps: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** CPU per request, µs: the side's process (every thread), and this machine's PostgreSQL processes (ours only). */
  processCpuUs: number;
  databaseCpuUs: number;
}

/** Whose CPU a measurement counts: the side's process, and for ours the PostgreSQL server's processes. */
interface CpuOf {
  pid: number;
  database: boolean;
}

function start(side: Side): Promise<ForkedSide<Prepared>> {
  const count = side === "oidc-provider-postgres" ? freshOnPostgres : side === "floor" ? 2 * fresh : fresh;
  return forkSide<Prepared>(new URL("./serve.ts", import.meta.url), [side, String(count)]);
}

/** The round with the median request rate. */
function median(measured: Measured[]): Measured {
  const sorted = [...measured].sort((a, b) => a.rps - b.rps);
  return sorted[Math.floor(sorted.length / 2)] as Measured;
}

/** Non-2xx responses and errors over every round, so that no failing round hides behind the median. */
function failures(measured: Measured[]): Pick<Measured, "non2xx" | "errors"> {
  return { non2xx: measured.reduce((sum, m) => sum + m.non2xx, 0), errors: measured.reduce((sum, m) => sum + m.errors, 0) };
}

function takeFrom(values: string[]): () => string {
  let next = 0;
  return () => {
    const value = values[next++];
    if (value === undefined) throw new Error("ran out of fresh values: raise BENCH_FRESH");
    return value;
  };
}

async function measure(
  url: string,
  options: { method: "GET" | "POST"; headers: Record<string, string>; nextBody?: () => string },
  cpuOf: CpuOf,
  duration = seconds,
): Promise<Measured> {
  const { nextBody } = options;
  const databaseCpu = () => (cpuOf.database ? commandCpuSeconds("postgres") : Number.NaN);
  const processBefore = processCpuSeconds(cpuOf.pid);
  const databaseBefore = databaseCpu();
  const result = await autocannon({
    url,
    connections,
    duration,
    method: options.method,
    headers: options.headers,
    ...(nextBody ? { requests: [{ setupRequest: (request: autocannon.Request) => ({ ...request, body: nextBody() }) }] } : {}),
  });
  const perRequestUs = (after: number, before: number) => ((after - before) / Math.max(1, result.requests.total)) * 1e6;
  return {
    rps: result.requests.average,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    processCpuUs: perRequestUs(processCpuSeconds(cpuOf.pid), processBefore),
    databaseCpuUs: perRequestUs(databaseCpu(), databaseBefore),
  };
}

const form = { "content-type": "application/x-www-form-urlencoded" };
const codeGrant = (side: Prepared, codes: string[] = side.codes) => {
  const code = takeFrom(codes);
  return () =>
    new URLSearchParams({ grant_type: "authorization_code", code: code(), redirect_uri: side.redirectUri, client_id: side.clientId, client_secret: side.clientSecret }).toString();
};
const refreshGrant = (side: Prepared) => {
  const token = takeFrom(side.refreshTokens);
  return () => new URLSearchParams({ grant_type: "refresh_token", refresh_token: token(), client_id: side.clientId, client_secret: side.clientSecret }).toString();
};

console.log(`preparing ${fresh} fresh codes and refresh tokens on each side (${freshOnPostgres} on the peer on PostgreSQL)…`);
const sides = [
  { label: "ours", side: await start("signon"), database: true },
  { label: "peer", side: await start("oidc-provider"), database: false },
  { label: "peer on PostgreSQL", side: await start("oidc-provider-postgres"), database: true },
];
// Takes its turn on the authorization_code row only.
const floor = { label: "floor", side: await start("floor"), database: true };
const everySide = [...sides, floor];
/** Per endpoint, each side's median round (in the order of `sides`), with its failures over every round. */
const rows: { name: string; measured: Measured[] }[] = [];
try {
  // Each side gets the same warm-up (JIT, caches, connection pools), then the sides take turns.
  const bench = async (name: string, load: (side: Prepared) => Parameters<typeof measure>[1], path: (side: Prepared) => string, onRow = sides) => {
    const runs = onRow.map(({ side, database }) => ({
      url: `${side.prepared.url}${path(side.prepared)}`,
      load: load(side.prepared),
      cpuOf: { pid: side.child.pid as number, database },
      rounds: [] as Measured[],
    }));
    for (const run of runs) await measure(run.url, run.load, run.cpuOf, warmUpSeconds);
    for (let round = 0; round < rounds; round++) {
      for (const run of runs) run.rounds.push(await measure(run.url, run.load, run.cpuOf));
    }
    rows.push({ name, measured: runs.map((run) => ({ ...median(run.rounds), ...failures(run.rounds) })) });
  };
  await bench("POST /token authorization_code", (side) => ({ method: "POST", headers: form, nextBody: codeGrant(side) }), (side) => side.tokenPath, everySide);
  await bench("POST /token code + ID token", (side) => ({ method: "POST", headers: form, nextBody: codeGrant(side, side.openIdCodes) }), (side) => side.tokenPath);
  await bench("POST /token refresh_token", (side) => ({ method: "POST", headers: form, nextBody: refreshGrant(side) }), (side) => side.tokenPath);
  await bench("GET /user.json (peer: /me)", (side) => ({ method: "GET", headers: { authorization: `Bearer ${side.accessToken}` } }), (side) => side.userPath);
} finally {
  for (const { side } of everySide) await stopSide(side.child);
}

const failedOf = (m: Measured) => m.non2xx + m.errors;
/** Ours against one peer: the ratio of request rates, or "not valid" when either side had failures. */
const ratioOf = (o: Measured, p: Measured) => (failedOf(o) + failedOf(p) > 0 ? `not valid: ${failedOf(o) + failedOf(p)} errors` : `${(o.rps / p.rps).toFixed(2)}x`);
const cells = (m: Measured) => `${m.rps.toFixed(0).padStart(10)}${m.p99.toFixed(1).padStart(8)}${String(failedOf(m)).padStart(9)}`;

console.log(`\n${connections} connections, ${seconds} s per endpoint, median of ${rounds} rounds; Sign-on on PostgreSQL, oidc-provider in memory and on PostgreSQL\n`);
console.log(`${"".padEnd(34)}${"ours".padEnd(27)}${"peer in memory".padEnd(27)}${"".padEnd(25)}peer on PostgreSQL`);
console.log(`${"endpoint".padEnd(34)}${"     req/s  p99 ms  non-2xx".repeat(2)}   ratio (req/s)         ${"     req/s  p99 ms  non-2xx"}   ratio (req/s)`);
let allAhead = true;
for (const { name, measured } of rows) {
  const [o, p, pg] = measured as [Measured, Measured, Measured];
  if (failedOf(o) + failedOf(p) > 0 || o.rps / p.rps < 1.5) allAhead = false;
  console.log(`${name.padEnd(34)}${cells(o)}${cells(p)}   ${ratioOf(o, p).padEnd(22)}${cells(pg)}   ${ratioOf(o, pg)}`);
  measured.forEach((m, i) => {
    if (failedOf(m) > 0) console.log(`  ${everySide[i]?.label}: ${m.non2xx} non-2xx responses and ${m.errors} errors over all rounds`);
  });
}
const us = (value: number) => (Number.isNaN(value) ? "n/a" : value.toFixed(0));
const [codeRow] = rows;
const [, peerOnCode, , floorOnCode] = codeRow?.measured ?? [];
if (peerOnCode && floorOnCode) {
  console.log("\nThe floor: Fastify with Sign-on's logging and form parser, one durable insert per POST /token and nothing else (bench/signon/floor-server.ts)\n");
  console.log(`${"endpoint".padEnd(34)}${"     req/s  p99 ms  non-2xx"}   against the peer in memory   CPU per request: Node  PostgreSQL`);
  console.log(`${"POST /token (any body)".padEnd(34)}${cells(floorOnCode)}   ${ratioOf(floorOnCode, peerOnCode).padEnd(27)}${us(floorOnCode.processCpuUs).padStart(23)}${us(floorOnCode.databaseCpuUs).padStart(12)}`);
}
console.log("\nCPU per request in the median round, µs (from /proc; PostgreSQL's counts every postgres process of this machine)\n");
console.log(`${"endpoint".padEnd(34)}ours: Node  PostgreSQL   peer in memory: Node   peer on PostgreSQL: Node  PostgreSQL`);
for (const { name, measured } of rows) {
  const [o, p, pg] = measured as [Measured, Measured, Measured];
  console.log(`${name.padEnd(34)}${us(o.processCpuUs).padStart(10)}${us(o.databaseCpuUs).padStart(12)}${us(p.processCpuUs).padStart(23)}${us(pg.processCpuUs).padStart(27)}${us(pg.databaseCpuUs).padStart(12)}`);
}
console.log(
  allAhead
    ? "\nSign-on is at least 1.5x oidc-provider in memory on every endpoint, with no errors."
    : "\nSign-on is not at least 1.5x oidc-provider in memory (with no errors) on every endpoint.",
);
