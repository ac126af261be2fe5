import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "scale-out",
    // Four service processes start, migrate and drain a queue: far more than the default 5 s, well under 2 minutes.
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
