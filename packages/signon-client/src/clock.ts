/** The source of "now" for expiry decisions; injected so tests can move time. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

/** The real wall clock. */
export const systemClock: Clock = { now: () => Date.now() };
