// etcd for Patroni's leader lock and cluster state: three members, each run from deploy/etcd/etcd.env with the
// test's addresses and folders, so that losing one keeps a quorum and losing all three is what "the store is lost"
// means.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { binaries } from "./binaries.js";
import type { DeploymentCertificates } from "./certificates.js";
import { etcdEnvironment, type EtcdMemberAddresses } from "./deployment-files.js";
import { freePorts } from "./ports.js";
import { killTree, startLogged, type LoggedProcess } from "./processes.js";
import { tlsRequest } from "./tls-request.js";
import { pause, waitFor } from "./wait.js";

export interface Etcd {
  /** host:port of each member's client API, as Patroni's `etcd.hosts` takes them. */
  hosts: string[];
  /** Each member's peer port. */
  peerPorts: number[];
  /** Each member's process while it runs. */
  processes(): LoggedProcess[];
  logFiles(): string[];
  /** SIGKILLs every member: the store is lost. */
  lose(): Promise<void>;
  /** Starts every member again on its data: the store is back. Resolves once the cluster reports itself healthy. */
  bringBack(): Promise<void>;
  /**
   * Restarts each member in turn, as `systemctl restart etcd` on one machine after another: the next once the
   * cluster is healthy again, so that a quorum runs throughout. etcd reads its certificate and key at each
   * connection, but its trusted authorities only as it starts.
   */
  restartEachMember(): Promise<void>;
  stop(): Promise<void>;
  /** Removes a Patroni cluster's state (its keys under /service), as `patronictl remove` does. */
  removeCluster(scope: string): Promise<void>;
}

/** Starts three members under `directory` and waits until the cluster reports itself healthy. */
export async function startEtcd(directory: string, certificates: DeploymentCertificates): Promise<Etcd> {
  // The test speaks to etcd as an operator would: with a certificate of the deployment's CA, read from the files
  // at each request (they change when the certificates are renewed or their authority replaced).
  const operator = () => certificates.identity("operator");
  const ports = await freePorts(6);
  const members: EtcdMemberAddresses[] = [1, 2, 3].map((number, index) => ({
    number,
    clientPort: ports[2 * index]!,
    peerPort: ports[2 * index + 1]!,
    dataDir: join(directory, `etcd${number}`),
  }));
  let running: LoggedProcess[] = [];
  const logFile = (member: EtcdMemberAddresses) => join(directory, `etcd${member.number}.log`);
  const startMember = (member: EtcdMemberAddresses) => {
    mkdirSync(member.dataDir, { recursive: true, mode: 0o700 });
    return startLogged(`etcd${member.number}`, binaries.etcd, [], {
      logFile: logFile(member),
      cwd: directory,
      env: { PATH: "/usr/bin:/bin", ...etcdEnvironment(member, members, certificates.folder) },
    });
  };
  const start = () => {
    running = members.map(startMember);
  };
  const healthy = () =>
    waitFor(
      "etcd to report itself healthy",
      async () => {
        for (const member of running) if (member.hasExited()) throw new Error(`${member.name} exited (${await member.exited})`);
        const answers = await Promise.all(
          members.map(async (member) => {
            try {
              const response = await tlsRequest(`https://127.0.0.1:${member.clientPort}/health`, operator(), { timeoutMs: 2000 });
              const body = await response.text();
              return JSON.parse(body).health === "true" ? null : `etcd${member.number}: ${response.status} ${body.slice(0, 200)}`;
            } catch (error) {
              return `etcd${member.number}: ${(error as Error).message}`;
            }
          }),
        );
        const unhealthy = answers.filter((answer) => answer !== null);
        if (unhealthy.length > 0) throw new Error(unhealthy.join("; "));
        return true;
      },
      { timeoutMs: 30_000, logs: members.map(logFile) },
    );
  const killMember = async (member: LoggedProcess) => {
    while (!member.hasExited()) {
      killTree(member.pid);
      await Promise.race([member.exited, pause(50)]);
    }
  };
  const kill = async () => {
    for (const member of running) await killMember(member);
  };
  start();
  await healthy();
  return {
    hosts: members.map((member) => `127.0.0.1:${member.clientPort}`),
    peerPorts: members.map((member) => member.peerPort),
    processes: () => running,
    logFiles: () => members.map(logFile),
    lose: kill,
    bringBack: async () => {
      start();
      await healthy();
    },
    restartEachMember: async () => {
      for (const [index, member] of members.entries()) {
        const current = running[index]!;
        // Stopped as systemd stops it: SIGTERM, and SIGKILL only if it has not exited within 10 s.
        if (!current.hasExited()) process.kill(current.pid, "SIGTERM");
        await Promise.race([current.exited, pause(10_000)]);
        await killMember(current);
        running[index] = startMember(member);
        await healthy();
      }
    },
    stop: kill,
    removeCluster: async (scope) => {
      const response = await tlsRequest(`https://127.0.0.1:${members[0]!.clientPort}/v2/keys/service/${scope}?recursive=true`, operator(), { method: "DELETE" });
      if (!response.ok && response.status !== 404) throw new Error(`etcd refused to remove /service/${scope}: ${response.status} ${await response.text()}`);
    },
  };
}
