import { beforeEach, describe, expect, it } from "vitest";
import { baseData, block, COURSE, COURSE_TREE, load, NO_STRUCTURE_COURSE, OTHER_COURSE } from "../support/data.js";
import { dict, entry, onePage } from "../support/expect.js";
import { buildApp } from "../../src/app.js";
import { SignonCallerResolver } from "../../src/auth/signon-caller-resolver.js";
import { DEFAULT_AGGREGATOR_TYPES } from "../../src/config.js";
import { createContext } from "../../src/context.js";
import { useHarness } from "../support/harness.js";

const h = await useHarness();
const BASE = "/api/completion/v1/course/";
const DETAIL = `${BASE}${COURSE}/`;
const HOST = "http://localhost:80";

/** ada: 1.75 of 4 (p1 1, h1 0.5, vid1 0.25); bob: 1 of 4 (p2); cy: nothing; staffer (course role staff): p1. */
async function seed(): Promise<void> {
  await load(h.ctx, {
    ...baseData(),
    completions: [
      { username: "ada", course_key: COURSE, block_key: block("problem", "p1"), completion: 1 },
      { username: "ada", course_key: COURSE, block_key: block("html", "h1"), completion: 0.5 },
      { username: "ada", course_key: COURSE, block_key: block("video", "vid1"), completion: 0.25 },
      { username: "bob", course_key: COURSE, block_key: block("problem", "p2"), completion: 1 },
      { username: "staffer", course_key: COURSE, block_key: block("problem", "p1"), completion: 1 },
      { username: "bob", course_key: OTHER_COURSE, block_key: "i4x://TesseraX/CS102/html/page", completion: 1 },
    ],
  });
}

const tokens = { ada: "", bob: "", staff: "", masquerade: "" };
beforeEach(async () => {
  await seed();
  tokens.ada = (await h.signon.tokenFor("ADA@example.com")).token;
  tokens.bob = (await h.signon.tokenFor("bob@example.com")).token;
  tokens.staff = (await h.signon.tokenFor("reporting-api@example.com", ["staff"], { apiUser: true })).token;
  tokens.masquerade = (await h.signon.tokenFor("support@example.com", ["masquerade"])).token;
});

type Caller = keyof typeof tokens | null;

async function get(caller: Caller, url: string): Promise<{ status: number; body: unknown }> {
  const response = await h.app.inject({ method: "GET", url, headers: caller ? { authorization: `Bearer ${tokens[caller]}` } : {} });
  return { status: response.statusCode, body: response.json() };
}

async function post(caller: Caller, url: string, payload: unknown): Promise<{ status: number; body: unknown }> {
  const response = await h.app.inject({
    method: "POST",
    url,
    headers: caller ? { authorization: `Bearer ${tokens[caller]}` } : {},
    payload: payload as Record<string, unknown>,
  });
  return { status: response.statusCode, body: response.json() };
}

const ADA_COURSE = dict(1.75, 4);
const ADA_CHAPTERS = [entry("chapter", "ch1", 1.5, 3), entry("chapter", "ch2", 0.25, 1)];
const ADA_SEQUENTIALS = [entry("sequential", "s1", 1.5, 3), entry("sequential", "s2", 0, 0), entry("sequential", "s3", 0.25, 1)];
const ADA_VERTICALS = [
  entry("vertical", "v1", 1.5, 2),
  entry("vertical", "v2", 0, 1),
  entry("vertical", "v3", 0.25, 1),
  entry("vertical", "v4", 0, 0),
];
/** C13: ada 0.4375, bob 0.25, cy 0; staffer holds a course role and dee is inactive. */
const MEAN = (0.4375 + 0.25 + 0) / 3;

