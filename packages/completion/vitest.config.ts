import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "completion",
    // Files of a worker share its loaded modules (Fastify, the routes, jose, …): importing them once per worker
    // instead of once per file saves most of the run's import time. Test files keep no state in modules; each
    // builds its own app and database handle.
    isolate: false,
    // Generous: a loaded two-core CI machine runs several workers at once; tests never assert timings.
    testTimeout: 20_000,
    // One embedded PostgreSQL server for the run; each worker slot gets its own database on it.
    // Sign-on runs beside it as shipped (tests/support): built again first when its sources changed.
    globalSetup: ["@tessera/db/testing/global-setup", "@tessera/test-support/built"],
  },
});
