// Backups and point-in-time recovery of the documented deployment (deploy/pgbackrest, deploy/patroni): every node
// archives its WAL to the repository machine over TLS, a full backup is taken from a standby, a replica is rebuilt
// from the repository while the primary takes the failover drills' load, and the cluster is rebuilt from the
// repository after a wrong command under that load (to the named restore point set before it) and after a failover
// and then every node's data lost (to the last WAL the repository holds). Each drill keeps two ledgers: the load's
// acknowledged writes through the services (tokens, permission changes, completions) and a loop of acknowledged
// inserts, both checked against the restored cluster.
// Needs Debian's patroni, etcd-server, haproxy, postgresql-15 and pgbackrest; skipped without them, except under CI=true.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { runShipped, signonCli } from "@tessera/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  completionProblems,
  Drill,
  failoverClusterUnavailable,
  failoverPackages,
  firstProblems,
  isAcknowledgedWrite,
  pause,
  restorePointTokenProblems,
  rewindToRestorePoint,
  startFailoverCluster,
  waitFor,
  WriteLoop,
  type Acknowledged,
  type ClusterNode,
  type FailoverCluster,
  type FailoverSystem,
  type RestorePointTimes,
} from "@tessera/test-support/drill";

const missing = failoverClusterUnavailable();
if (missing !== null) {
  const line = `tests/failover skipped: ${missing} (install with: apt-get install ${failoverPackages})`;
  if (process.env["CI"] === "true") throw new Error(`${line}; CI must run this test`);
  console.warn(line);
}


async function run<Row extends pg.QueryResultRow = pg.QueryResultRow>(url: string, sql: string, values: unknown[] = []): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<Row>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

async function storedIds(url: string): Promise<Set<number>> {
  return new Set((await run<{ id: number }>(url, "select id from writes")).map((row) => row.id));
}

/** Lets the loop write for `ms`, and at least `count` acknowledged rows. */
async function writeFor(loop: WriteLoop, ms: number, count = 1): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until || loop.acknowledged.length < count) await pause(100);
}

const sha256 = (value: string) => createHash("sha256").update(value).digest("hex");

