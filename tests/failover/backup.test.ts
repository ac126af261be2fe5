// Backups and point-in-time recovery of the documented deployment (deploy/pgbackrest, deploy/patroni): every node
// archives its WAL to the repository machine over TLS, a full backup is taken from a standby, and the cluster is
// rebuilt from the repository after a wrong command (to the named restore point set before it) and after every
// node's data is lost (to the last WAL the repository holds). Each drill keeps a ledger of acknowledged inserts
// and checks it against the restored cluster.
// Needs Debian's patroni, etcd-server, haproxy, postgresql-15 and pgbackrest; skipped without them, except under CI=true.
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { runShipped, signonCli } from "@tessera/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failoverClusterUnavailable, failoverPackages, pause, startFailoverCluster, startFailoverSystem, waitFor, WriteLoop, type Acknowledged, type FailoverCluster, type FailoverSystem } from "@tessera/test-support/drill";

const missing = failoverClusterUnavailable();
if (missing !== null) {
  const line = `tests/failover skipped: ${missing} (install with: apt-get install ${failoverPackages})`;
  if (process.env["CI"] === "true") throw new Error(`${line}; CI must run this test`);
  console.warn(line);
}

/** The same server's `drill` database. */
const inDatabase = (url: string) => url.replace(/\/postgres$/, "/drill");

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

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

describe.skipIf(missing !== null)("backups and point-in-time recovery of the Patroni cluster", () => {
  let cluster: FailoverCluster;
  let databaseUrl: string;
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
    databaseUrl = inDatabase(await cluster.createDatabase("drill"));
    await run(databaseUrl, "create table writes (id integer primary key, written_at timestamptz not null default now())");
    // The services as shipped on the cluster (two Sign-on and two Completion instances, the editorial app): they
    // must come back by themselves after a restore, with no change of settings.
    system = await startFailoverSystem(cluster);
  }, 600_000);
  afterAll(async () => {
    await system?.close();
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

  it("restores to the restore point set before a wrong command: every write acknowledged before it back, nothing after it", async ({ onTestFailed }) => {
    onTestFailed(() => console.error(cluster.logTails()));
    // A token issued before the point (at the services' set-up), and one after it.
    const tokenBefore = system.completionTokens.writer;
    expect(await userJsonStatuses(tokenBefore)).toEqual([200, 200]);
    const loop = new WriteLoop(databaseUrl).start();
    await writeFor(loop, 3000, 50);
    const pointSentAt = Date.now();
    // As an operator would before risky work: the shipped command, against the primary through HAProxy.
    const point = await runShipped("signon-cli", ["restore-point", "before-wrong-command"], { DATABASE_URL: cluster.primaryUrl });
    expect({ code: point.code, stdout: point.stdout }).toEqual({ code: 0, stdout: expect.stringMatching(/^Set the restore point before-wrong-command at WAL position [0-9A-F]+\/[0-9A-F]+\.\n$/) });
    const pointAt = Date.now();
    await writeFor(loop, 2000);
    const tokenAfter = String((await signonCli(system.cliEnv, "tokens", "issue", "--email", "loader@example.org", "--app", "completion"))["access_token"]);
    expect(await userJsonStatuses(tokenAfter)).toEqual([200, 200]);
    // The wrong command: half the rows deleted, committed and replicated at once.
    await run(databaseUrl, "delete from writes where id % 2 = 0");
    await writeFor(loop, 1000);
    await loop.stop();
    // The segments up to now are in the repository (check switches WAL and waits until it is archived).
    await cluster.backups.run(["check"], { timeoutMs: 120_000 });
    const before = loop.acknowledged.filter((write) => write.at < pointSentAt);
    const after = loop.acknowledged.filter((write) => write.sentAt > pointAt);

    const { primaryAfterMs } = await cluster.rebuildFromBackup({ name: "before-wrong-command" });
    const stored = await storedIds(databaseUrl);
    const lost = before.filter((write) => !stored.has(write.id));
    const kept = after.filter((write) => stored.has(write.id));
    console.info(
      `restore to a named point: ${before.length} writes acknowledged before it, ${lost.length} lost; ${after.length} after it, ${kept.length} kept; ` +
        `the restored primary answered after ${seconds(primaryAfterMs)}`,
    );
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
  }, 1_200_000);

  it("loses every node's data at once and restores the latest: only writes of the last archive_timeout can be lost", async ({ onTestFailed }) => {
    onTestFailed(() => console.error(cluster.logTails()));
    await cluster.backups.run(["--type=incr", "backup"], { timeoutMs: 600_000 });
    // A new ledger: the loop numbers its inserts from 1 again.
    await run(databaseUrl, "truncate writes");
    const loop = new WriteLoop(databaseUrl).start();
    // Past one archive_timeout, so that at least one segment is closed by time alone while the loop writes.
    await writeFor(loop, 70_000, 100);
    const lostAt = Date.now();
    await Promise.all(cluster.nodes.map((node) => cluster.loseMachine(node)));
    await loop.stop();
    const acknowledged: Acknowledged[] = loop.acknowledged.filter((write) => write.at <= lostAt);

    const { primaryAfterMs } = await cluster.rebuildFromBackup("latest", { dataLost: true });
    const stored = await storedIds(databaseUrl);
    const lost = acknowledged.filter((write) => !stored.has(write.id));
    const oldestLost = lost.length === 0 ? null : Math.min(...lost.map((write) => write.at));
    const recoveryPointMs = oldestLost === null ? 0 : lostAt - oldestLost;
    console.info(
      `every node lost: ${acknowledged.length} writes acknowledged, ${lost.length} lost (recovery point ${seconds(recoveryPointMs)}, archive_timeout 60 s); ` +
        `the restored primary answered after ${seconds(primaryAfterMs)}`,
    );
    expect(recoveryPointMs).toBeLessThanOrEqual(65_000);
    expect(acknowledged.length - lost.length).toBeGreaterThan(0);
  }, 1_200_000);

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
