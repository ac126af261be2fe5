// Backups and restores at 1M people, on the failover tests' Patroni cluster with the documented pgBackRest
// repository (deploy/pgbackrest: its own machine, TLS, aes-256-cbc, zstd, backups from the standby):
//
// 1. A full backup (`pgbackrest --type=full backup`, as deploy/pgbackrest/backup.cron runs it) against the peer it
//    replaces, the nightly `pg_dump -Fc` of the same database.
// 2. A full restore that reads back: `pgbackrest restore` into an empty folder, PostgreSQL started on it until it
//    answers a count of the people, against the peer's `pg_restore -j 2` into an empty database.
// 3. The whole cluster lost (every node's data folder deleted): Patroni bootstraps a new primary from the repository
//    (deploy/patroni/restore.yml) and the replicas are built from it; the time to the first acknowledged write
//    through HAProxy, and to the whole cluster streaming again.
//
//   npm run bench -- backup
//
// Needs Debian's patroni, etcd-server, haproxy, postgresql-15 and pgbackrest (as tests/failover). The database is
// bench/scale's 1M people (BENCH_BACKUP_PEOPLE) and audit events, up to BENCH_BACKUP_TARGET_MB (default 1,200 MB).
// Goals (issue 49): backup and restore each under 2 minutes, the whole cluster to its first write under 5.
import { execFile } from "node:child_process";
import { appendFileSync, chownSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { createDrizzle, createPool, runMigrations, withStatementTimeout } from "@tessera/db";
import { signonMigrations } from "@tessera/signon";
import { sql } from "drizzle-orm";
import pg from "pg";
import * as schema from "../../packages/signon/src/db/schema.js";
import { generatePeople } from "../../packages/signon/test/support/generated-people.js";
import { binaries, failoverClusterUnavailable, freePorts, inDatabase, postgresUser, startFailoverCluster, type FailoverCluster } from "@tessera/test-support/drill";

const people = Number(process.env["BENCH_BACKUP_PEOPLE"] || 1_000_000);
const targetBytes = Number(process.env["BENCH_BACKUP_TARGET_MB"] || 1200) * 1024 * 1024;
const goals = { backupMs: 120_000, restoreMs: 120_000, firstWriteMs: 300_000 };

const missing = failoverClusterUnavailable();
if (missing !== null) {
  console.log(`bench/backup skipped: ${missing}`);
  process.exit(0);
}

const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

async function query<Row extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<Row>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** The database machines' user: the cluster runs as postgres when the bench runs as root. */
const owner = process.getuid?.() === 0 ? postgresUser() : null;

/** Runs a program as the database machines' user, to its end; rejects with its output on failure. */
function runAsPostgres(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { encoding: "utf8", env: { PATH: "/usr/bin:/bin", LANG: "C.UTF-8", ...env }, maxBuffer: 64 * 1024 * 1024, timeout: 1_800_000, ...(owner ?? {}) }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(" ")} failed: ${String(error.code)}\n${stdout}${stderr}`));
      else resolve(stdout + stderr);
    });
  });
}

async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const result = await work();
  return [result, performance.now() - started];
}

function folderBytes(path: string): number {
  let total = 0;
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    const child = join(path, entry.name);
    if (entry.isDirectory()) total += folderBytes(child);
    else if (entry.isFile()) total += statSync(child).size;
  }
  return total;
}

/** bench/scale's people, then audit events until the cluster's databases reach the target size. */
async function fillDatabase(url: string): Promise<{ events: number }> {
  const pool = createPool({ url, max: 2, statementTimeoutMs: null });
  try {
    const db = createDrizzle(pool, schema);
    await runMigrations(pool, [signonMigrations]);
    const started = performance.now();
    const generated = await withStatementTimeout(null, () => generatePeople(db, people, 100_000));
    let events = 0;
    const size = async () => (await db.execute<{ bytes: string }>(sql`select sum(pg_database_size(datname))::text as bytes from pg_database`)).rows[0]!.bytes;
    while (Number(await size()) < targetBytes) {
      await db.execute(sql`
        insert into signon.audit_events (occurred_at, action, subject_uid, application_id, details)
        select now() - make_interval(secs => n), 'authorization_code_issued', p.uid, ${generated.applicationId}::uuid, '{}'::jsonb
          from (select uid, row_number() over () as n from signon.users limit 500000) p`);
      events += 500_000;
    }
    await db.execute(sql`vacuum analyze`);
    console.log(`${people.toLocaleString("en-GB")} people and ${events.toLocaleString("en-GB")} audit events generated in ${seconds(performance.now() - started)}`);
    return { events };
  } finally {
    await pool.end();
  }
}

/** PostgreSQL started on a restored folder, until it has recovered and answers the count of people. */
async function readBack(cluster: FailoverCluster, data: string): Promise<number> {
  const [port] = await freePorts(1);
  const socket = mkdtempSync(join(data, "..", "socket-"));
  if (owner) chownSync(socket, owner.uid, owner.gid);
  // WAL up to the backup's consistent point comes from the repository, through node1's configuration.
  const restoreCommand = `${binaries.pgbackrest} --config=${cluster.backups.node("node1").configFile} --pg1-path=${data} --stanza=tessera archive-get %f "%p"`;
  appendFileSync(join(data, "postgresql.auto.conf"), `restore_command = '${restoreCommand}'\n`);
  const pgCtl = join(binaries.postgresBin, "pg_ctl");
  const options = `-c port=${port} -c listen_addresses='' -c unix_socket_directories=${socket} -c archive_mode=off -c synchronous_standby_names=''`;
  try {
    await runAsPostgres(pgCtl, ["-D", data, "-l", join(socket, "log"), "-o", options, "-w", "-t", "1200", "start"]).catch((error: Error) => {
      throw new Error(`${error.message}\n${readFileSync(join(socket, "log"), "utf8")}`);
    });
    const rows = await runAsPostgres(join(binaries.postgresBin, "psql"), ["-h", socket, "-p", String(port), "-U", "postgres", "-d", "signon_bench", "-Atc", "select count(*) from signon.users"]);
    return Number(rows.trim());
  } finally {
    await runAsPostgres(pgCtl, ["-D", data, "-m", "immediate", "stop"]).catch(() => undefined);
    rmSync(socket, { recursive: true, force: true });
  }
}

/** Inserts through HAProxy's primary port every 200 ms until one is acknowledged; resolves with when it was. */
async function firstWrite(url: string, since: number, stopped: () => boolean): Promise<number | null> {
  while (!stopped()) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000, query_timeout: 2000 });
    try {
      await client.connect();
      await client.query("insert into bench_writes (at) values (now())");
      return performance.now() - since;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 200));
    } finally {
      await client.end().catch(() => undefined);
    }
  }
  return null;
}

const cluster = await startFailoverCluster();
const rows: string[] = [];
try {
  const url = await cluster.createDatabase("signon_bench");
  await query(url, "create table bench_writes (id bigserial primary key, at timestamptz not null)");
  const { events } = await fillDatabase(url);
  const [total] = await query<{ bytes: string }>(cluster.primaryUrl, "select sum(pg_database_size(datname))::text as bytes from pg_database");
  const size = Number(total?.bytes);
  console.log(`cluster's databases: ${megabytes(size)} (${people.toLocaleString("en-GB")} people, ${events.toLocaleString("en-GB")} audit events)`);
  await cluster.waitUntilStreaming(cluster.nodes[1]!, 600_000);

  // 1. Backups.
  const [, backupMs] = await timed(() => cluster.backups.run(["--type=full", "backup"], { timeoutMs: 1_800_000 }));
  const [info] = JSON.parse(await cluster.backups.run(["--output=json", "info"])) as [{ backup: { info: { repository: { delta: number } } }[] }];
  const stored = info.backup.at(-1)!.info.repository.delta;
  const dumps = cluster.backups.scratchFolder();
  const dumpFile = join(dumps, "signon_bench.dump");
  const [, dumpMs] = await timed(() => runAsPostgres(join(binaries.postgresBin, "pg_dump"), ["-Fc", "-f", dumpFile, url]));
  rows.push(`| Full backup | ${seconds(backupMs)} (${megabytes(stored)} stored, whole cluster) | ${seconds(dumpMs)} (${megabytes(statSync(dumpFile).size)}, one database) | ${(dumpMs / backupMs).toFixed(2)} | ${backupMs < goals.backupMs ? "under 2 min" : "OVER 2 min"} |`);

  // 2. Restores that read back.
  const target = cluster.backups.scratchFolder();
  const [, filesMs] = await timed(() => cluster.backups.run([`--pg1-path=${target}`, "--type=immediate", "restore"], { on: "node1", timeoutMs: 1_800_000 }));
  const [count, recoveredMs] = await timed(() => readBack(cluster, target));
  if (count < people) throw new Error(`the restored copy holds ${count} people, not ${people}`);
  const restoreMs = filesMs + recoveredMs;
  rmSync(target, { recursive: true, force: true });
  await query(cluster.primaryUrl, "create database signon_restored");
  const restoredUrl = inDatabase(cluster.primaryUrl, "signon_restored");
  const [, pgRestoreMs] = await timed(async () => {
    await runAsPostgres(join(binaries.postgresBin, "pg_restore"), ["-j", "2", "--no-owner", "-d", restoredUrl, dumpFile]);
    await query(restoredUrl, "select count(*) from signon.users");
  });
  await query(cluster.primaryUrl, "drop database signon_restored");
  rmSync(dumps, { recursive: true, force: true });
  rows.push(
    `| Full restore, read back | ${seconds(restoreMs)} (files ${seconds(filesMs)}, recovery and first read ${seconds(recoveredMs)}) | ${seconds(pgRestoreMs)} (pg_restore -j 2, indexes rebuilt) | ${(pgRestoreMs / restoreMs).toFixed(2)} | ${restoreMs < goals.restoreMs ? "under 2 min" : "OVER 2 min"} |`,
  );

  // 3. The whole cluster lost.
  await query(url, "insert into bench_writes (at) values (now())");
  await query(cluster.primaryUrl, "select pg_switch_wal()");
  const since = performance.now();
  let rebuilt = false;
  const write = firstWrite(url, since, () => rebuilt);
  const { primaryAfterMs } = await cluster.rebuildFromBackup("latest", { dataLost: true });
  const wholeMs = performance.now() - since;
  const firstWriteMs = await write;
  rebuilt = true;
  rows.push(
    `| Whole cluster lost, restored | first write ${firstWriteMs === null ? "none" : seconds(firstWriteMs)} (primary ${seconds(primaryAfterMs)}, all three streaming ${seconds(wholeMs)}) | no peer: a dump restores into a cluster rebuilt by hand | | ${firstWriteMs !== null && firstWriteMs < goals.firstWriteMs ? "under 5 min" : "OVER 5 min"} |`,
  );
  console.log(`repository on disk: ${megabytes(folderBytes(cluster.backups.folders.repository))}`);
  console.log(`\n| At ${megabytes(size)} | pgBackRest | pg_dump / pg_restore | Peer ÷ pgBackRest | Goal |\n|---|---|---|---|---|\n${rows.join("\n")}`);
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  console.error(cluster.logTails());
  process.exitCode = 1;
} finally {
  await cluster.stop();
}
