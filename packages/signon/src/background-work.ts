/** Work started once a request has been answered, until it ends; a stopping server waits for it. */
const running = new Set<Promise<void>>();

/** At most this much work runs at once; more is refused (to `onFailure`), so a flood of requests cannot pile it up. */
export const maxBackgroundWork = 200;

/** What `onFailure` gets for work refused because `maxBackgroundWork` pieces already run. */
export class BackgroundWorkFull extends Error {
  constructor() {
    super(`${maxBackgroundWork} pieces of work begun after answers are still running; this one was dropped`);
  }
}

/**
 * Runs `work` after the current request's answer has been written (on the
 * next turn of the event loop), so that the answer takes as long whatever the
 * work finds or does. A failure goes to `onFailure` (never an unhandled
 * rejection), and so does work refused because `maxBackgroundWork` pieces
 * already run. `settleBackgroundWork` waits for it.
 */
export function runInBackground(work: () => Promise<void>, onFailure: (error: unknown) => void): void {
  if (running.size >= maxBackgroundWork) {
    try {
      onFailure(new BackgroundWorkFull());
    } catch {
      // A failing reporter must not turn into an exception in the request that asked.
    }
    return;
  }
  const task: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
    .then(work)
    .catch((error: unknown) => {
      try {
        onFailure(error);
      } catch {
        // A failing reporter must not turn into an unhandled rejection.
      }
    })
    .finally(() => running.delete(task));
  running.add(task);
}

/**
 * Waits until all background work has ended (including work that it started
 * meanwhile), or until `timeoutMs` has passed, and returns how many pieces
 * are still running. A server calls it when it stops, after it has stopped
 * taking requests and before it closes its database connections, so that a
 * password-reset mail asked for just before is not dropped.
 */
export async function settleBackgroundWork(timeoutMs: number): Promise<number> {
  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      timedOut = true;
      resolve();
    }, timeoutMs);
  });
  try {
    while (running.size > 0 && !timedOut) await Promise.race([Promise.all([...running]), deadline]);
  } finally {
    clearTimeout(timer);
  }
  return running.size;
}
