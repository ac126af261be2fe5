/** A clock tests can move: pass `clock.now` as the app's `now`. */
export class TestClock {
  private current: number;

  constructor(start = "2026-01-15T09:00:00.000Z") {
    this.current = Date.parse(start);
  }

  readonly now = (): Date => new Date(this.current);

  advance(seconds: number): void {
    this.current += seconds * 1000;
  }

  /** Sets the time, for example to keep two instances' clocks together. */
  set(time: Date): void {
    this.current = time.getTime();
  }
}
