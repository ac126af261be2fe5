import { OutageTracker } from "@tessera/db";

/** Where a background job reports. */
export interface JobLog {
  info(message: string): void;
  error(message: string): void;
  /** Database outages (default: `error`). */
  warn?(message: string): void;
}

/**
 * When a job first runs after start (default a minute), how often after that
 * (default an hour), and how soon it tries again after failing for want of
 * the database (default a minute), in milliseconds.
 */
export interface JobTiming {
  firstRunMs?: number | undefined;
  intervalMs?: number | undefined;
  outageRetryMs?: number | undefined;
}

/** A job that runs on timers; see {@link startHourlyJob}. */
export interface HourlyJob {
  /** Stops the timers and waits for a run in progress to finish. */
  stop(): Promise<void>;
}

/**
 * Runs `work` once `firstRunMs` after start (default a minute) and then every
 * `intervalMs` (default an hour), never two runs at once, on timers that do
 * not keep the process alive. A failed run is logged as "`name` job failed:
 * <message>"; the next run tries again. A run that fails because the database
 * cannot be reached is logged once per outage instead, and tried again after
 * `outageRetryMs` (default a minute) rather than an hour later.
 */
export function startHourlyJob(name: string, work: () => Promise<void>, options: JobTiming & { log: JobLog }): HourlyJob {
  let running: Promise<void> | null = null;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  const log = options.log;
  const outage = new OutageTracker(`${name} job`, { info: (message) => log.info(message), warn: (message) => (log.warn ?? log.error)(message) });
  const run = () => {
    if (running || stopped) return;
    clearTimeout(retry);
    running = work()
      .then(
        () => outage.succeeded(),
        (error: unknown) => {
          if (!outage.failed(error)) {
            log.error(`${name} job failed: ${error instanceof Error ? error.message : String(error)}`);
            return;
          }
          retry = setTimeout(run, options.outageRetryMs ?? 60_000);
          retry.unref();
        },
      )
      .finally(() => {
        running = null;
      });
  };
  const first = setTimeout(run, options.firstRunMs ?? 60_000);
  const every = setInterval(run, options.intervalMs ?? 3_600_000);
  first.unref();
  every.unref();
  return {
    async stop() {
      stopped = true;
      clearTimeout(first);
      clearTimeout(retry);
      clearInterval(every);
      await running;
    },
  };
}
