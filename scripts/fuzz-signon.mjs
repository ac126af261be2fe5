// A larger fuzz run of the Sign-on service than `npm test` makes: `node scripts/fuzz-signon.mjs [RUNS] [SEED]`.
// Runs packages/signon/test/http/fuzz.test.ts with FUZZ_RUNS (default 3000) and FUZZ_SEED (default: random),
// on the embedded database, or on PostgreSQL when DATABASE_URL is set, then prints the requests sent by status class
// and by route, and the most frequent refusals. Exits non-zero when the test failed (a 5xx, a refusal in another shape
// than the service's errors, a refusal that changed stored data or wrote audit events other than failures, an audit log
// that disagrees with the stored data, or an administrator who can no longer sign in); the seed printed replays the run.
import { spawnSync } from "node:child_process";
import { performance } from "node:perf_hooks";
import { randomInt } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const runs = Number(process.argv[2] ?? process.env.FUZZ_RUNS ?? 3000);
const seed = Number(process.argv[3] ?? process.env.FUZZ_SEED ?? randomInt(2 ** 31 - 1));
if (!Number.isSafeInteger(runs) || runs < 1 || !Number.isSafeInteger(seed)) {
  console.error("Usage: node scripts/fuzz-signon.mjs [RUNS] [SEED] (positive integer runs, integer seed)");
  process.exit(2);
}

const directory = mkdtempSync(join(tmpdir(), "fuzz-signon-"));
const report = join(directory, "report.json");
const test = "packages/signon/test/http/fuzz.test.ts";
console.log(`fuzz-signon: ${runs} runs, seed ${seed}, database ${process.env.DATABASE_URL ? "PostgreSQL (DATABASE_URL)" : "embedded"}`);
const started = performance.now();
const result = spawnSync(join(root, "node_modules", ".bin", "vitest"), ["run", "--project", "signon", test], {
  cwd: root,
  stdio: "inherit",
  env: { ...process.env, FUZZ_RUNS: String(runs), FUZZ_SEED: String(seed), FUZZ_REPORT: report },
});
const seconds = (performance.now() - started) / 1000;

if (!existsSync(report)) {
  console.error("fuzz-signon: the test wrote no report (it stopped before the runs began)");
  rmSync(directory, { recursive: true, force: true });
  process.exit(result.status === 0 ? 1 : (result.status ?? 1));
}
const figures = JSON.parse(readFileSync(report, "utf8"));
rmSync(directory, { recursive: true, force: true });

const classes = Object.entries(figures.byStatusClass).sort(([a], [b]) => a.localeCompare(b));
console.log(`\nRequests sent: ${figures.requests} in ${seconds.toFixed(1)} s (seed ${figures.seed}, ${figures.runs} runs)`);
console.log(`By status class: ${classes.map(([name, count]) => `${name} ${count}`).join(", ")}; 5xx ${figures.byStatusClass["5xx"] ?? 0}`);
console.log("\nBy route:");
for (const [route, counts] of Object.entries(figures.byRoute)) {
  const total = Object.values(counts).reduce((sum, count) => sum + count, 0);
  console.log(`  ${route.padEnd(46)} ${String(total).padStart(5)}  ${Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)).map(([name, count]) => `${name} ${count}`).join(", ")}`);
}
console.log("\nMost frequent refusals:");
for (const [reason, count] of Object.entries(figures.refusals).slice(0, 15)) console.log(`  ${String(count).padStart(6)}  ${reason}`);
if (result.status !== 0) console.log(`\nThe run failed; replay it with: FUZZ_RUNS=${runs} FUZZ_SEED=${seed} npx vitest run --project signon ${test}`);
process.exit(result.status ?? 1);
