// The deployment's own settings files (deploy/, shown by docs/deployment.md), as the cluster of these tests runs
// them: the files are read from the repository and only their addresses, ports, folders and passwords are changed.
// Each change must find what it replaces, so a file that no longer says what the test expects fails the test
// instead of being run with the test's guess.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { repositoryRoot } from "../shipped.js";

const deployDir = join(repositoryRoot, "deploy/");

/** The text of a file under deploy/. */
export function deploymentFile(path: string): string {
  return readFileSync(`${deployDir}${path}`, "utf8");
}

/** `text` with every `from` replaced by `to`; throws when `from` is not there. */
function replaceAll(text: string, from: string | RegExp, to: string, file: string): string {
  const pattern = typeof from === "string" ? new RegExp(from.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "g") : from;
  if (!pattern.test(text)) throw new Error(`deploy/${file} no longer holds ${String(from)}: the failover tests must be taught what replaced it`);
  pattern.lastIndex = 0;
  return text.replace(pattern, () => to);
}

/** Passwords of the test cluster (the files ship placeholders). */
export const clusterPasswords = {
  superuser: "failover-superuser-secret",
  replication: "failover-replication-secret",
  rewind: "failover-rewind-secret",
  restApi: "failover-rest-api-secret",
} as const;

/** The REST API's user, as deploy/patroni/node.yml names it. */
export const restApiUser = "patroni";

/** deploy/patroni/cluster.yml, exactly as it ships. */
export function patroniClusterFile(): string {
  return deploymentFile("patroni/cluster.yml");
}

export interface PatroniNodeAddresses {
  name: string;
  pgPort: number;
  restPort: number;
  /** The node's own folder: its data directory and password file go inside. */
  directory: string;
  /** host:port of each etcd member's client API. */
  etcdHosts: string[];
  readReplicaOnly: boolean;
  /** The folder of the deployment's certificates (make-certificates.sh's), each named after its machine. */
  certificates: string;
}

/** deploy/patroni/node.yml for one node of the test cluster: db1's file with this node's name, addresses, folders and passwords. */
export function patroniNodeFile(node: PatroniNodeAddresses): string {
  const file = "patroni/node.yml";
  let text = deploymentFile(file);
  const edits: [string | RegExp, string][] = [
    [/^name: db1$/m, `name: ${node.name}`],
    ["0.0.0.0:8008", `127.0.0.1:${node.restPort}`],
    ["db1.internal:8008", `127.0.0.1:${node.restPort}`],
    ["0.0.0.0:5432", `127.0.0.1:${node.pgPort}`],
    ["db1.internal:5432", `127.0.0.1:${node.pgPort}`],
    ["etcd1.internal:2379,etcd2.internal:2379,etcd3.internal:2379", node.etcdHosts.join(",")],
    ["/var/lib/postgresql/15/main", `${node.directory}/data`],
    ["/var/lib/postgresql/15/pgpass", `${node.directory}/pgpass`],
    ["/etc/tessera/tls/ca.crt", `${node.certificates}/ca.crt`],
    ["/etc/tessera/tls/db1.internal", `${node.certificates}/${node.name}`],
    ["CHANGE-ME-rest-api", clusterPasswords.restApi],
    ["CHANGE-ME-superuser", clusterPasswords.superuser],
    ["CHANGE-ME-replication", clusterPasswords.replication],
    ["CHANGE-ME-rewind", clusterPasswords.rewind],
  ];
  if (node.readReplicaOnly) edits.push(["nofailover: false", "nofailover: true"]);
  for (const [from, to] of edits) text = replaceAll(text, from, to, file);
  return text;
}

/**
 * The one setting the test cluster adds to the files: each node's Unix socket in its own folder, since the
 * machine's /var/run/postgresql is not the test's to use (it belongs to the machine's own PostgreSQL, and a
 * test run by another user than postgres cannot write there).
 */
export function patroniSocketFile(directory: string): string {
  return JSON.stringify({ postgresql: { parameters: { unix_socket_directories: directory } } }, null, 2);
}

