export { startDatabase, DEFAULT_DATA_DIR, START_RETRY_MAX_MS } from "./start-database.js";
export { DatabaseStartError, databaseAddress } from "./database-start-error.js";
export type { DatabaseAddress } from "./database-start-error.js";
export type { StartDatabaseOptions, StartedDatabase } from "./start-database.js";
export { createPool, idleConnectionsFor, DEFAULT_CONNECTION_TIMEOUT_MS, KEEPALIVE_INITIAL_DELAY_MS } from "./pool.js";
export { withStatementTimeout, DEFAULT_STATEMENT_TIMEOUT_MS } from "./statement-timeout.js";
export { isDatabaseUnavailable, describeDatabaseError, transactionConflict, tlsRefusal, describeTlsRefusal } from "./faults.js";
export type { TransactionConflict, TlsRefusal, TlsRefusalContext } from "./faults.js";
export { connectionTls, productionTlsProblem, unusableTlsFile } from "./connection-tls.js";
export type { ConnectionTls } from "./connection-tls.js";
export { transactionRetryFigures, TRANSACTION_ATTEMPTS } from "./transaction-retries.js";
export type { TransactionRetryFigures } from "./transaction-retries.js";
export { OutageTracker } from "./outage-tracker.js";
export type { OutageTrackerOptions } from "./outage-tracker.js";
export type { PoolOptions } from "./pool.js";
export { createDrizzle } from "./drizzle.js";
export type { Database } from "./drizzle.js";
export { runMigrations, bookkeepingTable, migrationSource, BOOKKEEPING_SCHEMA } from "./migrations.js";
export type { MigrationSet, MigrationReport, MigrationKind, RunMigrationsOptions } from "./migrations.js";
export { MigrationLockTimeout, DEFAULT_MIGRATION_LOCK_TIMEOUT_MS, DEFAULT_MIGRATION_LOCK_ATTEMPTS } from "./migration-lock.js";
export { checkMigration } from "./migration-check.js";
export type { MigrationFinding, MigrationRule } from "./migration-check.js";
export { checkMigrationFolder } from "./migration-exemptions.js";
export type { CheckedMigration, MigrationExemption } from "./migration-exemptions.js";
export { pendingMigrations } from "./pending-migrations.js";
export { migrateDatabase, describeMigrateOutcome } from "./migrate-command.js";
export { setRestorePoint, restorePointName, describeRestorePoint } from "./restore-point.js";
export type { RestorePointOutcome } from "./restore-point.js";
export type { MigrateOutcome } from "./migrate-command.js";
export type { RunQuery } from "./pending-migrations.js";
export { silentLogger } from "./logger.js";
export type { Logger } from "./logger.js";
export { startPostgresServer } from "./postgres-server/postgres-server.js";
export type { PostgresServer, PostgresServerOptions, Transport } from "./postgres-server/postgres-server.js";
export type { PostgresBinaries } from "./postgres-server/binaries.js";
export { PostgresServerError } from "./postgres-server/postgres-server-error.js";
export type { PostgresServerProblem } from "./postgres-server/postgres-server-error.js";
export type { EarlierDataConversion } from "./postgres-server/convert-earlier-data.js";
export { startEmbeddedDatabase } from "./postgres-server/embedded-database.js";
export type { EmbeddedDatabase, EmbeddedDatabaseOptions } from "./postgres-server/embedded-database.js";
export {
  ReadRouter,
  createReadReplicaPool,
  DEFAULT_READ_MAX_LAG_MS,
  DEFAULT_READ_TIMEOUT_MS,
  DEFAULT_LAG_CHECK_INTERVAL_MS,
  parseReadUrls,
  parseLsn,
  formatLsn,
  replicaName,
} from "./read-replicas.js";
export type { ReadRouterOptions, ReadReplicaState, ReadTarget, ReadReplicaPoolOptions } from "./read-replicas.js";
