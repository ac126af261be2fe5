import { OutageTracker, silentLogger, type Logger } from "@tessera/db";
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
 * A failing round is reported (`onError`) and retried after the pause. While
 * the database cannot be reached, `log` gets one line when that starts and one
 * when it ends, not one per round, and rounds are retried every few seconds at
 * most. Several processes may run it against one database: each round skips
 * records another holds.
 */
export function startStaleWorker(
  ctx: CompletionContext,
  options: { intervalMs: number; batch?: number; onError?: (error: unknown) => void; log?: Logger },
): StaleWorker {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const outage = new OutageTracker("stale worker", options.log ?? silentLogger);
  const round = async (): Promise<void> => {
    let delay = options.intervalMs;
    try {
      const resolved = await resolveStaleRecords(ctx.db, ctx.structures, ctx.settings, options.batch ?? 200, ctx.now);
      outage.succeeded();
      if (resolved > 0) delay = 0;
    } catch (error) {
      if (outage.failed(error)) delay = Math.min(options.intervalMs, outage.retryDelayMs(0));
      else options.onError?.(error);
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
