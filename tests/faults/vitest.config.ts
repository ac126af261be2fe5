import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "faults",
    // Three service processes start, then ride out a minute of cuts and refusals under load.
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
