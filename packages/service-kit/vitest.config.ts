import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "service-kit",
    // Generous: a loaded two-core CI machine runs several workers at once; tests never assert timings.
    testTimeout: 20_000,
    globalSetup: ["@tessera/db/testing/global-setup"],
  },
});
