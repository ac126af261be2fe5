// The Node.js options npm start's own process runs under: package.json's "start" script passes
// them, and scripts/start.mjs run without them runs itself again with them.
//
// - --conditions=tessera-built: the workspace packages resolve to their built dist/ (see their
//   package.json "exports"), since the example application runs inside this process;
// - --max-semi-space-size=2: a young generation of at most 2 MB per half instead of 16, which a
//   process fills while it loads its modules and then holds as resident memory for good.
export const launcherNodeOptions = ["--conditions=tessera-built", "--max-semi-space-size=2"];

/** Whether this process runs with every one of them. */
export function hasLauncherOptions(execArgv = process.execArgv) {
  return launcherNodeOptions.every((option) => execArgv.includes(option));
}
