import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
export { freePort } from "@tessera/db/testing";

/** The repository root: services start from there, as `npm start` starts them. */
export const repositoryRoot = fileURLToPath(new URL("../../../", import.meta.url));

/** A service running as its own Node process. */
export interface ServiceProcess {
  name: string;
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** What it printed so far (stdout and stderr), for failure messages. */
  output(): string;
  /** SIGTERM, then waits for the exit (SIGKILL if it does not end within `graceMs`). */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Starts `node --import tsx <entry>` from the repository root with `env`
 * (added to this process's environment) and waits until `readyPath` answers
 * 2xx on `port`. Throws with the process's output if it exits or is not
 * ready within `timeoutMs`.
 */
export async function startServiceProcess(options: {
  name: string;
  entry: string;
  port: number;
  env: Record<string, string>;
  readyPath: string;
  timeoutMs?: number;
}): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", options.entry], {
    cwd: repositoryRoot,
    env: { ...process.env, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let printed = "";
  const keep = (chunk: Buffer) => {
    printed = (printed + chunk.toString("utf8")).slice(-20_000);
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = `http://127.0.0.1:${options.port}`;
  const service: ServiceProcess = {
    name: options.name,
    url,
    output: () => printed,
    stop: (graceMs = 10_000) => stopChild(child, exited, graceMs),
  };
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${options.name} exited before it was ready (${child.signalCode ?? `code ${child.exitCode}`}):\n${printed}`);
    }
    try {
      const response = await fetch(`${url}${options.readyPath}`);
      await response.arrayBuffer();
      if (response.ok) return service;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await service.stop(1000);
      throw new Error(`${options.name} was not ready on ${url} in time:\n${printed}`);
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
