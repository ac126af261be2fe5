import { describe, expect, it } from "vitest";
import { describeActivity } from "../../src/routes/account/activity-words.js";

const me = "00000000-0000-4000-8000-000000000001";
const admin = "00000000-0000-4000-8000-000000000002";
const someone = "00000000-0000-4000-8000-000000000003";

function event(action: string, actorUid: string | null, subjectUid: string | null, applicationName: string | null = null) {
  return { action, actorUid, subjectUid, applicationName, details: {} };
}

describe("describeActivity", () => {
  it("says what was done to you, and who did it when it was not you", () => {
    expect(describeActivity(event("sign_in", me, me), me)).toBe("You signed in");
    expect(describeActivity(event("user_suspended", admin, me), me)).toBe("Your account was suspended by an administrator");
    expect(describeActivity(event("suspended_for_inactivity", null, me), me)).toBe("Your account was suspended because it was not used for a long time");
    expect(describeActivity(event("permissions_granted", admin, me, "Publisher"), me)).toBe("You were given permissions by an administrator (Publisher)");
  });

  it("says what you did to others", () => {
    expect(describeActivity(event("user_invited", me, someone), me)).toBe("You invited someone");
    expect(describeActivity(event("application_retired", me, null, "Old Tool"), me)).toBe("You retired an application (Old Tool)");
  });

  it("falls back to the action's name for an action it has no words for", () => {
    expect(describeActivity(event("something_new", me, me), me)).toBe("Event: something new");
  });
});
