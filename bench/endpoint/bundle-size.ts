import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { build } from "rolldown";

/** Raw and gzip-compressed (level 9) byte counts of some code. */
export interface CodeSize {
  minified: number;
  gzipped: number;
}

/** Byte counts of `code` as UTF-8, as it is and compressed with gzip at level 9. */
export function sizeOf(code: string): CodeSize {
  const bytes = Buffer.from(code, "utf8");
  return { minified: bytes.length, gzipped: gzipSync(bytes, { level: 9 }).length };
}

/** Size of a built file. */
export function fileSize(path: string): CodeSize {
  return sizeOf(readFileSync(path, "utf8"));
}

/**
 * Size of a package bundled for browsers as one minified ES module with
 * rolldown (the bundler tsdown uses for our own browser build), dependencies included.
 */
export async function bundledPackageSize(packageName: string, cwd: string): Promise<CodeSize> {
  const output = await build({
    input: packageName,
    cwd,
    platform: "browser",
    write: false,
    logLevel: "silent",
    output: { format: "esm", minify: true },
  });
  const code = output.output.map((chunk) => (chunk.type === "chunk" ? chunk.code : "")).join("");
  return sizeOf(code);
}
