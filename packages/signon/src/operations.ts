import {
  databaseReadinessChecks,
  echoRequestId,
  registerHealthChecks,
  registerMetrics,
  registerReadRoutingMetrics,
  registerScrapedGauges,
  registerTransactionRetryMetrics,
  type ScrapedGauge,
} from "@tessera/service-kit";
import type { ReadRouter } from "@tessera/db";
import type { FastifyInstance } from "fastify";
import type pg from "pg";
import { floodedClientCount } from "./applications/client-authentication-pressure.js";
import type { SignonConfig } from "./config.js";
import type { SignonDatabase } from "./db/database.js";
import { signonMigrations } from "./db/migrations.js";
import { pushUserEmail } from "./pushes/push-credential.js";
import { readPushQueueFigures, type PushQueueFigures } from "./repositories/push-queue-figures.js";
import { soonestApiTokenExpiries } from "./repositories/renewed-tokens.js";
import { readRegisterState, type RegisterState } from "./repositories/organisation-register.js";

const pushGauges: readonly ScrapedGauge<PushQueueFigures>[] = [
  {
    name: "signon_push_deliveries",
    help: "Push outbox rows by status: pending (the queue depth), delivered, failed (given up)",
    labelNames: ["status"],
    values: (figures) => (["pending", "delivered", "failed"] as const).map((status) => ({ labels: { status }, value: figures[status] })),
  },
  { name: "signon_push_retrying", help: "Pending pushes that have failed at least once and wait for a retry", values: (figures) => figures.retrying },
  { name: "signon_push_oldest_pending_seconds", help: "Seconds since the oldest pending push was queued (0 when none)", values: (figures) => figures.oldestPendingSeconds },
];

const floodGauges: readonly ScrapedGauge<number>[] = [
  {
    name: "signon_client_authentication_floods",
    help: "Client ids with over 100 failed authentications from any addresses in the current 10-minute window (S15); they slow nothing for the real client",
    values: (flooded) => flooded,
  },
];

const tokenExpiryGauges: readonly ScrapedGauge<{ application: string; expiresAt: Date }[]>[] = [
  {
    name: "signon_api_token_soonest_expiry_timestamp_seconds",
    help: "Per application, when the first of the live tokens issued to API users expires (Unix time in seconds); applications without one are left out",
    labelNames: ["application"],
    values: (expiries) => expiries.map((expiry) => ({ labels: { application: expiry.application }, value: Math.floor(expiry.expiresAt.getTime() / 1000) })),
  },
];

/** The organisation register's state is shared: every instance shows the same figures (aggregate with max, not sum). */
const registerGauges: readonly ScrapedGauge<RegisterState>[] = [
  {
    name: "signon_organisation_register_fetch_failures_total",
    help: "Fetches of the organisation register that failed and so changed nothing, by any instance or the command line",
    type: "counter",
    values: (state) => state.failures,
  },
  {
    name: "signon_organisation_register_consecutive_failures",
    help: "Fetches of the organisation register that failed since the last one that succeeded",
    values: (state) => state.consecutiveFailures,
  },
  {
    name: "signon_organisation_register_last_success_timestamp_seconds",
    help: "When the last fetch of the organisation register that succeeded ended (Unix time in seconds); 0 before the first",
    values: (state) => (state.lastSuccessAt === null ? 0 : Math.floor(state.lastSuccessAt.getTime() / 1000)),
  },
];

/**
 * What operators use: the request id header, `/healthcheck/live` and
 * `/healthcheck/ready` (database answers, migrations applied) and `/metrics`
 * (requests, latency, the push outbox, flooded client ids and the soonest API
 * token expiry per application, the organisation register's fetches when
 * one is configured, read at scrape time, and transactions run again after a
 * deadlock or serialization failure).
 */
export function registerOperations(
  app: FastifyInstance,
  options: { config: SignonConfig; db: SignonDatabase; pool: pg.Pool; now: () => Date; reads?: ReadRouter | undefined },
): void {
  echoRequestId(app);
  const runQuery = async (text: string) => (await options.pool.query<Record<string, unknown>>(text)).rows;
  registerHealthChecks(app, { checks: databaseReadinessChecks(runQuery, [signonMigrations]) });
  const registry = registerMetrics(app, { token: options.config.metricsToken });
  registerScrapedGauges(registry, () => readPushQueueFigures(options.db, options.now()), pushGauges, (error) => {
    app.log.warn({ err: error }, "metrics: could not read the push outbox");
  });
  registerScrapedGauges(registry, () => floodedClientCount(options.db, options.now()), floodGauges, (error) => {
    app.log.warn({ err: error }, "metrics: could not read the failure counters");
  });
  registerScrapedGauges(registry, () => soonestApiTokenExpiries(options.db, options.now(), pushUserEmail), tokenExpiryGauges, (error) => {
    app.log.warn({ err: error }, "metrics: could not read the API token expiries");
  });
  if (options.config.organisationRegister.url !== null) {
    registerScrapedGauges(registry, () => readRegisterState(options.db), registerGauges, (error) => {
      app.log.warn({ err: error }, "metrics: could not read the organisation register's state");
    });
  }
  registerTransactionRetryMetrics(registry, options.pool);
  if (options.reads?.hasReplicas === true) registerReadRoutingMetrics(registry, options.reads);
}
