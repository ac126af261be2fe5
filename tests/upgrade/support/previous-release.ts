// The release before this one, as an operator has it: checked out from the history with `git worktree add` into a
// folder of its own (kept between runs, one per commit), installed with `npm ci` and built by its own `prepare`
// script, as shipped. Its built entry points sit at the same paths as this tree's (scripts/start/shipped.mjs).
import { execFile, spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { repositoryRoot } from "@tessera/test-support";

const run = promisify(execFile);

export interface Release {
  version: string;
  commit: string;
}

/** The previous release ready to run: its version, commit and the folder it is built in. */
export interface PreparedRelease extends Release {
  root: string;
}

/** This tree's version (`0.3.0-dev` between 0.2.0 and 0.3.0). */
export function currentVersion(): string {
  return (JSON.parse(readFileSync(join(repositoryRoot, "package.json"), "utf8")) as { version: string }).version;
}

/**
 * The newest release in releases.json older than this tree (whose version is not this tree's), with its commit
 * present in the clone; otherwise why there is none (no earlier release, or a shallow clone without its commit).
 */
export async function findPreviousRelease(): Promise<Release | { missing: string }> {
  const releases = JSON.parse(readFileSync(join(repositoryRoot, "releases.json"), "utf8")) as Release[];
  const current = currentVersion();
  const previous = releases.filter((release) => release.version !== current).at(-1);
  if (previous === undefined) return { missing: `releases.json lists no release before ${current}` };
  try {
    await run("git", ["cat-file", "-e", `${previous.commit}^{commit}`], { cwd: repositoryRoot });
  } catch {
    return { missing: `release ${previous.version}'s commit ${previous.commit} is not in this clone (a shallow clone? fetch the history: git fetch --unshallow)` };
  }
  return previous;
}

/** Runs `command` in `cwd`, its output to a log file; throws with the log's end when it fails. */
function runLogged(command: string, args: string[], cwd: string, logFile: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"], env: process.env });
    let output = "";
    const keep = (chunk: Buffer) => (output += chunk.toString("utf8"));
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    child.once("error", reject);
    child.once("close", (code) => {
      writeFileSync(logFile, output);
      if (code === 0) resolve();
      else reject(new Error(`${command} ${args.join(" ")} in ${cwd} failed (${code}):\n${output.slice(-4000)}`));
    });
  });
}

/**
 * The folder `release` is installed and built in: `<tmpdir>/tessera-release-<commit>`, made on the first call
 * (`git worktree add --detach`, then `npm ci --no-audit --no-fund`, whose `prepare` builds every package) and kept
 * for the next runs; a folder left half-made by a run that stopped is made again.
 */
export async function prepareRelease(release: Release): Promise<PreparedRelease> {
  const root = join(tmpdir(), `tessera-release-${release.commit}`);
  const ready = join(root, ".tessera-release-ready");
  if (existsSync(ready)) return { ...release, root };
  if (existsSync(root)) {
    await run("git", ["worktree", "remove", "--force", root], { cwd: repositoryRoot }).catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  }
  // A folder removed behind git's back (a cleaned tmpdir) leaves its worktree registered: forget it first.
  await run("git", ["worktree", "prune"], { cwd: repositoryRoot });
  await run("git", ["worktree", "add", "--detach", root, release.commit], { cwd: repositoryRoot });
  await runLogged("npm", ["ci", "--no-audit", "--no-fund"], root, `${root}.npm-ci.log`);
  writeFileSync(ready, `${release.version} ${release.commit}\n`);
  return { ...release, root };
}
