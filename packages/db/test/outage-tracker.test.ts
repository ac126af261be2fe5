import { describe, expect, it } from "vitest";
import { OutageTracker } from "../src/outage-tracker.js";

const terminated = Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" });

function tracked() {
  const lines: string[] = [];
  let now = 1_000_000;
  const tracker = new OutageTracker("push delivery", { info: (message) => lines.push(`info ${message}`), warn: (message) => lines.push(`warn ${message}`) }, {
    now: () => now,
    minRetryMs: 250,
    maxRetryMs: 2000,
  });
  return { tracker, lines, advance: (ms: number) => (now += ms) };
}

describe("OutageTracker", () => {
  it("logs one line when an outage starts and one when it ends, with its duration, however many attempts fail", () => {
    const { tracker, lines, advance } = tracked();
    for (let attempt = 0; attempt < 20; attempt++) {
      expect(tracker.failed(terminated)).toBe(true);
      advance(250);
    }
    expect(tracker.down).toBe(true);
    tracker.succeeded();
    tracker.succeeded();
    expect(tracker.down).toBe(false);
    expect(lines).toEqual([
      "warn push delivery: database unavailable (57P01 terminating connection due to administrator command); retrying until it answers",
      "info push delivery: database available again after 5.0 s (20 failed attempt(s))",
    ]);
  });

  it("leaves other errors to the caller: returns false and logs nothing", () => {
    const { tracker, lines } = tracked();
    expect(tracker.failed(Object.assign(new Error("duplicate key"), { code: "23505" }))).toBe(false);
    expect(tracker.down).toBe(false);
    expect(lines).toEqual([]);
  });

  it("backs off during an outage: doubling from the minimum up to the maximum, never below the normal delay", () => {
    const { tracker } = tracked();
    expect(tracker.retryDelayMs(100)).toBe(100);
    const delays: number[] = [];
    for (let attempt = 0; attempt < 6; attempt++) {
      tracker.failed(terminated);
      delays.push(tracker.retryDelayMs(100));
    }
    expect(delays).toEqual([250, 500, 1000, 2000, 2000, 2000]);
    expect(tracker.retryDelayMs(5000)).toBe(5000);
    tracker.succeeded();
    expect(tracker.retryDelayMs(100)).toBe(100);
  });
});
