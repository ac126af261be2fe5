import type { SignonContext } from "../../context.js";
import { startHourlyJob, type HourlyJob, type JobLog, type JobTiming } from "../../maintenance/hourly-job.js";
import { fetchOrganisationRegister } from "./fetch-organisation-register.js";

/**
 * Fetches the organisation register on a schedule, when one is configured
 * (else returns `null`): the job looks every `min(register interval, jobs
 * interval)` (first `firstRunMs` after start) and fetches when due, that is
 * about the register interval after the last success, or one look after a
 * failure. Each look's margin is half a look, so timers that drift a little
 * do not put a fetch off by a whole look. Of several instances, the first to
 * look when a fetch is due fetches; the others find it done or in progress
 * ({@link fetchOrganisationRegister}). A failed fetch is logged by
 * the fetch and tried again at a later look; a database outage is logged
 * once by the job. Stopping it aborts a fetch in progress.
 */
export function startOrganisationRegisterJob(
  ctx: SignonContext,
  options: JobTiming & { log: JobLog; fetch?: typeof fetch | undefined },
): HourlyJob | null {
  const register = ctx.config.organisationRegister;
  if (register.url === null) return null;
  const lookMs = Math.min(register.intervalMs, options.intervalMs ?? 3_600_000);
  const due = { intervalMs: register.intervalMs - lookMs / 2, retryMs: lookMs / 2 };
  const stopping = new AbortController();
  const job = startHourlyJob(
    "Organisation register",
    async () => {
      await fetchOrganisationRegister(ctx, { force: false, due, log: options.log, signal: stopping.signal, ...(options.fetch ? { fetch: options.fetch } : {}) });
    },
    { ...options, intervalMs: lookMs },
  );
  return {
    async stop() {
      stopping.abort();
      await job.stop();
    },
  };
}
