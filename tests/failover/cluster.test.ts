// The failover cluster itself (issue 34): Patroni with a primary, a synchronous standby and an asynchronous
// read replica, behind HAProxy. Under a loop of inserts through HAProxy's primary port, the primary's machine is
// lost (Patroni and PostgreSQL SIGKILLed together): the synchronous standby takes over, the first insert
// succeeds again within the 15 s, nothing acknowledged is lost, reads through the replica port keep
// answering, node3 is the new primary's synchronous standby meanwhile, and the old primary comes back as a standby
// (pg_rewind) and becomes the synchronous standby again. A read that follows its reader's change goes to a replica
// only once that replica has replayed the change.
// Needs Debian's patroni, etcd-server, haproxy and postgresql-15; skipped without them, except under CI=true.
import { readFileSync } from "node:fs";
import { ReadRouter } from "@tessera/db";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failoverClusterUnavailable, failoverPackages, inDatabase, patroniTimings, ReadLoop, startFailoverCluster, tlsRequest, waitFor, WriteLoop, type FailoverCluster } from "@tessera/test-support/drill";

const missing = failoverClusterUnavailable();
if (missing !== null) {
  const line = `tests/failover skipped: ${missing} (install with: apt-get install ${failoverPackages})`;
  if (process.env["CI"] === "true") throw new Error(`${line}; CI must run this test`);
  console.warn(line);
}

/**
 * The bound from the kill to the first insert acknowledged by the new primary: the leader lock outlives the lost
 * primary by at most `ttl` (deploy/patroni/cluster.yml), then the standby, which watches the lock, takes it and is
 * promoted; 15 s for that and for HAProxy's checks to follow.
 */
const failoverBoundMs = (patroniTimings().ttl + 15) * 1000;


async function run(url: string, sql: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(sql, values);
  } finally {
    await client.end();
  }
}

