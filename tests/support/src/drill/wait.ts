import { logTail } from "./processes.js";

export const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Polls `attempt` until it returns a value other than null, or throws once `timeoutMs` has passed: the error
 * names what was awaited, the last error or answer seen, and the tail of each log file in `logs`.
 */
export async function waitFor<T>(
  what: string,
  attempt: () => Promise<T | null>,
  options: { timeoutMs: number; intervalMs?: number; logs?: string[] },
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  let last = "no answer";
  for (;;) {
    try {
      const value = await attempt();
      if (value !== null) return value;
      last = "not yet";
    } catch (error) {
      last = (error as Error).message;
    }
    if (Date.now() > deadline) throw new Error(failure(`${what}: not within ${options.timeoutMs} ms (last: ${last})`, options.logs ?? []));
    await pause(options.intervalMs ?? 100);
  }
}

/** An error message followed by the tail of each log file. */
export function failure(message: string, logs: string[]): string {
  return [message, ...logs.map((file) => logTail(file))].join("\n");
}