/** deploy/haproxy/haproxy.cfg with the test's ports: its own two, and each node's PostgreSQL and REST API. */
export function haproxyConfigFile(
  ports: { primary: number; replica: number },
  nodes: { name: string; pgPort: number; restPort: number }[],
  certificates: string,
  runtime: { socket: string; serverState: string },
): string {
  const file = "haproxy/haproxy.cfg";
  let text = deploymentFile(file);
  text = replaceAll(text, "/run/haproxy/admin.sock", runtime.socket, file);
  text = replaceAll(text, "/run/haproxy/server-state", runtime.serverState, file);
  text = replaceAll(text, "bind *:5000", `bind 127.0.0.1:${ports.primary}`, file);
  text = replaceAll(text, "bind *:5001", `bind 127.0.0.1:${ports.replica}`, file);
  text = replaceAll(text, "/etc/tessera/tls/ca.crt", `${certificates}/ca.crt`, file);
  text = replaceAll(text, "/etc/tessera/tls/haproxy.internal.pem", `${certificates}/haproxy.pem`, file);
  nodes.forEach((node, index) => {
    const machine = `db${index + 1}.internal`;
    text = replaceAll(text, `${machine}:5432 check port 8008`, `127.0.0.1:${node.pgPort} check port ${node.restPort}`, file);
    text = replaceAll(text, `check-sni ${machine} verifyhost ${machine}`, `check-sni ${node.name} verifyhost ${node.name}`, file);
  });
  return text;
}

export interface EtcdMemberAddresses {
  /** Member number, from 1. */
  number: number;
  clientPort: number;
  peerPort: number;
  dataDir: string;
}

/**
 * deploy/etcd/etcd.env for one member of the test's etcd cluster, as the environment etcd reads: etcd1's file
 * with this member's name, addresses and folder, and every member's peer address in the initial cluster.
 */
export function etcdEnvironment(member: EtcdMemberAddresses, members: EtcdMemberAddresses[], certificates: string): Record<string, string> {
  const file = "etcd/etcd.env";
  let text = deploymentFile(file);
  text = replaceAll(text, /^ETCD_NAME=etcd1$/m, `ETCD_NAME=etcd${member.number}`, file);
  text = replaceAll(text, "/var/lib/etcd/tessera", member.dataDir, file);
  text = replaceAll(text, "https://0.0.0.0:2379", `https://127.0.0.1:${member.clientPort}`, file);
  text = replaceAll(text, "https://0.0.0.0:2380", `https://127.0.0.1:${member.peerPort}`, file);
  text = replaceAll(text, "https://etcd1.internal:2379", `https://127.0.0.1:${member.clientPort}`, file);
  text = replaceAll(text, /^ETCD_INITIAL_ADVERTISE_PEER_URLS=.*$/m, `ETCD_INITIAL_ADVERTISE_PEER_URLS=https://127.0.0.1:${member.peerPort}`, file);
  text = replaceAll(text, "/etc/tessera/tls/ca.crt", `${certificates}/ca.crt`, file);
  text = replaceAll(text, "/etc/tessera/tls/etcd1.internal", `${certificates}/etcd${member.number}`, file);
  // Every member's peer address, in the initial cluster.
  for (const other of members) text = replaceAll(text, `https://etcd${other.number}.internal:2380`, `https://127.0.0.1:${other.peerPort}`, file);
  const environment: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const match = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (match) environment[match[1]!] = match[2]!;
  }
  return environment;
}

/** The repository's cipher passphrase in the test cluster (the files ship a placeholder). */
export const repositoryCipher = "failover-repository-cipher";

/** Where a test machine keeps what deploy/pgbackrest's files put under /etc, /var/lib, /var/log and /var/spool. */
export interface BackupMachineFolders {
  /** The certificate authority's and the machines' certificates (make-certificates.sh's folder). */
  certificates: string;
  /** The repository (on the repository machine; the same path is named on the database machines). */
  repository: string;
  logs: string;
  spool: string;
}

/** The database machines' names in deploy/pgbackrest's files, in node order. */
const databaseMachines = ["db1.internal", "db2.internal", "db3.internal"] as const;

