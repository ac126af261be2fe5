// One machine of the cluster: Patroni and the PostgreSQL it runs, under an init of their own.
import { X509Certificate } from "node:crypto";
import { chownSync, mkdirSync, readFileSync } from "node:fs";
import { connect } from "node:tls";
import { join } from "node:path";
import type { NodeBackupSettings } from "./backup-repository.js";
import { binaries } from "./binaries.js";
import { verifiedTls, type DeploymentCertificates, type TlsIdentity } from "./certificates.js";
import { clusterPasswords, restApiUser } from "./deployment-files.js";
import { writePatroniConfig, type NodeSpec } from "./patroni-config.js";
import { commandLineOf, descendantsOf, killTree, signalAll, startLogged, type LoggedProcess, type RunAs } from "./processes.js";
import { tlsRequest } from "./tls-request.js";
import { pause, waitFor } from "./wait.js";

/**
 * The machine's init, on Patroni's Python: it starts Patroni and reaps every process orphaned below it.
 * Patroni starts the postmaster the way pg_ctl does, through a helper that exits at once, so the postmaster
 * is an orphan from the start; without a subreaper it would belong to PID 1, which in a container often reaps
 * nothing, and a killed postmaster left as a zombie still looks alive to the Patroni started after it.
 * It starts the machine's other services beside Patroni (its pgBackRest TLS server), again when one ends, and
 * exits once nothing is left below it.
 */
const nodeInit = `
import ctypes, json, os, signal, subprocess, sys
PR_SET_CHILD_SUBREAPER = 36
ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
patroni = subprocess.Popen(sys.argv[1:])
companions = {}
def start(command):
    process = subprocess.Popen(command)
    companions[process.pid] = (process, command)
for command in json.loads(os.environ.pop("NODE_COMPANIONS", "[]")):
    start(command)
stopping = False
def stop(*_):
    global stopping
    stopping = True
    for process in [patroni, *[process for process, _ in companions.values()]]:
        process.send_signal(signal.SIGTERM)
signal.signal(signal.SIGTERM, stop)
while True:
    try:
        pid, _ = os.wait()
    except ChildProcessError:
        break
    if pid in companions:
        _, command = companions.pop(pid)
        # A companion that ends while the machine runs is started again, as systemd's Restart=always does.
        if not stopping and patroni.poll() is None:
            start(command)
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
  /**
   * What the tests present to the REST API, as patronictl does on a node: a certificate of the deployment's CA,
   * read from the files at each request (they change when the certificates are renewed or their authority replaced).
   */
  private get operator(): TlsIdentity {
    return this.certificates.identity("operator");
  }
  private init: LoggedProcess | null = null;

  constructor(
    spec: NodeSpec,
    etcdHosts: string[],
    private readonly runAs: RunAs | undefined,
    private readonly backup: NodeBackupSettings,
    private readonly certificates: DeploymentCertificates,
  ) {
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

  /**
   * Has the machine read its certificates again, as an operator does after copying new ones: PostgreSQL reloads
   * (SIGHUP to the postmaster, as `pg_ctl reload`), Patroni reloads (SIGHUP: its REST API takes a new certificate
   * of its own, and with it the authorities of its cafile), and the pgBackRest TLS server is restarted.
   */
  async reloadCertificates(): Promise<void> {
    const patroni = this.pid;
    const postmaster = this.postmasterPid;
    if (patroni === null || postmaster === null || !this.init) throw new Error(`${this.name} is not running`);
    process.kill(postmaster, "SIGHUP");
    process.kill(patroni, "SIGHUP");
    // Patroni reloads in its own loop, a moment later: its REST API must serve the certificate of the files before
    // HAProxy, reloaded after the nodes, presents a certificate that only the files' authorities trust.
    const wanted = new X509Certificate(readFileSync(this.certificates.certFile(this.name))).fingerprint256;
    await waitFor(`${this.name}'s REST API to serve its new certificate`, async () => ((await servedFingerprint(this.restPort, this.operator)) === wanted ? true : null), {
      timeoutMs: 30_000,
      logs: [this.logFile],
    });
    const server = (pids: number[]) => pids.find((pid) => commandLineOf(pid)?.includes(`--config=${this.backup.configFile} server`));
    const before = server(descendantsOf(this.init.pid));
    if (before === undefined) throw new Error(`${this.name}'s pgBackRest server is not running`);
    process.kill(before, "SIGTERM");
    const deadline = Date.now() + 10_000;
    for (;;) {
      const now = server(descendantsOf(this.init.pid));
      if (now !== undefined && now !== before) break;
      if (Date.now() > deadline) throw new Error(`${this.name}'s pgBackRest server did not start again`);
      await pause(50);
    }
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

/**
 * The fingerprint of the certificate served at 127.0.0.1:`port`, once the server has answered a GET of /health
 * (a client that hangs up right after the handshake makes Patroni log a traceback), or null when it did not answer.
 */
function servedFingerprint(port: number, identity: TlsIdentity): Promise<string | null> {
  return new Promise((resolve) => {
    let fingerprint: string | null = null;
    let answered = false;
    const socket = connect({ host: "127.0.0.1", port, ...identity, rejectUnauthorized: false }, () => {
      fingerprint = socket.getPeerCertificate().fingerprint256 ?? null;
      socket.write("GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    });
    socket.on("data", (data: Buffer) => (answered ||= data.toString("latin1").startsWith("HTTP/")));
    socket.setTimeout(2000, () => socket.destroy());
    socket.on("error", () => undefined);
    socket.on("close", () => resolve(answered ? fingerprint : null));
  });
}