/** How many times Patroni has built `node` with pgBackRest from the repository (its log is appended to, never cut). */
function replicasBuiltFromRepository(node: ClusterNode): number {
  return (readFileSync(node.logFile, "utf8").match(/replica has been created using pgbackrest/g) ?? []).length;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

describe.skipIf(missing !== null)("backups and point-in-time recovery of the Patroni cluster", () => {
  let cluster: FailoverCluster;
  let databaseUrl: string;
  let drill: Drill;
  let system: FailoverSystem;

  /** The status `/user.json` answers `token` with at each Sign-on instance. */
  async function userJsonStatuses(token: string): Promise<number[]> {
    return Promise.all(
      system.signon.map(async (instance) => {
        const response = await fetch(`${instance.url}/user.json`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(10_000) }).catch(() => null);
        return response?.status ?? 0;
      }),
    );
  }

  /** Runs `pgbackrest verify` as deploy/pgbackrest/backup.cron does, its report kept where backup-metrics.py reads it. */
  async function verifyReport(): Promise<string> {
    const report = await cluster.backups.run(["--output=text", "--verbose", "verify"], { timeoutMs: 300_000 });
    writeFileSync(join(cluster.backups.folders.logs, "verify-last.txt"), report);
    return report;
  }

  /** deploy/pgbackrest/backup-metrics.py on the repository machine, as its cron line runs it. */
  function backupMetrics(): Promise<string> {
    const script = fileURLToPath(new URL("../../deploy/pgbackrest/backup-metrics.py", import.meta.url));
    return cluster.backups.exec("python3", [script, "tessera", join(cluster.backups.folders.logs, "verify-last.txt")]);
  }

  beforeAll(async () => {
    cluster = await startFailoverCluster();
    databaseUrl = await cluster.createDatabase("drill");
    await run(databaseUrl, "create table writes (id integer primary key, written_at timestamptz not null default now())");
    // The services as shipped on the cluster (two Sign-on and two Completion instances, the editorial app): they
    // must come back by themselves after a restore, with no change of settings.
    // The failover drills' load runs on them through every drill but the first and the last.
    drill = await Drill.start(cluster);
    system = drill.system;
  }, 600_000);
  afterAll(async () => {
    await drill?.close();
    await cluster?.stop();
  });

  it("archives WAL from the primary over TLS and takes a full backup from a standby that check and verify pass", async ({ onTestFailed }) => {
    onTestFailed(() => console.error(cluster.logTails()));
    await cluster.backups.run(["check"], { timeoutMs: 120_000 });
    const started = performance.now();
    const backupOutput = await cluster.backups.run(["--log-level-console=info", "--type=full", "backup"], { timeoutMs: 600_000 });
    const backupMs = performance.now() - started;
    const [info] = JSON.parse(await cluster.backups.run(["--output=json", "info"])) as [{ status: { message: string }; backup: { type: string; label: string }[]; cipher: string }];
    expect(info.status.message).toBe("ok");
    expect(info.cipher).toBe("aes-256-cbc");
    expect(info.backup.map((backup) => backup.type)).toEqual(["full"]);
    const report = await verifyReport();
    expect(report).toMatch(/^\s*status: ok\s*$/m);
    // backup-standby: the backup waited for a standby to replay up to its start, and copied the files from it.
    expect(backupOutput).toMatch(/replay on the standby reached/);
    // The repository's health, as deploy/pgbackrest/backup-metrics.py gives it to Prometheus.
    const metrics = await backupMetrics();
    expect(metrics).toContain('pgbackrest_info_ok{stanza="tessera"} 1');
    expect(metrics).toContain('pgbackrest_verify_ok{stanza="tessera"} 1');
    expect(metrics).toContain('pgbackrest_backup_count{stanza="tessera"} 1');
    const lastFull = Number(/^pgbackrest_backup_last_stop_seconds\{stanza="tessera",type="full"\} (\d+)$/m.exec(metrics)?.[1]);
    expect(Math.abs(Date.now() / 1000 - lastFull)).toBeLessThan(600);
    console.info(`full backup of the drill cluster: ${seconds(backupMs)}`);
  }, 900_000);

  it("rebuilds a replica from the repository while the primary takes the load, losing nothing", async ({ onTestFailed }) => {
    onTestFailed(() => console.error(cluster.logTails()));
    const leader = await cluster.leader();
    const standby = await cluster.syncStandby();
    const replica = cluster.nodes.find((node) => node.name !== leader.name && node.name !== standby.name);
    if (replica === undefined) throw new Error("no asynchronous replica");
    const builtBefore = replicasBuiltFromRepository(replica);
    let streamingAfterMs = 0;
    const round = await drill.round("replica rebuilt from the repository", async () => {
      ({ streamingAfterMs } = await cluster.rebuildReplica(replica));
      return undefined;
    });
    await drill.checkRound(round);
    // Its disk was filled from the repository (then the archive, then streaming), not copied off the busy primary.
    expect(replicasBuiltFromRepository(replica)).toBe(builtBefore + 1);
    console.info(`${replica.name} rebuilt from the repository under load: streaming after ${seconds(streamingAfterMs)}; checked ${JSON.stringify(round.checked)}`);
  }, 900_000);

  it("restores to the restore point set under load before a wrong command: every write acknowledged before it back, nothing after it", async ({ onTestFailed }) => {
    onTestFailed(() => console.error(cluster.logTails()));
    // A token issued before the point (at the services' set-up), and one after it.
    const tokenBefore = system.completionTokens.writer;
    expect(await userJsonStatuses(tokenBefore)).toEqual([200, 200]);
    // An account from before the point, suspended after it; one created after it.
    await signonCli(system.cliEnv, "users", "create", "--email", "before-point@example.org", "--name", "Before Point", "--generate-password");
    const loop = new WriteLoop(databaseUrl).start();
    const point: RestorePointTimes = { sentAt: 0, at: 0 };
    let tokenAfter = "";
    const round = await drill.round("a wrong command after a restore point", async () => {
      await writeFor(loop, 3000, 50);
      point.sentAt = Date.now();
      // As an operator would before risky work: the shipped command, against the primary through HAProxy.
      const set = await runShipped("signon-cli", ["restore-point", "before-wrong-command"], { DATABASE_URL: cluster.primaryUrl });
      point.at = Date.now();
      expect({ code: set.code, stdout: set.stdout }).toEqual({ code: 0, stdout: expect.stringMatching(/^Set the restore point before-wrong-command at WAL position [0-9A-F]+\/[0-9A-F]+\.\n$/) });
      // Writes of every kind after the point, then the wrong command: committed and replicated at once.
      await drill.loadUntilEachAnswered(point.at, 5, 2000);
      tokenAfter = String((await signonCli(system.cliEnv, "tokens", "issue", "--email", "loader@example.org", "--app", "completion"))["access_token"]);
      expect(await userJsonStatuses(tokenAfter)).toEqual([200, 200]);
      await signonCli(system.cliEnv, "users", "suspend", "--email", "before-point@example.org", "--reason", "Suspended after the restore point");
      await signonCli(system.cliEnv, "users", "create", "--email", "after-point@example.org", "--name", "After Point", "--generate-password");
      await run(databaseUrl, "delete from writes where id % 2 = 0");
      await system.pool.query("delete from completion.block_completions");
      await system.pool.query("delete from signon.access_tokens");
      await writeFor(loop, 1000);
      return undefined;
    });
    await loop.stop();
    // The segments up to now are in the repository (check switches WAL and waits until it is archived).
    await cluster.backups.run(["check"], { timeoutMs: 120_000 });
    const before = loop.acknowledged.filter((write) => write.at < point.sentAt);
    const after = loop.acknowledged.filter((write) => write.sentAt > point.at);

    const restoreStartedAt = Date.now();
    const { primaryAfterMs } = await cluster.rebuildFromBackup({ name: "before-wrong-command" });
    const stored = await storedIds(databaseUrl);
    const lost = before.filter((write) => !stored.has(write.id));
    const kept = after.filter((write) => stored.has(write.id));
    expect(before.length).toBeGreaterThan(0);
    expect(lost).toEqual([]);
    expect(after.length).toBeGreaterThan(0);
    expect(kept).toEqual([]);
    // The deleted rows are back: every even id acknowledged before the point.
    expect(before.filter((write) => write.id % 2 === 0).every((write) => stored.has(write.id))).toBe(true);
    // The replicas were built from the repository, not copied off the primary.
    for (const node of cluster.nodes.slice(1)) expect(readFileSync(node.logFile, "utf8")).toMatch(/replica has been created using pgbackrest/);
    // The restored cluster archives again, on its new timeline.
    await cluster.backups.run(["check"], { timeoutMs: 120_000 });

    // The services came back by themselves, on the same settings: the token issued before the point works at both
    // Sign-on instances, the one issued after it is unknown (no answer kept from before the restore), no process exited.
    await waitFor("both Sign-on instances to answer the token issued before the point", async () => ((await userJsonStatuses(tokenBefore)).every((status) => status === 200) ? true : null), {
      timeoutMs: 60_000,
      logs: [],
    });
    expect(await userJsonStatuses(tokenAfter)).toEqual([401, 401]);
    expect(system.services.map((service) => [service.name, service.exit()])).toEqual(system.services.map((service) => [service.name, null]));

    // The load's ledger: every token, completion and permission change acknowledged before the point is back, and
    // nothing sent after it; the deleted tokens and completions are back.
    const tokens = await restorePointTokenProblems(system, round.record.chains, point);
    expect(firstProblems(tokens.problems)).toEqual([]);
    expect(tokens.before).toBeGreaterThan(0);
    expect(tokens.after).toBeGreaterThan(0);
    rewindToRestorePoint(round.record, point);
    // What was done after the point is undone: the suspension lifted, the account created gone.
    const accounts = await system.pool.query<{ email: string; suspended: boolean }>(
      "select email, suspended_at is not null as suspended from signon.users where email in ('before-point@example.org', 'after-point@example.org')",
    );
    expect(accounts.rows).toEqual([{ email: "before-point@example.org", suspended: false }]);
    expect(firstProblems(await completionProblems(system, round.record, drill.checkLog))).toEqual([]);

    // The operator's step after a restore: every application hears what Sign-on holds now, and the pushes arrive.
    const followUp = await signonCli(system.cliEnv, "restore", "follow-up");
    expect(followUp["update_pushes"]).toBeGreaterThan(0);
    await waitFor(
      "the follow-up's pushes to be delivered",
      async () => {
        const { pushes } = (await signonCli(system.cliEnv, "pushes", "list")) as { pushes: { status: string }[] };
        return pushes.every((push) => push.status === "delivered") ? true : null;
      },
      { timeoutMs: 60_000, logs: [] },
    );

    // The load again on the restored cluster: everything it is acknowledged holds, the permission changes and
    // completions going on from what the restore left.
    const again = await drill.round("after the restore", async () => undefined);
    await drill.checkRound(again);
    const firstWrite = drill.log.outcomes.find((outcome) => outcome.sentAt >= again.startedAt && isAcknowledgedWrite(outcome));
    console.info(
      `restore to a named point under load: ${before.length} inserts acknowledged before it, ${lost.length} lost; ${after.length} after it, ${kept.length} kept; ` +
        `tokens acknowledged before it ${tokens.before} (all restored), sent after it ${tokens.after} (none restored); ` +
        `the restored primary answered after ${seconds(primaryAfterMs)}, the first write of the load after ${seconds((firstWrite?.at ?? NaN) - restoreStartedAt)} from the restore's start`,
    );
  }, 1_500_000);

  it("archives on across a failover, then loses every node's data at once and restores the latest: only writes of the last archive_timeout can be lost", async ({ onTestFailed }) => {
    onTestFailed(() => console.error(cluster.logTails()));
    await cluster.backups.run(["--type=incr", "backup"], { timeoutMs: 600_000 });
    // A new ledger: the loop numbers its inserts from 1 again.
    await run(databaseUrl, "truncate writes");
    const loop = new WriteLoop(databaseUrl).start();
    let failedOverAt = 0;
    let lostAt = 0;
    let primaryAfterMs = 0;
    const round = await drill.round("a failover, then every node lost", async () => {
      await writeFor(loop, 5000, 20);
      const leader = await cluster.leader();
      failedOverAt = Date.now();
      await cluster.loseMachine(leader);
      await cluster.waitForLeader({ not: leader.name, timeoutMs: 120_000 });
      await drill.firstWriteAfter(failedOverAt);
      // Past one archive_timeout on the new primary's timeline, so that it closes a segment by time alone.
      await writeFor(loop, 70_000, 100);
      lostAt = Date.now();
      await Promise.all(cluster.nodes.filter((node) => node.pid !== null).map((node) => cluster.loseMachine(node)));
      await loop.stop();
      ({ primaryAfterMs } = await cluster.rebuildFromBackup("latest", { dataLost: true }));
      return { at: lostAt, liftedAt: Date.now(), leaders: [leader.name, (await cluster.leader()).name] };
    });
    const acknowledged: Acknowledged[] = loop.acknowledged.filter((write) => write.at <= lostAt);
    const stored = await storedIds(databaseUrl);
    const lost = acknowledged.filter((write) => !stored.has(write.id));
    const oldestLost = lost.length === 0 ? null : Math.min(...lost.map((write) => write.at));
    const recoveryPointMs = oldestLost === null ? 0 : lostAt - oldestLost;
    // The services' writes: access tokens acknowledged before the loss and not restored are within the same bound.
    const issued = round.record.chains.flatMap((chain) => [chain, ...chain.rotations]).filter((tokens) => tokens.at <= lostAt);
    const storedTokens = new Set(
      (await system.pool.query<{ token_hash: string }>("select token_hash from signon.access_tokens where token_hash = any($1::text[])", [issued.map((tokens) => sha256(tokens.accessToken))])).rows.map(
        (row) => row.token_hash,
      ),
    );
    const lostTokens = issued.filter((tokens) => !storedTokens.has(sha256(tokens.accessToken)));
    const tokenRecoveryPointMs = lostTokens.length === 0 ? 0 : lostAt - Math.min(...lostTokens.map((tokens) => tokens.at));
    const firstWrite = round.fault?.liftedAt === undefined ? undefined : drill.log.outcomes.find((outcome) => outcome.sentAt >= lostAt && isAcknowledgedWrite(outcome));
    console.info(
      `a failover, then every node lost: ${acknowledged.length} inserts acknowledged (${acknowledged.filter((write) => write.at > failedOverAt).length} after the failover), ${lost.length} lost ` +
        `(recovery point ${seconds(recoveryPointMs)}, archive_timeout 60 s); ${issued.length} access tokens acknowledged, ${lostTokens.length} lost (recovery point ${seconds(tokenRecoveryPointMs)}); ` +
        `the restored primary answered after ${seconds(primaryAfterMs)}, the load's first write ${seconds((firstWrite?.at ?? NaN) - lostAt)} after the loss`,
    );
    expect(recoveryPointMs).toBeLessThanOrEqual(65_000);
    expect(tokenRecoveryPointMs).toBeLessThanOrEqual(65_000);
    // Writes acknowledged on the new primary's timeline were archived by it and are back.
    expect(acknowledged.filter((write) => write.at > failedOverAt && stored.has(write.id)).length).toBeGreaterThan(0);
    expect(system.services.map((service) => [service.name, service.exit()])).toEqual(system.services.map((service) => [service.name, null]));
  }, 1_500_000);

  it("detects a corrupted file in the repository rather than restoring it", async ({ onTestFailed }) => {
    onTestFailed(() => console.error(cluster.logTails()));
    await cluster.backups.run(["verify"], { timeoutMs: 300_000 });
    const backupDir = join(cluster.backups.folders.repository, "backup", "tessera");
    const files = walk(backupDir).filter((path) => /\/pg_data\//.test(path) || /\/bundle\//.test(path));
    const largest = files.sort((a, b) => statSync(b).size - statSync(a).size)[0];
    expect(largest).toBeDefined();
    const bytes = readFileSync(largest!);
    bytes[Math.floor(bytes.length / 2)]! ^= 0xff;
    writeFileSync(largest!, bytes);
    // verify counts the damaged file (and exits 0: its report, through the metrics, is what tells); a restore of that
    // backup stops with pgBackRest's error rather than writing it.
    const report = await verifyReport();
    expect(report).toMatch(/status: error/);
    expect(report).toMatch(/checksum invalid: [1-9]/);
    expect(await backupMetrics()).toContain('pgbackrest_verify_ok{stanza="tessera"} 0');
    const scratch = cluster.backups.scratchFolder();
    const restore = cluster.backups.run([`--pg1-path=${scratch}`, "--type=none", "restore"], { timeoutMs: 300_000, on: "node1" });
    await expect(restore).rejects.toThrow(/pgbackrest --pg1-path=\S+ --type=none restore failed \(exit code \d+\):\n[\s\S]*ERROR: \[\d+\]/);
  }, 900_000);
});

function walk(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? walk(join(directory, entry.name)) : [join(directory, entry.name)],
  );
}
