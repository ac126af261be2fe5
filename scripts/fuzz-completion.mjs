// A larger fuzz run of the Completion API than `npm test` makes: `node scripts/fuzz-completion.mjs [RUNS] [SEED]`.
// Runs packages/completion/test/routes/fuzz.test.ts with FUZZ_RUNS (default 5000) and FUZZ_SEED (default: random),
// on the embedded database, or on PostgreSQL when DATABASE_URL is set, then prints the requests sent by status class
// and by route (every route the app registers: the API, the health checks, /metrics, the OpenAPI document and
// Sign-on's push receivers), and the most frequent refusals. Exits non-zero when the test failed (a 5xx, a refusal
// without its route's documented body or that changed stored data, aggregates that differ from a recomputation, or a
// registered route the fuzz test cannot fill); the seed printed replays the run. FUZZ_CONCURRENCY=4 sends each run's
// requests 4 at a time, with the stale worker running (see the test).
import { spawnSync } from "node:child_process";
import { performance } from "node:perf_hooks";
import { randomInt } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const runs = Number(process.argv[2] ?? process.env.FUZZ_RUNS ?? 5000);
const seed = Number(process.argv[3] ?? process.env.FUZZ_SEED ?? randomInt(2 ** 31 - 1));
if (!Number.isSafeInteger(runs) || runs < 1 || !Number.isSafeInteger(seed)) {
  console.error("Usage: node scripts/fuzz-completion.mjs [RUNS] [SEED] (positive integer runs, integer seed)");
  process.exit(2);
}

const directory = mkdtempSync(join(tmpdir(), "fuzz-completion-"));
const report = join(directory, "report.json");
const test = "packages/completion/test/routes/fuzz.test.ts";
const concurrency = Number(process.env.FUZZ_CONCURRENCY ?? 1);
console.log(`fuzz-completion: ${runs} runs${concurrency > 1 ? `, ${concurrency} requests at a time` : ""}, seed ${seed}, database ${process.env.DATABASE_URL ? "PostgreSQL (DATABASE_URL)" : "embedded"}`);
const started = performance.now();
const result = spawnSync(join(root, "node_modules", ".bin", "vitest"), ["run", "--project", "completion", test], {
  cwd: root,
  stdio: "inherit",
  env: { ...process.env, FUZZ_RUNS: String(runs), FUZZ_SEED: String(seed), FUZZ_REPORT: report },
});
const seconds = (performance.now() - started) / 1000;

if (!existsSync(report)) {
  console.error("fuzz-completion: the test wrote no report (it stopped before the runs began)");
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
  console.log(`  ${route.padEnd(50)} ${Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)).map(([name, count]) => `${name} ${count}`).join(", ")}`);
}
console.log("\nMost frequent refusals:");
for (const [reason, count] of Object.entries(figures.refusals).slice(0, 15)) console.log(`  ${String(count).padStart(6)}  ${reason}`);
if (result.status !== 0) console.log(`\nThe run failed; replay it with: ${concurrency > 1 ? `FUZZ_CONCURRENCY=${concurrency} ` : ""}FUZZ_RUNS=${runs} FUZZ_SEED=${seed} npx vitest run --project completion ${test}`);
process.exit(result.status ?? 1);
