import type { CompletionContext } from "../context.js";
import { resolveStaleRecords } from "./stale.js";

/** A running stale-record worker. */
export interface StaleWorker {
  /** Stops after the round in progress, if any. */
  stop(): Promise<void>;
}

/**
 * Works off stale records in the background (C14): rounds of up to `batch`
 * records back to back while there are any, then a pause of `intervalMs`.
 * A failing round is reported and retried after the pause. Several processes
 * may run it against one database: each round skips records another holds.
 */
export function startStaleWorker(
  ctx: CompletionContext,
  options: { intervalMs: number; batch?: number; onError?: (error: unknown) => void },
): StaleWorker {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const round = async (): Promise<void> => {
    let delay = options.intervalMs;
    try {
      const resolved = await resolveStaleRecords(ctx.db, ctx.structures, ctx.settings, options.batch ?? 200, ctx.now);
      if (resolved > 0) delay = 0;
    } catch (error) {
      options.onError?.(error);
    }
    if (!stopped) schedule(delay);
  };
  const schedule = (delay: number): void => {
    timer = setTimeout(() => {
      running = round();
    }, delay);
  };
  schedule(0);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
