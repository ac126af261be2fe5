import { block, COURSE } from "./data.js";

/** A completion dictionary as the API writes it (C2, C6). */
export function dict(earned: number, possible: number | null): { earned: number; possible: number | null; percent: number; ratio: number } {
  const percent = possible === null ? 0 : possible === 0 ? 1 : earned / possible;
  return { earned, possible, percent, ratio: percent };
}

/** A block entry of {@link COURSE} (C3). */
export function entry(type: string, id: string, earned: number, possible: number): Record<string, unknown> {
  const key = block(type, id);
  return { course_key: COURSE, block_key: key, usage_key: key, completion: dict(earned, possible) };
}

/** A single-page envelope around results. */
export function onePage(results: unknown[]): Record<string, unknown> {
  return { count: results.length, num_pages: 1, current_page: 1, start: 0, next: null, previous: null, results };
}
