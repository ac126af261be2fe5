import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
export { freePort } from "@tessera/db/testing";

/** The repository root: services start from there, as `npm start` starts them. */
export const repositoryRoot = fileURLToPath(new URL("../../../", import.meta.url));

/** A service running as its own Node process, so that a crash shows as an exit. */
export interface ServiceProcess {
  name: string;
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** The exit code or signal once it has exited, else `null`. */
  exit(): string | null;
  /** What it printed so far (the last 200 kB of stdout and stderr). */
  output(): string;
  /**
   * Every line it printed about the database going away or coming back (a
   * worker's or the pool's `database unavailable (…)` and `database available
   * again`, start-up's `database unavailable at` and `database: reached`),
   * from the start, however much else it printed.
   */
  outageLines(): string[];
  /** SIGTERM, then waits for the exit (SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Starts `node --import tsx <entry>` from the repository root with `env` added
 * to this process's environment, and waits until `readyPath` answers 2xx.
 */
export async function startServiceProcess(options: { name: string; entry: string; port: number; env: Record<string, string>; readyPath: string }): Promise<ServiceProcess> {
  const service = spawnServiceProcess(options);
  await waitUntilReady(service, options.readyPath, 60_000);
  return service;
}

/** Starts `node --import tsx <entry>` from the repository root with `env` added to this process's environment, without waiting for anything. */
export function spawnServiceProcess(options: { name: string; entry: string; port: number; env: Record<string, string> }): ServiceProcess {
  const child = spawn(process.execPath, ["--import", "tsx", options.entry], {
    cwd: repositoryRoot,
    env: { ...process.env, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let printed = "";
  const outageLines: string[] = [];
  const partial = { stdout: "", stderr: "" };
  const keep = (stream: "stdout" | "stderr") => (chunk: Buffer) => {
    const text = chunk.toString("utf8");
    printed = (printed + text).slice(-200_000);
    const lines = (partial[stream] + text).split("\n");
    partial[stream] = lines.pop() ?? "";
    for (const line of lines) if (/database unavailable \(|database available again|database unavailable at |database: reached /.test(line)) outageLines.push(line);
  };
  child.stdout.on("data", keep("stdout"));
  child.stderr.on("data", keep("stderr"));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const exit = () => (child.exitCode !== null ? `code ${child.exitCode}` : child.signalCode);
  return {
    name: options.name,
    url: `http://127.0.0.1:${options.port}`,
    exit,
    output: () => printed,
    outageLines: () => outageLines.slice(),
    stop: (graceMs = 10_000) => stopChild(child, exited, graceMs),
  };
}

/** Polls `readyPath` every 100 ms until it answers 2xx; stops the service and throws if it exits first or after `ms`. */
export async function waitUntilReady(service: ServiceProcess, readyPath: string, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (service.exit() !== null) throw new Error(`${service.name} exited before it was ready (${service.exit()}):\n${service.output()}`);
    try {
      const response = await fetch(`${service.url}${readyPath}`);
      await response.arrayBuffer();
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await service.stop(1000);
      throw new Error(`${service.name} was not ready on ${service.url} in time:\n${service.output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function stopChild(child: ChildProcess, exited: Promise<void>, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Runs `node --import tsx <entry> <args>` from the repository root to its end; returns the exit code and output. */
export function runToExit(options: { entry: string; args: readonly string[]; env: Record<string, string> }): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", options.entry, ...options.args], {
    cwd: repositoryRoot,
    env: { ...process.env, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, output }));
  });
}
