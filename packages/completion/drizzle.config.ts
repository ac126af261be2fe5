import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "postgresql",
  schema: "./src/db/schema.ts",
  out: "./migrations",
  schemaFilter: ["completion"],
  // Where @tessera/db's migration runner keeps this service's journal.
  migrations: { schema: "drizzle", table: "completion_migrations" },
});
