import { beforeEach, describe, expect, it } from "vitest";
import { baseData, block, COURSE, load } from "../support/data.js";
import { dict, onePage } from "../support/expect.js";
import { useHarness } from "../support/harness.js";

/**
 * A learner's own username in another case (`TEST_USER` for `test_user`) is
 * still their own, as in Open edX's completion aggregator; another learner's
 * name, in any case, is still refused to a plain learner. Usernames stay as
 * stored in what the service answers.
 */

const h = await useHarness();
const LIST = "/api/completion/v1/course/";
const DETAIL = `${LIST}${COURSE}/`;
const BATCH = "/api/completion/v1/completion-batch";
const OTHERS = "You do not have permission to read another user's completion data.";

let token = "";
beforeEach(async () => {
  const data = baseData();
  await load(h.ctx, {
    ...data,
    users: [...data.users!, { id: 9, username: "test_user", email: "test.user@example.com" }],
    enrollments: [...data.enrollments!, { username: "test_user", course_key: COURSE }],
    completions: [{ username: "test_user", course_key: COURSE, block_key: block("problem", "p1"), completion: 1 }],
  });
  token = (await h.signon.tokenFor("test.user@example.com")).token;
});

async function send(method: "GET" | "POST", url: string, payload?: Record<string, unknown>): Promise<{ status: number; body: unknown }> {
  const response = await h.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload ? { payload } : {}) });
  return { status: response.statusCode, body: response.json() };
}

const OWN_ITEM = { course_key: COURSE, completion: dict(1, 4), username: "test_user" };

describe("GET /api/completion/v1/course/ by the learner test_user", () => {
  it.each(["TEST_USER", "Test_User", "test_user"])("reads the learner's own list for username=%s", async (username) => {
    expect(await send("GET", `${LIST}?username=${username}&requested_fields=username`)).toEqual({ status: 200, body: onePage([OWN_ITEM]) });
  });

  it.each(["bob", "BOB"])("still refuses another learner's list (username=%s)", async (username) => {
    expect(await send("GET", `${LIST}?username=${username}`)).toEqual({ status: 403, body: { detail: OTHERS } });
  });
});

describe("GET /api/completion/v1/course/{course_key}/ by the learner test_user", () => {
  it("reads the learner's own aggregates for username=TEST_USER", async () => {
    expect(await send("GET", `${DETAIL}?username=TEST_USER&requested_fields=username`)).toEqual({ status: 200, body: onePage([OWN_ITEM]) });
  });

  it("still refuses another learner's aggregates", async () => {
    expect(await send("GET", `${DETAIL}?username=Ada`)).toEqual({ status: 403, body: { detail: OTHERS } });
  });
});

describe("POST /api/completion/v1/course/{course_key}/ by the learner test_user", () => {
  it("reads the learner's own aggregates for username TEST_USER", async () => {
    expect(await send("POST", DETAIL, { username: "TEST_USER", requested_fields: ["username"] })).toEqual({ status: 200, body: onePage([OWN_ITEM]) });
  });

  it("still refuses another learner's aggregates", async () => {
    expect(await send("POST", DETAIL, { username: "ada" })).toEqual({ status: 403, body: { detail: OTHERS } });
  });
});

describe("POST /api/completion/v1/completion-batch by the learner test_user", () => {
  it("stores completions sent under username TEST_USER as the learner's own", async () => {
    expect(await send("POST", BATCH, { username: "TEST_USER", course_key: COURSE, blocks: { [block("html", "h1")]: 0.5 } })).toEqual({
      status: 200,
      body: { detail: "ok" },
    });
    expect(await send("GET", `${DETAIL}?username=test_user&requested_fields=username`)).toEqual({
      status: 200,
      body: onePage([{ ...OWN_ITEM, completion: dict(1.5, 4) }]),
    });
  });

  it("still refuses completions for another learner", async () => {
    expect(await send("POST", BATCH, { username: "ADA", course_key: COURSE, blocks: { [block("html", "h1")]: 0.5 } })).toEqual({
      status: 403,
      body: { detail: "Only the learner or a staff user may submit completions." },
    });
  });
});