function pgbackrestCommonEdits(folders: BackupMachineFolders): [string | RegExp, string][] {
  return [
    ["/etc/tessera/tls/ca.crt", `${folders.certificates}/ca.crt`],
    ["/var/lib/pgbackrest", folders.repository],
    ["/var/log/pgbackrest", folders.logs],
    ["CHANGE-ME-repository-cipher", repositoryCipher],
  ];
}

/**
 * deploy/pgbackrest/pgbackrest.conf for one database machine of the test cluster: db1's file with this node's
 * certificate, data directory, socket and ports, and the repository machine's TLS port.
 */
export function pgbackrestNodeFile(node: { name: string; directory: string; pgPort: number; tlsPort: number }, repositoryPort: number, folders: BackupMachineFolders): string {
  const file = "pgbackrest/pgbackrest.conf";
  let text = deploymentFile(file);
  const edits: [string | RegExp, string][] = [
    ...pgbackrestCommonEdits(folders),
    ["repo1-host=backup.internal", "repo1-host=localhost"],
    ["repo1-host-port=8432", `repo1-host-port=${repositoryPort}`],
    ["/etc/tessera/tls/db1.internal", `${folders.certificates}/${node.name}`],
    ["/var/spool/pgbackrest", folders.spool],
    ["tls-server-address=*", "tls-server-address=127.0.0.1"],
    ["tls-server-port=8432", `tls-server-port=${node.tlsPort}`],
    ["tls-server-auth=backup.internal=tessera", "tls-server-auth=backup=tessera"],
    ["/var/lib/postgresql/15/main", `${node.directory}/data`],
    ["/var/run/postgresql", node.directory],
    ["pg1-port=5432", `pg1-port=${node.pgPort}`],
  ];
  for (const [from, to] of edits) text = replaceAll(text, from, to, file);
  return text;
}

/** deploy/pgbackrest/repository.conf for the test's repository machine: its port, folders and the three nodes. */
export function pgbackrestRepositoryFile(
  port: number,
  nodes: { name: string; directory: string; pgPort: number; tlsPort: number }[],
  folders: BackupMachineFolders,
): string {
  const file = "pgbackrest/repository.conf";
  let text = deploymentFile(file);
  const edits: [string | RegExp, string][] = [
    ...pgbackrestCommonEdits(folders),
    ["/etc/tessera/tls/backup.internal", `${folders.certificates}/backup`],
    ["tls-server-address=*", "tls-server-address=127.0.0.1"],
    ["tls-server-port=8432", `tls-server-port=${port}`],
  ];
  nodes.forEach((node, index) => {
    const machine = databaseMachines[index]!;
    const n = index + 1;
    edits.push(
      [`tls-server-auth=${machine}=tessera`, `tls-server-auth=${node.name}=tessera`],
      [`pg${n}-host=${machine}`, `pg${n}-host=localhost`],
      [`pg${n}-host-port=8432`, `pg${n}-host-port=${node.tlsPort}`],
      [`pg${n}-path=/var/lib/postgresql/15/main`, `pg${n}-path=${node.directory}/data`],
      [`pg${n}-port=5432`, `pg${n}-port=${node.pgPort}`],
      [`pg${n}-socket-path=/var/run/postgresql`, `pg${n}-socket-path=${node.directory}`],
    );
  });
  for (const [from, to] of edits) text = replaceAll(text, from, to, file);
  return text;
}

/** Where a restore stops: a named restore point, a time, or the last WAL the repository holds. */
export type RestoreTarget = { name: string } | { time: Date } | "latest";

/** deploy/patroni/restore.yml with the test's target. */
export function patroniRestoreFile(target: RestoreTarget): string {
  const file = "patroni/restore.yml";
  const line = /^(\s+)recovery_target_name: CHANGE-ME-restore-point$/m;
  const text = deploymentFile(file);
  if (target === "latest") return replaceAll(text, line, "", file);
  if ("name" in target) return replaceAll(text, line, `      recovery_target_name: ${target.name}`, file);
  return replaceAll(text, line, `      recovery_target_time: "${target.time.toISOString()}"`, file);
}
