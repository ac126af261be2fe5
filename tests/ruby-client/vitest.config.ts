import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "ruby-client",
    // Sign-on runs as shipped: built again first when its sources changed.
    globalSetup: ["@tessera/db/testing/global-setup", "@tessera/test-support/built"],
    // Sign-on and a Ruby process start per file; every step is a real round trip.
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
