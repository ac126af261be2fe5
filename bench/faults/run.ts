// The database fault run of tests/faults with its figures as a table:
// DATABASE_URL=postgres://… npm run bench -- faults   (FAULT_CUTS=n for another number of cuts; default 10)
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

if (!process.env["DATABASE_URL"]) {
  console.log("bench/faults: skipped, DATABASE_URL is not set (it needs a PostgreSQL server)");
  process.exit(0);
}
const root = fileURLToPath(new URL("../../", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "tessera-fault-run-"));
const reportFile = join(dir, "figures.json");
const run = spawnSync(process.execPath, [join(root, "node_modules/vitest/vitest.mjs"), "run", "--project", "faults"], {
  cwd: root,
  env: { ...process.env, FAULT_REPORT_FILE: reportFile },
  stdio: ["ignore", "inherit", "inherit"],
});
let figures: Record<string, unknown>;
try {
  figures = JSON.parse(readFileSync(reportFile, "utf8")) as Record<string, unknown>;
} catch {
  console.error("bench/faults: the fault run wrote no figures");
  process.exit(1);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const exits = figures["processExits"] as string[];
const rows: [string, unknown][] = [
  ["connection cuts under load", `${String(figures["cuts"])} (${String(figures["connectionsCut"])} connections)`],
  ["refusal (until every worker and job met it, at least 3 s)", `${String(figures["refusalMs"])} ms`],
  ["pg_terminate_backend rounds", `${String(figures["terminations"])} (${String(figures["backendsTerminated"])} backends)`],
  ["stall (until every probe was answered)", `${String(figures["stalledForMs"])} ms`],
  ["requests", figures["requests"]],
  ["answered 503", figures["answered503"]],
  ["answered 500", figures["answered500"]],
  ["other 5xx or no answer", (figures["otherServerErrors"] as string[]).join(", ") || 0],
  ["process exits", exits.length === 0 ? 0 : exits.join(", ")],
  ["worker outage log lines", JSON.stringify(figures["outageLogLines"])],
  ["ready after the refusal ended", `${String(figures["readyAfterRefusalMs"])} ms`],
  ["ready after the stall ended", `${String(figures["readyAfterStallMs"])} ms`],
  ["ready after a cut (worst)", `${String(figures["readyAfterCutMsMax"])} ms`],
  ["ready after pg_terminate_backend (worst)", `${String(figures["readyAfterTerminationMsMax"])} ms`],
];
const width = Math.max(...rows.map(([name]) => name.length));
console.log("\n| figure | value |\n|---|---|");
for (const [name, value] of rows) console.log(`| ${name.padEnd(width)} | ${String(value)} |`);
process.exit(run.status ?? 1);
