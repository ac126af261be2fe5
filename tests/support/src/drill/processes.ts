// The cluster's processes: each started detached in a process group of its own, its output appended to a log
// file, and killed (with everything it started) when the cluster stops or the test process exits.
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync, readdirSync, readFileSync } from "node:fs";

/** The user a process runs as (PostgreSQL refuses to run as root). */
export interface RunAs {
  uid: number;
  gid: number;
}

export interface LoggedProcess {
  name: string;
  pid: number;
  logFile: string;
  /** Resolves once the process has exited, with its exit code or the signal that ended it. */
  exited: Promise<string>;
  hasExited(): boolean;
}

/** Root pids of every process started here and not yet stopped: what the exit handler kills. */
const running = new Set<number>();
let exitHandlerInstalled = false;

/** Starts `command` in a process group of its own, stdout and stderr appended to `logFile`. */
export function startLogged(
  name: string,
  command: string,
  args: string[],
  options: { logFile: string; cwd: string; env: NodeJS.ProcessEnv; runAs?: RunAs | undefined },
): LoggedProcess {
  installExitHandler();
  const log = openSync(options.logFile, "a");
  let child: ChildProcess;
  try {
    child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ["ignore", log, log],
      ...(options.runAs ?? {}),
    });
  } finally {
    closeSync(log);
  }
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${name}: ${command} did not start`);
  running.add(pid);
  let ended = false;
  const exited = new Promise<string>((resolve) => {
    child.once("exit", (code, signal) => {
      ended = true;
      running.delete(pid);
      resolve(signal ?? `exit code ${code}`);
    });
    child.once("error", (error) => {
      ended = true;
      running.delete(pid);
      resolve(`failed to start: ${error.message}`);
    });
  });
  child.unref();
  return { name, pid, logFile: options.logFile, exited, hasExited: () => ended };
}

/**
 * SIGKILLs every process below `root` (found through /proc, since PostgreSQL's postmaster and each of its
 * children start sessions of their own), and `root`'s process group too unless `keepRoot`. Returns how many
 * processes it signalled.
 */
export function killTree(root: number, options: { keepRoot?: boolean } = {}): number {
  const pids = descendantsOf(root);
  for (const pid of pids) signal(pid);
  if (!options.keepRoot) signal(-root);
  return pids.length + (options.keepRoot ? 0 : 1);
}

/** Every live process below `root`, children before grandchildren. */
export function descendantsOf(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const parent = parentOf(Number(entry));
    if (parent === null) continue;
    children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
  }
  const found: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** The command line of a live process, or null once it is gone. */
export function commandLineOf(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
  } catch {
    return null;
  }
}

/** The last `lines` lines of a log file, indented under its name, for an error message. */
export function logTail(file: string, lines = 25): string {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    return `--- ${file}: ${(error as Error).message}`;
  }
  const tail = text.trimEnd().split("\n").slice(-lines);
  return [`--- last ${tail.length} lines of ${file}`, ...tail.map((line) => `    ${line}`)].join("\n");
}

function parentOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // A zombie has already exited: nothing to kill, nothing below it.
    if (fields[0] === "Z") return null;
    return Number(fields[1]);
  } catch {
    return null;
  }
}

/** Sends `name` to each process, skipping those already gone. */
export function signalAll(pids: number[], name: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, name);
    } catch {
      // Already gone.
    }
  }
}

function signal(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

/** Kills whatever is still running when the test process exits, so that no cluster outlives its test. */
function installExitHandler(): void {
  if (exitHandlerInstalled) return;
  exitHandlerInstalled = true;
  process.once("exit", () => {
    for (const pid of running) killTree(pid);
  });
}
