// Runs every benchmark under bench/ in turn, or the ones named: `npm run bench -- endpoint`.
import { spawnSync } from "node:child_process";
import { readdirSync, existsSync } from "node:fs";
import { join } from "node:path";

const root = new URL("../bench/", import.meta.url).pathname;
const wanted = process.argv.slice(2);
const names = readdirSync(root, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .filter((name) => wanted.length === 0 || wanted.includes(name));

let failed = false;
for (const name of names) {
  const script = ["run.ts", "run.mjs"].map((file) => join(root, name, file)).find((file) => existsSync(file));
  if (!script) continue;
  console.log(`\n== bench/${name}`);
  const result = spawnSync(process.execPath, ["--import", "tsx", script], { stdio: "inherit" });
  if (result.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
