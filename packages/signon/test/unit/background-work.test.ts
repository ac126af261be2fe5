import { describe, expect, it } from "vitest";
import { BackgroundWorkFull, maxBackgroundWork, runInBackground, settleBackgroundWork } from "../../src/background-work.js";
import { mailErrorForLog } from "../../src/mail/send-mail.js";

describe("runInBackground", () => {
  it("runs the work after the caller has gone on, and settleBackgroundWork waits for it", async () => {
    const order: string[] = [];
    runInBackground(async () => void order.push("work"), () => order.push("failure"));
    order.push("caller");
    expect(await settleBackgroundWork(1000)).toBe(0);
    expect(order).toEqual(["caller", "work"]);
  });

  it("hands a failure to onFailure, never to an unhandled rejection", async () => {
    const failures: unknown[] = [];
    runInBackground(() => Promise.reject(new Error("database away")), (error) => failures.push(error));
    await settleBackgroundWork(1000);
    expect(failures).toEqual([new Error("database away")]);
  });

  it(`refuses work beyond ${maxBackgroundWork} pieces at once, saying so to onFailure`, async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const failures: unknown[] = [];
    for (let n = 0; n < maxBackgroundWork + 2; n++) runInBackground(() => held, (error) => failures.push(error));
    expect(failures).toHaveLength(2);
    expect(failures[0]).toBeInstanceOf(BackgroundWorkFull);
    expect(await settleBackgroundWork(20)).toBe(maxBackgroundWork);
    release();
    expect(await settleBackgroundWork(1000)).toBe(0);
  });
});

describe("mailErrorForLog", () => {
  it("keeps the SMTP figures and drops the addresses a server's answer quotes", () => {
    const error = Object.assign(new Error("Can't send mail - all recipients were rejected: 550 5.1.1 <pat.person@example.org>: Recipient address rejected"), {
      code: "EENVELOPE",
      command: "RCPT TO",
      responseCode: 550,
    });
    expect(mailErrorForLog(error)).toEqual({
      message: "Can't send mail - all recipients were rejected: 550 5.1.1 <<address>>: Recipient address rejected",
      code: "EENVELOPE",
      command: "RCPT TO",
      responseCode: 550,
    });
  });
});
