import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "start",
    // The real script starts three services and, the first time, sets the installation up: tens of seconds.
    testTimeout: 180_000,
    hookTimeout: 180_000,
  },
});
