import { Secret, TOTP } from "otpauth";
import { describe, expect, it } from "vitest";
import { twoStepSetupLimit } from "../../src/accounts/two-step.js";
import { findUserByUid } from "../../src/repositories/users.js";
import { signedInBrowser, type InjectBrowser } from "../support/browser.js";
import { createUser, defaultPassword } from "../support/factories.js";
import { useTestSignon } from "../support/signon.js";
import { textOf } from "./account-support.js";

const { signon } = await useTestSignon();

/** The code an authenticator app with this secret shows at the test clock's time, `stepsLater` steps on. */
function codeFor(secret: string, stepsLater = 0): string {
  return TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: signon.clock.now().getTime() + stepsLater * 30_000 });
}

/** A signed-in person on the set-up page, with the secret it shows. */
async function settingUp(): Promise<{ browser: InjectBrowser; uid: string; secret: string }> {
  const person = await createUser(signon.ctx);
  const browser = await signedInBrowser(signon.app, person.email, defaultPassword);
  const page = await browser.get("/account/two-step");
  const shown = /<p class="secret" id="secret">([A-Z2-7 ]+)<\/p>/.exec(page.body)?.[1];
  if (shown === undefined) throw new Error(`no secret on the page:\n${page.body}`);
  return { browser, uid: person.uid, secret: shown.replace(/ /g, "") };
}

/** A code that is not right now: one from ten time steps later. */
const wrongCode = (secret: string) => codeFor(secret, 10);

describe("POST /account/two-step: wrong set-up codes", () => {
  it(`refuses even the right code (429) after ${twoStepSetupLimit.maxFailures} wrong ones, until the window has passed`, async () => {
    const { browser, uid, secret } = await settingUp();
    for (let attempt = 0; attempt < twoStepSetupLimit.maxFailures; attempt += 1) {
      const wrong = await browser.submit("/account/two-step", "/account/two-step", { code: wrongCode(secret) });
      expect(wrong.statusCode).toBe(400);
    }

    const refused = await browser.submit("/account/two-step", "/account/two-step", { code: codeFor(secret) });
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
    expect(textOf(refused)).toContain("Too many wrong codes. Wait 10 minutes");
    expect(refused.body).toContain('role="alert"');
    expect((await findUserByUid(signon.ctx.db, uid))?.otpEnabledAt).toBeNull();

    signon.clock.advance(twoStepSetupLimit.windowSeconds);
    const accepted = await browser.submit("/account/two-step", "/account/two-step", { code: codeFor(secret) });
    expect(accepted.statusCode).toBe(303);
    expect((await findUserByUid(signon.ctx.db, uid))?.otpEnabledAt).not.toBeNull();
  });

  it("counts per person: someone else's wrong codes do not hold up another set-up", async () => {
    const other = await settingUp();
    for (let attempt = 0; attempt < twoStepSetupLimit.maxFailures; attempt += 1) {
      await other.browser.submit("/account/two-step", "/account/two-step", { code: wrongCode(other.secret) });
    }
    const { browser, uid, secret } = await settingUp();
    expect((await browser.submit("/account/two-step", "/account/two-step", { code: wrongCode(secret) })).statusCode).toBe(400);
    expect((await browser.submit("/account/two-step", "/account/two-step", { code: codeFor(secret) })).statusCode).toBe(303);
    expect((await findUserByUid(signon.ctx.db, uid))?.otpEnabledAt).not.toBeNull();
  });
});
