// HAProxy in front of the cluster, run from deploy/haproxy/haproxy.cfg with the test's ports: one port that always
// reaches the current primary, one that reaches any replica, each following Patroni's REST health checks.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { binaries } from "./binaries.js";
import { haproxyConfigFile } from "./deployment-files.js";
import { killTree, startLogged, type LoggedProcess } from "./processes.js";
import { pause } from "./wait.js";

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
  stop(): Promise<void>;
}

/** Writes the configuration under `directory` and starts HAProxy in the foreground. */
export function startHaproxy(directory: string, ports: { primary: number; replica: number }, nodes: HaproxyBackend[], certificates: string): Haproxy {
  const configFile = join(directory, "haproxy.cfg");
  writeFileSync(configFile, haproxyConfigFile(ports, nodes, certificates));
  const start = () =>
    startLogged("haproxy", binaries.haproxy, ["-f", configFile, "-db"], {
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
    stop: kill,
  };
}
