// The deployment's certificate authority replaced under the failover drills' load, as docs/operations.md says
// ("Replacing the certificate authority"): deploy/certificates/rotate-authority.sh begins (a new authority trusted
// beside the old), make-certificates.sh makes every machine's certificate again, and rotate-authority.sh finishes
// (the old authority dropped), every machine reading its files again after each step. No request may fail on the
// way; afterwards a certificate of the old authority gets in nowhere, one of the new gets in everywhere, backups
// and archiving work, and a switchover (the nodes calling each other) works on the new certificates.
// Needs Debian's patroni, etcd-server, haproxy, postgresql-15 and pgbackrest; skipped without them, except under CI=true.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  Drill,
  failoverClusterUnavailable,
  failoverPackages,
  postgresClient,
  startFailoverCluster,
  tlsClient,
  waitFor,
  type FailoverCluster,
  type Listener,
  type ListenerAnswer,
  type TlsIdentity,
} from "@tessera/test-support/drill";

const missing = failoverClusterUnavailable();
if (missing !== null) {
  const line = `tests/failover skipped: ${missing} (install with: apt-get install ${failoverPackages})`;
  if (process.env["CI"] === "true") throw new Error(`${line}; CI must run this test`);
  console.warn(line);
}

/** Every machine of the drill's cluster, as make-certificates.sh names their certificates. */
const machines = ["node1", "node2", "node3", "etcd1", "etcd2", "etcd3", "haproxy", "backup", "operator"];
const databaseNodes = ["node1", "node2", "node3"];
const healthProbe = "GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";

