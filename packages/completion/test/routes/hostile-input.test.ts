import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { sql } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/run-cli.js";
import { MAX_TREE_DEPTH } from "../../src/domain/course-tree.js";
import { MAX_JSON_DEPTH } from "../../src/domain/storable-input.js";
import { baseData, block, COURSE, load } from "../support/data.js";
import { useHarness } from "../support/harness.js";

const h = await useHarness();
const DETAIL = `/api/completion/v1/course/${COURSE}/`;
const IMPORT = "/api/completion/v1/admin/import";
const BATCH = "/api/completion/v1/completion-batch";
const NUL = "contains a NUL character (U+0000).";
const SURROGATE = "contains an unpaired UTF-16 surrogate.";

const tokens = { ada: "", staff: "", admin: "" };
beforeEach(async () => {
  await load(h.ctx, baseData());
  tokens.ada = (await h.signon.tokenFor("ada@example.com")).token;
  tokens.staff = (await h.signon.tokenFor("ops@example.com", ["staff"], { apiUser: true })).token;
  tokens.admin = (await h.signon.tokenFor("admin@example.com", ["admin"])).token;
});

/** Sends a request; a string payload goes as written, as `application/json`. */
async function send(method: "GET" | "POST" | "PUT", url: string, caller: keyof typeof tokens, payload?: unknown): Promise<{ status: number; body: unknown }> {
  const headers: Record<string, string> = { authorization: `Bearer ${tokens[caller]}` };
  if (typeof payload === "string") headers["content-type"] = "application/json";
  const response = await h.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as string }) });
  return { status: response.statusCode, body: response.json() };
}

/** Row counts of every table of the `completion` schema. */
async function rowCounts(): Promise<Record<string, number>> {
  const tables = ["learners", "courses", "blocks", "enrollments", "course_roles", "cohorts", "cohort_memberships", "block_completions", "aggregates", "stale_completions"];
  const counts: Record<string, number> = {};
  for (const table of tables) {
    const result = await h.database.db.execute<{ count: number }>(sql.raw(`select count(*)::int as count from completion.${table}`));
    counts[table] = result.rows[0]!.count;
  }
  return counts;
}

/** A chain of verticals `levels` blocks deep under the course block, as JSON text (too deep for JSON.stringify to be safe). */
function deepStructure(levels: number): string {
  let text = '{"type":"problem","id":"leaf"}';
  for (let level = levels - 1; level >= 2; level -= 1) text = `{"type":"vertical","id":"v${level}","children":[${text}]}`;
  return `{"type":"course","id":"course","children":[${text}]}`;
}

