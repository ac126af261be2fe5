import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "service-kit",
    globalSetup: ["@tessera/db/testing/global-setup"],
  },
});
