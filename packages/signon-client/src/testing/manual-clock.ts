import type { Clock } from "../../src/clock.js";

/** A clock that only moves when told to. */
export class FakeClock implements Clock {
  constructor(private current = Date.now()) {}

  now(): number {
    return this.current;
  }

  advanceSeconds(seconds: number): void {
    this.current += seconds * 1000;
  }
}
