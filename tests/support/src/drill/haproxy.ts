// HAProxy in front of the cluster, run from deploy/haproxy/haproxy.cfg with the test's ports: one port that always
// reaches the current primary, one that reaches any replica, each following Patroni's REST health checks. It runs
// as Debian's unit runs it, a master process and its worker (`-W`), so that a reload (SIGUSR2, what
// `systemctl reload haproxy` sends) starts a worker on the files as they are now while the old one finishes the
// connections it holds. Before a reload it saves each server's state through the runtime API, as
// deploy/haproxy/reload-haproxy.sh does, so that the new worker starts from what the checks found.
import { rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { binaries } from "./binaries.js";
import { haproxyConfigFile } from "./deployment-files.js";
import { descendantsOf, killTree, startLogged, type LoggedProcess } from "./processes.js";
import { pause, waitFor } from "./wait.js";

export interface HaproxyBackend {
  name: string;
  pgPort: number;
  restPort: number;
}

export interface Haproxy {
  primaryPort: number;
  replicaPort: number;
  /** The running process (a new one after `bringBack`). */
  process(): LoggedProcess;
  /** SIGKILLs HAProxy: every connection through it is cut, and no new one is taken. */
  lose(): Promise<void>;
  /** Starts it again on the same ports. */
  bringBack(): void;
  /** Reloads it as `systemctl reload haproxy` does: resolves once a new worker runs on the files as they are now. */
  reload(): Promise<void>;
  stop(): Promise<void>;
}

/** Writes the configuration under `directory` and starts HAProxy in the foreground. */
export function startHaproxy(directory: string, ports: { primary: number; replica: number }, nodes: HaproxyBackend[], certificates: string): Haproxy {
  const configFile = join(directory, "haproxy.cfg");
  const runtime = { socket: join(directory, "haproxy.sock"), serverState: join(directory, "haproxy-server-state") };
  writeFileSync(configFile, haproxyConfigFile(ports, nodes, certificates, runtime));
  const start = () =>
    startLogged("haproxy", binaries.haproxy, ["-W", "-db", "-f", configFile], {
      logFile: join(directory, "haproxy.log"),
      cwd: directory,
      env: { PATH: "/usr/bin:/bin:/usr/sbin" },
    });
  let running = start();
  const kill = async () => {
    while (!running.hasExited()) {
      killTree(running.pid);
      await Promise.race([running.exited, pause(50)]);
    }
  };
  return {
    primaryPort: ports.primary,
    replicaPort: ports.replica,
    process: () => running,
    lose: kill,
    bringBack: () => {
      if (!running.hasExited()) throw new Error("HAProxy is running");
      running = start();
    },
    reload: async () => {
      writeFileSync(runtime.serverState, await runtimeCommand(runtime.socket, "show servers state"));
      const before = new Set(descendantsOf(running.pid));
      process.kill(running.pid, "SIGUSR2");
      await waitFor("HAProxy to start a new worker", async () => (descendantsOf(running.pid).some((pid) => !before.has(pid)) ? true : null), {
        timeoutMs: 10_000,
        logs: [join(directory, "haproxy.log")],
      });
      rmSync(runtime.serverState, { force: true });
    },
    stop: kill,
  };
}

/** Sends one command to HAProxy's runtime API at `socket`; resolves with its whole answer. */
function runtimeCommand(socket: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let answer = "";
    const client = connect(socket, () => client.end(`${command}\n`));
    client.setEncoding("utf8");
    client.on("data", (chunk: string) => (answer += chunk));
    client.on("end", () => resolve(answer));
    client.on("error", reject);
  });
}
