// Applies the migrations of Sign-on and Completion, as their built commands do (the same database settings as the
// services: DATABASE_URL, or the embedded database in ./data):
//
//   npm run migrate                    the migrations the previous release can run against: run before replacing
//                                      instances (each instance applies them at its start too)
//   npm run migrate -- --post-deploy   then the post-deploy ones: only once no instance of the previous release runs
//
// Each service's command runs in a process of its own, Sign-on's first; the first that fails stops the rest, and
// this script exits with its status. docs/operations.md, "Upgrading without downtime", says when to run which.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { needsBuild } from "./build-package.mjs";
import { SHIPPED_ENTRIES, SHIPPED_NODE_OPTIONS } from "./start/shipped.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const options = process.argv.slice(2);
if (options.some((option) => option !== "--post-deploy")) {
  console.error("Usage: npm run migrate [-- --post-deploy]");
  process.exit(2);
}

/** Runs `command` with `args`, output passed through; resolves with its exit status. */
function run(command, args) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: process.cwd(), stdio: "inherit" });
    child.on("exit", (code, signal) => resolve(code ?? (signal === null ? 1 : 128)));
  });
}

for (const folder of ["packages/db", "packages/service-kit", "packages/signon-client", "packages/signon", "packages/completion"]) {
  if (!(await needsBuild(join(root, folder)))) continue;
  console.error(`npm run migrate: building ${folder} (its sources changed since its last build)`);
  const status = await run(process.execPath, [join(root, "scripts/build-package.mjs"), join(root, folder)]);
  if (status !== 0) process.exit(status);
}

for (const entry of [SHIPPED_ENTRIES["signon-cli"], SHIPPED_ENTRIES["completion-cli"]]) {
  const status = await run(process.execPath, [...SHIPPED_NODE_OPTIONS, join(root, entry), "migrate", ...options]);
  if (status !== 0) process.exit(status);
}
