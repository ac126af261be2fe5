import { transactionRetryFigures } from "@tessera/db";
import { Counter, type Registry } from "prom-client";

/**
 * Metrics of transactions that PostgreSQL ended with a deadlock or a
 * serialization failure (see `transactionRetryFigures` of `@tessera/db`),
 * read from the pool's figures at scrape time, by `reason` (`deadlock`,
 * `serialization_failure`):
 *
 * - `database_transaction_retries_total{reason}`: runs ended so and started again;
 * - `database_transaction_conflicts_unresolved_total{reason}`: transactions still ended so at their last attempt
 *   (their requests were answered 503).
 *
 * `pool` is the primary's pool, the one the service's transactions run on;
 * without one (an application built without a database, to serve its
 * OpenAPI document) nothing is registered.
 */
export function registerTransactionRetryMetrics(registry: Registry, pool: object | undefined): void {
  if (typeof pool !== "object") return;
  const figures = transactionRetryFigures(pool);
  new Counter({
    name: "database_transaction_retries_total",
    help: "Transactions that PostgreSQL ended with a deadlock or a serialization failure and that were run again, by reason",
    labelNames: ["reason"],
    registers: [registry],
    collect() {
      this.reset();
      for (const [reason, count] of Object.entries(figures.retried)) this.inc({ reason }, count);
    },
  });
  new Counter({
    name: "database_transaction_conflicts_unresolved_total",
    help: "Transactions still ended with a deadlock or a serialization failure at their last attempt, by reason",
    labelNames: ["reason"],
    registers: [registry],
    collect() {
      this.reset();
      for (const [reason, count] of Object.entries(figures.gaveUp)) this.inc({ reason }, count);
    },
  });
}