describe("text that PostgreSQL cannot store: 400 naming the field", () => {
  it.each([
    ["username on the list", "GET", "/api/completion/v1/course/?username=ada%00", undefined, `Invalid querystring: querystring/username ${NUL}`],
    ["username on detail", "GET", `${DETAIL}?username=ada%00`, undefined, `Invalid querystring: querystring/username ${NUL}`],
    ["root_block on detail", "GET", `${DETAIL}?root_block=${encodeURIComponent(block("chapter", "ch1"))}%00`, undefined, `Invalid querystring: querystring/root_block ${NUL}`],
    ["exclude_roles on stats", "GET", `/api/completion/v1/stats/${COURSE}/?exclude_roles=staff,%00`, undefined, `Invalid querystring: querystring/exclude_roles ${NUL}`],
    ["the course key of the path", "GET", "/api/completion/v1/course/course-v1:TesseraX+CS101%00+2026/?username=ada", undefined, `Invalid params: params/course_key ${NUL}`],
    ["username in a POST body", "POST", DETAIL, '{"username":"ada\\u0000"}', `Invalid body: body/username ${NUL}`],
    ["a lone surrogate in a POST body", "POST", DETAIL, '{"username":"ada\\ud800"}', `Invalid body: body/username ${SURROGATE}`],
    ["requested_fields in a POST body", "POST", DETAIL, '{"username":"ada","requested_fields":["chapter","\\udc00"]}', `Invalid body: body/requested_fields/1 ${SURROGATE}`],
    ["username of a batch", "POST", BATCH, `{"username":"ada\\u0000","course_key":"${COURSE}","blocks":{}}`, `Invalid body: body/username ${NUL}`],
    ["a block key of a batch", "POST", BATCH, `{"username":"ada","course_key":"${COURSE}","blocks":{"x\\u0000":1}}`, `Invalid body: body/blocks has a property name that ${NUL}`],
    ["the course key of a batch", "POST", BATCH, `{"username":"ada","course_key":"${COURSE}\\ud83d","blocks":{}}`, `Invalid body: body/course_key ${SURROGATE}`],
  ] as const)("%s", async (_what, method, url, payload, detail) => {
    expect(await send(method, url, "staff", payload)).toEqual({ status: 400, body: { detail } });
  });

  it("keeps characters beyond the BMP, which are well-formed pairs", async () => {
    expect(await send("GET", `${DETAIL}?username=${encodeURIComponent("ada😀")}`, "staff")).toEqual({ status: 404, body: { detail: "User not found: ada😀" } });
  });

  it.each([
    ["a user's username", { users: [{ id: 9, username: "eve\u0000", email: "eve@example.com" }] }, "body/users/0/username", NUL],
    ["a user's e-mail", { users: [{ id: 9, username: "eve", email: "eve\u0000@example.com" }] }, "body/users/0/email", NUL],
    ["a user's uid", { users: [{ id: 9, username: "eve", email: "eve@example.com", uid: "\uD800" }] }, "body/users/0/uid", SURROGATE],
    [
      "a display name",
      { courses: [{ course_key: "o/c/r", structure: { type: "course", id: "course", display_name: "Intro\u0000" } }] },
      "body/courses/0/structure/display_name",
      NUL,
    ],
    ["an enrollment mode", { enrollments: [{ username: "ada", course_key: COURSE, mode: "audit\u0000" }] }, "body/enrollments/0/mode", NUL],
    ["a role", { roles: [{ username: "ada", course_key: COURSE, role: "beta\u0000" }] }, "body/roles/0/role", NUL],
    ["a cohort name", { cohorts: [{ id: 12, course_key: COURSE, name: "\uDFFFGroup", members: [] }] }, "body/cohorts/0/name", SURROGATE],
  ])("the admin import refuses %s and writes nothing", async (_what, payload, field, reason) => {
    const before = await rowCounts();
    expect(await send("PUT", IMPORT, "admin", JSON.stringify(payload))).toEqual({ status: 400, body: { detail: `Invalid body: ${field} ${reason}` } });
    expect(await rowCounts()).toEqual(before);
  });

  it("answers a path that does not percent-decode with the usual error body", async () => {
    expect(await send("GET", "/api/completion/v1/course/course-v1:a%ZZ+b+c/", "staff")).toEqual({ status: 400, body: { detail: "Invalid percent-encoding in the path." } });
  });
});

describe("dates outside the years 0001–9999 (UTC): 400", () => {
  const completion = (modified: string) => ({ completions: [{ username: "ada", course_key: COURSE, block_key: block("problem", "p1"), completion: 1, modified }] });
  const start = (value: string) => ({ courses: [{ course_key: "o/c/r", structure: { type: "course", id: "course", start: value } }] });

  it.each([
    ["a completion's modified in year 0", completion("0000-01-01T00:00:00Z"), "body/completions/0/modified"],
    ["a completion's modified in year 10000 once in UTC", completion("9999-12-31T23:59:59-14:00"), "body/completions/0/modified"],
    ["a block's start in year 0", start("0000-12-31T23:59:59Z"), "body/courses/0/structure/start"],
    ["a block's start in year 10000 once in UTC", start("9999-12-31T23:00:00-01:00"), "body/courses/0/structure/start"],
    ["a day that February does not have", completion("2026-02-30T00:00:00Z"), "body/completions/0/modified"],
  ])("refuses %s and writes nothing", async (_what, payload, field) => {
    const before = await rowCounts();
    // A `start` may also be null, so ajv lists what each branch of that union missed after the format.
    expect(await send("PUT", IMPORT, "admin", payload)).toEqual({
      status: 400,
      body: { detail: expect.stringMatching(new RegExp(`^Invalid body: ${field} must match format "date-time"(,|$)`)) },
    });
    expect(await rowCounts()).toEqual(before);
  });

  it("accepts the first and the last instant of the range", async () => {
    expect((await send("PUT", IMPORT, "admin", completion("0001-01-01T00:00:00Z"))).status).toBe(200);
    expect((await send("PUT", IMPORT, "admin", completion("9999-12-31T23:59:59.999Z"))).status).toBe(200);
    expect((await send("PUT", IMPORT, "admin", start("9999-12-31T23:59:59+14:00"))).status).toBe(200);
  });
});

