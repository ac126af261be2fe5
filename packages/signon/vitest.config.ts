import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "signon",
    // Generous: a loaded two-core CI machine runs several workers at once; tests never assert timings.
    testTimeout: 20_000,
    // One embedded PostgreSQL server for the run; each worker slot gets its own database on it.
    globalSetup: ["@tessera/db/testing/global-setup"],
  },
});
