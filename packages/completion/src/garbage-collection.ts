import { setFlagsFromString } from "node:v8";

/**
 * Turns off V8's allocation-site pretenuring for this process. Call it first
 * thing in a serving process.
 *
 * Under ingestion load (concurrent completion batches, each holding its rows
 * for a transaction), V8 sees objects of some allocation sites survive and
 * decides to allocate them in the old generation from then on. Reads allocate
 * at those sites too, and what such an old object points to (row strings,
 * parsed figures, response bytes) survives every minor collection until the
 * next full one: each scavenge then copies and promotes hundreds of
 * kilobytes of garbage. On 1,000 learners of the benchmark's data, after
 * ingestion, a scavenge during detail reads promoted about 600 KB and paused
 * 1.4 ms on average (up to 7 ms); without pretenuring, 8-14 KB and 0.7 ms.
 * Nothing in the service keeps per-request objects long, so the young
 * generation serves it best.
 */
export function turnOffAllocationSitePretenuring(): void {
  setFlagsFromString("--no-allocation-site-pretenuring");
}
