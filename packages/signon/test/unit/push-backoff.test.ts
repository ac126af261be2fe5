import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { classifyStatus, retryDelaySeconds, retryWindowOver } from "../../src/pushes/backoff.js";

describe("push retries", () => {
  it("double the wait after each failure, with up to half of it random, capped at an hour", () => {
    expect([1, 2, 3, 4].map((attempts) => retryDelaySeconds(attempts, () => 0))).toEqual([2.5, 5, 10, 20]);
    expect([1, 2, 3, 4].map((attempts) => retryDelaySeconds(attempts, () => 0.999_999))).toEqual([5, 10, 20, 40].map((s) => expect.closeTo(s, 3) as unknown));
    expect(retryDelaySeconds(40, () => 0)).toBe(1800);
    expect(retryDelaySeconds(40, () => 0.999_999)).toBeCloseTo(3600, 2);
  });

  it("wait as the README says: the first retry 2.5 to 5 s after the failure, the second 5 to 10 s, then 30 to 60 minutes once capped", async () => {
    const readme = (await readFile(join(import.meta.dirname, "..", "..", "README.md"), "utf8")).replace(/\s+/g, " ");
    expect(readme).toContain("the first retry 2.5 to 5 s after the failure, the second 5 to 10 s after that, and once the hour is reached 30 to 60 minutes between tries");
    const range = (attempts: number) => [retryDelaySeconds(attempts, () => 0), retryDelaySeconds(attempts, () => 1)];
    expect([range(1), range(2), range(40)]).toEqual([[2.5, 5], [5, 10], [1800, 3600]]);
  });

  it("go on for 24 hours from when the push was queued", () => {
    const queued = new Date("2026-01-15T09:00:00Z");
    expect(retryWindowOver(queued, new Date("2026-01-16T08:59:59Z"))).toBe(false);
    expect(retryWindowOver(queued, new Date("2026-01-16T09:00:00Z"))).toBe(true);
  });

  it("count 2xx as delivered, a 4xx other than 408 and 429 as permanent, the rest as worth retrying", () => {
    expect([200, 204, 299, 400, 401, 403, 404, 410, 408, 429, 300, 500, 503].map(classifyStatus)).toEqual([
      "delivered", "delivered", "delivered", "permanent", "permanent", "permanent", "permanent", "permanent", "retry", "retry", "retry", "retry", "retry",
    ]);
  });
});
