// The services' bundles (scripts/bundle-package.mjs) as Node.js loads them when they run: they hold the
// workspace's own code only, every file of them loads, and every npm package they import, at start-up or
// on demand, is the module Node gives the unbundled sources. A bundler that converted a package could
// change what it exports (a named export missing from its copy) and break only what ships: these checks,
// and the suites that run the services as shipped (tests/browser's journeys sign people in and set their
// passwords through the bundles), make such a break fail CI rather than a user.
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { repositoryRoot } from "@tessera/test-support";
import { describe, expect, it } from "vitest";

/** Each package with bundles: its folder and the entry points it bundles (package.json "tessera": { "bundle" }). */
const bundled = ["packages/signon", "packages/completion", "examples/editorial-app"].map((folder) => {
  const manifest = JSON.parse(readFileSync(join(repositoryRoot, folder, "package.json"), "utf8")) as { tessera: { bundle: string[] } };
  const entries = manifest.tessera.bundle.map((entry) => `${entry.replace(/^src\//, "").replace(/\.ts$/, "")}.js`);
  // The sources' side runs from the package's folder, which resolves packages as its `src` does: a file written
  // into `src` would make a concurrent `npm start` or `npm run migrate` rebuild (and empty) the bundles under other tests.
  return { folder, bundleDir: join(repositoryRoot, folder, "dist", "bundled"), packageDir: join(repositoryRoot, folder), entries };
});

/** The bare specifiers (npm packages and Node's own modules) a bundle's files import, statically or on demand. */
function importedPackages(bundleDir: string): string[] {
  const found = new Set<string>();
  for (const file of readdirSync(bundleDir).filter((name) => name.endsWith(".js"))) {
    const text = readFileSync(join(bundleDir, file), "utf8");
    // `from` as a keyword, not the end of a string such as "from" (a command's option), and a specifier on one line.
    for (const match of text.matchAll(/(?:(?<!["'\w$.])from\s*|\bimport\s*\(\s*|^import\s*)"([^"./\n][^"\n]*)"/gm)) found.add(match[1] as string);
  }
  return [...found].sort();
}

/**
 * Runs `script` as an ES module placed in `dir` (so that it resolves packages as a file there does),
 * under the options the services run with; returns its exit code and output.
 */
function runModuleIn(dir: string, script: string): { status: number | null; output: string } {
  const file = join(dir, `.load-check-${process.pid}.mjs`);
  writeFileSync(file, script);
  try {
    const result = spawnSync(process.execPath, ["--conditions=tessera-built", file], { cwd: repositoryRoot, encoding: "utf8", timeout: 60_000 });
    return { status: result.status, output: `${result.stdout}${result.stderr}` };
  } finally {
    rmSync(file, { force: true });
  }
}

describe.each(bundled)("the bundle of $folder", ({ bundleDir, packageDir, entries }) => {
  it("holds the workspace's own sources, other packages' included, and nothing from node_modules", () => {
    const inputs = JSON.parse(readFileSync(join(bundleDir, "inputs.json"), "utf8")) as string[];
    expect(inputs.length).toBeGreaterThan(0);
    expect(inputs.filter((input) => input.includes("node_modules"))).toEqual([]);
    for (const entry of entries) expect(readdirSync(bundleDir)).toContain(entry);
  });

  it("loads every file that is not an entry point (each chunk, with what it imports) in Node.js", () => {
    const chunks = readdirSync(bundleDir).filter((name) => name.endsWith(".js") && !entries.includes(name));
    expect(chunks.length).toBeGreaterThan(0);
    const script = `for (const chunk of ${JSON.stringify(chunks)}) await import(new URL(chunk, import.meta.url).href);\nconsole.log("loaded");\n`;
    const loaded = runModuleIn(bundleDir, script);
    expect(loaded.output).toContain("loaded");
    expect(loaded.status, loaded.output).toBe(0);
  });

  it("imports each npm package as the module the sources get, with the same exports", () => {
    const packages = importedPackages(bundleDir).filter((name) => !name.startsWith("node:"));
    expect(packages.length).toBeGreaterThan(0);
    // Each package imported from where the bundle is, and from where the sources are: the same file, the same export names.
    const script = `
const packages = ${JSON.stringify(packages)};
const out = {};
for (const name of packages) {
  const module = await import(name);
  out[name] = { url: import.meta.resolve(name), exports: Object.keys(module).sort() };
}
console.log(JSON.stringify(out));
`;
    const fromBundle = runModuleIn(bundleDir, script);
    const fromSources = runModuleIn(packageDir, script);
    expect(fromBundle.status, fromBundle.output).toBe(0);
    expect(fromSources.status, fromSources.output).toBe(0);
    expect(JSON.parse(fromBundle.output)).toEqual(JSON.parse(fromSources.output));
  });
});
