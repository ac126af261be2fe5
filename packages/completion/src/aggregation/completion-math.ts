/**
 * The completion dictionary and its arithmetic (decisions C2, C5, C6).
 * Numbers are kept at full double precision; nothing is rounded.
 */

/** Earned and possible completion of one block for one learner. */
export interface Progress {
  readonly earned: number;
  readonly possible: number;
}

/** The wire form of a completion: `ratio` and `percent` are the same number (C2). */
export interface CompletionDictionary {
  readonly earned: number;
  readonly possible: number | null;
  readonly percent: number;
  readonly ratio: number;
}

/** percent of a progress: earned / possible; a container with nothing completable is complete (C6). */
export function percentOf(progress: Progress): number {
  return progress.possible === 0 ? 1 : progress.earned / progress.possible;
}

/** The completion dictionary of a progress. */
export function completionDictionary(progress: Progress): CompletionDictionary {
  const percent = percentOf(progress);
  return { earned: progress.earned, possible: progress.possible, percent, ratio: percent };
}

/** The completion of a course whose structure is unknown (C6). */
export const UNKNOWN_STRUCTURE_COMPLETION: CompletionDictionary = Object.freeze({
  earned: 0,
  possible: null,
  percent: 0,
  ratio: 0,
});

/** Clamps nothing: a completion value must already be a finite number in [0, 1]. */
export function isCompletionValue(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 && value <= 1;
}
