/** Where a background job reports. */
export interface JobLog {
  info(message: string): void;
  error(message: string): void;
}

/** When a job first runs after start (default a minute) and how often after that (default an hour), in milliseconds. */
export interface JobTiming {
  firstRunMs?: number | undefined;
  intervalMs?: number | undefined;
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
 * <message>"; the next run tries again.
 */
export function startHourlyJob(name: string, work: () => Promise<void>, options: JobTiming & { log: JobLog }): HourlyJob {
  let running: Promise<void> | null = null;
  let stopped = false;
  const run = () => {
    if (running || stopped) return;
    running = work()
      .catch((error: unknown) => options.log.error(`${name} job failed: ${error instanceof Error ? error.message : String(error)}`))
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
      clearInterval(every);
      await running;
    },
  };
}
