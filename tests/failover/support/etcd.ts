// One etcd member (v3 API) for Patroni's leader lock and cluster state.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { binaries } from "./binaries.js";
import { freePorts } from "./ports.js";
import { startLogged, type LoggedProcess } from "./processes.js";
import { waitFor } from "./wait.js";

export interface Etcd {
  /** host:port of the client API, as Patroni's `etcd3.hosts` takes it. */
  host: string;
  process: LoggedProcess;
}

/** Starts etcd with its data under `directory` and waits until it reports itself healthy. */
export async function startEtcd(directory: string): Promise<Etcd> {
  const dataDir = join(directory, "etcd");
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const [clientPort, peerPort] = await freePorts(2);
  const clientUrl = `http://127.0.0.1:${clientPort}`;
  const peerUrl = `http://127.0.0.1:${peerPort}`;
  const server = startLogged(
    "etcd",
    binaries.etcd,
    [
      "--name=etcd",
      `--data-dir=${dataDir}`,
      `--listen-client-urls=${clientUrl}`,
      `--advertise-client-urls=${clientUrl}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=etcd=${peerUrl}`,
      "--initial-cluster-state=new",
    ],
    { logFile: join(directory, "etcd.log"), cwd: directory, env: { PATH: "/usr/bin:/bin" } },
  );
  await waitFor(
    "etcd to report itself healthy",
    async () => {
      if (server.hasExited()) throw new Error(`etcd exited (${await server.exited})`);
      const response = await fetch(`${clientUrl}/health`, { signal: AbortSignal.timeout(1000) });
      const body = (await response.json()) as { health?: string };
      return body.health === "true" ? true : null;
    },
    { timeoutMs: 30_000, logs: [server.logFile] },
  );
  return { host: clientUrl.slice("http://".length), process: server };
}
