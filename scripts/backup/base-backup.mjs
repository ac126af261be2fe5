// An online base backup of the embedded PostgreSQL server, with PostgreSQL's low-level backup API over a client
// connection (the embedded server has no pg_basebackup): a temporary replication slot keeps the WAL from the
// backup's start, pg_backup_start checkpoints, the cluster's files are copied while the server runs,
// pg_backup_stop gives the backup_label, and the WAL segments from the start to the stop are copied beside them.
// The copy starts by itself: recovery from its backup_label replays that WAL at its first start.
// https://www.postgresql.org/docs/18/continuous-archiving.html#BACKUP-LOWLEVEL-BASE-BACKUP
import { copyFile, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** Folders of the cluster's top level whose contents a backup leaves out (the server makes them anew); each is kept, empty. */
const EMPTIED = new Set(["pg_wal", "pg_replslot", "pg_dynshmem", "pg_notify", "pg_serial", "pg_snapshots", "pg_stat_tmp", "pg_subtrans"]);
/** Files of the cluster's top level that belong to the running server, not to the data. */
const LEFT_OUT = new Set(["postmaster.pid", "postmaster.opts"]);
/** Copied last, from two reads that agree: the server may rewrite it while it is read (pg_basebackup copies it last too). */
const CONTROL_FILE = join("global", "pg_control");

/** Whether a file anywhere in the cluster is left out: temporary files and the relation cache's, which the server rebuilds. */
function isScratch(name) {
  return name.startsWith("pgsql_tmp") || name === "pg_internal.init";
}

/**
 * Takes a base backup of the server `client` is connected to (a superuser over the socket), whose data directory is
 * `dataDir`, into the empty-or-missing folder `target`. Uses `client`'s session throughout: should anything fail,
 * ending that session ends the backup and drops the slot.
 * @param {import("pg").Client} client
 * @param {{ dataDir: string, target: string, label: string }} options
 * @returns {Promise<{ startLsn: string, stopLsn: string, timeline: number, walSegments: string[] }>}
 */
export async function takeBaseBackup(client, { dataDir, target, label }) {
  const slot = `tessera_backup_${process.pid}`;
  await client.query("SELECT pg_create_physical_replication_slot($1, immediately_reserve => true, temporary => true)", [slot]);
  const started = await client.query("SELECT pg_backup_start($1, fast => true) AS lsn", [label]);
  const startLsn = String(started.rows[0].lsn);

  await copyCluster(dataDir, target);

  const stopped = await client.query("SELECT lsn, labelfile, spcmapfile FROM pg_backup_stop(wait_for_archive => false)");
  const { lsn: stopLsn, labelfile, spcmapfile } = stopped.rows[0];
  if (spcmapfile !== "") throw new Error(`${dataDir} has tablespaces outside the data directory, which npm run backup does not copy`);
  // Written byte for byte as PostgreSQL gave it: recovery starts from the checkpoint it names.
  await writeFile(join(target, "backup_label"), labelfile, { mode: 0o600 });

  const walSegments = await segmentsBetween(client, startLsn, String(stopLsn));
  const timeline = Number(/^START TIMELINE: (\d+)$/m.exec(labelfile)?.[1]);
  const wal = join(dataDir, "pg_wal");
  const history = (await readdir(wal)).filter((name) => name.endsWith(".history"));
  for (const name of [...history, ...walSegments]) await copyFile(join(wal, name), join(target, "pg_wal", name));
  await client.query("SELECT pg_drop_replication_slot($1)", [slot]);
  return { startLsn, stopLsn: String(stopLsn), timeline, walSegments };
}

/**
 * The names of the WAL segments from the one holding `startLsn` to the one holding `stopLsn` (the end of the
 * backup's last record: pg_walfile_name gives the segment it ends in), on the server's timeline.
 */
async function segmentsBetween(client, startLsn, stopLsn) {
  const { rows } = await client.query(
    "SELECT pg_walfile_name($1::pg_lsn) AS first, pg_walfile_name($2::pg_lsn) AS last, pg_size_bytes(current_setting('wal_segment_size')) AS size",
    [startLsn, stopLsn],
  );
  const { first, last, size } = rows[0];
  const perLogId = 0x1_0000_0000n / BigInt(size);
  const number = (name) => BigInt(`0x${name.slice(8, 16)}`) * perLogId + BigInt(`0x${name.slice(16, 24)}`);
  const hex = (value) => value.toString(16).toUpperCase().padStart(8, "0");
  const timeline = first.slice(0, 8);
  const names = [];
  for (let segment = number(first); segment <= number(last); segment++) names.push(`${timeline}${hex(segment / perLogId)}${hex(segment % perLogId)}`);
  return names;
}

/**
 * Copies the cluster's files as they are now into `target`, leaving out what PostgreSQL's documentation says a
 * base backup may omit. A file removed meanwhile is simply missing from the copy (the WAL replays its removal).
 */
async function copyCluster(dataDir, target) {
  await copyFolder(dataDir, target, "");
  await mkdir(join(target, "pg_wal", "archive_status"), { recursive: true, mode: 0o700 });
  await mkdir(join(target, "pg_wal", "summaries"), { recursive: true, mode: 0o700 });
  await copyControlFile(join(dataDir, CONTROL_FILE), join(target, CONTROL_FILE));
}

async function copyFolder(from, to, relative) {
  await mkdir(to, { mode: 0o700 });
  let entries;
  try {
    entries = await readdir(from, { withFileTypes: true });
  } catch (error) {
    if (error.code === "ENOENT") return;
    throw error;
  }
  for (const entry of entries) {
    const path = join(relative, entry.name);
    if (isScratch(entry.name) || (relative === "" && LEFT_OUT.has(entry.name)) || path === CONTROL_FILE) continue;
    if (relative === "" && EMPTIED.has(entry.name)) await mkdir(join(to, entry.name), { mode: 0o700 });
    else if (entry.isDirectory()) await copyFolder(join(from, entry.name), join(to, entry.name), path);
    else if (entry.isFile()) {
      await copyFile(join(from, entry.name), join(to, entry.name)).catch((error) => {
        if (error.code !== "ENOENT") throw error;
      });
    } else if (entry.isSymbolicLink()) {
      throw new Error(`${join(from, entry.name)} is a symbolic link (a tablespace, or WAL kept elsewhere), which npm run backup does not copy`);
    }
  }
}

async function copyControlFile(from, to) {
  let previous = await readFile(from);
  for (;;) {
    const current = await readFile(from);
    if (current.equals(previous)) {
      await writeFile(to, current, { mode: 0o600 });
      return;
    }
    previous = current;
  }
}
