// Side-by-side benchmark of @tessera/endpoint (built dist) and @octokit/endpoint 11.0.5:
// operations per second on four cases in alternating rounds, then browser bundle sizes.
// Exits non-zero when either target is missed: speed (at least 3x theirs on every case)
// or size (our minified + gzipped browser module smaller than theirs).
// Run: node --import tsx bench/endpoint/run.ts   (or: npm run bench -- endpoint)
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { bundledPackageSize, fileSize } from "./bundle-size.js";
import { CASES, type EndpointLike } from "./cases.js";
import { median, operationsPerSecond } from "./measure.js";

const ROUNDS = 10;
const ROUND_MILLISECONDS = 200;
const WARM_UP_MILLISECONDS = 300;
const TARGET_SPEED_RATIO = 3;

const root = fileURLToPath(new URL("../../", import.meta.url));

const build = spawnSync("npm", ["run", "build", "--workspace", "packages/endpoint"], { cwd: root, stdio: "ignore" });
if (build.status !== 0) {
  console.error("bench/endpoint: building packages/endpoint failed; run `npm run build -w packages/endpoint` to see why");
  process.exit(1);
}

const ours = (await import("@tessera/endpoint")).endpoint as unknown as EndpointLike;
const octokit = (await import("@octokit/endpoint")).endpoint;
const theirs = octokit.defaults((ours as unknown as { DEFAULTS: Record<string, unknown> }).DEFAULTS) as unknown as EndpointLike;

console.log(`node ${process.version}, ${ROUNDS} alternating rounds of ${ROUND_MILLISECONDS} ms per library and case, median shown\n`);

let missed = 0;
const rows: string[][] = [["case", "ours ops/s", "theirs ops/s", "ratio", "same result"]];
for (const benchCase of CASES) {
  const ourCall = benchCase.prepare(ours);
  const theirCall = benchCase.prepare(theirs);
  const sameResult = JSON.stringify(ourCall()) === JSON.stringify(theirCall());
  operationsPerSecond(ourCall, WARM_UP_MILLISECONDS);
  operationsPerSecond(theirCall, WARM_UP_MILLISECONDS);
  const ourRounds: number[] = [];
  const theirRounds: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      ourRounds.push(operationsPerSecond(ourCall, ROUND_MILLISECONDS));
      theirRounds.push(operationsPerSecond(theirCall, ROUND_MILLISECONDS));
    } else {
      theirRounds.push(operationsPerSecond(theirCall, ROUND_MILLISECONDS));
      ourRounds.push(operationsPerSecond(ourCall, ROUND_MILLISECONDS));
    }
  }
  const ourSpeed = median(ourRounds);
  const theirSpeed = median(theirRounds);
  const ratio = ourSpeed / theirSpeed;
  if (ratio < TARGET_SPEED_RATIO) missed++;
  rows.push([benchCase.name, Math.round(ourSpeed).toLocaleString("en"), Math.round(theirSpeed).toLocaleString("en"), `${ratio.toFixed(2)}x`, sameResult ? "yes" : "no"]);
}

const ourSize = fileSize(`${root}packages/endpoint/dist/browser/endpoint.browser.min.js`);
const theirSize = await bundledPackageSize("@octokit/endpoint", root);
rows.push(["browser bundle, minified (bytes)", ourSize.minified.toLocaleString("en"), theirSize.minified.toLocaleString("en"), `${(ourSize.minified / theirSize.minified).toFixed(2)}x`, ""]);
rows.push(["browser bundle, minified + gzip -9 (bytes)", ourSize.gzipped.toLocaleString("en"), theirSize.gzipped.toLocaleString("en"), `${(ourSize.gzipped / theirSize.gzipped).toFixed(2)}x`, ""]);

const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? "").length)));
for (const row of rows) console.log(row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join("  "));

const sizeMet = ourSize.gzipped < theirSize.gzipped;

console.log(
  `\nspeed target (ours >= ${TARGET_SPEED_RATIO}x theirs on every case): ${missed === 0 ? "met" : `MISSED on ${missed} case(s)`}`,
);
console.log(
  `size target (ours smaller than theirs, minified + gzip): ${sizeMet ? "met" : "MISSED"} (${ourSize.gzipped.toLocaleString("en")} vs ${theirSize.gzipped.toLocaleString("en")} bytes)`,
);
console.log("sizes: ours is dist/browser/endpoint.browser.min.js (tsdown/rolldown, minified); theirs is @octokit/endpoint with its dependencies bundled by rolldown, minified");
process.exit(missed === 0 && sizeMet ? 0 : 1);
