// Replicas and synchronous replication, on a Patroni cluster on this machine (the failover tests' cluster: node1 the
// primary, node2 its synchronous standby, node3 an asynchronous read replica, HAProxy in front):
//
// 1. Completion's detail page and stats at 10 and 50 connections, served by the primary alone, then with one replica
//    (node3) and two (node2 and node3) in DATABASE_READ_URL: requests per second, p99, the share of reads each
//    server took, and each configuration's rate against the primary alone.
// 2. Sign-on's POST /token (authorization_code, fresh codes, 10 connections) with synchronous replication on (every
//    commit waits for the standby) and off (Patroni's synchronous_mode turned off through its REST API), in turns.
//
//   npm run bench -- replicas
//
// Needs Debian's patroni, etcd-server, haproxy and postgresql-15 (as tests/failover). BENCH_SECONDS (default 8) per
// measurement, BENCH_ROUNDS (default 3) turns of /token on and off (the median of each is shown),
// BENCH_REPLICA_LEARNERS (default 100,000) learners in the course. Two cores: every server shares them, so the point
// is what share of reads moves and what a synchronous commit costs, not the absolute rates.
import type { ChildProcess } from "node:child_process";
import pg from "pg";
import { failoverClusterUnavailable, inDatabase, startFailoverCluster, type FailoverCluster } from "@tessera/test-support/drill";
import { COURSE } from "../scale/completion.js";
import type { Prepared } from "../signon/serve.js";
import { load, prepareCompletion, startCompletion, stopCompletion, type Measured } from "../support/cluster-sides.js";
import { forkSide, stopSide } from "../support/forked-side.js";

const seconds = Number(process.env["BENCH_SECONDS"] || 8);
const rounds = Number(process.env["BENCH_ROUNDS"] || 3);
const learners = Number(process.env["BENCH_REPLICA_LEARNERS"] || 100_000);

function ask<T>(child: ChildProcess, request: "routed"): Promise<T> {
  return new Promise((resolve) => {
    child.once("message", (answer) => resolve(answer as T));
    child.send(request);
  });
}

/** Each server's share of the reads, by node name ("primary" is whichever node DATABASE_URL reached). */
function share(cluster: FailoverCluster, routed: Record<string, number>): string {
  const total = Object.values(routed).reduce((sum, count) => sum + count, 0);
  const nameOf = (target: string) => cluster.nodes.find((node) => target.startsWith(`127.0.0.1:${node.pgPort}/`))?.name ?? target;
  return Object.entries(routed)
    .filter(([, count]) => count > 0)
    .map(([target, count]) => `${nameOf(target)} ${Math.round((100 * count) / Math.max(1, total))}%`)
    .join(", ");
}

async function benchReads(cluster: FailoverCluster, url: string): Promise<string[]> {
  const [, node2, node3] = cluster.nodes as [FailoverCluster["nodes"][number], FailoverCluster["nodes"][number], FailoverCluster["nodes"][number]];
  const replicaUrl = (node: FailoverCluster["nodes"][number]) => inDatabase(node.url, "tessera_bench_replicas");
  const configurations: [string, string[]][] = [
    ["primary alone", []],
    ["one replica (node3)", [replicaUrl(node3)]],
    ["two replicas (node2, node3)", [replicaUrl(node2), replicaUrl(node3)]],
  ];
  const reads: [string, string][] = [
    ["detail, page 1 (page_size=100)", `/api/completion/v1/course/${COURSE}/?page_size=100`],
    ["stats, no filter", `/api/completion/v1/stats/${COURSE}/`],
  ];
  const results = new Map<string, { measured: Measured; routed: string }>();
  for (const [name, readUrls] of configurations) {
    const service = await startCompletion(url, readUrls, learners);
    try {
      for (const [read, path] of reads) {
        await load(`http://127.0.0.1:${service.port}${path}`, 10, 2);
        for (const connections of [10, 50]) {
          const before = await ask<Record<string, number>>(service.child, "routed");
          const measured = await load(`http://127.0.0.1:${service.port}${path}`, connections, seconds);
          const after = await ask<Record<string, number>>(service.child, "routed");
          const routed = Object.fromEntries(Object.entries(after).map(([target, count]) => [target, count - (before[target] ?? 0)]));
          results.set(`${name}|${read}|${connections}`, { measured, routed: share(cluster, routed) });
        }
      }
    } finally {
      await stopCompletion(service.child);
    }
  }
  const lines = [
    `\nCompletion reads, ${learners.toLocaleString("en")} learners, ${seconds} s each: req/s, p99, where the reads went, and the rate against the primary alone\n`,
    "| Read | connections | configuration | req/s | p99 ms | failed | reads went to | vs primary alone |",
    "|---|---|---|---|---|---|---|---|",
  ];
  for (const [read] of reads) {
    for (const connections of [10, 50]) {
      const alone = results.get(`primary alone|${read}|${connections}`)?.measured;
      for (const [name] of configurations) {
        const result = results.get(`${name}|${read}|${connections}`);
        if (!result || !alone) continue;
        const { measured } = result;
        lines.push(
          `| ${read} | ${connections} | ${name} | ${measured.rps.toFixed(0)} | ${measured.p99.toFixed(1)} | ${measured.failed} | ${result.routed} | ${(measured.rps / alone.rps).toFixed(2)}× |`,
        );
      }
    }
  }
  return lines;
}

