export { requestIdOf, requestIdServerOptions, echoRequestId, REQUEST_ID_HEADER, REQUEST_ID_LOG_LABEL } from "./request-id.js";
export { serializeError, PARAMETERS_LEFT_OUT, type SerializedError } from "./error-serializer.js";
export { serviceLoggerOptions, serializeRequest, redactLogFields, REDACTED, REDACTED_LOG_FIELDS, type ServiceLoggerOptions } from "./logging.js";
export { registerHealthChecks, CheckFailure, HEALTH_CHECK_PATHS, type ReadinessCheck, type HealthCheckOptions, type CheckResult } from "./health.js";
export { databaseReadinessChecks } from "./database-checks.js";
export { lazySchemaCompilers } from "./lazy-schemas.js";
export { registerMetrics, UNMATCHED_ROUTE, type MetricsOptions } from "./metrics.js";
export { registerScrapedGauges, type ScrapedGauge } from "./scraped-gauges.js";
export { bearerTokenMatches } from "./bearer-token.js";
export {
  answeringDatabaseOutages,
  sendDatabaseUnavailable,
  temporarilyUnavailablePage,
  DATABASE_RETRY_AFTER_SECONDS,
  CONFLICT_RETRY_AFTER_SECONDS,
  type DatabaseOutageAnswers,
  type ErrorHandler,
} from "./database-outage.js";
export { answerWhileStarting, type StartingPort } from "./starting-port.js";
export { TESSERA_VERSION } from "./version.js";
export { registerReadRoutingMetrics } from "./read-routing-metrics.js";
export { registerScrapedCounter } from "./scraped-counter.js";
export { registerTransactionRetryMetrics } from "./transaction-retry-metrics.js";
export { drainAndClose, DRAIN_GRACE_MS } from "./drain.js";
