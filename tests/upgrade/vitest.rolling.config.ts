import { defineProject } from "vitest/config";

// The rolling upgrade (rolling.test.ts) on its own: `npm run test:upgrade`, a step of .ci/run after the failover
// drills. It checks the previous release out and builds it, then runs both releases' services, nginx and Chromium
// against a PostgreSQL server of its own that takes TLS connections alone, for a few minutes.
export default defineProject({
  test: {
    name: "upgrade-rolling",
    include: ["rolling.test.ts"],
    // One test at a time: each runs five services, nginx and Chromium on the machine's cores.
    maxWorkers: 1,
    // Installing and building the previous release (the first run after a fresh clone) takes a few minutes.
    testTimeout: 600_000,
    hookTimeout: 120_000,
    // The services of this tree run as shipped: built again first when their sources changed.
    globalSetup: ["@tessera/test-support/built"],
  },
});
