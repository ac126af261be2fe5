import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "db",
    // What services register too: one embedded PostgreSQL server per test run.
    globalSetup: ["@tessera/db/testing/global-setup"],
    // Starting PGlite (the embedded server tests) takes seconds on a busy machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
