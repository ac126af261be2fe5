import { isDatabaseUnavailable } from "@tessera/db";
import type { SignonContext } from "../context.js";
import { processInvitationBatches } from "./invitation-batches.js";

/** The batch invitation job of a server process; see {@link startInvitationBatchWorker}. */
export interface InvitationBatchWorker {
  /** Runs the job now (or again right after the run in progress). */
  wake(): void;
  /** Stops the timer and waits for a run in progress to finish. */
  stop(): Promise<void>;
}

/**
 * Invites the pending rows of stored batches: shortly after start (so a
 * batch interrupted by a restart resumes), whenever a batch is stored
 * (`wake`), and every `pollMs` as a safety net (a batch stored by another
 * instance). One run at a time; rows are claimed with a lock, so several
 * instances can share the work.
 */
export function startInvitationBatchWorker(
  ctx: SignonContext,
  options: { log: { error(details: Record<string, unknown>, message: string): void }; firstRunMs?: number; pollMs?: number },
): InvitationBatchWorker {
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;
  const run = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = processInvitationBatches(ctx, { log: options.log })
      .then(
        () => undefined,
        (error: unknown) => {
          if (!isDatabaseUnavailable(error)) options.log.error({ err: error }, "batch invitation job failed");
        },
      )
      .finally(() => {
        running = null;
        if (again) {
          again = false;
          run();
        }
      });
  };
  const first = setTimeout(run, options.firstRunMs ?? 1000);
  const every = setInterval(run, options.pollMs ?? 10_000);
  first.unref();
  every.unref();
  return {
    wake: run,
    async stop() {
      stopped = true;
      clearTimeout(first);
      clearInterval(every);
      await running;
    },
  };
}
