// Bundles a service's entry points (package.json "tessera": { "bundle": ["src/server.ts", …] })
// into `dist/bundled/`: each entry with the workspace's own modules it imports (its package's
// and the `@tessera/*` packages') as one file, and what is imported only on demand (`import()`)
// as chunks beside it. `npm start` runs these files.
//
// Packages from npm are never bundled: an import of one stays an import, which Node resolves
// from node_modules exactly as it does for the unbundled sources. A bundler that converts a
// package (CommonJS into ES modules, `exports` conditions of its own) can change what the
// package exports: a named export that Node finds may be missing from the bundle's copy, and
// only the bundle fails. Keeping them out means a bundle means what its sources mean.
//
// Every module keeps its own `import.meta.url` (rewritten to the source file it came from,
// relative to the bundle, so the checkout can move), so files found beside the sources (views,
// migrations) are found as before. An entry keeps the bundle's, so `import.meta.url ===
// process.argv[1]` still tells that it was run.
//
// `dist/bundled/inputs.json` lists the workspace files a bundle was made from: needsBuild
// (scripts/build-package.mjs) builds again when one of them changed.
import { readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";

/** The workspace's own packages, bundled; every other bare import is an npm package, left to Node. */
const WORKSPACE_SCOPE = "@tessera/";

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
    metafile: true,
    sourcemap: "linked",
    logLevel: "warning",
    plugins: [npmPackagesExternal(), ownImportMetaUrl(outdir, entryFiles)],
  });
  const root = resolve(packageDir, "../..");
  const inputs = Object.keys(result.metafile.inputs)
    .map((input) => resolve(packageDir, input))
    .filter((input) => !input.split(sep).includes("node_modules"))
    .map((input) => relative(root, input));
  await writeFile(join(outdir, BUNDLE_INPUTS), `${JSON.stringify(inputs, null, 1)}\n`);
  return Object.keys(result.metafile.outputs).length;
}

/** Leaves every import of an npm package (a bare specifier outside the workspace's scope) to Node at run time. */
function npmPackagesExternal() {
  return {
    name: "npm-packages-external",
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.path.startsWith(WORKSPACE_SCOPE)) return undefined;
        return { path: args.path, external: true };
      });
    },
  };
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
