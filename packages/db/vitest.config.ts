import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "db",
    // What services register too: one embedded test server per worker slot.
    globalSetup: ["@tessera/db/testing/global-setup"],
    // Starting PGlite takes seconds on a busy machine (first start: initdb).
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
