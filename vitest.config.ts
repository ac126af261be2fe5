import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // The failover drills (tests/failover: a Patroni cluster through frozen, killed and lost machines, about 15
    // minutes) run on their own: `npm run test:failover`, a step of .ci/run.
    projects: ["packages/*", "examples/*", "tests/*", "!tests/support", "!tests/failover"],
    reporters: ["default", "./scripts/summary-reporter.ts"],
    // Two files at a time even on two cores (vitest's default there is one): most of a test's time is spent waiting
    // on PostgreSQL, a child process or a browser, which leaves a core free for the other file. Each worker slot has
    // a database of its own (useTestDatabase), and tests that start servers take free ports.
    maxWorkers: 2,
  },
});
