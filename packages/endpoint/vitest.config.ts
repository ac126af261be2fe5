import { readFileSync } from "node:fs";
import { defineProject } from "vitest/config";

const { version } = JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8")) as { version: string };

export default defineProject({
  // Source runs see the same version stamp as the build (tsdown.config.ts).
  define: { __TESSERA_ENDPOINT_VERSION__: JSON.stringify(version) },
  test: {
    name: "endpoint",
    globalSetup: ["./test/support/build-once.ts"],
  },
});