describe("GET /api/completion/v1/course/{course_key}/ (one user)", () => {
  it.each([
    ["the caller's own course completion", "ada", `${DETAIL}?username=ada`, [{ course_key: COURSE, completion: ADA_COURSE }]],
    [
      "aggregator lists in outline order, with the empty sequential at percent 1 and the excluded blocks at 0 of 0",
      "ada",
      `${DETAIL}?username=ada&requested_fields=chapter,sequential,vertical`,
      [{ course_key: COURSE, completion: ADA_COURSE, chapter: ADA_CHAPTERS, sequential: ADA_SEQUENTIALS, vertical: ADA_VERTICALS }],
    ],
    [
      "trimmed requested_fields with mean and username",
      "ada",
      `${DETAIL}?username=ada&requested_fields=%20chapter%20,mean,username`,
      [{ course_key: COURSE, completion: ADA_COURSE, chapter: ADA_CHAPTERS, mean: MEAN, username: "ada" }],
    ],
    [
      "the course as an aggregator type",
      "ada",
      `${DETAIL}?username=ada&requested_fields=course`,
      [{ course_key: COURSE, completion: ADA_COURSE, course: [entry("course", "course", 1.75, 4)] }],
    ],
    [
      "a root_block: that block's aggregate and only the blocks under it",
      "ada",
      `${DETAIL}?username=ada&root_block=${encodeURIComponent(block("chapter", "ch1"))}&requested_fields=sequential,vertical,chapter`,
      [
        {
          course_key: COURSE,
          completion: dict(1.5, 3),
          chapter: [entry("chapter", "ch1", 1.5, 3)],
          sequential: ADA_SEQUENTIALS.slice(0, 2),
          vertical: ADA_VERTICALS.slice(0, 2),
        },
      ],
    ],
    [
      "a legacy i4x root_block mapped into the course",
      "ada",
      `${DETAIL}?username=ada&root_block=${encodeURIComponent("i4x://TesseraX/CS101/sequential/s3")}&requested_fields=vertical`,
      [{ course_key: COURSE, completion: dict(0.25, 1), vertical: ADA_VERTICALS.slice(2) }],
    ],
    [
      "a root_block of a type that is not stored, computed from completions",
      "ada",
      `${DETAIL}?username=ada&root_block=${encodeURIComponent(block("html", "h1"))}&requested_fields=vertical`,
      [{ course_key: COURSE, completion: dict(0.5, 1), vertical: [] }],
    ],
    [
      "an empty root_block: the container with nothing completable is complete",
      "ada",
      `${DETAIL}?username=ada&root_block=${encodeURIComponent(block("sequential", "s2"))}`,
      [{ course_key: COURSE, completion: dict(0, 0) }],
    ],
    ["another user's data with masquerade", "masquerade", `${DETAIL}?username=bob`, [{ course_key: COURSE, completion: dict(1, 4) }]],
    ["another user's data as staff", "staff", `${DETAIL}?username=cy`, [{ course_key: COURSE, completion: dict(0, 4) }]],
    ["the caller's own data without the trailing slash", "ada", `${BASE}${COURSE}?username=ada`, [{ course_key: COURSE, completion: ADA_COURSE }]],
    [
      "a course with an org/course/run key",
      "bob",
      `${BASE}${OTHER_COURSE}/?username=bob&requested_fields=chapter`,
      [
        {
          course_key: OTHER_COURSE,
          completion: dict(1, 1),
          chapter: [
            {
              course_key: OTHER_COURSE,
              block_key: "i4x://TesseraX/CS102/chapter/only",
              usage_key: "i4x://TesseraX/CS102/chapter/only",
              completion: dict(1, 1),
            },
          ],
        },
      ],
    ],
    [
      "a course whose structure is unknown",
      "ada",
      `${BASE}${NO_STRUCTURE_COURSE}/?username=ada&requested_fields=chapter`,
      [{ course_key: NO_STRUCTURE_COURSE, completion: { earned: 0, possible: null, percent: 0, ratio: 0 }, chapter: [] }],
    ],
  ] as const)("returns %s", async (_name, caller, url, results) => {
    expect(await get(caller, url)).toEqual({ status: 200, body: onePage([...results]) });
  });

  it.each([
    ["no token", null, `${DETAIL}?username=ada`, 401, "Authentication credentials were not provided."],
    ["a malformed course key", "ada", `${BASE}course-v1:TesseraX+CS101/?username=ada`, 404, "Invalid course key: course-v1:TesseraX+CS101"],
    ["an unknown course", "ada", `${BASE}course-v1:TesseraX+NOPE+2026/?username=ada`, 404, "Course not found: course-v1:TesseraX+NOPE+2026"],
    ["a malformed root_block", "ada", `${DETAIL}?username=ada&root_block=chapter-1`, 404, "Invalid block key: chapter-1"],
    [
      "a root_block of another course",
      "ada",
      `${DETAIL}?username=ada&root_block=${encodeURIComponent("block-v1:TesseraX+CS102+2026+type@chapter+block@only")}`,
      404,
      "Invalid block key: block-v1:TesseraX+CS102+2026+type@chapter+block@only",
    ],
    [
      "a root_block that is not in the course tree",
      "ada",
      `${DETAIL}?username=ada&root_block=${encodeURIComponent(block("chapter", "gone"))}`,
      404,
      `Invalid block key: ${block("chapter", "gone")}`,
    ],
    ["an invalid requested_fields value", "ada", `${DETAIL}?username=ada&requested_fields=chapter,grades,`, 400, "Invalid requested_fields value(s): grades"],
    ["a non-staff caller without username", "ada", DETAIL, 403, "Only staff may read the completion of every user of a course; pass username."],
    ["another username without permission", "ada", `${DETAIL}?username=bob`, 403, "You do not have permission to read another user's completion data."],
    ["a learner whose enrollment is inactive", "staff", `${DETAIL}?username=dee`, 404, `User dee is not actively enrolled in ${COURSE}.`],
    ["an unknown username", "staff", `${DETAIL}?username=nobody`, 404, "User not found: nobody"],
    ["a user outside user_ids", "ada", `${DETAIL}?username=ada&user_ids=2`, 404, `User ada is not actively enrolled in ${COURSE}.`],
    ["page 2 of one user", "ada", `${DETAIL}?username=ada&page=2`, 404, "Invalid page."],
  ] as const)("refuses %s", async (_name, caller, url, status, detail) => {
    expect(await get(caller, url)).toEqual({ status, body: { detail } });
  });

  it("refuses a token that Sign-on does not accept", async () => {
    const response = await h.app.inject({ method: "GET", url: `${DETAIL}?username=ada`, headers: { authorization: "Bearer not-a-token" } });
    expect(response.statusCode).toBe(401);
    expect(response.headers["www-authenticate"]).toBe('Bearer error="invalid_token"');
    expect(response.json()).toEqual({ detail: "Invalid token." });
  });

  it("answers 503 while Sign-on cannot be asked", async () => {
    const callers = new SignonCallerResolver({ signonUrl: "http://127.0.0.1:1", clientId: "completion", cacheSeconds: 0 });
    const app = await buildApp(createContext({ aggregatorTypes: DEFAULT_AGGREGATOR_TYPES, rebuildStaleFromScratch: false }, h.ctx.db, callers));
    try {
      const response = await app.inject({ method: "GET", url: `${DETAIL}?username=ada`, headers: { authorization: `Bearer ${tokens.ada}` } });
      expect({ status: response.statusCode, body: response.json() as unknown }).toEqual({
        status: 503,
        body: { detail: "The sign-on service is unavailable; try again later." },
      });
    } finally {
      await app.close();
    }
  });

  it("challenges a request without credentials with a plain Bearer challenge", async () => {
    const response = await h.app.inject({ method: "GET", url: `${DETAIL}?username=ada` });
    expect(response.headers["www-authenticate"]).toBe("Bearer");
  });

  it("reads a percent-encoded course key", async () => {
    expect(await get("ada", `${BASE}${encodeURIComponent(COURSE)}/?username=ada`)).toEqual({
      status: 200,
      body: onePage([{ course_key: COURSE, completion: ADA_COURSE }]),
    });
  });

  it("links the caller to a learner by e-mail on first sight, then by uid", async () => {
    tokens.ada = (await h.signon.tokenFor("cy@EXAMPLE.com")).token;
    expect((await get("ada", `${DETAIL}?username=cy`)).status).toBe(200);
    // The learner's e-mail address changes here: the Sign-on uid still names cy.
    await load(h.ctx, { users: [{ id: 3, username: "cy", email: "cy.new@example.com" }] });
    expect(await get("ada", `${DETAIL}?username=cy`)).toEqual({ status: 200, body: onePage([{ course_key: COURSE, completion: dict(0, 4) }]) });
  });

});

