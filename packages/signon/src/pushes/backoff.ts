/** The longest wait before the first retry (it waits half to all of it); each later one's doubles, up to `maxDelaySeconds`. */
export const baseDelaySeconds = 5;
export const maxDelaySeconds = 3600;
/** A push is retried for at least this long before it is recorded as failed (S14). */
export const retryWindowSeconds = 24 * 3600;

/**
 * Seconds to wait before attempt `attempts + 1`, after `attempts` failed:
 * exponential backoff with "equal jitter" (half fixed, half random), so
 * workers that failed together do not retry together.
 *
 * @param random a number in [0, 1), `Math.random` in production
 * @param base the first wait in seconds before jitter
 */
export function retryDelaySeconds(attempts: number, random: () => number = Math.random, base: number = baseDelaySeconds): number {
  const ceiling = Math.min(maxDelaySeconds, base * 2 ** Math.max(0, Math.min(attempts - 1, 30)));
  return ceiling / 2 + (ceiling / 2) * random();
}

/** Whether a push that has been pending since `pendingSince` has been retried long enough (S14). */
export function retryWindowOver(pendingSince: Date, now: Date): boolean {
  return now.getTime() - pendingSince.getTime() >= retryWindowSeconds * 1000;
}

/**
 * How a receiver's HTTP status counts (S14): 2xx success; 4xx other than 408
 * and 429 a permanent failure; anything else worth retrying.
 */
export function classifyStatus(status: number): "delivered" | "permanent" | "retry" {
  if (status >= 200 && status < 300) return "delivered";
  if (status >= 400 && status < 500 && status !== 408 && status !== 429) return "permanent";
  return "retry";
}
