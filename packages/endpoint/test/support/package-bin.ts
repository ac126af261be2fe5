import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const require = createRequire(import.meta.url);

/** Directory of an installed package, found the way Node looks up `node_modules` (some packages do not export package.json). */
function packageDirectory(packageName: string): string {
  for (const nodeModules of require.resolve.paths(packageName) ?? []) {
    const directory = join(nodeModules, packageName);
    if (existsSync(join(directory, "package.json"))) return directory;
  }
  throw new Error(`${packageName} is not installed`);
}

/** Path of the command-line script `command` of an installed package. */
export function packageBin(packageName: string, command: string): string {
  const directory = packageDirectory(packageName);
  const manifest = JSON.parse(readFileSync(join(directory, "package.json"), "utf8")) as { bin: Record<string, string> };
  const script = manifest.bin[command];
  if (script === undefined) throw new Error(`${packageName} has no ${command} command`);
  return join(directory, script);
}