describe("GET /api/completion/v1/course/{course_key}/ (staff, all users)", () => {
  const everyone = [
    { username: "ada", course_key: COURSE, completion: ADA_COURSE },
    { username: "bob", course_key: COURSE, completion: dict(1, 4) },
    { username: "cy", course_key: COURSE, completion: dict(0, 4) },
    { username: "staffer", course_key: COURSE, completion: dict(1, 4) },
  ];

  it.each([
    ["every active enrollment by learner id, with usernames", DETAIL, everyone],
    ["user_ids separated by commas", `${DETAIL}?user_ids=3,1`, [everyone[0], everyone[2]]],
    ["user_ids separated by periods", `${DETAIL}?user_ids=1.2.4`, [everyone[0], everyone[1]]],
    ["user_ids of nobody enrolled", `${DETAIL}?user_ids=99`, []],
    ["mean on every item", `${DETAIL}?requested_fields=mean&user_ids=2`, [{ ...everyone[1], mean: MEAN }]],
    [
      "a root_block and lists for every user",
      `${DETAIL}?user_ids=2&root_block=${encodeURIComponent(block("sequential", "s1"))}&requested_fields=vertical`,
      [{ ...everyone[1], completion: dict(1, 3), vertical: [entry("vertical", "v1", 0, 2), entry("vertical", "v2", 1, 1)] }],
    ],
  ] as const)("returns %s", async (_name, url, results) => {
    expect(await get("staff", url)).toEqual({ status: 200, body: onePage([...results]) });
  });

  it.each([
    ["letters", "abc"],
    ["an empty item", "1,,2"],
    ["a negative id", "-1"],
    ["an id too large for a user id", "99999999999"],
    ["a decimal mark inside an id", "1.5e3"],
  ])("refuses user_ids with %s", async (_name, value) => {
    expect(await get("staff", `${DETAIL}?user_ids=${encodeURIComponent(value)}`)).toEqual({
      status: 400,
      body: { detail: `Invalid user_ids value: ${value}` },
    });
  });

  describe("paging", () => {
    it("gives page 1 of 2 with a next link that changes only page", async () => {
      expect(await get("staff", `${DETAIL}?page_size=3&requested_fields=mean`)).toEqual({
        status: 200,
        body: {
          count: 4,
          num_pages: 2,
          current_page: 1,
          start: 0,
          next: `${HOST}${DETAIL}?page_size=3&requested_fields=mean&page=2`,
          previous: null,
          results: everyone.slice(0, 3).map((item) => ({ ...item, mean: MEAN })),
        },
      });
    });

    it("names the proxy's public origin in its links only when told to trust the proxy", async () => {
      const forwarded = { "x-forwarded-proto": "https", "x-forwarded-host": "completion.example.org", "x-forwarded-for": "203.0.113.9" };
      const nextLink = async (app: typeof h.app) => {
        const response = await app.inject({ method: "GET", url: `${DETAIL}?page_size=3`, headers: { authorization: `Bearer ${tokens.staff}`, ...forwarded } });
        return (response.json() as { next: string }).next;
      };
      const behindProxy = await buildApp(h.ctx, { trustProxy: true });
      try {
        expect(await nextLink(behindProxy)).toBe(`https://completion.example.org${DETAIL}?page_size=3&page=2`);
      } finally {
        await behindProxy.close();
      }
      expect(await nextLink(h.app)).toBe(`${HOST}${DETAIL}?page_size=3&page=2`);
    });

    it("gives the last page with a previous link", async () => {
      expect(await get("staff", `${DETAIL}?page=2&page_size=3`)).toEqual({
        status: 200,
        body: {
          count: 4,
          num_pages: 2,
          current_page: 2,
          start: 3,
          next: null,
          previous: `${HOST}${DETAIL}?page=1&page_size=3`,
          results: everyone.slice(3),
        },
      });
    });

    it("clamps page_size to 1000", async () => {
      expect(await get("staff", `${DETAIL}?page_size=100000`)).toEqual({ status: 200, body: onePage(everyone) });
    });

    it("gives page 1 of an empty result", async () => {
      expect(await get("staff", `${DETAIL}?user_ids=77`)).toEqual({ status: 200, body: onePage([]) });
    });

    it.each([
      ["a page past the last", "page=3&page_size=3", 404, "Invalid page."],
      ["page 2 of an empty result", "page=2&user_ids=77", 404, "Invalid page."],
      ["page 0", "page=0", 404, "Invalid page."],
      ["a page that is not a number", "page=last", 404, "Invalid page."],
      ["a page_size of 0", "page_size=0", 400, "Invalid page_size."],
      ["a page_size that is not a number", "page_size=ten", 400, "Invalid page_size."],
      ["page given twice", "page=1&page=2", 400, "Invalid querystring: querystring/page must be string"],
    ])("refuses %s", async (_name, query, status, detail) => {
      expect(await get("staff", `${DETAIL}?${query}`)).toEqual({ status, body: { detail } });
    });
  });
});

