import { readFileSync } from "node:fs";
import { defineConfig } from "tsdown";

const { version } = JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8")) as { version: string };
const define = { __TESSERA_ENDPOINT_VERSION__: JSON.stringify(version) };

export default defineConfig([
  {
    entry: { index: "src/index.ts" },
    format: ["esm", "cjs"],
    // CommonJS is part of the contract (decision E3), so the advice to drop it does not apply.
    checks: { legacyCjs: false },
    platform: "neutral",
    fixedExtension: true,
    dts: true,
    define,
    clean: true,
  },
  {
    entry: { "endpoint.browser": "src/index.ts" },
    format: "esm",
    platform: "browser",
    outDir: "dist/browser",
    outExtensions: () => ({ js: ".min.js" }),
    target: "es2022",
    minify: true,
    dts: false,
    define,
    clean: false,
  },
]);