describe.skipIf(missing !== null)("replacing the deployment's certificate authority under load", () => {
  let cluster: FailoverCluster;
  let drill: Drill;

  beforeAll(async () => {
    cluster = await startFailoverCluster();
    drill = await Drill.start(cluster);
  }, 300_000);
  afterAll(async () => {
    await drill?.close();
    await cluster?.stop();
  });

  /**
   * What `identity` gets at `listener`: for PostgreSQL (which asks for a password, not a certificate), whether a
   * client trusting `identity.ca` alone accepts the server; elsewhere, whether the server lets a client presenting
   * `identity`'s certificate in, the client trusting `serverCa`.
   */
  function answerAt(listener: Listener, identity: TlsIdentity, serverCa: Buffer): Promise<ListenerAnswer> {
    if (listener.protocol === "postgres") return postgresClient(cluster.primaryUrl, listener.port, { ca: identity.ca, servername: "localhost" });
    return tlsClient(listener.port, { ca: serverCa, cert: identity.cert, key: identity.key }, listener.protocol === "https" ? healthProbe : null);
  }

  /** pgBackRest lets in only the machines its tls-server-auth names: the database machines at the repository's server, the repository machine at theirs. */
  const holderAt = (listener: Listener) => (listener.protocol !== "pgbackrest" ? "operator" : listener.name.startsWith("backup") ? "node1" : "backup");

  it("follows rotate-authority.sh begin, make-certificates.sh and rotate-authority.sh finish with no failed request", async ({ onTestFailed }) => {
    onTestFailed(() => console.error(cluster.logTails()));
    const { certificates } = cluster;
    // What each machine held under the old authority, kept to try afterwards.
    const old = new Map(machines.map((name) => [name, certificates.identity(name)]));
    const steps: { step: string; at: number; tookMs: number }[] = [];
    const step = async (name: string, work: () => Promise<void>) => {
      const at = Date.now();
      await work();
      steps.push({ step: name, at, tookMs: Date.now() - at });
      // The load goes on with the files as they are now: every kind of request answered again before the next step.
      await drill.loadUntilEachAnswered(Date.now(), 5, 3000);
    };

    const round = await drill.round("certificate authority replaced", async () => {
      await step("begin: a new authority trusted beside the old, every machine reloaded (etcd restarted member by member)", async () => {
        certificates.rotateAuthority("begin");
        await cluster.reloadCertificates({ restartEtcd: true });
      });
      await step("every machine's certificate made again by the new authority, every machine reloaded", async () => {
        certificates.renew(machines);
        await cluster.reloadCertificates({ restartEtcd: false });
      });
      await step("finish: the old authority dropped, the database nodes' certificates made again (Patroni reads its cafile with a new certificate of its own), every machine reloaded", async () => {
        certificates.rotateAuthority("finish");
        certificates.renew(databaseNodes);
        await cluster.reloadCertificates({ restartEtcd: true });
      });
      return undefined;
    });
    await drill.checkRound(round);
    const outcomes = drill.log.between(round.startedAt, round.stoppedAt);
    const byStatus: Record<string, number> = {};
    for (const outcome of outcomes) byStatus[outcome.status] = (byStatus[outcome.status] ?? 0) + 1;
    console.info(`certificate authority replaced under load: ${outcomes.length} requests, by status ${JSON.stringify(byStatus)}\n${JSON.stringify({ steps, report: drill.report().at(-1) }, null, 2)}`);
    // Every request of the load answered as it should: no 5xx, no connection refused, not even a 503.
    expect(Object.keys(byStatus).filter((status) => Number(status) >= 500 || status === "0")).toEqual([]);
    expect(outcomes.length).toBeGreaterThan(500);

    // The old authority's certificates get in nowhere, the new ones everywhere.
    const newCa = certificates.identity("operator").ca;
    const table: Record<string, { old: ListenerAnswer; new: ListenerAnswer }> = {};
    for (const listener of cluster.listeners()) {
      const holder = holderAt(listener);
      table[`${listener.name} (${listener.protocol}, port ${listener.port})`] = {
        old: await answerAt(listener, old.get(holder)!, newCa),
        new: await answerAt(listener, certificates.identity(holder), newCa),
      };
    }
    console.info(Object.entries(table).map(([where, answers]) => `${where}\n  old authority: ${answers.old}\n  new authority: ${answers.new}`).join("\n"));
    for (const [where, answers] of Object.entries(table)) {
      expect(answers.old, `${where}, the old authority`).toMatch(/^refused/);
      expect(answers.new, `${where}, the new authority`).toBe("accepted");
    }
    // The trusted file holds the new authority alone.
    expect(newCa.toString().match(/BEGIN CERTIFICATE/g)).toHaveLength(1);

    // Archiving and backups work on the new certificates: `check` waits until a new WAL file is in the repository,
    // and an incremental backup reads a standby through its pgBackRest server.
    await cluster.backups.run(["check"], { timeoutMs: 120_000 });
    expect(await cluster.backups.run(["backup", "--type=incr"], { timeoutMs: 300_000 })).not.toMatch(/ERROR/);
  }, 900_000);

  it("switches over on the new certificates: the nodes call each other, replicas stream again, the load goes on", async ({ onTestFailed }) => {
    onTestFailed(() => console.error(cluster.logTails()));
    const round = await drill.round("a switchover after the rotation", async () => {
      const leader = await cluster.leader();
      const candidate = await cluster.syncStandby();
      const at = Date.now();
      const answer = await leader.restRequest("/switchover", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ leader: leader.name, candidate: candidate.name }) });
      expect(answer.status, await answer.text()).toBe(200);
      const newLeader = await cluster.waitForLeader({ not: leader.name, timeoutMs: 60_000 });
      await cluster.waitUntilWhole();
      const firstWrite = await drill.firstWriteAfter(at);
      return { at, liftedAt: at, firstWrite, leaders: [leader.name, newLeader.name] };
    });
    await drill.checkRound(round);
    expect(round.fault?.leaders[1]).not.toBe(round.fault?.leaders[0]);
    await waitFor("every node to stream from the new leader", async () => ((await cluster.primaries()).length === 1 ? true : null), { timeoutMs: 60_000 });
    console.info(JSON.stringify(drill.report().at(-1), null, 2));
  }, 600_000);
});
