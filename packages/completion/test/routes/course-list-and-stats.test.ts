import { beforeEach, describe, expect, it } from "vitest";
import type { BulkBlock, BulkData } from "../../src/ingest/bulk-format.js";
import { CourseStructures } from "../../src/domain/course-structures.js";
import { loadBulkData } from "../../src/ingest/bulk-load.js";
import { baseData, block, COURSE, COURSE_TREE, load, NO_STRUCTURE_COURSE, OTHER_COURSE, OTHER_TREE } from "../support/data.js";
import { dict, entry, onePage } from "../support/expect.js";
import { useHarness } from "../support/harness.js";

const h = await useHarness();
const LIST = "/api/completion/v1/course/";
const STATS = `/api/completion/v1/stats/${COURSE}/`;
const HOST = "http://localhost:80";

/** ada: 1.75 of 4; bob: 1 of 4 in COURSE and 1 of 1 in OTHER_COURSE; cy: nothing; staffer (course role staff): 1 of 4. */
beforeEach(async () => {
  await load(h.ctx, {
    ...baseData(),
    completions: [
      { username: "ada", course_key: COURSE, block_key: block("problem", "p1"), completion: 1 },
      { username: "ada", course_key: COURSE, block_key: block("html", "h1"), completion: 0.5 },
      { username: "ada", course_key: COURSE, block_key: block("video", "vid1"), completion: 0.25 },
      { username: "bob", course_key: COURSE, block_key: block("problem", "p2"), completion: 1 },
      { username: "bob", course_key: OTHER_COURSE, block_key: "i4x://TesseraX/CS102/html/page", completion: 1 },
      { username: "staffer", course_key: COURSE, block_key: block("problem", "p1"), completion: 1 },
    ],
  });
});

async function tokenFor(email: string, permissions: string[] = []): Promise<string> {
  return (await h.signon.tokenFor(email, permissions)).token;
}

