// HAProxy in front of the cluster: one port that always reaches the current primary, one that reaches any
// replica, each following Patroni's REST health checks (`/primary`, `/replica`) of every node.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { binaries } from "./binaries.js";
import { startLogged, type LoggedProcess } from "./processes.js";

export interface HaproxyBackend {
  name: string;
  pgPort: number;
  restPort: number;
}

export interface Haproxy {
  primaryPort: number;
  replicaPort: number;
  process: LoggedProcess;
}

/**
 * HAProxy's configuration. A node's check asks its Patroni, every 500 ms, whether the node is the primary
 * (or a replica); two failures take it out, one success puts it in. `on-marked-down shutdown-sessions` cuts the
 * connections of a node taken out, so that a client never stays on a demoted or lost primary.
 */
export function haproxyConfig(ports: { primary: number; replica: number }, nodes: HaproxyBackend[]): string {
  // The body is read before the status is judged: a check that closes on the status line alone resets
  // Patroni's connection while it writes the body, and Patroni logs a traceback for each one.
  const readBodyFirst = "  http-check expect rstring .";
  const servers = nodes.map((node) => `  server ${node.name} 127.0.0.1:${node.pgPort} check port ${node.restPort}`);
  return [
    "global",
    "  maxconn 400",
    "",
    "defaults",
    "  mode tcp",
    "  timeout connect 1s",
    "  timeout client 30m",
    "  timeout server 30m",
    "  timeout check 1s",
    "  default-server inter 500 fall 2 rise 1 on-marked-down shutdown-sessions",
    "",
    "listen primary",
    `  bind 127.0.0.1:${ports.primary}`,
    "  option httpchk GET /primary",
    readBodyFirst,
    "  http-check expect status 200",
    ...servers,
    "",
    "listen replicas",
    `  bind 127.0.0.1:${ports.replica}`,
    "  balance roundrobin",
    "  option httpchk GET /replica",
    readBodyFirst,
    "  http-check expect status 200",
    ...servers,
    "",
  ].join("\n");
}

/** Writes the configuration under `directory` and starts HAProxy in the foreground. */
export function startHaproxy(directory: string, ports: { primary: number; replica: number }, nodes: HaproxyBackend[]): Haproxy {
  const configFile = join(directory, "haproxy.cfg");
  writeFileSync(configFile, haproxyConfig(ports, nodes));
  const proxy = startLogged("haproxy", binaries.haproxy, ["-f", configFile, "-db"], {
    logFile: join(directory, "haproxy.log"),
    cwd: directory,
    env: { PATH: "/usr/bin:/bin:/usr/sbin" },
  });
  return { primaryPort: ports.primary, replicaPort: ports.replica, process: proxy };
}
