import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "faults",
    // Alone and one file at a time, after the other projects (two files run at once elsewhere): its cuts, refusals and
    // stalls ride on the timing of service processes, which other test files' load would stretch.
    sequence: { groupOrder: 1 },
    maxWorkers: 1,
    // Three service processes start, then ride out a minute or two of cuts, refusals and a stall under load
    // (room for a busy machine: each wait inside polls, and none is a timing assertion).
    testTimeout: 300_000,
    hookTimeout: 300_000,
    // The services run as shipped: built again first when their sources changed.
    globalSetup: ["@tessera/test-support/built"],
  },
});
