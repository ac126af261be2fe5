import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: ["packages/*", "examples/*", "tests/*"],
    reporters: ["default", "./scripts/summary-reporter.ts"],
  },
});
