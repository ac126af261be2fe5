// Which CPUs a process (every thread of it) may run on, through util-linux's taskset. The benchmarks that stand for
// several machines on one use it to keep the database's machines and the services' apart: each process started after
// the call inherits its parent's set.
import { execFileSync } from "node:child_process";
import { availableParallelism } from "node:os";

/** Whether this machine can keep two sides apart: two CPUs or more, and taskset. */
export function canSeparateCpus(): boolean {
  if (availableParallelism() < 2) return false;
  try {
    execFileSync("taskset", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Lets every thread of `pid` run on `cpus` alone (numbers from 0). */
export function pinToCpus(pid: number, cpus: readonly number[]): void {
  execFileSync("taskset", ["--all-tasks", "--cpu-list", "--pid", cpus.join(","), String(pid)], { stdio: "ignore" });
}
