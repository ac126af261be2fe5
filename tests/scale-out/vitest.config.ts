import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "scale-out",
    // Alone and one file at a time, after the other projects and the fault tests: four service processes and a queue to drain.
    sequence: { groupOrder: 2 },
    maxWorkers: 1,
    // Four service processes start, migrate and drain a queue: far more than the default 5 s, well under 2 minutes.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // The services run as shipped: built again first when their sources changed.
    globalSetup: ["@tessera/test-support/built"],
  },
});