describe.skipIf(missing !== null)("a Patroni cluster that loses its primary's machine", () => {
  let cluster: FailoverCluster;
  let databaseUrl: string;

  beforeAll(async () => {
    cluster = await startFailoverCluster();
    databaseUrl = await cluster.createDatabase("failover");
    await run(databaseUrl, "create table writes (id integer primary key)");
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it("runs the documented settings: passwords on every connection, an authenticated REST API, UTF8 and C.UTF-8, strict synchronous and failsafe modes", async ({ onTestFailed }) => {
    onTestFailed(() => console.error(cluster.logTails()));
    const leader = await cluster.leader();
    const leaderNode = cluster.nodes.find((node) => node.name === leader.name)!;

    // pg_hba: TLS and a password (scram-sha-256) over the network; a wrong password is refused, and so is a
    // connection without TLS; the connection the test holds is encrypted.
    const wrongPassword = leader.url.replace(/:[^:@/]+@/, ":not-the-password@");
    await expect(run(wrongPassword, "select 1")).rejects.toMatchObject({ code: "28P01" });
    const { rows: auth } = await run(leader.url, "select type, auth_method from pg_hba_file_rules where type <> 'local' and error is null");
    expect(new Set(auth.map((row: { type: string; auth_method: string }) => `${row.type} ${row.auth_method}`))).toEqual(new Set(["hostssl scram-sha-256"]));
    const clearText = new URL(leader.url);
    clearText.search = "?sslmode=disable";
    await expect(run(clearText.toString(), "select 1")).rejects.toMatchObject({ code: "28000", message: expect.stringContaining("no encryption") });
    expect((await run(leader.url, "select ssl, version from pg_stat_ssl where pid = pg_backend_pid()")).rows).toEqual([{ ssl: true, version: expect.stringMatching(/^TLSv1\.[23]$/) }]);

    // initdb: UTF8 and C.UTF-8, so that a search for ZOË finds Zoë.
    const { rows: database } = await run(leader.url, "select pg_encoding_to_char(encoding) as encoding, datcollate, datctype, upper('zoë') as upper from pg_database where datname = current_database()");
    expect(database[0]).toEqual({ encoding: "UTF8", datcollate: "C.UTF-8", datctype: "C.UTF-8", upper: "ZOË" });

    const config = (await (await leaderNode.restRequest("/config")).json()) as Record<string, unknown>;
    expect(config).toMatchObject({ ttl: 30, loop_wait: 10, retry_timeout: 10, synchronous_mode: true, synchronous_mode_strict: true, failsafe_mode: true });

    // HAProxy's checks, every second on each node, make no traceback in Patroni's log.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    for (const node of cluster.nodes) expect(readFileSync(node.logFile, "utf8"), `${node.name}'s log`).not.toContain("Traceback");

    // (Patroni logs a traceback for each handshake it refuses, as below.)
    // The REST API: HTTPS only, to a client with a certificate of the deployment's CA; changes also need its user
    // and password.
    const restUrl = `https://127.0.0.1:${leader.restPort}`;
    const operator = cluster.certificates.identity("operator");
    await expect(tlsRequest(`${restUrl}/primary`, { ca: operator.ca })).rejects.toThrow();
    await expect(fetch(`http://127.0.0.1:${leader.restPort}/primary`, { signal: AbortSignal.timeout(5000) })).rejects.toThrow();
    expect((await tlsRequest(`${restUrl}/reload`, operator, { method: "POST" })).status).toBe(401);
    expect((await leaderNode.restGet("/primary")).status).toBe(200);
  });

  it("promotes the synchronous standby, loses nothing acknowledged, keeps replicas answering and takes the old primary back", async ({ onTestFailed }) => {
    onTestFailed(() => console.error(cluster.logTails()));
    const oldLeader = await cluster.leader();
    const standby = await cluster.syncStandby();
    expect([oldLeader.name, standby.name].sort()).toEqual(["node1", "node2"]);

    const replicaDatabaseUrl = inDatabase(cluster.replicaUrl, "failover");
    for (const node of cluster.nodes.filter((node) => node.name !== oldLeader.name)) {
      await waitFor(
        `the table to reach ${node.name}`,
        async () => {
          await run(inDatabase(node.url, "failover"), "select count(*) from writes");
          return true;
        },
        { timeoutMs: 30_000 },
      );
    }
    const writes = new WriteLoop(databaseUrl).start();
    const reads = new ReadLoop(replicaDatabaseUrl).start();
    await waitFor("inserts to be acknowledged before the kill", async () => (writes.acknowledged.length >= 200 ? true : null), {
      timeoutMs: 30_000,
    });

    const killedAt = Date.now();
    await cluster.loseMachine(oldLeader);
    const acknowledgedBeforeKill = writes.acknowledged.filter((write) => write.at <= killedAt);

    // The synchronous standby, never node3 (nofailover): it holds every acknowledged commit.
    const newLeader = await cluster.waitForLeader({ not: oldLeader.name, timeoutMs: 60_000 });
    expect(newLeader.name).toBe(standby.name);
    const firstOnNewPrimary = await waitFor(
      "an insert acknowledged by the new primary",
      async () => writes.acknowledged.find((write) => write.serverPort === newLeader.pgPort) ?? null,
      { timeoutMs: 60_000 },
    );
    const failoverMs = firstOnNewPrimary.at - killedAt;
    // Some more inserts on the new primary, and reads meanwhile.
    await waitFor("more inserts on the new primary", async () => (writes.acknowledged.at(-1)!.id >= firstOnNewPrimary.id + 50 ? true : null), {
      timeoutMs: 30_000,
    });
    await writes.stop();
    await reads.stop();

    const readsDuringFailover = reads.answered.filter((read) => read.at > killedAt && read.at < firstOnNewPrimary.at);
    const readers = [...new Set(readsDuringFailover.map((read) => cluster.nodes.find((node) => node.pgPort === read.serverPort)?.name))].sort();
    console.log(
      `failover: first insert on the new primary (${newLeader.name}) ${failoverMs} ms after the kill of ${oldLeader.name}; ` +
        `${acknowledgedBeforeKill.length} inserts acknowledged before it, ${writes.acknowledged.length} in all, ${writes.failures.length} failed; ` +
        `${readsDuringFailover.length} reads answered through the replica port meanwhile (by ${readers.join(" and ")}), ${reads.failures.length} failed (at most ${reads.longestFailureRun()} in a row)`,
    );
    expect(failoverMs).toBeLessThan(failoverBoundMs);

    // Nothing acknowledged is lost: every acknowledged insert, before and after the kill, is on the new primary.
    const { rows } = await run(inDatabase(newLeader.url, "failover"), "select id from writes");
    const stored = new Set(rows.map((row: { id: number }) => row.id));
    expect(acknowledgedBeforeKill.length).toBeGreaterThan(0);
    expect(writes.acknowledged.filter((write) => !stored.has(write.id))).toEqual([]);

    // Reads kept answering through the replica port: a failed read (a session HAProxy cut) was answered on the next connection.
    expect(readsDuringFailover.length).toBeGreaterThan(0);
    expect(reads.longestFailureRun()).toBeLessThanOrEqual(1);

    // While the old primary is lost, node3 (never promoted, but not `nosync`) is the new primary's synchronous standby.
    await waitFor("node3 to be the new primary's synchronous standby", async () => ((await cluster.syncStandby().catch(() => null))?.name === "node3" ? true : null), {
      timeoutMs: 30_000,
    });

    // The old primary rejoins as a standby (Patroni rewinds it onto the new timeline) and becomes the synchronous one again.
    const broughtBackAt = Date.now();
    await cluster.bringBack(oldLeader);
    await cluster.waitUntilStreaming(oldLeader, 120_000);
    const synchronousAgain = await waitFor(
      `${oldLeader.name} to be the synchronous standby again`,
      async () => ((await cluster.syncStandby().catch(() => null))?.name === oldLeader.name ? oldLeader : null),
      { timeoutMs: 60_000 },
    );
    console.log(`failover: ${oldLeader.name} streaming again as the synchronous standby ${Date.now() - broughtBackAt} ms after it was started again`);
    expect(await synchronousAgain.role()).toBe("sync_standby");
    expect((await cluster.leader()).name).toBe(newLeader.name);

    // And it replays everything the new primary holds, acknowledged inserts included, and what is committed now.
    await run(databaseUrl, "insert into writes (id) values ($1)", [writes.acknowledged.at(-1)!.id + 1]);
    await waitFor(
      `${oldLeader.name} to replay every row`,
      async () => {
        const { rows: replayed } = await run(inDatabase(oldLeader.url, "failover"), "select count(*)::int as n from writes");
        return replayed[0]?.n === stored.size + 1 ? true : null;
      },
      { timeoutMs: 30_000 },
    );
  });

  it("sends a read that follows a change to a replica only once the replica has replayed it", async ({ onTestFailed }) => {
    onTestFailed(() => console.error(cluster.logTails()));
    const node3 = cluster.nodes.find((node) => node.name === "node3")!;
    const node3Url = inDatabase(node3.url, "failover");
    const primary = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    const replica = new pg.Pool({ connectionString: node3Url, max: 2 });
    const router = new ReadRouter({ primary, replicas: [{ url: node3Url, pool: replica }], checkIntervalMs: 200 });
    const hasRow = async (pool: pg.Pool, id: number) => (await pool.query<{ n: number }>("select count(*)::int as n from writes where id = $1", [id])).rows[0]?.n === 1;
    try {
      await waitFor("node3 to serve reads", async () => (router.pool() === replica ? true : null), { timeoutMs: 30_000 });
      // node3 stops replaying (its WAL still arrives), then a change commits on the primary. Patroni, in maintenance
      // mode meanwhile, would otherwise resume the replay at its next loop.
      await cluster.maintenance(true);
      await run(node3Url, "select pg_wal_replay_pause()");
      const { rows } = await run(databaseUrl, "insert into writes (id) select coalesce(max(id), 0) + 1 from writes returning id");
      const id = (rows[0] as { id: number }).id;
      const after = await router.writePosition();
      expect(after).not.toBeNull();
      await router.check();

      // Its reader's next read goes to the primary, which has the change; node3 does not have it.
      const readAfterChange = router.pool({ after: after! });
      expect(readAfterChange).toBe(primary);
      expect(await hasRow(readAfterChange, id)).toBe(true);
      expect(await hasRow(replica, id)).toBe(false);
      // Reads that follow no change still go to node3, well within the lag limit.
      expect(router.pool()).toBe(replica);

      // Once node3 has replayed the change, its reader's reads go there, and find it.
      await run(node3Url, "select pg_wal_replay_resume()");
      const served = await waitFor(
        "node3 to replay the change",
        async () => {
          await router.check();
          return router.pool({ after: after! }) === replica ? replica : null;
        },
        { timeoutMs: 30_000 },
      );
      expect(await hasRow(served, id)).toBe(true);
    } finally {
      await run(node3Url, "select pg_wal_replay_resume()").catch(() => undefined);
      await cluster.maintenance(false);
      router.stop();
      await primary.end();
      await replica.end();
    }
  });
});
