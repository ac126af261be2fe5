// A Patroni node's configuration file: PostgreSQL 15 bootstrapped by Patroni (initdb on the first node,
// pg_basebackup from the leader on the others), synchronous mode with one synchronous standby, pg_rewind for a
// lost primary's return, and timings short enough that a lost leader is replaced within seconds.
import { binaries } from "./binaries.js";

/**
 * How fast Patroni notices a lost leader. The leader holds its lock in etcd for `ttl` seconds and renews it
 * every `loop_wait`; when it stops renewing, the lock's lease expires and a standby that watches it takes over.
 * Patroni 3.0.2 checks only that each is an integer (and only under `--validate-config`; its documentation
 * asks for ttl >= 20, loop_wait >= 1, retry_timeout >= 3, which later versions enforce). What bounds them here:
 * `loop_wait + 2 * retry_timeout <= ttl`, so that a leader whose etcd or PostgreSQL calls are retried for the
 * whole `retry_timeout` still renews in time; etcd raises any lease below 2 s to 2 s.
 */
export interface PatroniTimings {
  ttl: number;
  loop_wait: number;
  retry_timeout: number;
}

export const defaultTimings: PatroniTimings = { ttl: 5, loop_wait: 1, retry_timeout: 2 };

export interface NodeSpec {
  name: string;
  pgPort: number;
  restPort: number;
  /** The node's own directory: its data directory, socket and password file live inside. */
  directory: string;
  /**
   * A read replica that is never promoted (`nofailover`). It may still be the synchronous standby: Patroni prefers a
   * node that may be promoted, so it is one only while no such node streams (after the primary's loss, until the
   * old primary is back), and writes acknowledged meanwhile are on two machines all the same.
   */
  readReplicaOnly: boolean;
}

/** The configuration of `node` (Patroni reads YAML, of which JSON is a subset). */
export function patroniConfig(node: NodeSpec, cluster: { etcdHost: string; timings: PatroniTimings }): object {
  const everyoneTrusted = ["local all all trust", "host all all 127.0.0.1/32 trust", "host replication all 127.0.0.1/32 trust"];
  return {
    scope: "tessera",
    name: node.name,
    log: { level: "INFO" },
    restapi: { listen: `127.0.0.1:${node.restPort}`, connect_address: `127.0.0.1:${node.restPort}` },
    etcd3: { hosts: [cluster.etcdHost] },
    bootstrap: {
      // Written to etcd by the node that bootstraps the cluster, and shared by all nodes from there.
      dcs: {
        ...cluster.timings,
        maximum_lag_on_failover: 1_048_576,
        synchronous_mode: true,
        synchronous_node_count: 1,
        postgresql: {
          use_pg_rewind: true,
          use_slots: true,
          parameters: {
            max_connections: 100,
            synchronous_commit: "on",
            shared_buffers: "32MB",
            // WAL kept for a standby that reconnects, or for the old primary after pg_rewind.
            wal_keep_size: "128MB",
          },
        },
      },
      initdb: [{ encoding: "UTF8" }, { locale: "C" }],
    },
    postgresql: {
      listen: `127.0.0.1:${node.pgPort}`,
      connect_address: `127.0.0.1:${node.pgPort}`,
      data_dir: `${node.directory}/data`,
      bin_dir: binaries.postgresBin,
      pgpass: `${node.directory}/pgpass`,
      // The superuser replicates and rewinds too: pg_hba trusts every local connection.
      authentication: { superuser: { username: "postgres" }, replication: { username: "postgres" }, rewind: { username: "postgres" } },
      pg_hba: everyoneTrusted,
      parameters: { unix_socket_directories: node.directory },
      basebackup: [{ checkpoint: "fast" }],
      use_pg_rewind: true,
    },
    tags: { nofailover: node.readReplicaOnly, nosync: false, noloadbalance: false, clonefrom: false },
    // No watchdog here; the margin only keeps Patroni 3.0.2 from warning on every loop that its default 5 s
    // margin does not fit in the ttl (it checks the timing even with the watchdog off).
    watchdog: { mode: "off", safety_margin: -1 },
  };
}
