// What TLS on the database link costs: Sign-on's POST /token (fresh codes) and Completion's reads (the staff detail
// page and stats of a course of BENCH_TLS_LEARNERS learners, default 100,000), 10 connections each, through
// HAProxy's primary port with the deployment's TLS (sslmode=verify-full against its CA, as deploy/ and
// docs/deployment.md have it) and in clear, in turns, on one Patroni cluster of the failover tests. Each side is a
// service of its own, with its pool's connections reused as shipped.
//
//   npm run bench -- tls
//
// For the bench alone, each node's pg_hba also lets 127.0.0.1 in without TLS (the deployment's has hostssl lines
// alone). BENCH_SECONDS (default 8) per measurement, BENCH_ROUNDS (default 3) turns; the median of each is shown.
// Needs Debian's patroni, etcd-server, haproxy, postgresql-15 and pgbackrest (as tests/failover). Goal (issue 50):
// TLS costs under 10% at the same concurrency.
//
// The deployment keeps the database on machines of its own. On one machine of two CPUs or more the bench stands for
// that: the cluster (PostgreSQL, Patroni, etcd, HAProxy, pgBackRest) runs on the first CPU, the services and the load
// on the others, so that PostgreSQL's half of the TLS work is not taken from the services' CPU. BENCH_TLS_SHARED_CPUS=1
// lets everything share every CPU instead, as the first measurements did.
import { appendFileSync } from "node:fs";
import type { ChildProcess } from "node:child_process";
import autocannon from "autocannon";
import pg from "pg";
import { failoverClusterUnavailable, startFailoverCluster, type FailoverCluster } from "@tessera/test-support/drill";
import { COURSE } from "../scale/completion.js";
import type { Prepared } from "../signon/serve.js";
import { load, prepareCompletion, startCompletion, stopCompletion, type Measured } from "../support/cluster-sides.js";
import { forkSide, stopSide, type ForkedSide } from "../support/forked-side.js";
import { canSeparateCpus, pinToCpus } from "../support/cpu-affinity.js";
import { availableParallelism } from "node:os";

const seconds = Number(process.env["BENCH_SECONDS"] || 8);
const rounds = Number(process.env["BENCH_ROUNDS"] || 3);
const learners = Number(process.env["BENCH_TLS_LEARNERS"] || 100_000);


/** The same URL in clear. */
function inClear(url: string): string {
  const parsed = new URL(url);
  parsed.search = "?sslmode=disable";
  return parsed.toString();
}

/** For the bench alone: each node also takes connections from 127.0.0.1 without TLS. */
async function allowClearText(cluster: FailoverCluster): Promise<void> {
  for (const node of cluster.nodes) {
    const client = new pg.Client({ connectionString: node.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ hba_file: string }>("show hba_file");
      appendFileSync(rows[0]!.hba_file, "host all all 127.0.0.1/32 scram-sha-256\n");
      await client.query("select pg_reload_conf()");
    } finally {
      await client.end();
    }
  }
}

/** A Sign-on of its own on `database`, reached with `url`, with `count` fresh codes. */
function startSignon(url: string, database: string, count: number): Promise<ForkedSide<Prepared>> {
  process.env["DATABASE_URL"] = url;
  process.env["BENCH_SIGNON_DATABASE"] = database;
  return forkSide<Prepared>(new URL("../signon/serve.ts", import.meta.url), ["signon", String(count)]);
}

/** Exchanges fresh codes at `side` for `duration` seconds, 10 at a time. */
async function exchange(side: Prepared, next: () => string, duration: number): Promise<Measured> {
  const result = await autocannon({
    url: `${side.url}${side.tokenPath}`,
    connections: 10,
    duration,
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    requests: [{ setupRequest: (request: autocannon.Request) => ({ ...request, body: next() }) }],
  });
  return { rps: result.requests.average, p99: result.latency.p99, failed: result.non2xx + result.errors };
}

function codes(side: Prepared): () => string {
  let next = 0;
  return () => {
    const code = side.codes[next++];
    if (code === undefined) throw new Error("ran out of fresh codes");
    return new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: side.redirectUri, client_id: side.clientId, client_secret: side.clientSecret }).toString();
  };
}

