import type { ReadRouter } from "@tessera/db";
import { databaseReadinessChecks, echoRequestId, registerHealthChecks, registerMetrics, registerReadRoutingMetrics, registerScrapedGauges, type ScrapedGauge } from "@tessera/service-kit";
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
 * (requests, latency, aggregation lag read at scrape time, and with replicas
 * where reads went and each replica's lag).
 */
export function registerOperations(app: FastifyInstance, ctx: CompletionContext, options: { metricsToken: string | null; readRouter?: ReadRouter }): void {
  echoRequestId(app);
  const runQuery = async (text: string) => (await ctx.db.execute<Record<string, unknown>>(sql.raw(text))).rows;
  registerHealthChecks(app, { checks: databaseReadinessChecks(runQuery, [COMPLETION_MIGRATIONS]) });
  const registry = registerMetrics(app, { token: options.metricsToken });
  registerScrapedGauges(registry, () => readStaleFigures(ctx.db, ctx.now()), staleGauges, (error) => {
    app.log.warn({ err: error }, "metrics: could not read the stale records");
  });
  if (options.readRouter !== undefined) registerReadRoutingMetrics(registry, options.readRouter);
}
