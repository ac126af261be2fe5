// The ledger of the load's writes: each one sent, in order, with whether the service acknowledged it, and what
// the stored value may be afterwards given those acknowledgements.

/** One write the load sent, and whether the service acknowledged it (2xx or the form's redirect). */
export interface Attempt<T> {
  value: T;
  acknowledged: boolean;
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
