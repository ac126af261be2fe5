// A PostgreSQL 15 failover cluster for tests, on 127.0.0.1, run from the deployment's own settings files (deploy/):
// three etcd members, three Patroni nodes (node1 and node2 take
// turns as primary and synchronous standby; node3 is a read replica that is never promoted, asynchronous while
// either of them streams, and the new primary's synchronous standby while the old one is lost) and HAProxy in front,
// one port following the primary and one spreading over the replicas.
import { chmodSync, chownSync, existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { startBackupRepository, type BackupRepository } from "./backup-repository.js";
import { makeDeploymentCertificates, verifiedTls, type DeploymentCertificates } from "./certificates.js";
import { inDatabase } from "./database-url.js";
import { failoverClusterUnavailable, postgresUser } from "./binaries.js";
import { clusterPasswords, patroniRestoreFile, type RestoreTarget } from "./deployment-files.js";
import { startEtcd, type Etcd } from "./etcd.js";
import { startHaproxy, type Haproxy } from "./haproxy.js";
import { PatroniNode, type NodeRole } from "./patroni-node.js";
import { freePorts } from "./ports.js";
import { failure, waitFor } from "./wait.js";

export { failoverClusterUnavailable } from "./binaries.js";
export type { NodeRole } from "./patroni-node.js";
export type { RestoreTarget } from "./deployment-files.js";
export { patroniTimings } from "./patroni-config.js";

export interface ClusterNode {
  readonly name: string;
  readonly pgPort: number;
  readonly restPort: number;
  /** This node's PostgreSQL directly, whatever its role. */
  readonly url: string;
  /** Patroni's process id, or null while the machine is lost. */
  readonly pid: number | null;
  /** Patroni's log, PostgreSQL's included. */
  readonly logFile: string;
  role(): Promise<NodeRole>;
  /** A request to the node's REST API with its user and password. */
  restRequest(path: string, init?: { method?: string; headers?: Record<string, string>; body?: string }): Promise<Response>;
  /** A GET of the REST API, presenting the operator's certificate. */
  restGet(path: string, timeoutMs?: number): Promise<Response>;
  /** SIGSTOPs every process of the machine (Patroni, the postmaster and its children). */
  freeze(): void;
  /** SIGSTOPs PostgreSQL alone; Patroni goes on. */
  freezePostgres(): void;
  /** SIGCONTs everything frozen. */
  resume(): void;
  /** SIGKILLs PostgreSQL alone; Patroni goes on, and starts it again. */
  killPostgres(): void;
  /** The standby's WAL replay process, or null. */
  startupPid(): number | null;
}

/** One address the deployment listens on: `postgres` (PostgreSQL's protocol, its own TLS), `https` or `pgbackrest` (TLS first). */
export interface Listener {
  name: string;
  port: number;
  protocol: "postgres" | "https" | "pgbackrest";
}

export interface FailoverCluster {
  /** The backup repository's machine (deploy/pgbackrest): every node archives to it. */
  backups: BackupRepository;
  /** The deployment's certificates (deploy/certificates/make-certificates.sh), each named after its machine. */
  certificates: DeploymentCertificates;
  /** postgres://postgres:…@127.0.0.1:<HAProxy's primary port>/postgres: always the current primary. */
  primaryUrl: string;
  /** HAProxy's replica port: any running replica (the synchronous standby or node3). */
  replicaUrl: string;
  nodes: ClusterNode[];
  /** The temporary directory holding every data directory, configuration and log. */
  directory: string;
  /** The node holding the leader lock, from Patroni's `GET /cluster`. */
  leader(): Promise<ClusterNode>;
  /** The synchronous standby, from Patroni's `GET /cluster`. */
  syncStandby(): Promise<ClusterNode>;
  /** Waits until a running node (other than `not`) holds the leader lock; 30 s by default. */
  waitForLeader(options?: { not?: string; timeoutMs?: number }): Promise<ClusterNode>;
  /** SIGKILLs the node's Patroni and its PostgreSQL (the postmaster and its children) together: the machine is lost. */
  loseMachine(node: ClusterNode): Promise<void>;
  /** Starts the node's Patroni again on its old data directory: it rejoins as a standby (pg_rewind where it diverged). */
  bringBack(node: ClusterNode): Promise<void>;
  /** Waits until the leader's `pg_stat_replication` shows `node` streaming; 60 s by default. */
  waitUntilStreaming(node: ClusterNode, timeoutMs?: number): Promise<void>;
  /**
   * Waits until the cluster is whole again: every node running, one leader, a synchronous standby, and the two
   * others streaming from the leader; 180 s by default.
   */
  waitUntilWhole(timeoutMs?: number): Promise<void>;
  /** The nodes whose PostgreSQL answers, within 1 s, that it is not in recovery: more than one is two primaries. */
  primaries(): Promise<string[]>;
  /** SIGKILLs every etcd member: the store is lost. */
  loseStore(): Promise<void>;
  /** Starts every etcd member again on its data. */
  bringBackStore(): Promise<void>;
  /** SIGKILLs HAProxy. */
  loseProxy(): Promise<void>;
  /** Starts HAProxy again on its ports. */
  bringBackProxy(): void;
  /**
   * Has every machine read its certificate files again, as docs/operations.md says after each step of renewing
   * certificates or replacing their authority: each database node's PostgreSQL and Patroni reloaded and its
   * pgBackRest server restarted, the repository's server restarted, with `restartEtcd` each etcd member restarted
   * in turn (etcd reads its authorities only as it starts; its own certificate at each connection), and HAProxy
   * reloaded last.
   */
  reloadCertificates(options: { restartEtcd: boolean }): Promise<void>;
  /** Creates a database on the primary; returns its URL through HAProxy's primary port. */
  createDatabase(name: string): Promise<string>;
  /**
   * Turns Patroni's maintenance mode on or off (`PATCH /config` with `pause`), and waits until every running node
   * says so. Meanwhile Patroni changes nothing on its own: among other things, it no longer resumes a replica's WAL
   * replay that was paused.
   */
  maintenance(on: boolean): Promise<void>;
  /**
   * Builds the cluster anew from the backup repository, as docs/operations.md says: every node stopped, the
   * cluster's state removed from etcd, each data directory moved aside (or deleted, as when every disk is lost),
   * node1 bootstrapped from the repository up to `target` (deploy/patroni/restore.yml), then node2 and node3 built
   * from the repository as its replicas. Resolves once the cluster is whole again, with how long node1 took to
   * answer as the primary.
   */
  rebuildFromBackup(target: RestoreTarget, options?: { dataLost?: boolean }): Promise<{ primaryAfterMs: number }>;
  /**
   * A replica's disk replaced, as docs/operations.md says: its Patroni stopped, its data directory deleted, Patroni
   * started again, which builds it with the first of `create_replica_methods` that works (pgBackRest from the
   * repository, then WAL from the archive, then streaming). Resolves once it streams, with how long that took.
   */
  rebuildReplica(node: ClusterNode): Promise<{ streamingAfterMs: number }>;
  /** Every address the deployment listens on, each with what speaks there. */
  listeners(): Listener[];
  /** The tail of every process's log, for an error message. */
  logTails(): string;
  /** Kills every process of the cluster and removes its directory. */
  stop(): Promise<void>;
}

/** How long the cluster may take to bootstrap: initdb, two base backups, a synchronous standby chosen. */
const bootTimeoutMs = 120_000;
/** How long a restore from the repository may take, WAL replay included. */
const restoreTimeoutMs = 600_000;

interface ClusterMember {
  name: string;
  role: string;
  state: string;
}

/** Starts the cluster and resolves once node1 is the primary, node2 its synchronous standby and node3 streaming, each reachable through HAProxy. */
export async function startFailoverCluster(): Promise<FailoverCluster> {
  const unavailable = failoverClusterUnavailable();
  if (unavailable !== null) throw new Error(`the failover cluster cannot run on this machine: ${unavailable}`);
  const directory = mkdtempSync(join(tmpdir(), "tessera-failover-"));
  // PostgreSQL runs as the postgres user when the tests run as root: it must reach its directories in here.
  chmodSync(directory, 0o755);
  let cluster: Cluster | null = null;
  let etcd: Etcd | null = null;
  let backups: BackupRepository | null = null;
  try {
    const runAs = process.getuid?.() === 0 ? (postgresUser() ?? undefined) : undefined;
    // Every link is TLS with the deployment's own certificates, as docs/deployment.md makes them; `operator` is
    // what the tests present where an operator would (etcd, the REST API).
    const certificates = makeDeploymentCertificates(directory, ["node1", "node2", "node3", "etcd1", "etcd2", "etcd3", "haproxy", "backup", "operator"], runAs);
    etcd = await startEtcd(directory, certificates);
    const [primaryPort, replicaPort, ...nodePorts] = await freePorts(2 + 3 * 2);
    const specs = ["node1", "node2", "node3"].map((name, index) => ({
      name,
      pgPort: nodePorts[2 * index]!,
      restPort: nodePorts[2 * index + 1]!,
      directory: join(directory, name),
      readReplicaOnly: name === "node3",
      certificates: certificates.folder,
    }));
    backups = await startBackupRepository(directory, specs, runAs, certificates.folder);
    const repository = backups;
    const nodes = specs.map((spec) => new PatroniNode(spec, etcd!.hosts, runAs, repository.node(spec.name), certificates));
    const haproxy = startHaproxy(directory, { primary: primaryPort!, replica: replicaPort! }, nodes, certificates.folder);
    cluster = new Cluster(directory, etcd, nodes, haproxy, backups, certificates);
    await cluster.boot();
    return cluster;
  } catch (error) {
    if (cluster) await cluster.stop();
    else {
      if (etcd) await etcd.stop();
      if (backups) await backups.stop();
      rmSync(directory, { recursive: true, force: true });
    }
    throw error;
  }
}

class Cluster implements FailoverCluster {
  readonly primaryUrl: string;
  readonly replicaUrl: string;

  constructor(
    readonly directory: string,
    private readonly etcd: Etcd,
    readonly nodes: PatroniNode[],
    private readonly haproxy: Haproxy,
    readonly backups: BackupRepository,
    readonly certificates: DeploymentCertificates,
  ) {
    this.primaryUrl = `postgres://postgres:${clusterPasswords.superuser}@127.0.0.1:${haproxy.primaryPort}/postgres${verifiedTls(certificates.ca)}`;
    this.replicaUrl = `postgres://postgres:${clusterPasswords.superuser}@127.0.0.1:${haproxy.replicaPort}/postgres${verifiedTls(certificates.ca)}`;
  }

  /** node1 bootstraps the cluster (initdb) alone, so that it is the first primary; node2 and node3 then clone it. */
  async boot(): Promise<void> {
    const [node1, node2, node3] = this.nodes as [PatroniNode, PatroniNode, PatroniNode];
    node1.start();
    await this.waitForRole(node1, "primary", bootTimeoutMs);
    node2.start();
    node3.start();
    // The repository's stanza, once a primary runs and every machine's TLS server answers (docs/operations.md):
    // the WAL whose archiving failed until then is pushed again, and the standbys' restore_command finds the
    // repository.
    await this.backups.run(["stanza-create"], { timeoutMs: 120_000 });
    await this.waitForRole(node2, "sync_standby", bootTimeoutMs);
    await this.waitForRole(node3, "replica", bootTimeoutMs);
    await this.waitUntilStreaming(node3, bootTimeoutMs);
    await waitFor("HAProxy's primary port to reach the primary", async () => ((await inRecovery(this.primaryUrl)) === false ? true : null), {
      timeoutMs: 30_000,
      logs: [this.haproxy.process().logFile],
    });
    await waitFor("HAProxy's replica port to reach a replica", async () => ((await inRecovery(this.replicaUrl)) === true ? true : null), {
      timeoutMs: 30_000,
      logs: [this.haproxy.process().logFile],
    });
  }

  async leader(): Promise<ClusterNode> {
    return this.memberWithRole("leader");
  }

  async syncStandby(): Promise<ClusterNode> {
    return this.memberWithRole("sync_standby");
  }

  async waitForLeader(options: { not?: string; timeoutMs?: number } = {}): Promise<ClusterNode> {
    return waitFor(
      `a leader${options.not ? ` other than ${options.not}` : ""}`,
      async () => {
        const leader = (await this.members()).find((member) => member.role === "leader" && member.state === "running" && member.name !== options.not);
        return leader ? this.node(leader.name) : null;
      },
      { timeoutMs: options.timeoutMs ?? 30_000, logs: this.logFiles() },
    );
  }

  async loseMachine(node: ClusterNode): Promise<void> {
    await this.node(node.name).lose();
  }

  async bringBack(node: ClusterNode): Promise<void> {
    const patroni = this.node(node.name);
    patroni.start();
    // Patroni answers on its REST port before PostgreSQL is back: enough to know it started on its old data.
    await waitFor(`${node.name}'s Patroni to answer again`, async () => ((await patroni.role()) === "down" ? null : true), {
      timeoutMs: 30_000,
      logs: [patroni.logFile],
    });
  }

  async waitUntilStreaming(node: ClusterNode, timeoutMs = 60_000): Promise<void> {
    await waitFor(
      `${node.name} to stream from the leader`,
      async () => {
        const leader = await this.leader();
        const { rows } = await query<{ state: string }>(leader.url, "select state from pg_stat_replication where application_name = $1", [node.name]);
        return rows.some((row) => row.state === "streaming") ? true : null;
      },
      { timeoutMs, logs: this.logFiles() },
    );
  }

  async createDatabase(name: string): Promise<string> {
    if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
    await query(this.primaryUrl, `create database ${name}`);
    return inDatabase(this.primaryUrl, name);
  }

  listeners(): Listener[] {
    return [
      ...this.nodes.map((node) => ({ name: `${node.name} PostgreSQL`, port: node.pgPort, protocol: "postgres" as const })),
      { name: "HAProxy primary", port: this.haproxy.primaryPort, protocol: "postgres" },
      { name: "HAProxy replicas", port: this.haproxy.replicaPort, protocol: "postgres" },
      ...this.nodes.map((node) => ({ name: `${node.name} REST API`, port: node.restPort, protocol: "https" as const })),
      ...this.etcd.hosts.map((host, index) => ({ name: `etcd${index + 1} client`, port: Number(host.split(":")[1]), protocol: "https" as const })),
      ...this.etcd.peerPorts.map((port, index) => ({ name: `etcd${index + 1} peer`, port, protocol: "https" as const })),
      ...this.backups.tlsPorts.map(({ name, port }) => ({ name: `${name} pgbackrest server`, port, protocol: "pgbackrest" as const })),
    ];
  }

  logTails(): string {
    return failure("logs of the failover cluster:", this.logFiles());
  }

  async waitUntilWhole(timeoutMs = 180_000): Promise<void> {
    await waitFor(
      "the cluster to be whole: a leader, a synchronous standby and both standbys streaming",
      async () => {
        if (this.nodes.some((node) => !node.running)) throw new Error("a node is not running");
        const members = await this.members();
        const leader = members.find((member) => member.role === "leader" && member.state === "running");
        if (!leader || !members.some((member) => member.role === "sync_standby" && ["running", "streaming"].includes(member.state))) return null;
        const { rows } = await query<{ name: string }>(this.node(leader.name).url, "select application_name as name from pg_stat_replication where state = 'streaming'");
        return rows.length === this.nodes.length - 1 ? true : null;
      },
      { timeoutMs, intervalMs: 500, logs: this.logFiles() },
    );
  }

  async primaries(): Promise<string[]> {
    const answers = await Promise.all(this.nodes.map(async (node) => ((await inRecovery(node.url, 1000).catch(() => null)) === false ? node.name : null)));
    return answers.filter((name): name is string => name !== null);
  }

  loseStore(): Promise<void> {
    return this.etcd.lose();
  }

  bringBackStore(): Promise<void> {
    return this.etcd.bringBack();
  }

  loseProxy(): Promise<void> {
    return this.haproxy.lose();
  }

  async reloadCertificates(options: { restartEtcd: boolean }): Promise<void> {
    for (const node of this.nodes) await node.reloadCertificates();
    await this.backups.restart();
    if (options.restartEtcd) await this.etcd.restartEachMember();
    await this.haproxy.reload();
  }

  bringBackProxy(): void {
    this.haproxy.bringBack();
  }

  async rebuildFromBackup(target: RestoreTarget, options: { dataLost?: boolean } = {}): Promise<{ primaryAfterMs: number }> {
    for (const node of this.nodes) {
      if (node.running) node.resume();
      await node.stop();
    }
    await this.etcd.removeCluster("tessera");
    const restoreFile = join(this.nodes[0]!.directory, "patroni", "zz-restore.yml");
    for (const node of this.nodes) {
      const data = join(node.directory, "data");
      if (options.dataLost === true) rmSync(data, { recursive: true, force: true });
      else if (existsSync(data)) renameSync(data, join(node.directory, `data.before-restore-${Date.now()}`));
    }
    writeFileSync(restoreFile, patroniRestoreFile(target), { mode: 0o600 });
    const runAs = this.nodes[0]!.owner;
    if (runAs) chownSync(restoreFile, runAs.uid, runAs.gid);
    const [node1, node2, node3] = this.nodes as [PatroniNode, PatroniNode, PatroniNode];
    const started = performance.now();
    node1.start();
    await this.waitForRole(node1, "primary", restoreTimeoutMs);
    const primaryAfterMs = performance.now() - started;
    rmSync(restoreFile);
    node2.start();
    node3.start();
    await this.waitUntilWhole(restoreTimeoutMs);
    await waitFor("HAProxy's primary port to reach the restored primary", async () => ((await inRecovery(this.primaryUrl).catch(() => null)) === false ? true : null), {
      timeoutMs: 30_000,
      logs: [this.haproxy.process().logFile],
    });
    return { primaryAfterMs };
  }

  async rebuildReplica(node: ClusterNode): Promise<{ streamingAfterMs: number }> {
    const patroni = this.node(node.name);
    if ((await this.leader()).name === node.name) throw new Error(`${node.name} is the leader, not a replica`);
    await patroni.stop();
    rmSync(join(patroni.directory, "data"), { recursive: true, force: true });
    const started = performance.now();
    patroni.start();
    await this.waitUntilStreaming(node, restoreTimeoutMs);
    return { streamingAfterMs: performance.now() - started };
  }

  async stop(): Promise<void> {
    await this.haproxy.stop();
    // A frozen machine is thawed first, so that its processes can die.
    for (const node of this.nodes) if (node.running) node.resume();
    await Promise.all(this.nodes.map((node) => node.stop()));
    await this.etcd.stop();
    await this.backups.stop();
    rmSync(this.directory, { recursive: true, force: true });
  }

  async maintenance(on: boolean): Promise<void> {
    const leader = this.node((await this.leader()).name);
    const response = await leader.restRequest("/config", {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ pause: on }),
    });
    if (!response.ok) throw new Error(`Patroni refused maintenance mode ${on ? "on" : "off"}: ${response.status} ${await response.text()}`);
    for (const node of this.nodes.filter((candidate) => candidate.running)) {
      await waitFor(
        `${node.name} to see maintenance mode ${on ? "on" : "off"}`,
        async () => {
          const state = await node.restGet("/patroni").catch(() => null);
          if (!state?.ok) return null;
          return ((await state.json()) as { pause?: boolean }).pause === true ? (on ? true : null) : on ? null : true;
        },
        { timeoutMs: 30_000, logs: this.logFiles() },
      );
    }
  }

  private node(name: string): PatroniNode {
    const node = this.nodes.find((candidate) => candidate.name === name);
    if (!node) throw new Error(`no node named ${name}`);
    return node;
  }

  /** The members as Patroni's `GET /cluster` lists them, from the first node that answers. */
  private async members(): Promise<ClusterMember[]> {
    for (const node of this.nodes) {
      if (!node.running) continue;
      const response = await node.restGet("/cluster").catch(() => null);
      if (response?.ok) return ((await response.json()) as { members: ClusterMember[] }).members;
    }
    throw new Error("no Patroni answers GET /cluster");
  }

  private async memberWithRole(role: string): Promise<ClusterNode> {
    const members = await this.members();
    const member = members.find((candidate) => candidate.role === role);
    if (!member) throw new Error(`no ${role} in the cluster: ${members.map((m) => `${m.name} ${m.role} ${m.state}`).join(", ")}`);
    return this.node(member.name);
  }

  private async waitForRole(node: PatroniNode, role: NodeRole, timeoutMs: number): Promise<void> {
    await waitFor(
      `${node.name} to be ${role}`,
      async () => {
        if (!node.running) throw new Error(`${node.name}'s Patroni exited`);
        return (await node.role()) === role ? true : null;
      },
      { timeoutMs, logs: this.logFiles() },
    );
  }

  private logFiles(): string[] {
    return [...this.nodes.map((node) => node.logFile), ...this.etcd.logFiles(), this.haproxy.process().logFile, this.backups.logFile];
  }
}

/** Runs one statement on a connection of its own. */
async function query<Row extends pg.QueryResultRow>(url: string, sql: string, values: unknown[] = [], timeoutMs = 2000): Promise<pg.QueryResult<Row>> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  client.on("error", () => {});
  await client.connect();
  try {
    return await client.query<Row>(sql, values);
  } finally {
    // Not awaited: a frozen server never closes its end.
    void client.end().catch(() => {});
  }
}

async function inRecovery(url: string, timeoutMs = 2000): Promise<boolean> {
  const { rows } = await query<{ recovery: boolean }>(url, "select pg_is_in_recovery() as recovery", [], timeoutMs);
  return rows[0]!.recovery;
}
