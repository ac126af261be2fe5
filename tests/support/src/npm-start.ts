import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The script `npm start` runs. */
export const startScript = fileURLToPath(new URL("../../../scripts/start.mjs", import.meta.url));
/** What `npm start` runs (package.json: `exec node <options> scripts/start.mjs`). */
export const startCommand = (JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as { scripts: { start: string } }).scripts.start;
/** Node.js's options in it, before the script. */
export const startOptions = startCommand.split(" ").filter((word) => word.startsWith("--"));

/** A run of the start script. */
export interface StartRun {
  child: ChildProcess;
  /** Everything it printed so far (stdout and stderr), with `\r\n` as `\n`. */
  output(): string;
  /** Resolves with how it ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves once `text` was printed; rejects when it ends first or `timeoutMs` passes. */
  printed(text: string, timeoutMs?: number): Promise<string>;
}

/**
 * Runs `node <options> scripts/start.mjs` in `cwd` as `npm start` does (what a person who typed
 * `npm start` there gets: the built services, the embedded database in `cwd/data`), in a
 * process group of its own, with `env` added to this environment
 * (DATABASE_URL cleared: the embedded database). With `terminal`, it runs
 * under `script`, on a pseudo-terminal; with `underNpm`, as the child of a
 * stand-in for npm (`child` is then that); with `withoutOptions`, as `node
 * scripts/start.mjs`.
 */
export function runStart(
  cwd: string,
  env: Record<string, string>,
  options: { args?: string[]; terminal?: boolean; underNpm?: boolean; withoutOptions?: boolean } = {},
): StartRun {
  const args = [...(options.withoutOptions ? [] : startOptions), startScript, ...(options.args ?? [])];
  const inherited: Record<string, string | undefined> = { ...process.env };
  // What this test process may have set must not change the script's behaviour.
  for (const name of ["PORT", "HOST", "SIGNON_PORT", "COMPLETION_PORT", "EDITORIAL_APP_PORT", "TESSERA_LOG_FORMAT", "npm_lifecycle_event"]) delete inherited[name];
  const fullEnv = { ...inherited, DATABASE_URL: "", ...env };
  // Under npm: a stand-in for npm, as `npm start` runs the script (same environment variable, the script its child).
  const standInNpm = `require("node:child_process").spawn(process.execPath, ${JSON.stringify(args)}, { stdio: "inherit" }); setInterval(() => {}, 60000);`;
  const child = options.underNpm
    ? spawn(process.execPath, ["-e", standInNpm], { cwd, env: { ...fullEnv, npm_lifecycle_event: "start" }, stdio: ["ignore", "pipe", "pipe"], detached: true })
    : options.terminal
    ? spawn("script", ["-qefc", ["exec", process.execPath, ...args].map(shellQuote).join(" "), "/dev/null"], {
        cwd,
        env: fullEnv,
        stdio: ["pipe", "pipe", "pipe"],
        detached: true,
      })
    : spawn(process.execPath, args, { cwd, env: fullEnv, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let text = "";
  const waiters = new Set<() => void>();
  const keep = (chunk: Buffer) => {
    text += chunk.toString("utf8").replace(/\r\n/g, "\n");
    for (const waiter of waiters) waiter();
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => {
      resolve({ code, signal });
      for (const waiter of waiters) waiter();
    }),
  );
  return {
    child,
    output: () => text,
    exited,
    printed: (wanted, timeoutMs = 150_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => done(new Error(`"${wanted}" not printed within ${timeoutMs} ms:\n${text.slice(-4000)}`)), timeoutMs);
        const check = () => {
          if (text.includes(wanted)) done(null);
          else if (child.exitCode !== null || child.signalCode !== null) done(new Error(`ended before printing "${wanted}":\n${text.slice(-4000)}`));
        };
        const done = (error: Error | null) => {
          clearTimeout(timer);
          waiters.delete(check);
          if (error) reject(error);
          else resolve(text);
        };
        waiters.add(check);
        check();
      }),
  };
}

function shellQuote(word: string): string {
  return `'${word.replace(/'/g, "'\\''")}'`;
}

/** The processes whose parent is `pid` (Linux: from /proc). */
export function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // The command name (field 2) may hold spaces; the parent id is the second field after it.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) === pid) children.push(Number(entry));
    } catch {
      // ended meanwhile
    }
  }
  return children;
}

/** Whether a process runs (a zombie counts as ended). */
export function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** Waits until none of `pids` runs; returns those still running after `timeoutMs`. */
export async function whenEnded(pids: readonly number[], timeoutMs = 60_000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const running = pids.filter(isRunning);
    if (running.length === 0 || Date.now() > deadline) return running;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Whether something accepts connections on 127.0.0.1:`port`. */
export async function answers(port: number): Promise<boolean> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/healthcheck/live`);
    await response.arrayBuffer();
    return true;
  } catch {
    return false;
  }
}