describe("POST /api/completion/v1/course/{course_key}/", () => {
  it("filters by user_ids and requested_fields from the body", async () => {
    expect(await post("staff", DETAIL, { user_ids: [5, 2], requested_fields: ["chapter"] })).toEqual({
      status: 200,
      body: onePage([
        { username: "bob", course_key: COURSE, completion: dict(1, 4), chapter: [entry("chapter", "ch1", 1, 3), entry("chapter", "ch2", 0, 1)] },
        { username: "staffer", course_key: COURSE, completion: dict(1, 4), chapter: [entry("chapter", "ch1", 1, 3), entry("chapter", "ch2", 0, 1)] },
      ]),
    });
  });

  it("reads one user with a root_block from the body", async () => {
    expect(await post("ada", DETAIL, { username: "ada", root_block: block("vertical", "v1") })).toEqual({
      status: 200,
      body: onePage([{ course_key: COURSE, completion: dict(1.5, 2) }]),
    });
  });

  it("pages with page and page_size in the query", async () => {
    const response = await post("staff", `${DETAIL}?page=2&page_size=2`, { user_ids: [1, 2, 3] });
    expect(response).toEqual({
      status: 200,
      body: {
        count: 3,
        num_pages: 2,
        current_page: 2,
        start: 2,
        next: null,
        previous: `${HOST}${DETAIL}?page=1&page_size=2`,
        results: [{ username: "cy", course_key: COURSE, completion: dict(0, 4) }],
      },
    });
  });

  it.each([
    ["user_ids that are not integers", { user_ids: ["1"] }, 400, "Invalid body: body/user_ids/0 must be integer"],
    ["user_ids as a string", { user_ids: "1,2" }, 400, "Invalid body: body/user_ids must be array"],
    ["an invalid requested_fields value", { requested_fields: ["chapter", "nope"] }, 400, "Invalid requested_fields value(s): nope"],
    ["an unknown field", { usernames: ["ada"] }, 400, "Invalid body: body must NOT have additional properties"],
    ["a malformed root_block", { root_block: "block-v1:bad" }, 404, "Invalid block key: block-v1:bad"],
  ])("refuses %s", async (_name, payload, status, detail) => {
    expect(await post("staff", DETAIL, payload)).toEqual({ status, body: { detail } });
  });

  it("refuses a malformed course key with 404", async () => {
    expect(await post("staff", `${BASE}not-a-course/`, {})).toEqual({ status: 404, body: { detail: "Invalid course key: not-a-course" } });
  });

  it("refuses a body that is not JSON", async () => {
    const response = await h.app.inject({
      method: "POST",
      url: DETAIL,
      headers: { authorization: `Bearer ${tokens.staff}`, "content-type": "application/json" },
      payload: "{nope",
    });
    expect(response.statusCode).toBe(400);
    expect(Object.keys(response.json() as object)).toEqual(["detail"]);
  });
});

