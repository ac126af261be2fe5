// The ledger of the load's writes: each one sent, in order, with whether the service acknowledged it, and what
// the stored value may be afterwards given those acknowledgements.

/** One write the load sent, and whether the service acknowledged it (2xx or the form's redirect). */
export interface Attempt<T> {
  value: T;
  acknowledged: boolean;
  /** When it was sent and answered (ms since the epoch), where the load kept them. */
  sentAt?: number;
  at?: number;
}

/** A named restore point: set by a command sent at `sentAt` and answered at `at`. */
export interface RestorePointTimes {
  sentAt: number;
  at: number;
}

/**
 * The values a write series may have left: with `attempts` sent in order,
 * the last acknowledged value, or any sent after it (a write whose answer was
 * lost may have committed). `undefined` stands for "none written", allowed
 * only when nothing was acknowledged.
 */
export function allowedOutcomes<T>(attempts: readonly Attempt<T>[]): (T | undefined)[] {
  let last = -1;
  attempts.forEach((attempt, index) => {
    if (attempt.acknowledged) last = index;
  });
  const after = attempts.slice(last === -1 ? 0 : last).map((attempt) => attempt.value);
  return last === -1 ? [undefined, ...after] : after;
}

/**
 * The write series as a restore to `point` leaves it: a write acknowledged before the point's command was sent is
 * in; one sent before it was answered but not acknowledged before it was sent may be in or not (as if its answer
 * were lost); one sent after it is not. Writes without times (from earlier rounds) are kept as they are.
 */
export function asOfRestorePoint<T>(attempts: readonly Attempt<T>[], point: RestorePointTimes): Attempt<T>[] {
  return attempts.flatMap((attempt) => {
    if (attempt.sentAt === undefined || attempt.at === undefined) return [attempt];
    if (attempt.sentAt > point.at) return [];
    if (attempt.acknowledged && attempt.at < point.sentAt) return [attempt];
    return [{ ...attempt, acknowledged: false }];
  });
}
