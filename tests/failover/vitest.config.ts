import { defineProject } from "vitest/config";

// Run on their own (`npm run test:failover`, a step of .ci/run), not by `npm test`: each file starts a Patroni
// cluster of the documented deployment, whose leader lock lasts 30 s, and takes it through faults.
export default defineProject({
  test: {
    name: "failover",
    // One file at a time: the cluster's timings ride on its processes getting the CPU when they need it.
    maxWorkers: 1,
    // Each wait inside polls with a bound of its own; a test holds a fault for up to a minute and waits for the
    // cluster to be whole again.
    testTimeout: 600_000,
    hookTimeout: 600_000,
    // The services run as shipped: built again first when their sources changed.
    globalSetup: ["@tessera/test-support/built"],
  },
});
