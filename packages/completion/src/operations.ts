import type { ReadRouter } from "@tessera/db";
import {
  databaseReadinessChecks,
  echoRequestId,
  registerHealthChecks,
  registerMetrics,
  registerReadRoutingMetrics,
  registerScrapedCounter,
  registerScrapedGauges,
  registerTransactionRetryMetrics,
  type ScrapedGauge,
} from "@tessera/service-kit";
import { sql } from "drizzle-orm";
import type { FastifyInstance } from "fastify";
import type { CompletionContext } from "./context.js";
import { COMPLETION_MIGRATIONS } from "./db/database.js";
import { readStaleFigures, type StaleFigures } from "./repositories/stale-figures.js";

const staleGauges: readonly ScrapedGauge<StaleFigures>[] = [
  { name: "completion_stale_records", help: "Unresolved stale records: learners' course aggregates waiting to be recomputed", values: (figures) => figures.unresolved },
  {
    name: "completion_stale_oldest_seconds",
    help: "Seconds since the oldest unresolved stale record was written (0 when none): the aggregation lag",
    values: (figures) => figures.oldestSeconds,
  },
];

/**
 * What operators use: the request id header, `/healthcheck/live` and
 * `/healthcheck/ready` (database answers, migrations applied) and `/metrics`
 * (requests, latency, aggregation lag read at scrape time, callers given
 * from a remembered answer while Sign-on could not answer, transactions run
 * again after a deadlock or serialization failure, and with replicas where
 * reads went and each replica's lag).
 */
export function registerOperations(app: FastifyInstance, ctx: CompletionContext, options: { metricsToken: string | null; readRouter?: ReadRouter }): void {
  echoRequestId(app);
  const runQuery = async (text: string) => (await ctx.db.execute<Record<string, unknown>>(sql.raw(text))).rows;
  registerHealthChecks(app, { checks: databaseReadinessChecks(runQuery, [COMPLETION_MIGRATIONS]) });
  const registry = registerMetrics(app, { token: options.metricsToken });
  registerScrapedGauges(registry, () => readStaleFigures(ctx.db, ctx.now()), staleGauges, (error) => {
    app.log.warn({ err: error }, "metrics: could not read the stale records");
  });
  // The pool under the primary's drizzle instance: where every transaction runs.
  registerTransactionRetryMetrics(registry, (ctx.primary as unknown as { $client: object }).$client);
  const callers = ctx.callers;
  if (callers.staleAnswers !== undefined) {
    registerScrapedCounter(registry, {
      name: "completion_callers_served_stale_total",
      help: "Requests whose caller was taken from Sign-on's remembered answer past its cache time, because Sign-on could not be reached or answered 5xx",
      value: () => callers.staleAnswers ?? 0,
    });
  }
  if (options.readRouter !== undefined) registerReadRoutingMetrics(registry, options.readRouter);
}