describe("nesting: limits checked before validation, 400", () => {
  it(`refuses a course structure 1,700 levels deep (JSON nested past ${MAX_JSON_DEPTH} levels) and writes nothing`, async () => {
    const before = await rowCounts();
    const payload = `{"courses":[{"course_key":"o/c/r","structure":${deepStructure(1700)}}]}`;
    expect(await send("PUT", IMPORT, "admin", payload)).toEqual({
      status: 400,
      body: { detail: `Invalid body: body/courses/0/structure/children/0/children/0/children/… is nested more than ${MAX_JSON_DEPTH} levels deep.` },
    });
    expect(await rowCounts()).toEqual(before);
  });

  it(`refuses a course structure one level deeper than ${MAX_TREE_DEPTH}, and stores one ${MAX_TREE_DEPTH} deep`, async () => {
    const tooDeep = `{"courses":[{"course_key":"o/c/r","structure":${deepStructure(MAX_TREE_DEPTH + 1)}}]}`;
    expect(await send("PUT", IMPORT, "admin", tooDeep)).toEqual({
      status: 400,
      body: { detail: `Import refused: /courses/0/structure: Block i4x://o/c/problem/leaf lies more than ${MAX_TREE_DEPTH} levels deep.` },
    });
    const deepest = `{"courses":[{"course_key":"o/c/r","structure":${deepStructure(MAX_TREE_DEPTH)}}],"users":[{"id":9,"username":"eve","email":"eve@example.com"}],"enrollments":[{"username":"eve","course_key":"o/c/r"}]}`;
    expect((await send("PUT", IMPORT, "admin", deepest)).status).toBe(200);
    expect(await send("POST", BATCH, "staff", { username: "eve", course_key: "o/c/r", blocks: { "i4x://o/c/problem/leaf": 1 } })).toEqual({ status: 200, body: { detail: "ok" } });
    expect(await send("GET", "/api/completion/v1/course/o/c/r/?username=eve", "staff")).toEqual({
      status: 200,
      body: expect.objectContaining({ results: [{ course_key: "o/c/r", completion: { earned: 1, possible: 1, percent: 1, ratio: 1 } }] }),
    });
  });

  it("refuses deep nesting in any JSON body", async () => {
    const payload = `{"username":"ada","course_key":"${COURSE}","blocks":{"x":${"[".repeat(5000)}${"]".repeat(5000)}}}`;
    expect(await send("POST", BATCH, "staff", payload)).toEqual({
      status: 400,
      body: { detail: `Invalid body: body/blocks/x/0/0/0/0/0/0/… is nested more than ${MAX_JSON_DEPTH} levels deep.` },
    });
  });
});

