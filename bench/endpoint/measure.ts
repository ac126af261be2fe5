const CALLS_PER_CLOCK_READ = 1_000;

/** Calls per second of `call`, run for about `milliseconds`. */
export function operationsPerSecond(call: () => { url: string }, milliseconds: number): number {
  let calls = 0;
  let checksum = 0;
  const start = performance.now();
  let elapsed = 0;
  do {
    for (let index = 0; index < CALLS_PER_CLOCK_READ; index++) checksum += call().url.length;
    calls += CALLS_PER_CLOCK_READ;
    elapsed = performance.now() - start;
  } while (elapsed < milliseconds);
  // Using the checksum keeps the calls from being optimised away.
  if (checksum === -1) console.log(checksum);
  return (calls * 1000) / elapsed;
}

/** The middle value (the mean of the two middle values for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}
