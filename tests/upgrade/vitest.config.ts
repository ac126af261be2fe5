import { configDefaults, defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "upgrade",
    // The migration commands run as shipped, each in a process of its own against a database of its own.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    globalSetup: ["@tessera/db/testing/global-setup"],
    // The rolling upgrade runs on its own (`npm run test:upgrade`, vitest.rolling.config.ts), not in `npm test`.
    exclude: [...configDefaults.exclude, "rolling.test.ts"],
  },
});
