import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "faults",
    // Three service processes start, then ride out a minute or two of cuts, refusals and a stall under load
    // (room for a busy machine: each wait inside polls, and none is a timing assertion).
    testTimeout: 300_000,
    hookTimeout: 300_000,
  },
});
