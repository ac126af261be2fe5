import { fork, type ChildProcess } from "node:child_process";

/** One side of a side-by-side bench, running in a process of its own. */
export interface ForkedSide<T> {
  child: ChildProcess;
  /** What the side sent once it was ready. */
  prepared: T;
}

/**
 * Forks `script` (TypeScript, through tsx) with `args` and waits for its first
 * IPC message, which says it is ready; rejects if it exits before that.
 * With BENCH_CPU_PROFILE_DIR set, each side writes a CPU profile there when it stops.
 */
export function forkSide<T>(script: URL, args: string[]): Promise<ForkedSide<T>> {
  const profile = process.env.BENCH_CPU_PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROFILE_DIR}`] : [];
  const child = fork(script.pathname, args, { execArgv: ["--import", "tsx", ...profile], stdio: ["ignore", "ignore", "inherit", "ipc"] });
  return new Promise((resolve, reject) => {
    child.once("message", (prepared) => resolve({ child, prepared: prepared as T }));
    child.once("exit", (code) => reject(new Error(`${args.join(" ")} exited with ${String(code)} before it was ready`)));
  });
}

/** Asks a forked side to stop and waits until its process has exited. */
export function stopSide(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.send("stop");
  });
}
