import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const packageDirectory = fileURLToPath(new URL("../../", import.meta.url));

function newestModification(directory: string): number {
  let newest = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestModification(path) : statSync(path).mtimeMs);
  }
  return newest;
}

function buildIsCurrent(): boolean {
  const built = join(packageDirectory, "dist", "index.mjs");
  if (!existsSync(built)) return false;
  const sources = Math.max(
    newestModification(join(packageDirectory, "src")),
    statSync(join(packageDirectory, "package.json")).mtimeMs,
    statSync(join(packageDirectory, "tsdown.config.ts")).mtimeMs,
  );
  return statSync(built).mtimeMs >= sources;
}

/** The packaging and README tests use the built package: build it when it is missing or older than the source. */
export default function setup(): void {
  if (buildIsCurrent()) return;
  execFileSync("npm", ["run", "build"], { cwd: packageDirectory, stdio: "ignore" });
}
