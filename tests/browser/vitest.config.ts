import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "browser",
    globalSetup: ["@tessera/db/testing/global-setup"],
    // A browser, Sign-on and the example application start per file; pages are real round trips.
    testTimeout: 60_000,
    hookTimeout: 90_000,
  },
});
