export { useTestDatabase } from "./use-test-database.js";
export type { TestDatabase, TestDatabaseOptions } from "./use-test-database.js";
export { truncateSchemas } from "./reset.js";
export { recreateDatabase, dropDatabase, workerDatabaseName, withDatabase } from "./postgres-database.js";
export { pendingSchemaChanges } from "../schema-agreement.js";
export type { SchemaAgreementOptions } from "../schema-agreement.js";
export { databaseSchemaDrift } from "../database-drift.js";
export type { DatabaseDriftOptions } from "../database-drift.js";
export { freePort } from "../free-port.js";
