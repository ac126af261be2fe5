// Builds a workspace package's JavaScript: every `src/**/*.ts` file becomes `dist/**/*.js`
// (types removed, nothing else changed: the sources are written for Node's ES modules already),
// and every other file of `src` (Sign-on's views) is copied beside them. Type checking is
// `npm run typecheck`'s job, not this one's. A service's entry points are then bundled into
// `dist/bundled/` (scripts/bundle-package.mjs), which is what `npm start` runs.
//
//   node scripts/build-package.mjs [<package folder>] [--if-changed]
//     (default: the working directory, as `npm run build` runs it; with --if-changed, only when
//     its sources, or those bundled with it, changed since its last build: a package's `prestart`)
//
// Services run from `dist` under Node's `--conditions=tessera-built`, which makes the
// workspace packages' `exports` point at their `dist` too (see scripts/start.mjs); tests,
// tsx and the type checker keep reading `src`.
import { copyFile, mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { bundleEntries, bundleInputs, bundlePackage } from "./bundle-package.mjs";

/** Written last into `dist`: its time is the build's. */
export const BUILT_STAMP = ".built";

/** TypeScript's compiler options for one file, with `ts` the compiler (loaded only for a build: npm start's own memory stays small). */
function compilerOptions(ts) {
  return {
    target: ts.ScriptTarget.ES2022,
    // Every package is "type": "module": ES modules out, imports as written (with their .js endings).
    module: ts.ModuleKind.ES2022,
    verbatimModuleSyntax: true,
    isolatedModules: true,
    sourceMap: true,
  };
}

async function* filesOf(dir) {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* filesOf(path);
    else yield path;
  }
}

/**
 * Builds `packageDir` (its `src` into `dist`). Returns the number of files written.
 * @param {string} packageDir
 */
export async function buildPackage(packageDir) {
  const { default: ts } = await import("typescript");
  const src = join(packageDir, "src");
  const dist = join(packageDir, "dist");
  await rm(dist, { recursive: true, force: true });
  let written = 0;
  for await (const file of filesOf(src)) {
    const target = join(dist, relative(src, file));
    await mkdir(dirname(target), { recursive: true });
    if (file.endsWith(".ts") && !file.endsWith(".d.ts")) {
      const output = ts.transpileModule(await readFile(file, "utf8"), { compilerOptions: compilerOptions(ts), fileName: file });
      const js = target.replace(/\.ts$/, ".js");
      await writeFile(js, output.outputText.replace(/\/\/# sourceMappingURL=.*$/m, `//# sourceMappingURL=${js.split("/").at(-1)}.map`));
      if (output.sourceMapText !== undefined) await writeFile(`${js}.map`, output.sourceMapText);
    } else if (!file.endsWith(".d.ts")) {
      await copyFile(file, target);
    }
    written += 1;
  }
  written += await bundlePackage(packageDir);
  await writeFile(join(dist, BUILT_STAMP), `${new Date().toISOString()}\n`);
  return written;
}

/**
 * Whether `packageDir`'s `dist` is missing or older than a file of its `src`, or, for a package
 * with bundles, than a workspace file that they were made from.
 * @param {string} packageDir
 */
export async function needsBuild(packageDir) {
  let built;
  try {
    built = (await stat(join(packageDir, "dist", BUILT_STAMP))).mtimeMs;
  } catch {
    return true;
  }
  for await (const file of filesOf(join(packageDir, "src"))) {
    if ((await stat(file)).mtimeMs > built) return true;
  }
  // A bundle also holds other workspace packages' sources: one of them changed, or went.
  if ((await bundleEntries(packageDir)).length === 0) return false;
  const inputs = await bundleInputs(packageDir);
  if (inputs.length === 0) return true;
  for (const file of inputs) {
    try {
      if ((await stat(file)).mtimeMs > built) return true;
    } catch {
      return true;
    }
  }
  return false;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const args = process.argv.slice(2);
  const ifChanged = args.includes("--if-changed");
  const packageDir = resolve(args.find((arg) => !arg.startsWith("--")) ?? process.cwd());
  if (!ifChanged || (await needsBuild(packageDir))) {
    const files = await buildPackage(packageDir);
    console.log(`built ${relative(process.cwd(), join(packageDir, "dist")) || "dist"}: ${files} files`);
  }
}
