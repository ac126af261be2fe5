// A vitest global set-up for the suites that start the system as shipped: builds again each package
// whose sources changed since its last build (as npm start does), so that a test never runs an old
// build. Under `npm test` the build has just run, and this finds nothing to do.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
// @ts-expect-error -- a script of plain JavaScript, without type declarations
import { needsBuild } from "../../../scripts/build-package.mjs";
import { BUILT_PACKAGES } from "../../../scripts/start/shipped.mjs";
import { repositoryRoot } from "./shipped.js";

const isStale = needsBuild as (packageDir: string) => Promise<boolean>;

export default async function buildWhatChanged(): Promise<void> {
  for (const folder of BUILT_PACKAGES) {
    const packageDir = join(repositoryRoot, folder);
    if (!(await isStale(packageDir))) continue;
    const build = spawnSync(process.execPath, [join(repositoryRoot, "scripts/build-package.mjs"), packageDir], { stdio: ["ignore", "ignore", "inherit"] });
    if (build.status !== 0) throw new Error(`building ${folder} failed (exit code ${build.status}); run \`npm run build\` to see why`);
  }
}