const unavailable = failoverClusterUnavailable();
if (unavailable !== null) {
  console.error(`bench/tls needs a Patroni cluster on this machine: ${unavailable} (apt-get install patroni etcd-server haproxy postgresql-15 pgbackrest)`);
  process.exit(1);
}
const apart = process.env["BENCH_TLS_SHARED_CPUS"] !== "1" && canSeparateCpus();
const serviceCpus = Array.from({ length: availableParallelism() - 1 }, (_, index) => index + 1);
// The cluster's processes inherit the first CPU; the bench, and the services it starts afterwards, move to the others.
if (apart) pinToCpus(process.pid, [0]);
const cluster = await startFailoverCluster();
if (apart) pinToCpus(process.pid, serviceCpus);
const sides: ForkedSide<Prepared>[] = [];
const completions: ChildProcess[] = [];
try {
  await allowClearText(cluster);
  const fresh = (rounds * (seconds + 1) + 3) * 2500;
  const withTls = await startSignon(cluster.primaryUrl, "tessera_bench_tls_on", fresh);
  sides.push(withTls);
  const inClearText = await startSignon(inClear(cluster.primaryUrl), "tessera_bench_tls_off", fresh);
  sides.push(inClearText);
  const modes = [
    { name: "TLS (verify-full)", side: withTls.prepared, next: codes(withTls.prepared), measured: [] as Measured[] },
    { name: "in clear", side: inClearText.prepared, next: codes(inClearText.prepared), measured: [] as Measured[] },
  ];
  for (const mode of modes) await exchange(mode.side, mode.next, 2);
  for (let round = 0; round < rounds; round++) {
    for (const mode of modes) {
      await exchange(mode.side, mode.next, 1);
      mode.measured.push(await exchange(mode.side, mode.next, seconds));
    }
  }
  for (const side of sides.splice(0)) await stopSide(side.child);

  // Completion's reads, each side a Completion of its own on the same course.
  const courseUrl = await prepareCompletion(cluster, "tessera_bench_tls_completion", learners);
  const completionWithTls = await startCompletion(courseUrl, [], learners);
  completions.push(completionWithTls.child);
  const completionInClear = await startCompletion(inClear(courseUrl), [], learners);
  completions.push(completionInClear.child);
  const reads: [string, string][] = [
    ["detail, page 1 (page_size=100)", `/api/completion/v1/course/${COURSE}/?page_size=100`],
    ["stats", `/api/completion/v1/stats/${COURSE}/`],
  ];
  const readModes = [
    { name: "TLS (verify-full)", port: completionWithTls.port },
    { name: "in clear", port: completionInClear.port },
  ];
  const readMeasured = new Map<string, Measured[]>();
  for (const [, path] of reads) for (const mode of readModes) await load(`http://127.0.0.1:${mode.port}${path}`, 10, 2);
  for (let round = 0; round < rounds; round++) {
    for (const [read, path] of reads) {
      for (const mode of readModes) {
        const key = `${read}|${mode.name}`;
        readMeasured.set(key, [...(readMeasured.get(key) ?? []), await load(`http://127.0.0.1:${mode.port}${path}`, 10, seconds)]);
      }
    }
  }

  const median = (values: Measured[]) => [...values].sort((a, b) => a.rps - b.rps)[Math.floor(values.length / 2)]!;
  const [tls, clear] = modes.map((mode) => ({ name: mode.name, ...median(mode.measured) })) as [Measured & { name: string }, Measured & { name: string }];
  const failed = modes.flatMap((mode) => mode.measured).reduce((sum, measured) => sum + measured.failed, 0);
  console.log(
    [
      apart
        ? `\nThe database's machines (PostgreSQL, Patroni, etcd, HAProxy) on CPU 0; the services and the load on CPU ${serviceCpus.join(", ")}.`
        : "\nThe database's machines, the services and the load share every CPU.",
      `\nSign-on POST /token (authorization_code) through HAProxy's primary port, 10 connections, ${seconds} s, median of ${rounds} rounds each, in turns\n`,
      "| database link | req/s | p99 ms |",
      "|---|---|---|",
      ...[tls, clear].map((row) => `| ${row.name} | ${row.rps.toFixed(0)} | ${row.p99.toFixed(1)} |`),
      "",
      `TLS against clear: ${(tls.rps / clear.rps).toFixed(2)}× the rate (goal: at least 0.90×), p99 ${(tls.p99 / Math.max(0.1, clear.p99)).toFixed(2)}×.${failed > 0 ? ` NOT VALID: ${failed} requests failed.` : ""}`,
      `\nCompletion's reads, ${learners.toLocaleString("en")} learners, from the primary through HAProxy, 10 connections, ${seconds} s, median of ${rounds} rounds each, in turns\n`,
      "| read | TLS req/s | TLS p99 ms | clear req/s | clear p99 ms | TLS against clear |",
      "|---|---|---|---|---|---|",
      ...reads.map(([read]) => {
        const [on, off] = readModes.map((mode) => median(readMeasured.get(`${read}|${mode.name}`) ?? [])) as [Measured, Measured];
        const invalid = on.failed + off.failed > 0 ? ` (NOT VALID: ${on.failed + off.failed} failed)` : "";
        return `| ${read} | ${on.rps.toFixed(0)} | ${on.p99.toFixed(1)} | ${off.rps.toFixed(0)} | ${off.p99.toFixed(1)} | ${(on.rps / off.rps).toFixed(2)}×${invalid} |`;
      }),
    ].join("\n"),
  );
} finally {
  for (const side of sides) await stopSide(side.child).catch(() => undefined);
  for (const child of completions) await stopCompletion(child).catch(() => undefined);
  await cluster.stop();
}
