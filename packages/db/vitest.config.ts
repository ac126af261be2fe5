import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "db",
    // Files of a worker share its loaded modules (Fastify, the routes, jose, …): importing them once per worker
    // instead of once per file saves most of the run's import time. Test files keep no state in modules; each
    // builds its own app and database handle.
    isolate: false,
    // What services register too: one embedded PostgreSQL server per test run.
    globalSetup: ["@tessera/db/testing/global-setup"],
    // Creating a PostgreSQL cluster (initdb, in the embedded server tests) takes seconds, more on a busy machine.
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
