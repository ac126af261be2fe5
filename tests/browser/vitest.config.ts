import { defineProject } from "vitest/config";
import { chromiumMissing } from "./support/chromium.js";

// Without chromium every test here is skipped, with one line saying how to install it; under CI=true they run
// (and fail to launch it), so CI never passes without them.
const missing = chromiumMissing();
const skipAll = missing !== null && process.env["CI"] !== "true";
if (missing !== null) {
  console.warn(
    `browser: ${skipAll ? "skipped" : "failing"}, ${missing} (install with: apt-get install chromium, or set CHROMIUM_PATH)` +
      (skipAll ? "" : "; CI must run these tests"),
  );
}

export default defineProject({
  test: {
    name: "browser",
    // One browser file at a time (a browser and two services each), after the other projects' files: a group
    // of its own, since vitest runs projects that differ in maxWorkers in separate groups.
    sequence: { groupOrder: 3 },
    maxWorkers: 1,
    // Files of a worker share its loaded modules (Fastify, the routes, jose, …): importing them once per worker
    // instead of once per file saves most of the run's import time. Test files keep no state in modules; each
    // builds its own app and database handle.
    isolate: false,
    // A browser, Sign-on and the example application start per file; pages are real round trips.
    testTimeout: 60_000,
    hookTimeout: 90_000,
    ...(skipAll
      ? // A name no test has: every test is skipped when collected, so no file starts its system.
        { testNamePattern: /^(?!)/ }
      : // The services run as shipped: built again first when their sources changed.
        { globalSetup: ["@tessera/db/testing/global-setup", "@tessera/test-support/built"] }),
  },
});
