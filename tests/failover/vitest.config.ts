import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "failover",
    // Alone and one file at a time, after the other projects: the cluster's timings (a leader lease of a few seconds,
    // health checks every 500 ms) ride on six processes getting the CPU when they need it.
    sequence: { groupOrder: 2 },
    maxWorkers: 1,
    // A cluster bootstraps, loses its primary's machine and takes it back (each wait inside polls; the one bound
    // asserted is the 15 s from the kill to the first write on the new primary).
    testTimeout: 300_000,
    hookTimeout: 300_000,
    // failover.test.ts runs the services as shipped: built again first when their sources changed.
    globalSetup: ["@tessera/test-support/built"],
  },
});
