import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "db",
    // What services register too: one embedded PostgreSQL server per test run.
    globalSetup: ["@tessera/db/testing/global-setup"],
    // Creating a PostgreSQL cluster (initdb, in the embedded server tests) takes seconds, more on a busy machine.
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
