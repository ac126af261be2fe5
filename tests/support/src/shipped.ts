// The system as shipped, for the suites that start it: each service is its built entry point
// (scripts/start/shipped.mjs, what npm start and docs/deployment.md run) in a process of its own,
// under the same Node.js options, configured from the environment as npm start configures it.
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { SHIPPED_ENTRIES, SHIPPED_NODE_OPTIONS } from "../../../scripts/start/shipped.mjs";

/** The repository root: services start from there, as `npm start` starts them. */
export const repositoryRoot = fileURLToPath(new URL("../../../", import.meta.url));

export type ShippedService = "signon" | "completion" | "editorial";
export type ShippedCommand = "signon-cli" | "completion-cli";

/** A service running as its own Node.js process, so that a crash shows as an exit. */
export interface ServiceProcess {
  name: string;
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** The process id. */
  pid: number;
  /** The exit code or signal once it has exited, else `null`. */
  exit(): string | null;
  /** What it printed so far (the last 200 kB of stdout and stderr). */
  output(): string;
  /**
   * Every line it printed about the database going away or coming back (a worker's or the pool's
   * `database unavailable (…)` and `database available again`, start-up's `database unavailable at`
   * and `database: reached`), from the start, however much else it printed.
   */
  outageLines(): string[];
  /** SIGTERM, then waits for the exit (SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<void>;
  /** Sends `signal` (default SIGKILL) and waits for the exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** The port variables of each service, as npm start sets them. */
function portEnv(service: ShippedService, port: number): Record<string, string> {
  return service === "signon" ? { SIGNON_HOST: "127.0.0.1", SIGNON_PORT: String(port) } : { HOST: "127.0.0.1", PORT: String(port) };
}

/**
 * Where a shipped process runs from: this repository, or (`root`) another checkout of it, such as an earlier
 * release's, whose built entry points sit at the same paths.
 */
export interface ShippedRoot {
  root?: string;
}

function nodeArgs(root: string, entry: string, args: readonly string[] = []): string[] {
  return [...SHIPPED_NODE_OPTIONS, join(root, entry), ...args];
}

function childEnv(name: string, env: Record<string, string>): NodeJS.ProcessEnv {
  return { MALLOC_ARENA_MAX: "2", ...process.env, PGAPPNAME: name, ...env };
}

/**
 * Starts `service` as shipped on `port` of 127.0.0.1 with `env` added to this process's environment,
 * and waits until `readyPath` (default `/healthcheck/ready`) answers 2xx.
 */
export async function startShipped(
  service: ShippedService,
  options: ShippedRoot & { port: number; env: Record<string, string>; name?: string; readyPath?: string; timeoutMs?: number },
): Promise<ServiceProcess> {
  const started = spawnShipped(service, options);
  await waitUntilReady(started, options.readyPath ?? "/healthcheck/ready", options.timeoutMs ?? 60_000);
  return started;
}

/** Starts `service` as shipped without waiting for anything. */
export function spawnShipped(service: ShippedService, options: ShippedRoot & { port: number; env: Record<string, string>; name?: string }): ServiceProcess {
  const name = options.name ?? service;
  const root = options.root ?? repositoryRoot;
  const child = spawn(process.execPath, nodeArgs(root, SHIPPED_ENTRIES[service]), {
    cwd: root,
    env: childEnv(name, { ...options.env, ...portEnv(service, options.port) }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  return watch(child, name, options.port);
}

function watch(child: ChildProcess, name: string, port: number): ServiceProcess {
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
  child.stdout?.on("data", keep("stdout"));
  child.stderr?.on("data", keep("stderr"));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const exit = () => (child.exitCode !== null ? `code ${child.exitCode}` : child.signalCode);
  return {
    name,
    url: `http://127.0.0.1:${port}`,
    port,
    pid: child.pid ?? 0,
    exit,
    output: () => printed,
    outageLines: () => outageLines.slice(),
    stop: (graceMs = 10_000) => stopChild(child, exited, graceMs),
    async kill(signal = "SIGKILL") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
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

/**
 * Runs a shipped command line (`signon-cli`, `completion-cli`), or a service that is expected to end by
 * itself, to its end with `env` added; returns its exit code and output.
 */
export function runShipped(
  command: ShippedCommand | ShippedService,
  args: readonly string[],
  env: Record<string, string>,
  options: ShippedRoot = {},
): Promise<{ code: number | null; stdout: string; stderr: string; output: string }> {
  const root = options.root ?? repositoryRoot;
  const child = spawn(process.execPath, nodeArgs(root, SHIPPED_ENTRIES[command], args), {
    cwd: root,
    env: childEnv(command, env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => ((stdout += chunk.toString("utf8")), (output += chunk.toString("utf8"))));
  child.stderr.on("data", (chunk: Buffer) => ((stderr += chunk.toString("utf8")), (output += chunk.toString("utf8"))));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr, output }));
  });
}

/** Runs the shipped `signon <args> --json` with `env` and returns the printed object; throws with its stderr when it fails. */
export async function signonCli(env: Record<string, string>, ...args: string[]): Promise<Record<string, unknown>> {
  return signonCliAt({}, env, ...args);
}

/** {@link signonCli} from `root` (another checkout, such as an earlier release's). */
export async function signonCliAt(where: ShippedRoot, env: Record<string, string>, ...args: string[]): Promise<Record<string, unknown>> {
  const { code, stdout, stderr } = await runShipped("signon-cli", [...args, "--json"], env, where);
  if (code !== 0) throw new Error(`signon ${args.join(" ")} failed (${code}): ${stderr}`);
  return JSON.parse(stdout) as Record<string, unknown>;
}
