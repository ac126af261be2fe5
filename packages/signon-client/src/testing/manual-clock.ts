import type { Clock } from "../clock.js";

/** A clock that only moves when told to. */
export class ManualClock implements Clock {
  constructor(private current = Date.now()) {}

  now(): number {
    return this.current;
  }

  advanceSeconds(seconds: number): void {
    this.current += seconds * 1000;
  }
}