describe("stale records (C14)", () => {
  const CHANGED_TREE = structuredClone(COURSE_TREE);
  // A new problem in v2: possible grows from 4 to 5.
  CHANGED_TREE.children![0]!.children![0]!.children![1]!.children!.push({ type: "problem", id: "p9" });

  it("finds a root_block that a re-import added, after reads had cached the older tree", async () => {
    expect((await get("ada", `${DETAIL}?username=ada`)).status).toBe(200);
    await load(h.ctx, { courses: [{ course_key: COURSE, structure: CHANGED_TREE }] });
    expect(await get("ada", `${DETAIL}?username=ada&root_block=${encodeURIComponent(block("problem", "p9"))}`)).toEqual({
      status: 200,
      body: onePage([{ course_key: COURSE, completion: dict(0, 1) }]),
    });
  });

  it("recomputes a stale single-user read and stores it; all-user reads keep stored rows until the worker runs", async () => {
    const summary = await load(h.ctx, { courses: [{ course_key: COURSE, structure: CHANGED_TREE }] });
    expect(summary).toMatchObject({ structuresChanged: 1, learnersMarkedStale: 5 });

    expect(await get("staff", `${DETAIL}?user_ids=1,2`)).toEqual({
      status: 200,
      body: onePage([
        { username: "ada", course_key: COURSE, completion: ADA_COURSE },
        { username: "bob", course_key: COURSE, completion: dict(1, 4) },
      ]),
    });
    expect(await get("ada", `${DETAIL}?username=ada&requested_fields=vertical`)).toEqual({
      status: 200,
      body: onePage([
        {
          course_key: COURSE,
          completion: dict(1.75, 5),
          vertical: [entry("vertical", "v1", 1.5, 2), entry("vertical", "v2", 0, 2), entry("vertical", "v3", 0.25, 1), entry("vertical", "v4", 0, 0)],
        },
      ]),
    });
    // ada's result was stored; bob's still waits for the worker.
    expect(await get("staff", `${DETAIL}?user_ids=1,2`)).toEqual({
      status: 200,
      body: onePage([
        { username: "ada", course_key: COURSE, completion: dict(1.75, 5) },
        { username: "bob", course_key: COURSE, completion: dict(1, 4) },
      ]),
    });
  });
});
