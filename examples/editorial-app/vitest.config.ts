import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "editorial-app",
    // Files of a worker share its loaded modules (Fastify, the routes, jose, …): importing them once per worker
    // instead of once per file saves most of the run's import time. Test files keep no state in modules; each
    // builds its own app and database handle.
    isolate: false,
    // Generous: a loaded two-core CI machine runs several workers at once; tests never assert timings.
    testTimeout: 20_000,
    // One embedded test database server per worker slot, shared by the files of that slot.
    // The end-to-end tests run Sign-on and the application as shipped (tests/support): built again first when changed.
    globalSetup: ["@tessera/db/testing/global-setup", "@tessera/test-support/built"],
    // Starting the embedded database takes seconds on a busy machine.
    hookTimeout: 60_000,
  },
});
