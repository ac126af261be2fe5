import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "ruby-client",
    globalSetup: ["@tessera/db/testing/global-setup"],
    // Sign-on and a Ruby process start per file; every step is a real round trip.
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