/** Turns Patroni's synchronous mode on or off through its REST API, and waits until the primary says so. */
async function setSynchronous(cluster: FailoverCluster, on: boolean): Promise<void> {
  const leader = await cluster.leader();
  const response = await leader.restRequest("/config", {
    method: "PATCH",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ synchronous_mode: on }),
  });
  if (!response.ok) throw new Error(`PATCH /config answered ${response.status}: ${await response.text()}`);
  const client = new pg.Client({ connectionString: leader.url });
  await client.connect();
  try {
    for (let tries = 0; ; tries++) {
      const { rows } = await client.query<{ names: string }>("select current_setting('synchronous_standby_names') as names");
      if ((rows[0]?.names ?? "") !== "" === on) return;
      if (tries > 300) throw new Error(`synchronous_standby_names did not become ${on ? "set" : "empty"}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await client.end();
  }
}

async function benchToken(cluster: FailoverCluster): Promise<string[]> {
  const fresh = (rounds * 2 * (seconds + 1) + 2) * 2500;
  process.env["DATABASE_URL"] = cluster.primaryUrl;
  const side = await forkSide<Prepared>(new URL("../signon/serve.ts", import.meta.url), ["signon", String(fresh)]);
  const measured = { on: [] as Measured[], off: [] as Measured[] };
  try {
    const { prepared } = side;
    let next = 0;
    const nextBody = () => {
      const code = prepared.codes[next++];
      if (code === undefined) throw new Error("ran out of fresh codes");
      return new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: prepared.redirectUri, client_id: prepared.clientId, client_secret: prepared.clientSecret }).toString();
    };
    const exchange = (duration: number) => load(`${prepared.url}${prepared.tokenPath}`, 10, duration, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, nextBody });
    await exchange(2);
    for (let round = 0; round < rounds; round++) {
      for (const on of [true, false]) {
        await setSynchronous(cluster, on);
        await exchange(1);
        (on ? measured.on : measured.off).push(await exchange(seconds));
      }
    }
  } finally {
    try {
      await setSynchronous(cluster, true);
    } finally {
      await stopSide(side.child);
    }
  }
  const median = (values: Measured[]) => [...values].sort((a, b) => a.rps - b.rps)[Math.floor(values.length / 2)] as Measured;
  const on = median(measured.on);
  const off = median(measured.off);
  const failed = [...measured.on, ...measured.off].reduce((sum, m) => sum + m.failed, 0);
  return [
    `\nSign-on POST /token (authorization_code), 10 connections, ${seconds} s, median of ${rounds} rounds each, in turns\n`,
    "| synchronous replication | req/s | p99 ms | per request |",
    "|---|---|---|---|",
    `| on (commit waits for the standby) | ${on.rps.toFixed(0)} | ${on.p99.toFixed(1)} | ${(1000 / on.rps * 10).toFixed(2)} ms at 10 in flight |`,
    `| off (the primary alone) | ${off.rps.toFixed(0)} | ${off.p99.toFixed(1)} | ${(1000 / off.rps * 10).toFixed(2)} ms at 10 in flight |`,
    "",
    `On against off: ${(on.rps / off.rps).toFixed(2)}× the rate, p99 ${(on.p99 / Math.max(0.1, off.p99)).toFixed(2)}×.${failed > 0 ? ` NOT VALID: ${failed} requests failed.` : ""}`,
  ];
}

const unavailable = failoverClusterUnavailable();
if (unavailable !== null) {
  console.error(`bench/replicas needs a Patroni cluster on this machine: ${unavailable} (apt-get install patroni etcd-server haproxy postgresql-15)`);
  process.exit(1);
}
const cluster = await startFailoverCluster();
try {
  const url = await prepareCompletion(cluster, "tessera_bench_replicas", learners);
  console.log((await benchReads(cluster, url)).join("\n"));
  console.log((await benchToken(cluster)).join("\n"));
} finally {
  await cluster.stop();
}
