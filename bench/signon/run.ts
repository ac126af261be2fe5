// Sign-on against node-oidc-provider, side by side: requests per second and
// p99 latency of POST /token (authorization_code with fresh codes; the same
// for OpenID Connect codes, whose exchange signs an ID token: ES256 ours,
// the peer's default; and refresh_token with fresh refresh tokens) and of GET /user.json (the peer's
// userinfo endpoint), 10 connections for 10 seconds each.
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench -- signon
//
// Each server runs in a process of its own; the load comes from this one.
// Ours and the peer take turns for BENCH_ROUNDS rounds (default 3) and each
// side's median round is reported, so a burst of load from elsewhere on the
// machine does not decide the ratio.
// Sign-on runs on a database it creates on that PostgreSQL server
// (tessera_bench_signon) and drops afterwards; the peer keeps its data in
// memory. BENCH_SECONDS shortens a trial run; BENCH_FRESH sets how many fresh
// codes and refresh tokens each side prepares. BENCH_SIGNON_DATABASE names
// Sign-on's database, BENCH_SIGNON_PORT and BENCH_PEER_PORT the two servers'
// ports (default: any free port), so a run can go beside other work.
// The peer keeps codes an hour (as Sign-on's prepared codes), so none runs out
// during the run. Each side's non-2xx responses and connection errors are
// counted over all its rounds; a row with any is reported "not valid" with no ratio.
// A second table gives each side's CPU time per request in its median round, from /proc (Linux): its
// process with every thread, and for ours the PostgreSQL server's processes, which are counted only
// when that server runs on this machine (so give it no other work during the run).
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

function start(side: "signon" | "oidc-provider"): Promise<ForkedSide<Prepared>> {
  return forkSide<Prepared>(new URL("./serve.ts", import.meta.url), [side, String(fresh)]);
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

console.log(`preparing ${fresh} fresh codes and refresh tokens on each side…`);
const ours = await start("signon");
const peer = await start("oidc-provider");
const rows: { name: string; ours: Measured; peer: Measured }[] = [];
try {
  // Each side gets the same warm-up (JIT, caches, connection pools), then the sides take turns.
  const bench = async (name: string, load: (side: Prepared) => Parameters<typeof measure>[1], path: (side: Prepared) => string) => {
    const oursLoad = load(ours.prepared);
    const peerLoad = load(peer.prepared);
    const oursCpu = { pid: ours.child.pid as number, database: true };
    const peerCpu = { pid: peer.child.pid as number, database: false };
    await measure(`${ours.prepared.url}${path(ours.prepared)}`, oursLoad, oursCpu, warmUpSeconds);
    await measure(`${peer.prepared.url}${path(peer.prepared)}`, peerLoad, peerCpu, warmUpSeconds);
    const oursRounds: Measured[] = [];
    const peerRounds: Measured[] = [];
    for (let round = 0; round < rounds; round++) {
      oursRounds.push(await measure(`${ours.prepared.url}${path(ours.prepared)}`, oursLoad, oursCpu));
      peerRounds.push(await measure(`${peer.prepared.url}${path(peer.prepared)}`, peerLoad, peerCpu));
    }
    rows.push({ name, ours: { ...median(oursRounds), ...failures(oursRounds) }, peer: { ...median(peerRounds), ...failures(peerRounds) } });
  };
  await bench("POST /token authorization_code", (side) => ({ method: "POST", headers: form, nextBody: codeGrant(side) }), (side) => side.tokenPath);
  await bench("POST /token code + ID token", (side) => ({ method: "POST", headers: form, nextBody: codeGrant(side, side.openIdCodes) }), (side) => side.tokenPath);
  await bench("POST /token refresh_token", (side) => ({ method: "POST", headers: form, nextBody: refreshGrant(side) }), (side) => side.tokenPath);
  await bench("GET /user.json (peer: /me)", (side) => ({ method: "GET", headers: { authorization: `Bearer ${side.accessToken}` } }), (side) => side.userPath);
} finally {
  await stopSide(ours.child);
  await stopSide(peer.child);
}

console.log(`\n${connections} connections, ${seconds} s per endpoint, median of ${rounds} rounds; Sign-on on PostgreSQL, oidc-provider in memory\n`);
console.log("endpoint                          ours req/s  p99 ms  non-2xx   peer req/s  p99 ms  non-2xx   ratio (req/s)");
let allAhead = true;
for (const { name, ours: o, peer: p } of rows) {
  const failed = o.non2xx + o.errors + p.non2xx + p.errors;
  const ratio = o.rps / p.rps;
  if (failed > 0 || ratio < 1.5) allAhead = false;
  const verdict = failed > 0 ? `not valid: ${failed} errors` : `${ratio.toFixed(2)}x`;
  console.log(
    `${name.padEnd(34)}${o.rps.toFixed(0).padStart(10)}${o.p99.toFixed(1).padStart(8)}${String(o.non2xx + o.errors).padStart(9)}` +
      `${p.rps.toFixed(0).padStart(13)}${p.p99.toFixed(1).padStart(8)}${String(p.non2xx + p.errors).padStart(9)}   ${verdict}`,
  );
  for (const [side, measured] of [["ours", o], ["peer", p]] as const) {
    if (measured.non2xx > 0 || measured.errors > 0) console.log(`  ${side}: ${measured.non2xx} non-2xx responses and ${measured.errors} errors over all rounds`);
  }
}
const us = (value: number) => (Number.isNaN(value) ? "n/a" : value.toFixed(0));
console.log("\nCPU per request in the median round, µs (from /proc; PostgreSQL's counts every postgres process of this machine)\n");
console.log("endpoint                          ours: Node  PostgreSQL   peer: Node");
for (const { name, ours: o, peer: p } of rows) {
  console.log(`${name.padEnd(34)}${us(o.processCpuUs).padStart(10)}${us(o.databaseCpuUs).padStart(12)}${us(p.processCpuUs).padStart(13)}`);
}
console.log(allAhead ? "\nSign-on is at least 1.5x oidc-provider on every endpoint, with no errors." : "\nSign-on is not at least 1.5x oidc-provider (with no errors) on every endpoint.");