async function get(token: string | null, url: string): Promise<{ status: number; body: unknown }> {
  const response = await h.app.inject({ method: "GET", url, headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: response.statusCode, body: response.json() };
}

const MEAN = (0.4375 + 0.25 + 0) / 3;
const UNKNOWN = { earned: 0, possible: null, percent: 0, ratio: 0 };

describe("GET /api/completion/v1/course/", () => {
  it.each([
    [
      "a learner enrolled in two courses, one without a known structure (the inactive one left out)",
      "ada@example.com",
      [],
      LIST,
      [
        { course_key: COURSE, completion: dict(1.75, 4) },
        { course_key: NO_STRUCTURE_COURSE, completion: UNKNOWN },
      ],
    ],
    [
      "courses in byte order of their keys, with chapter lists and mean",
      "bob@example.com",
      [],
      `${LIST}?requested_fields=chapter,mean`,
      [
        {
          course_key: OTHER_COURSE,
          completion: dict(1, 1),
          mean: 1,
          chapter: [
            {
              course_key: OTHER_COURSE,
              block_key: "i4x://TesseraX/CS102/chapter/only",
              usage_key: "i4x://TesseraX/CS102/chapter/only",
              completion: dict(1, 1),
            },
          ],
        },
        { course_key: COURSE, completion: dict(1, 4), mean: MEAN, chapter: [entry("chapter", "ch1", 1, 3), entry("chapter", "ch2", 0, 1)] },
      ].sort((a, b) => (Buffer.from(a.course_key) < Buffer.from(b.course_key) ? -1 : 1)),
    ],
    ["mobile courses only", "ada@example.com", [], `${LIST}?mobile_only=TRUE`, [{ course_key: COURSE, completion: dict(1.75, 4) }]],
    [
      "mobile_only=false as no filter",
      "ada@example.com",
      [],
      `${LIST}?mobile_only=false`,
      [
        { course_key: COURSE, completion: dict(1.75, 4) },
        { course_key: NO_STRUCTURE_COURSE, completion: UNKNOWN },
      ],
    ],
    ["another user's list with masquerade", "help@example.com", ["masquerade"], `${LIST}?username=cy`, [{ course_key: COURSE, completion: dict(0, 4) }]],
    ["a caller without a learner record: nothing", "api@example.com", ["staff"], LIST, []],
  ])("returns %s", async (_name, email, permissions, url, results) => {
    expect(await get(await tokenFor(email, permissions), url)).toEqual({ status: 200, body: onePage(results) });
  });

  it("pages through the list", async () => {
    expect(await get(await tokenFor("ada@example.com"), `${LIST}?page_size=1&page=2`)).toEqual({
      status: 200,
      body: {
        count: 2,
        num_pages: 2,
        current_page: 2,
        start: 1,
        next: null,
        previous: `${HOST}${LIST}?page_size=1&page=1`,
        results: [{ course_key: NO_STRUCTURE_COURSE, completion: UNKNOWN }],
      },
    });
  });

  it("leaves out courses that show a learner nothing completable, and does not count them", async () => {
    const hidden = (key: string, children: BulkBlock[]): NonNullable<BulkData["courses"]> => [
      { course_key: key, structure: { type: "course", id: "course", children: [{ type: "chapter", id: "c", children }] } },
    ];
    await load(h.ctx, {
      courses: [
        ...hidden("course-v1:TesseraX+STAFF+2026", [{ type: "vertical", id: "v", visible_to_staff_only: true, children: [{ type: "problem", id: "p" }] }]),
        ...hidden("course-v1:TesseraX+TALK+2026", [{ type: "discussion", id: "d" }, { type: "problem", id: "x", mode: "excluded" }]),
        ...hidden("course-v1:TesseraX+EMPTY+2026", []),
      ],
      enrollments: ["STAFF", "TALK", "EMPTY"].map((name) => ({ username: "ada", course_key: `course-v1:TesseraX+${name}+2026` })),
    });
    expect(await get(await tokenFor("ada@example.com"), LIST)).toEqual({
      status: 200,
      body: onePage([
        { course_key: COURSE, completion: dict(1.75, 4) },
        { course_key: NO_STRUCTURE_COURSE, completion: UNKNOWN },
      ]),
    });
  });

  it("lists such a course again once its structure shows something completable", async () => {
    const key = "course-v1:TesseraX+LATER+2026";
    await load(h.ctx, {
      courses: [{ course_key: key, mobile_available: true, structure: { type: "course", id: "course", children: [] } }],
      enrollments: [{ username: "bob", course_key: key }],
    });
    const before = await get(await tokenFor("bob@example.com"), `${LIST}?mobile_only=true`);
    await load(h.ctx, { courses: [{ course_key: key, structure: { type: "course", id: "course", children: [{ type: "html", id: "welcome" }] } }] });
    const after = await get(await tokenFor("bob@example.com"), `${LIST}?mobile_only=true`);
    expect([before, after]).toEqual([
      { status: 200, body: onePage([{ course_key: COURSE, completion: dict(1, 4) }]) },
      {
        status: 200,
        body: onePage([
          { course_key: COURSE, completion: dict(1, 4) },
          { course_key: key, completion: dict(0, 1) },
        ]),
      },
    ]);
  });

  it("refuses an unknown username with 404", async () => {
    expect(await get(await tokenFor("help@example.com", ["masquerade"]), `${LIST}?username=nobody`)).toEqual({
      status: 404,
      body: { detail: "User not found: nobody" },
    });
  });

  it.each([
    ["no token", null, LIST, 401, "Authentication credentials were not provided."],
    ["a scheme other than Bearer", "Basic", LIST, 401, "Invalid token header."],
    ["another user's list without permission", "ada", `${LIST}?username=bob`, 403, "You do not have permission to read another user's completion data."],
    ["an invalid requested_fields value", "ada", `${LIST}?requested_fields=grade`, 400, "Invalid requested_fields value(s): grade"],
    ["a page past the last", "ada", `${LIST}?page=3`, 404, "Invalid page."],
    ["a negative page_size", "ada", `${LIST}?page_size=-1`, 400, "Invalid page_size."],
  ])("refuses %s", async (_name, who, url, status, detail) => {
    const headers: Record<string, string> =
      who === null ? {} : who === "Basic" ? { authorization: "Basic YWRhOnB3" } : { authorization: `Bearer ${await tokenFor("ada@example.com")}` };
    const response = await h.app.inject({ method: "GET", url, headers });
    expect({ status: response.statusCode, body: response.json() as unknown }).toEqual({ status, body: { detail } });
  });

  it("recomputes the learner's stale courses before answering", async () => {
    const tree = structuredClone(COURSE_TREE);
    tree.children!.push({ type: "chapter", id: "ch9", children: [{ type: "html", id: "extra" }] });
    await load(h.ctx, { courses: [{ course_key: COURSE, structure: tree }] });
    expect(await get(await tokenFor("ada@example.com"), `${LIST}?requested_fields=chapter`)).toEqual({
      status: 200,
      body: onePage([
        {
          course_key: COURSE,
          completion: dict(1.75, 5),
          chapter: [entry("chapter", "ch1", 1.5, 3), entry("chapter", "ch2", 0.25, 1), entry("chapter", "ch9", 0, 1)],
        },
        { course_key: NO_STRUCTURE_COURSE, completion: UNKNOWN, chapter: [] },
      ]),
    });
  });
});

describe("GET /api/completion/v1/stats/{course_key}/", () => {
  function stats(mean: Record<string, number | null>, filters: { cohorts: number | null; exclude_roles: string[] }): unknown {
    return { status: 200, body: { results: [{ course_key: COURSE, mean_completion: mean, filters }] } };
  }
  const none = { cohorts: null, exclude_roles: [] };

  it.each([
    // ada 1.75, bob 1, cy 0, staffer 1; each possible 4.
    ["every active learner", "", dict((1.75 + 1 + 0 + 1) / 4, 4), none],
    ["a cohort's members", "?cohorts=10", dict((1.75 + 0) / 2, 4), { cohorts: 10, exclude_roles: [] }],
    ["learners without the excluded roles", "?exclude_roles=staff,instructor", dict((1.75 + 1 + 0) / 3, 4), { cohorts: null, exclude_roles: ["staff", "instructor"] }],
    ["a cohort and excluded roles", "?cohorts=11&exclude_roles=staff", dict(1, 4), { cohorts: 11, exclude_roles: ["staff"] }],
    ["an unknown cohort: nobody", "?cohorts=999", { earned: null, possible: null, percent: null, ratio: null }, { cohorts: 999, exclude_roles: [] }],
  ])("averages over %s", async (_name, query, mean, filters) => {
    expect(await get(await tokenFor("anyone@example.com"), `${STATS}${query}`)).toEqual(stats({ ...mean }, filters));
  });

  it("answers for a course whose structure is unknown", async () => {
    expect(await get(await tokenFor("anyone@example.com"), `/api/completion/v1/stats/${NO_STRUCTURE_COURSE}`)).toEqual({
      status: 200,
      body: { results: [{ course_key: NO_STRUCTURE_COURSE, mean_completion: UNKNOWN, filters: none }] },
    });
  });

  it("sees a structure that another process imported after this one had cached the course", async () => {
    const url = `/api/completion/v1/stats/${NO_STRUCTURE_COURSE}/`;
    const token = await tokenFor("anyone@example.com");
    expect(await get(token, url)).toEqual({ status: 200, body: { results: [{ course_key: NO_STRUCTURE_COURSE, mean_completion: UNKNOWN, filters: none }] } });
    // Another process has a cache of its own.
    await loadBulkData(h.ctx.db, new CourseStructures(), h.ctx.settings.aggregatorTypes, { courses: [{ course_key: NO_STRUCTURE_COURSE, structure: OTHER_TREE }] }, h.ctx.now());
    expect(await get(token, url)).toEqual({ status: 200, body: { results: [{ course_key: NO_STRUCTURE_COURSE, mean_completion: dict(0, 1), filters: none }] } });
  });

  it("answers for a course with an org/course/run key", async () => {
    expect(await get(await tokenFor("anyone@example.com"), `/api/completion/v1/stats/${OTHER_COURSE}/`)).toEqual({
      status: 200,
      body: { results: [{ course_key: OTHER_COURSE, mean_completion: dict(1, 1), filters: none }] },
    });
  });

  it.each([
    ["a malformed course key", `/api/completion/v1/stats/course-v1:nope/`, 404, "Invalid course key: course-v1:nope"],
    ["an unknown course", `/api/completion/v1/stats/course-v1:a+b+c/`, 404, "Course not found: course-v1:a+b+c"],
    ["a cohorts value that is not an integer", `${STATS}?cohorts=ten`, 400, "Invalid cohorts value: ten"],
    ["two cohorts", `${STATS}?cohorts=10,11`, 400, "Invalid cohorts value: 10,11"],
    ["a cohorts value out of range", `${STATS}?cohorts=99999999999`, 400, "Invalid cohorts value: 99999999999"],
  ])("refuses %s", async (_name, url, status, detail) => {
    expect(await get(await tokenFor("anyone@example.com"), url)).toEqual({ status, body: { detail } });
  });

  it("refuses a caller without a token", async () => {
    expect(await get(null, STATS)).toEqual({ status: 401, body: { detail: "Authentication credentials were not provided." } });
  });
});
