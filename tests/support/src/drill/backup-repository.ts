// The backup repository of the documented deployment (deploy/pgbackrest): its own machine, here a folder and a
// `pgbackrest server` process of its own, reached over TLS with the certificates deploy/certificates makes. The
// database machines push WAL to it and restore from it; backups, `info`, `check` and `verify` run on it.
import { execFile } from "node:child_process";
import { chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { binaries } from "./binaries.js";
import { pgbackrestNodeFile, pgbackrestRepositoryFile, type BackupMachineFolders } from "./deployment-files.js";
import { freePorts } from "./ports.js";
import { killTree, startLogged, type LoggedProcess, type RunAs } from "./processes.js";
import { pause, waitFor } from "./wait.js";


/** What a database machine needs to reach the repository: its pgbackrest.conf and its own TLS server's port. */
export interface NodeBackupSettings {
  /** The machine's /etc/pgbackrest/pgbackrest.conf (PGBACKREST_CONFIG of its processes). */
  configFile: string;
  /** The machine's `pgbackrest server`, which the repository machine reads it through. */
  serverCommand: string[];
}

export interface BackupRepository {
  folders: BackupMachineFolders;
  /** The repository's own configuration (deploy/pgbackrest/repository.conf with the test's names). */
  configFile: string;
  logFile: string;
  /** Each node's settings, by node name. */
  node(name: string): NodeBackupSettings;
  /**
   * Runs `pgbackrest --stanza=tessera ARGS` on the repository machine (or, with `on`, on that database machine);
   * resolves with its output, rejects with it on a non-zero exit.
   */
  run(args: string[], options?: { timeoutMs?: number; on?: string }): Promise<string>;
  /** Runs `command ARGS` on the repository machine, as its backups run; resolves with its output. */
  exec(command: string, args: string[]): Promise<string>;
  /** A new empty folder that the database machines' user owns (a scratch restore's target). */
  scratchFolder(): string;
  /** The port of each `pgbackrest server`: the repository machine's (`backup`) and each database machine's. */
  tlsPorts: { name: string; port: number }[];
  /** Starts the repository machine's TLS server (again). */
  start(): void;
  /** SIGKILLs the repository machine's TLS server. */
  lose(): Promise<void>;
  /** Restarts the repository machine's TLS server (it reads its certificates as it starts); resolves once it listens. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export interface BackupNodeSpec {
  name: string;
  directory: string;
  pgPort: number;
}

/**
 * With the deployment's certificates (`certificates`: make-certificates.sh's folder), writes each machine's
 * pgBackRest file, and starts the repository machine's TLS server. The stanza is created later, once a primary
 * runs (`run(["stanza-create"])`).
 */
export async function startBackupRepository(directory: string, nodes: BackupNodeSpec[], runAs: RunAs | undefined, certificates: string): Promise<BackupRepository> {
  const root = join(directory, "backup");
  const folders: BackupMachineFolders = {
    certificates,
    repository: join(root, "repository"),
    logs: join(root, "log"),
    spool: join(root, "spool"),
  };
  for (const folder of Object.values(folders)) mkdirSync(folder, { recursive: true, mode: 0o700 });
  const [repositoryPort, ...nodePorts] = await freePorts(1 + nodes.length);
  const withPorts = nodes.map((node, index) => ({ ...node, tlsPort: nodePorts[index]! }));
  const configFile = join(root, "repository.conf");
  writeFileSync(configFile, pgbackrestRepositoryFile(repositoryPort!, withPorts, folders), { mode: 0o600 });
  const nodeSettings = new Map<string, NodeBackupSettings>();
  for (const node of withPorts) {
    const nodeConfig = join(root, `${node.name}.conf`);
    // Each machine its own spool and logs, as on separate machines.
    const own = { ...folders, spool: join(folders.spool, node.name), logs: join(folders.logs, node.name) };
    mkdirSync(own.spool, { recursive: true, mode: 0o700 });
    mkdirSync(own.logs, { recursive: true, mode: 0o700 });
    writeFileSync(nodeConfig, pgbackrestNodeFile(node, repositoryPort!, own), { mode: 0o600 });
    nodeSettings.set(node.name, { configFile: nodeConfig, serverCommand: [binaries.pgbackrest, `--config=${nodeConfig}`, "server"] });
  }
  if (runAs) chownTree(root, runAs);
  const logFile = join(root, "server.log");
  let server: LoggedProcess | null = null;
  const environment = { PATH: "/usr/bin:/bin", HOME: root, LANG: "C.UTF-8", PGBACKREST_CONFIG: configFile };
  const start = () => {
    server = startLogged("backup repository", binaries.pgbackrest, ["server"], { logFile, cwd: root, env: environment, runAs });
  };
  const lose = async () => {
    const current = server;
    if (!current) return;
    while (!current.hasExited()) {
      killTree(current.pid);
      await Promise.race([current.exited, pause(50)]);
    }
  };
  const listens = () => waitFor("the backup repository's TLS server to listen", async () => (listening(repositoryPort!) ? true : null), { timeoutMs: 10_000, logs: [logFile] });
  start();
  await listens();
  /** Runs a command on the repository machine to its end: its output, or an error with the output and how it ended. */
  const execute = (command: string, args: string[], options: { env: NodeJS.ProcessEnv; timeoutMs: number }) =>
    new Promise<string>((resolve, reject) => {
      execFile(command, args, { env: options.env, cwd: root, timeout: options.timeoutMs, maxBuffer: 16 * 1024 * 1024, ...(runAs ?? {}) }, (error, stdout, stderr) => {
        if (!error) return resolve(stdout + stderr);
        const ending = error.killed ? `killed after ${options.timeoutMs} ms` : `exit code ${String(error.code)}`;
        reject(new Error(`${command === binaries.pgbackrest ? "pgbackrest" : command} ${args.filter((arg) => arg !== "--stanza=tessera").join(" ")} failed (${ending}):\n${stdout}${stderr}`));
      });
    });
  return {
    folders,
    configFile,
    logFile,
    node(name) {
      const settings = nodeSettings.get(name);
      if (!settings) throw new Error(`no backup settings for ${name}`);
      return settings;
    },
    exec: (command, args) => execute(command, args, { env: environment, timeoutMs: 60_000 }),
    run: (args, options = {}) =>
      execute(binaries.pgbackrest, ["--stanza=tessera", ...args], {
        env: options.on === undefined ? environment : { ...environment, PGBACKREST_CONFIG: nodeSettings.get(options.on)!.configFile },
        timeoutMs: options.timeoutMs ?? 300_000,
      }),
    scratchFolder() {
      const folder = mkdtempSync(join(root, "scratch-"));
      if (runAs) chownSync(folder, runAs.uid, runAs.gid);
      return folder;
    },
    tlsPorts: [{ name: "backup", port: repositoryPort! }, ...withPorts.map((node) => ({ name: node.name, port: node.tlsPort }))],
    start,
    lose,
    restart: async () => {
      const current = server;
      if (current) {
        process.kill(current.pid, "SIGTERM");
        await Promise.race([current.exited, pause(10_000)]);
      }
      await lose();
      start();
      await listens();
    },
    stop: lose,
  };
}

/** Whether something listens on 127.0.0.1:`port` (from /proc/net/tcp, without connecting). */
function listening(port: number): boolean {
  const hex = port.toString(16).toUpperCase().padStart(4, "0");
  return readFileSync("/proc/net/tcp", "utf8")
    .split("\n")
    .some((line) => line.includes(`:${hex} 00000000:0000 0A`));
}

function chownTree(path: string, runAs: RunAs): void {
  chownSync(path, runAs.uid, runAs.gid);
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    const child = join(path, entry.name);
    if (entry.isDirectory()) chownTree(child, runAs);
    else chownSync(child, runAs.uid, runAs.gid);
  }
}
