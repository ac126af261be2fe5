import { readFileSync } from "node:fs";

/**
 * Tessera's version, as the root `package.json` says (every workspace package
 * carries the same one; CHANGELOG.md and releases.json list the releases).
 * Read once, from the checkout the code runs from: this module sits two
 * folders below the root in `src/`, `dist/` and, through its own
 * `import.meta.url`, in a service's bundle.
 */
export const TESSERA_VERSION: string = readVersion(new URL("../../../package.json", import.meta.url));

function readVersion(manifest: URL): string {
  const { version } = JSON.parse(readFileSync(manifest, "utf8")) as { version?: unknown };
  if (typeof version !== "string" || version === "") throw new Error(`${manifest.pathname} has no version`);
  return version;
}
