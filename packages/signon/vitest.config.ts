import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "signon",
    // One embedded PostgreSQL server for the run; each worker slot gets its own database on it.
    globalSetup: ["@tessera/db/testing/global-setup"],
  },
});