describe("headers", () => {
  it("refuses a body in a content coding with 415, and stores nothing", async () => {
    const json = JSON.stringify({ username: "ada", course_key: COURSE, blocks: { [block("problem", "p2")]: 1 } });
    const before = await rowCounts();
    for (const [coding, payload] of [
      ["gzip", gzipSync(json)],
      ["gzip", json],
      ["br", json],
      ["x-unknown, gzip", json],
    ] as const) {
      const response = await h.app.inject({
        method: "POST",
        url: BATCH,
        headers: { authorization: `Bearer ${tokens.staff}`, "content-type": "application/json", "content-encoding": coding },
        payload,
      });
      expect({ status: response.statusCode, body: response.json() }, coding).toEqual({
        status: 415,
        body: { detail: "Unsupported Content-Encoding: send the body without a content coding." },
      });
    }
    expect(await rowCounts()).toEqual(before);

    const identity = await h.app.inject({
      method: "POST",
      url: BATCH,
      headers: { authorization: `Bearer ${tokens.staff}`, "content-type": "application/json", "content-encoding": "identity" },
      payload: json,
    });
    expect(identity.statusCode).toBe(200);
    // A request without a body may carry the header: nothing to decode.
    const read = await h.app.inject({ method: "GET", url: `${DETAIL}?username=ada`, headers: { authorization: `Bearer ${tokens.staff}`, "content-encoding": "gzip" } });
    expect(read.statusCode).toBe(200);
  });

  it("answers 401 to a bearer token longer than any Sign-on issues, without asking Sign-on (whose server would refuse the header)", async () => {
    const response = await h.app.inject({ method: "GET", url: DETAIL, headers: { authorization: `Bearer ${"A".repeat(20_000)}` } });
    expect({ status: response.statusCode, body: response.json() }).toEqual({ status: 401, body: { detail: "Invalid token." } });
  });
});

describe("completion load (CLI)", () => {
  async function loadFile(text: string): Promise<{ code: number; lines: string[] }> {
    const directory = await mkdtemp(join(tmpdir(), "completion-hostile-"));
    try {
      const file = join(directory, "data.json");
      await writeFile(file, text);
      const lines: string[] = [];
      const code = await runCli(["load", file], h.ctx, { out: (line) => void lines.push(line), err: (line) => void lines.push(line.replace(file, "FILE")) });
      return { code, lines };
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  }

  it.each([
    ["a NUL in a username", '{"users":[{"id":9,"username":"eve\\u0000","email":"e@example.com"}]}', "/users/0/username: contains a NUL character (U+0000)"],
    ["a lone surrogate in a cohort name", '{"cohorts":[{"id":12,"course_key":"o/c/r","name":"\\udc01","members":[]}]}', "/cohorts/0/name: contains an unpaired UTF-16 surrogate"],
    [
      "a structure 1,700 levels deep",
      `{"courses":[{"course_key":"o/c/r","structure":${deepStructure(1700)}}]}`,
      `/courses/0/structure/children/0/children/0/children/…: is nested more than ${MAX_JSON_DEPTH} levels deep`,
    ],
    ["a modified date in year 0", `{"completions":[{"username":"ada","course_key":"${COURSE}","block_key":"${block("problem", "p1")}","completion":1,"modified":"0000-01-01T00:00:00Z"}]}`, "/completions/0/modified: Expected string to match 'date-time' format"],
  ])("refuses %s, loads nothing and exits 1", async (_what, text, problem) => {
    const before = await rowCounts();
    expect(await loadFile(text)).toEqual({ code: 1, lines: [`FILE is not in the bulk-load format:\n${problem}`] });
    expect(await rowCounts()).toEqual(before);
  });

  it(`refuses a structure ${MAX_TREE_DEPTH + 1} levels deep`, async () => {
    expect(await loadFile(`{"courses":[{"course_key":"o/c/r","structure":${deepStructure(MAX_TREE_DEPTH + 1)}}]}`)).toEqual({
      code: 1,
      lines: [`Nothing was loaded from FILE:\n/courses/0/structure: Block i4x://o/c/problem/leaf lies more than ${MAX_TREE_DEPTH} levels deep.`],
    });
  });

  it("refuses an OLX export whose display name holds a NUL character", async () => {
    const directory = await mkdtemp(join(tmpdir(), "completion-hostile-olx-"));
    try {
      await writeFile(join(directory, "course.xml"), '<course url_name="r" org="o" course="c"/>');
      await mkdir(join(directory, "course"));
      await writeFile(join(directory, "course", "r.xml"), '<course display_name="Intro\u0000"/>');
      const lines: string[] = [];
      const before = await rowCounts();
      expect(await runCli(["import-olx", directory], h.ctx, { out: (line) => void lines.push(line), err: (line) => void lines.push(line) })).toBe(1);
      expect(lines).toEqual(["Nothing was imported: /courses/0/structure/display_name: contains a NUL character (U+0000)"]);
      expect(await rowCounts()).toEqual(before);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
