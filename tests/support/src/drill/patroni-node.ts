// One machine of the cluster: Patroni and the PostgreSQL it runs, under an init of their own.
import { chownSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { NodeBackupSettings } from "./backup-repository.js";
import { binaries } from "./binaries.js";
import { verifiedTls, type DeploymentCertificates, type TlsIdentity } from "./certificates.js";
import { clusterPasswords, restApiUser } from "./deployment-files.js";
import { writePatroniConfig, type NodeSpec } from "./patroni-config.js";
import { commandLineOf, descendantsOf, killTree, signalAll, startLogged, type LoggedProcess, type RunAs } from "./processes.js";
import { tlsRequest } from "./tls-request.js";
import { pause } from "./wait.js";

/**
 * The machine's init, on Patroni's Python: it starts Patroni and reaps every process orphaned below it.
 * Patroni starts the postmaster the way pg_ctl does, through a helper that exits at once, so the postmaster
 * is an orphan from the start; without a subreaper it would belong to PID 1, which in a container often reaps
 * nothing, and a killed postmaster left as a zombie still looks alive to the Patroni started after it.
 * It exits once nothing is left below it.
 */
const nodeInit = `
import ctypes, json, os, signal, subprocess, sys
PR_SET_CHILD_SUBREAPER = 36
ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
patroni = subprocess.Popen(sys.argv[1:])
companions = [subprocess.Popen(command) for command in json.loads(os.environ.pop("NODE_COMPANIONS", "[]"))]
def stop(*_):
    for process in [patroni, *companions]:
        process.send_signal(signal.SIGTERM)
signal.signal(signal.SIGTERM, stop)
while True:
    try:
        os.wait()
    except ChildProcessError:
        break
`;

/** A node's role as its Patroni reports it; "not running" when Patroni answers but PostgreSQL is not up, "down" when Patroni does not answer. */
export type NodeRole = "primary" | "sync_standby" | "replica" | "not running" | "down";

export class PatroniNode {
  readonly name: string;
  readonly pgPort: number;
  readonly restPort: number;
  /** postgres://postgres:…@127.0.0.1:<port>/postgres: this node's PostgreSQL directly, whatever its role. */
  readonly url: string;
  readonly restUrl: string;
  readonly directory: string;
  readonly logFile: string;
  private readonly configFolder: string;
  /** What the tests present to the REST API, as patronictl does on a node: a certificate of the deployment's CA. */
  private readonly operator: TlsIdentity;
  private init: LoggedProcess | null = null;

  constructor(
    spec: NodeSpec,
    etcdHosts: string[],
    private readonly runAs: RunAs | undefined,
    private readonly backup: NodeBackupSettings,
    certificates: DeploymentCertificates,
  ) {
    this.operator = certificates.identity("operator");
    this.name = spec.name;
    this.pgPort = spec.pgPort;
    this.restPort = spec.restPort;
    this.url = `postgres://postgres:${clusterPasswords.superuser}@127.0.0.1:${spec.pgPort}/postgres${verifiedTls(certificates.ca)}`;
    this.restUrl = `https://127.0.0.1:${spec.restPort}`;
    this.directory = spec.directory;
    this.logFile = join(spec.directory, "patroni.log");
    mkdirSync(spec.directory, { recursive: true, mode: 0o700 });
    if (runAs) chownSync(spec.directory, runAs.uid, runAs.gid);
    this.configFolder = writePatroniConfig(spec, etcdHosts, runAs);
  }

  /** Starts Patroni (on the data directory it left, if any: it then rejoins as a standby, rewound when needed). */
  start(): void {
    if (this.init && !this.init.hasExited()) throw new Error(`${this.name} is already running`);
    this.init = startLogged(this.name, binaries.python, ["-c", nodeInit, binaries.patroni, this.configFolder], {
      logFile: this.logFile,
      cwd: this.directory,
      // The machine's pgBackRest file (/etc/pgbackrest/pgbackrest.conf on a real one), for archive-push and
      // restores, and its TLS server, which the repository machine reads backups through.
      env: {
        PATH: "/usr/bin:/bin",
        HOME: this.directory,
        LANG: "C.UTF-8",
        PGBACKREST_CONFIG: this.backup.configFile,
        NODE_COMPANIONS: JSON.stringify([this.backup.serverCommand]),
      },
      runAs: this.runAs,
    });
  }

  /** The user the node's processes run as, when the tests run as root. */
  get owner(): RunAs | undefined {
    return this.runAs;
  }

  /** Whether the machine is up: its init, with Patroni below it, is running. */
  get running(): boolean {
    return this.init !== null && !this.init.hasExited();
  }

  /** Patroni's process id, or null when it is not running. */
  get pid(): number | null {
    if (!this.init || this.init.hasExited()) return null;
    return descendantsOf(this.init.pid).find((pid) => commandLineOf(pid)?.includes(` ${binaries.patroni} `)) ?? null;
  }

  /** The node's role from its own Patroni (`GET /patroni`). */
  async role(): Promise<NodeRole> {
    const response = await this.restGet("/patroni", 2000).catch(() => null);
    if (!response) return "down";
    const status = (await response.json()) as { state?: string; role?: string; sync_standby?: boolean };
    if (status.state !== "running") return "not running";
    if (status.role === "master" || status.role === "primary") return "primary";
    return status.sync_standby ? "sync_standby" : "replica";
  }

  /**
   * SIGKILLs everything on the machine at once (Patroni, the postmaster and each of its children, a
   * pg_basebackup or pg_rewind in progress), again until nothing is left, as when the machine is lost.
   * Resolves once the init has reaped them all and exited.
   */
  async lose(): Promise<void> {
    if (!this.running) throw new Error(`${this.name} is not running`);
    await this.killEverything();
  }

  /** The postmaster's process id, or null when PostgreSQL is not running. */
  get postmasterPid(): number | null {
    const patroni = this.pid;
    if (patroni === null || !this.init) return null;
    return descendantsOf(this.init.pid).find((pid) => pid !== patroni && /\/bin\/postgres( |$)/.test(commandLineOf(pid) ?? "")) ?? null;
  }

  /** The postmaster and every process it started. */
  private postgresPids(): number[] {
    const postmaster = this.postmasterPid;
    return postmaster === null ? [] : [postmaster, ...descendantsOf(postmaster)];
  }

  /** SIGSTOPs every process of the machine (its init, Patroni, the postmaster and each of its children): the machine freezes, as a paused VM or a hung disk does. */
  freeze(): void {
    this.signalMachine("SIGSTOP");
  }

  /** SIGSTOPs PostgreSQL alone (the postmaster and each of its children); Patroni goes on. */
  freezePostgres(): void {
    this.signalPostgres("SIGSTOP");
  }

  /** SIGCONTs every process of the machine: what was frozen resumes where it stopped. */
  resume(): void {
    this.signalMachine("SIGCONT");
  }

  /** SIGKILLs PostgreSQL alone (the postmaster and each of its children); Patroni goes on and starts it again. */
  killPostgres(): void {
    this.signalPostgres("SIGKILL");
  }

  private signalMachine(name: NodeJS.Signals): void {
    if (!this.init) throw new Error(`${this.name} is not running`);
    signalAll([this.init.pid, ...descendantsOf(this.init.pid)], name);
  }

  private signalPostgres(name: NodeJS.Signals): void {
    const pids = this.postgresPids();
    if (pids.length === 0) throw new Error(`${this.name}'s PostgreSQL is not running`);
    signalAll(pids, name);
  }

  /** The startup process of a standby (the one that replays WAL), or null. */
  startupPid(): number | null {
    return this.postgresPids().find((pid) => /postgres: .*startup/.test(commandLineOf(pid) ?? "")) ?? null;
  }

  /** A request to this node's REST API with its user and password (every method but GET needs them). */
  restRequest(path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Response> {
    const credentials = Buffer.from(`${restApiUser}:${clusterPasswords.restApi}`).toString("base64");
    return tlsRequest(`${this.restUrl}${path}`, this.operator, { ...init, headers: { ...init.headers, authorization: `Basic ${credentials}` } });
  }

  /** A GET of the REST API (no password: a certificate of the deployment's CA is enough to read). */
  restGet(path: string, timeoutMs = 2000): Promise<Response> {
    return tlsRequest(`${this.restUrl}${path}`, this.operator, { timeoutMs });
  }

  /** Kills the node's processes, as `lose` does, if it is running. */
  async stop(): Promise<void> {
    if (this.running) await this.killEverything();
  }

  private async killEverything(): Promise<void> {
    const init = this.init!;
    // The init reaps what is killed below it; should it not exit within 10 s, it is killed too.
    const deadline = Date.now() + 10_000;
    while (!init.hasExited()) {
      killTree(init.pid, { keepRoot: Date.now() < deadline });
      await Promise.race([init.exited, pause(50)]);
    }
  }
}
