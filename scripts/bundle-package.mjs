// Bundles a service's entry points (package.json "tessera": { "bundle": ["src/server.ts", …] })
// into `dist/bundled/`: each entry with everything it imports, the workspace packages and the
// npm packages alike, as one file, and what is imported only on demand (`import()`) as chunks
// beside it. `npm start` runs these files. A Node.js process so starts by reading a handful of
// files instead of some 500 modules, each resolved, read and linked on its own: Sign-on's start
// takes less than half the time and the memory that module loading leaves behind.
//
// Every module keeps its own `import.meta.url` (rewritten to the source file it came from,
// relative to the bundle, so the checkout can move), so files found beside the sources (views,
// migrations) are found as before. An entry keeps the bundle's, so `import.meta.url ===
// process.argv[1]` still tells that it was run. Native addons and optional native packages stay
// outside and are loaded from node_modules.
//
// `dist/bundled/inputs.json` lists the workspace files a bundle was made from: needsBuild
// (scripts/build-package.mjs) builds again when one of them changed.
import { readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";

/** Loaded from node_modules at run time: native addons (a `.node` file each) and optional native bindings. */
const external = ["@node-rs/argon2", "pg-native", "cpu-features", "ssh2"];

export const BUNDLED_DIR = join("dist", "bundled");
export const BUNDLE_INPUTS = "inputs.json";

/** The workspace files (not from node_modules) listed in a package's last bundle, absolute. */
export async function bundleInputs(packageDir) {
  try {
    const listed = JSON.parse(await readFile(join(packageDir, BUNDLED_DIR, BUNDLE_INPUTS), "utf8"));
    const root = resolve(packageDir, "../..");
    return listed.map((file) => join(root, file));
  } catch {
    return [];
  }
}

/** The entries to bundle that `packageDir`'s package.json names (none for most packages). */
export async function bundleEntries(packageDir) {
  const manifest = JSON.parse(await readFile(join(packageDir, "package.json"), "utf8"));
  return manifest.tessera?.bundle ?? [];
}

/**
 * Bundles `packageDir`'s entries into its `dist/bundled`; returns the number of files written.
 * @param {string} packageDir
 */
export async function bundlePackage(packageDir) {
  const entries = await bundleEntries(packageDir);
  if (entries.length === 0) return 0;
  const { build } = await import("esbuild");
  const outdir = join(packageDir, BUNDLED_DIR);
  const entryFiles = new Set(entries.map((entry) => resolve(packageDir, entry)));
  await rm(outdir, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: packageDir,
    entryPoints: entries,
    outdir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    external,
    metafile: true,
    sourcemap: "linked",
    logLevel: "warning",
    // CommonJS packages inside an ES module bundle still call require() for Node's own modules.
    banner: { js: 'import { createRequire as createRequireOfBundle } from "node:module"; const require = createRequireOfBundle(import.meta.url);' },
    plugins: [ownImportMetaUrl(outdir, entryFiles)],
  });
  const root = resolve(packageDir, "../..");
  const inputs = Object.keys(result.metafile.inputs)
    .map((input) => resolve(packageDir, input))
    .filter((input) => !input.split(sep).includes("node_modules"))
    .map((input) => relative(root, input));
  await writeFile(join(outdir, BUNDLE_INPUTS), `${JSON.stringify(inputs, null, 1)}\n`);
  return Object.keys(result.metafile.outputs).length;
}

/** Gives each workspace module (entries excepted) the `import.meta.url` of its source file, relative to the bundle's folder. */
function ownImportMetaUrl(outdir, entryFiles) {
  return {
    name: "own-import-meta-url",
    setup(build) {
      build.onLoad({ filter: /\.[cm]?[jt]s$/ }, async (args) => {
        if (args.path.split(sep).includes("node_modules") || entryFiles.has(args.path)) return undefined;
        const source = await readFile(args.path, "utf8");
        if (!source.includes("import.meta.url")) return undefined;
        const fromBundle = relative(outdir, args.path).split(sep).join("/");
        const contents = source.replaceAll("import.meta.url", `new URL(${JSON.stringify(fromBundle)}, import.meta.url).href`);
        return { contents, loader: args.path.endsWith(".ts") ? "ts" : "js", resolveDir: dirname(args.path) };
      });
    },
  };
}
