import { describe, expect, it } from "vitest";
import { startHourlyJob } from "../../src/maintenance/hourly-job.js";

const terminated = () => Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" });

describe("startHourlyJob", () => {
  it("logs a database outage once, tries again soon, and says when it ran again", async () => {
    const lines: string[] = [];
    let calls = 0;
    await new Promise<void>((resolve) => {
      const job = startHourlyJob(
        "Cleanup",
        async () => {
          calls += 1;
          if (calls <= 3) throw terminated();
          void job.stop().then(resolve);
        },
        {
          firstRunMs: 0,
          outageRetryMs: 5,
          log: { info: (m) => lines.push(`info ${m}`), warn: (m) => lines.push(`warn ${m}`), error: (m) => lines.push(`error ${m}`) },
        },
      );
    });
    expect(calls).toBe(4);
    expect(lines).toEqual([
      "warn Cleanup job: database unavailable (57P01 terminating connection due to administrator command); retrying until it answers",
      expect.stringMatching(/^info Cleanup job: database available again after \d+\.\d s \(3 failed attempt\(s\)\)$/),
    ]);
  });

  it("logs any other failure as an error and waits for the next hour", async () => {
    const lines: string[] = [];
    let calls = 0;
    const job = startHourlyJob(
      "Cleanup",
      async () => {
        calls += 1;
        throw new Error("a bug");
      },
      { firstRunMs: 0, outageRetryMs: 5, log: { info: (m) => lines.push(`info ${m}`), error: (m) => lines.push(`error ${m}`) } },
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    await job.stop();
    expect(calls).toBe(1);
    expect(lines).toEqual(["error Cleanup job failed: a bug"]);
  });
});
