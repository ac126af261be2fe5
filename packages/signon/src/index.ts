export { default as signonApp, signonServerOptions, type SignonAppOptions } from "./app.js";
export { loadConfig, ConfigError, type SignonConfig } from "./config.js";
export { openSignonDatabase } from "./database.js";
export { signonMigrations } from "./db/migrations.js";
export { startSignon, type RunningSignon } from "./server.js";
