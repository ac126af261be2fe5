import type { ReadRouter } from "@tessera/db";
import { Counter, Gauge, type Registry } from "prom-client";

/**
 * Metrics of where reads that tolerate lag went (see `ReadRouter`), read
 * from the router at scrape time:
 *
 * - `database_reads_routed_total{target}`: reads sent to `primary` or to each replica (`host:port/database`);
 * - `database_read_replica_lag_seconds{replica}`: how far each replica was behind the primary at its last check
 *   (absent while it cannot be reached);
 * - `database_read_replica_up{replica}`: 1 when its last check answered, else 0;
 * - `database_reads_retried_on_primary_total{replica}`: reads that failed on each replica because it could not be
 *   reached or gave no answer within `DATABASE_READ_TIMEOUT_MS`, and were answered by the primary.
 */
export function registerReadRoutingMetrics(registry: Registry, router: ReadRouter): void {
  new Counter({
    name: "database_reads_routed_total",
    help: "Reads that tolerate a little lag, by the server they were sent to: primary, or a replica",
    labelNames: ["target"],
    registers: [registry],
    collect() {
      this.reset();
      for (const [target, count] of router.routed()) this.inc({ target }, count);
    },
  });
  new Gauge({
    name: "database_read_replica_lag_seconds",
    help: "How far each read replica was behind the primary at its last check, in seconds",
    labelNames: ["replica"],
    registers: [registry],
    collect() {
      this.reset();
      for (const replica of router.replicas()) if (replica.lagMs !== null) this.set({ replica: replica.name }, replica.lagMs / 1000);
    },
  });
  new Gauge({
    name: "database_read_replica_up",
    help: "Whether each read replica answered its last check (1) or not (0)",
    labelNames: ["replica"],
    registers: [registry],
    collect() {
      this.reset();
      for (const replica of router.replicas()) this.set({ replica: replica.name }, replica.reachable ? 1 : 0);
    },
  });
  new Counter({
    name: "database_reads_retried_on_primary_total",
    help: "Reads that failed on a read replica because it could not be reached or gave no answer in time, and were answered by the primary",
    labelNames: ["replica"],
    registers: [registry],
    collect() {
      this.reset();
      for (const [replica, count] of router.retriedOnPrimary()) this.inc({ replica }, count);
    },
  });
}
