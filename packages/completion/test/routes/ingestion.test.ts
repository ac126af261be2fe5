import { and, asc, eq, sql } from "drizzle-orm";
import { join } from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { refreshStaleLearner, resolveStaleRecords } from "../../src/aggregation/stale.js";
import { startStaleWorker } from "../../src/aggregation/stale-worker.js";
import { runCli } from "../../src/cli/run-cli.js";
import { createContext } from "../../src/context.js";
import { aggregates, staleCompletions } from "../../src/db/schema.js";
import type { BulkData } from "../../src/ingest/bulk-format.js";
import { baseData, block, COURSE, COURSE_TREE, load, OTHER_COURSE, OTHER_TREE } from "../support/data.js";
import { dict, entry, onePage } from "../support/expect.js";
import { useHarness } from "../support/harness.js";

const h = await useHarness();
const BATCH = "/api/completion/v1/completion-batch";
const IMPORT = "/api/completion/v1/admin/import";
const OLX = join(import.meta.dirname, "..", "fixtures", "olx-small");

const tokens = { ada: "", staff: "", admin: "" };
beforeEach(async () => {
  await load(h.ctx, baseData());
  tokens.ada = (await h.signon.tokenFor("ada@example.com")).token;
  tokens.staff = (await h.signon.tokenFor("ops@example.com", ["staff"], { apiUser: true })).token;
  tokens.admin = (await h.signon.tokenFor("admin@example.com", ["admin"])).token;
});

async function send(method: "POST" | "PUT", url: string, caller: keyof typeof tokens | null, payload: unknown): Promise<{ status: number; body: unknown }> {
  const response = await h.app.inject({
    method,
    url,
    headers: caller ? { authorization: `Bearer ${tokens[caller]}` } : {},
    payload: payload as Record<string, unknown>,
  });
  return { status: response.statusCode, body: response.json() };
}

async function detail(username: string, fields = ""): Promise<unknown> {
  const response = await h.app.inject({
    method: "GET",
    url: `/api/completion/v1/course/${COURSE}/?username=${username}&requested_fields=${fields}`,
    headers: { authorization: `Bearer ${tokens.staff}` },
  });
  return response.json();
}

async function storedAggregateBlocks(learnerId: number): Promise<string[]> {
  const rows = await h.database.db
    .select({ blockKey: aggregates.blockKey })
    .from(aggregates)
    .where(and(eq(aggregates.learnerId, learnerId), eq(aggregates.courseKey, COURSE)))
    .orderBy(asc(aggregates.blockKey));
  return rows.map((row) => row.blockKey);
}

describe("POST /api/completion/v1/completion-batch", () => {
  it("stores the learner's completions and updates the aggregates before answering", async () => {
    expect(await send("POST", BATCH, "ada", { username: "ada", course_key: COURSE, blocks: { [block("problem", "p1")]: 1, [block("video", "vid1")]: 0.5 } })).toEqual({
      status: 200,
      body: { detail: "ok" },
    });
    expect(await detail("ada", "chapter")).toEqual(
      onePage([{ course_key: COURSE, completion: dict(1.5, 4), chapter: [entry("chapter", "ch1", 1, 3), entry("chapter", "ch2", 0.5, 1)] }]),
    );
  });

  it("writes aggregates only for the ancestors of the changed blocks", async () => {
    await send("POST", BATCH, "ada", { username: "ada", course_key: COURSE, blocks: { [block("html", "h1")]: 1 } });
    expect(await storedAggregateBlocks(1)).toEqual(
      [block("course", "course"), block("chapter", "ch1"), block("sequential", "s1"), block("vertical", "v1")].sort(),
    );
  });

  it("keeps fractional values at full precision", async () => {
    await send("POST", BATCH, "ada", { username: "ada", course_key: COURSE, blocks: { [block("problem", "p1")]: 0.1, [block("html", "h1")]: 0.2 } });
    expect(await detail("ada", "vertical")).toEqual(
      onePage([
        {
          course_key: COURSE,
          completion: dict(0.30000000000000004, 4),
          vertical: [entry("vertical", "v1", 0.30000000000000004, 2), entry("vertical", "v2", 0, 1), entry("vertical", "v3", 0, 1), entry("vertical", "v4", 0, 0)],
        },
      ]),
    );
  });

  it("accepts a staff caller for any learner, and a legacy block key mapped into the course", async () => {
    expect(await send("POST", BATCH, "staff", { username: "bob", course_key: COURSE, blocks: { "i4x://TesseraX/CS101/problem/p2": 0.75 } })).toEqual({
      status: 200,
      body: { detail: "ok" },
    });
    expect(await detail("bob")).toEqual(onePage([{ course_key: COURSE, completion: dict(0.75, 4) }]));
  });

  it.each([
    ["a value above 1", "ada", { username: "ada", course_key: COURSE, blocks: { [block("problem", "p1")]: 1.5 } }, 400, `Invalid completion value for ${block("problem", "p1")}: must be a number from 0 to 1.`],
    ["a negative value", "ada", { username: "ada", course_key: COURSE, blocks: { [block("problem", "p1")]: -0.1 } }, 400, `Invalid completion value for ${block("problem", "p1")}: must be a number from 0 to 1.`],
    ["a value given as text", "ada", { username: "ada", course_key: COURSE, blocks: { [block("problem", "p1")]: "1" } }, 400, `Invalid completion value for ${block("problem", "p1")}: must be a number from 0 to 1.`],
    ["a block of another course", "ada", { username: "ada", course_key: COURSE, blocks: { "i4x://TesseraX/CS102/html/page": 1 } }, 400, `Block i4x://TesseraX/CS102/html/page is not in course ${COURSE}.`],
    ["a block that is not in the tree", "ada", { username: "ada", course_key: COURSE, blocks: { [block("problem", "nope")]: 1 } }, 400, `Block ${block("problem", "nope")} is not in course ${COURSE}.`],
    ["text that is not a block key", "ada", { username: "ada", course_key: COURSE, blocks: { p1: 1 } }, 400, `Block p1 is not in course ${COURSE}.`],
    ["a malformed course key", "ada", { username: "ada", course_key: "CS101", blocks: {} }, 400, "Invalid course key: CS101"],
    ["an inactive enrollment", "staff", { username: "dee", course_key: COURSE, blocks: { [block("problem", "p1")]: 1 } }, 400, `User dee is not actively enrolled in ${COURSE}.`],
    ["an unknown user", "staff", { username: "nobody", course_key: COURSE, blocks: { [block("problem", "p1")]: 1 } }, 404, "User not found: nobody"],
    ["another learner's completions", "ada", { username: "bob", course_key: COURSE, blocks: { [block("problem", "p1")]: 1 } }, 403, "Only the learner or a staff user may submit completions."],
    ["a body without blocks", "ada", { username: "ada", course_key: COURSE }, 400, "Invalid body: body must have required property 'blocks'"],
    ["no token", null, { username: "ada", course_key: COURSE, blocks: {} }, 401, "Authentication credentials were not provided."],
  ] as const)("refuses %s", async (_name, caller, payload, status, detailText) => {
    expect(await send("POST", BATCH, caller, payload)).toEqual({ status, body: { detail: detailText } });
  });

  it("stores nothing when one block of the batch is refused", async () => {
    const response = await send("POST", BATCH, "ada", { username: "ada", course_key: COURSE, blocks: { [block("problem", "p1")]: 1, [block("problem", "nope")]: 1 } });
    expect(response.status).toBe(400);
    expect(await detail("ada")).toEqual(onePage([{ course_key: COURSE, completion: dict(0, 4) }]));
  });
});

describe("PUT /api/completion/v1/admin/import", () => {
  const file: BulkData = {
    users: [{ id: 6, username: "eve", email: "eve@example.com", uid: null }],
    enrollments: [{ username: "eve", course_key: OTHER_COURSE, mode: "verified" }],
    completions: [{ username: "eve", course_key: OTHER_COURSE, block_key: "i4x://TesseraX/CS102/html/page", completion: 0.5 }],
  };

  async function dump(): Promise<unknown> {
    const tables = ["learners", "courses", "blocks", "enrollments", "course_roles", "cohorts", "cohort_memberships", "block_completions", "aggregates", "stale_completions"];
    const result: Record<string, unknown> = {};
    for (const table of tables) {
      const rows = await h.database.db.execute(sql.raw(`select * from completion.${table} order by 1, 2`));
      result[table] = rows.rows;
    }
    return result;
  }

  it("loads a file, and loading it again gives the same state", async () => {
    expect(await send("PUT", IMPORT, "admin", file)).toEqual({
      status: 200,
      body: { courses: 0, structuresChanged: 0, users: 1, enrollments: 1, roles: 0, cohorts: 0, completions: 1, learnersMarkedStale: 0 },
    });
    const once = await dump();
    expect((await send("PUT", IMPORT, "admin", file)).status).toBe(200);
    expect(await dump()).toEqual(once);
    const whole = { ...baseData(), ...file, users: [...baseData().users!, ...file.users!] };
    expect((await send("PUT", IMPORT, "admin", whole)).status).toBe(200);
    const afterWhole = await dump();
    expect((await send("PUT", IMPORT, "admin", whole)).status).toBe(200);
    expect(await dump()).toEqual(afterWhole);
  });

  it.each([
    ["a caller without admin", "staff", file, 403, "The admin permission is needed to import data."],
    ["no token", null, file, 401, "Authentication credentials were not provided."],
    ["a body outside the format", "admin", { users: [{ id: "6" }] }, 400, "Invalid body: body/users/0 must have required property 'username'"],
    ["an unknown user", "admin", { enrollments: [{ username: "zed", course_key: COURSE }] }, 400, "Import refused: /enrollments/0: unknown user zed"],
    ["an unknown course", "admin", { enrollments: [{ username: "ada", course_key: "o/c/r" }] }, 400, "Import refused: /enrollments/0: unknown or invalid course o/c/r"],
    [
      "a username that another id holds",
      "admin",
      { users: [{ id: 99, username: "ada", email: "x@example.com" }] },
      400,
      "Import refused: conflicts with stored data: Key (username)=(ada) already exists.",
    ],
    [
      "one enrollment twice",
      "admin",
      { enrollments: [{ username: "ada", course_key: COURSE }, { username: "ada", course_key: COURSE, is_active: false }] },
      400,
      `Import refused: /enrollments/1: the enrollment of ada in ${COURSE} appears twice`,
    ],
    [
      "a block twice in one tree",
      "admin",
      { courses: [{ course_key: "o/c/r", structure: { type: "course", id: "course", children: [{ type: "html", id: "a" }, { type: "html", id: "a" }] } }] },
      400,
      "Import refused: /courses/0/structure: Block i4x://o/c/html/a appears twice.",
    ],
  ] as const)("refuses %s", async (_name, caller, payload, status, detailText) => {
    expect(await send("PUT", IMPORT, caller, payload)).toEqual({ status, body: { detail: detailText } });
  });
});

describe("course structure changes and stale records", () => {
  const changed = structuredClone(COURSE_TREE);
  changed.children!.push({ type: "chapter", id: "ch9", children: [{ type: "html", id: "extra" }] });

  it("marks enrolled learners stale on a changed structure, not on the same one, and the worker recomputes them", async () => {
    await send("POST", BATCH, "staff", { username: "bob", course_key: COURSE, blocks: { [block("problem", "p2")]: 1 } });
    expect(await load(h.ctx, { courses: [{ course_key: COURSE, structure: COURSE_TREE }] })).toMatchObject({ structuresChanged: 0, learnersMarkedStale: 0 });
    expect(await load(h.ctx, { courses: [{ course_key: COURSE, structure: changed }] })).toMatchObject({ structuresChanged: 1, learnersMarkedStale: 5 });

    const allUsers = async (): Promise<unknown> =>
      (
        await h.app.inject({ method: "GET", url: `/api/completion/v1/course/${COURSE}/?user_ids=2`, headers: { authorization: `Bearer ${tokens.staff}` } })
      ).json();
    expect(await allUsers()).toEqual(onePage([{ username: "bob", course_key: COURSE, completion: dict(1, 4) }]));
    expect(await resolveStaleRecords(h.ctx.db, h.ctx.structures, h.ctx.settings, 100, h.ctx.now)).toBe(5);
    expect(await allUsers()).toEqual(onePage([{ username: "bob", course_key: COURSE, completion: dict(1, 5) }]));
    expect(await resolveStaleRecords(h.ctx.db, h.ctx.structures, h.ctx.settings, 100, h.ctx.now)).toBe(0);
  });

  it("marks a learner with completions but no enrollment stale too, so enrolling later shows figures of the current tree", async () => {
    const page = "i4x://TesseraX/CS102/html/page";
    await load(h.ctx, { completions: [{ username: "cy", course_key: OTHER_COURSE, block_key: page, completion: 1 }] });
    const grown = { ...OTHER_TREE, children: [...OTHER_TREE.children!, { type: "html", id: "more" }] };
    // bob and ada are enrolled in the course (ada inactive); cy only holds a completion there.
    expect(await load(h.ctx, { courses: [{ course_key: OTHER_COURSE, structure: grown }] })).toMatchObject({ structuresChanged: 1, learnersMarkedStale: 3 });
    await load(h.ctx, { enrollments: [{ username: "cy", course_key: OTHER_COURSE }] });
    const response = await h.app.inject({
      method: "GET",
      url: `/api/completion/v1/course/${OTHER_COURSE}/?username=cy`,
      headers: { authorization: `Bearer ${tokens.staff}` },
    });
    expect(response.json()).toEqual(onePage([{ course_key: OTHER_COURSE, completion: dict(1, 2) }]));
  });

  it("keeps a learner stale through a rename, since stale records go by username", async () => {
    await send("POST", BATCH, "staff", { username: "cy", course_key: COURSE, blocks: { [block("problem", "p1")]: 1 } });
    await load(h.ctx, { courses: [{ course_key: COURSE, structure: changed }] });
    expect(await send("PUT", IMPORT, "admin", { users: [{ id: 3, username: "cyrus", email: "cy@example.com" }] })).toMatchObject({
      status: 200,
      body: { users: 1, learnersMarkedStale: 1 },
    });
    expect(await detail("cyrus")).toEqual(onePage([{ course_key: COURSE, completion: dict(1, 5) }]));
  });

  it("is worked off by the background worker", async () => {
    await load(h.ctx, { courses: [{ course_key: COURSE, structure: changed }] });
    const unresolved = async (): Promise<number> =>
      (await h.database.db.select({ id: staleCompletions.id }).from(staleCompletions).where(eq(staleCompletions.resolved, false))).length;
    expect(await unresolved()).toBe(5);
    const worker = startStaleWorker(h.ctx, { intervalMs: 10 });
    try {
      await vi.waitFor(async () => expect(await unresolved()).toBe(0), { timeout: 20_000, interval: 20 });
    } finally {
      await worker.stop();
    }
  });

  it("recomputes only the stale block's ancestors, unless COMPLETION_REBUILD_STALE_FROM_SCRATCH is on", async () => {
    await send("POST", BATCH, "ada", { username: "ada", course_key: COURSE, blocks: { [block("problem", "p1")]: 1, [block("video", "vid1")]: 1 } });
    // Drift in stored rows under both chapters, then a stale record naming a block in ch1 only.
    await h.database.db.update(aggregates).set({ earned: 0, percent: 0 }).where(eq(aggregates.learnerId, 1));
    const markStale = (): Promise<unknown> => h.database.db.insert(staleCompletions).values({ username: "ada", courseKey: COURSE, blockKey: block("problem", "p2") });
    const chapters = async (): Promise<unknown> => ((await detail("ada", "chapter")) as { results: unknown[] }).results[0];

    await markStale();
    expect(await chapters()).toEqual({
      course_key: COURSE,
      completion: dict(2, 4),
      chapter: [entry("chapter", "ch1", 1, 3), entry("chapter", "ch2", 0, 1)],
    });

    await markStale();
    const fromScratch = createContext({ aggregatorTypes: [...h.ctx.settings.aggregatorTypes], rebuildStaleFromScratch: true }, h.ctx.db, h.ctx.callers, h.ctx.now);
    expect(await refreshStaleLearner(fromScratch.db, fromScratch.structures, fromScratch.settings, { id: 1, username: "ada" }, COURSE, new Date())).toBe(true);
    expect(await chapters()).toEqual({
      course_key: COURSE,
      completion: dict(2, 4),
      chapter: [entry("chapter", "ch1", 1, 3), entry("chapter", "ch2", 1, 1)],
    });
  });
});

describe("completion CLI", () => {
  it("imports an OLX course, and a second import of the same tree changes nothing", async () => {
    const lines: string[] = [];
    const output = { out: (line: string) => void lines.push(line), err: (line: string) => void lines.push(line) };
    expect(await runCli(["import-olx", OLX], h.ctx, output)).toBe(0);
    expect(await runCli(["import-olx", OLX], h.ctx, output)).toBe(0);
    expect(lines).toEqual([
      `Imported course-v1:TesseraX+OLX101+2026 from ${OLX}: structure stored, 0 learner(s) marked stale.`,
      `Imported course-v1:TesseraX+OLX101+2026 from ${OLX}: structure unchanged, 0 learner(s) marked stale.`,
    ]);
    const structure = await h.ctx.structures.get(h.ctx.db, "course-v1:TesseraX+OLX101+2026");
    expect(structure!.tree!.outline.map((node) => `${node.type}/${node.key.split("@").at(-1)}`)).toEqual([
      "course/course",
      "chapter/week1",
      "sequential/intro",
      "vertical/intro_unit",
      "html/welcome",
      "problem/first_check",
      "video/intro_video",
      "sequential/staff_notes",
      "vertical/staff_unit",
      "html/staff_page",
      "chapter/week2",
      "sequential/week2_lesson",
      "vertical/week2_unit",
      "html/week2_notes",
      "discussion/week2_forum",
    ]);
    // Completable: welcome, first_check, intro_video, week2_notes; the staff-only sequential and the discussion count 0 of 0.
    expect(structure!.noProgress.get(structure!.tree!.root.key)).toEqual({ earned: 0, possible: 4 });
  });

  it("imports an OLX course under a given key and marks its learners stale when the tree changes", async () => {
    const lines: string[] = [];
    const output = { out: (line: string) => void lines.push(line), err: (line: string) => void lines.push(line) };
    expect(await runCli(["import-olx", OLX, "--course-key", COURSE], h.ctx, output)).toBe(0);
    expect(lines).toEqual([`Imported ${COURSE} from ${OLX}: structure stored, 5 learner(s) marked stale.`]);
  });

  it("loads a bulk file, refuses a bad one and reaggregates", async () => {
    const { writeFile, mkdtemp } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const directory = await mkdtemp(join(tmpdir(), "completion-cli-"));
    const good = join(directory, "good.json");
    const bad = join(directory, "bad.json");
    await writeFile(good, JSON.stringify({ completions: [{ username: "cy", course_key: COURSE, block_key: block("problem", "p1"), completion: 1 }] }));
    await writeFile(bad, JSON.stringify({ completions: [{ username: "cy" }] }));
    const lines: string[] = [];
    const output = { out: (line: string) => void lines.push(line), err: (line: string) => void lines.push(`! ${line}`) };
    expect(await runCli(["load", good], h.ctx, output)).toBe(0);
    expect(await runCli(["load", bad], h.ctx, output)).toBe(1);
    expect(await runCli(["reaggregate", COURSE], h.ctx, output)).toBe(0);
    expect(await runCli(["reaggregate", "nope"], h.ctx, output)).toBe(1);
    expect(await runCli(["reaggregate"], h.ctx, output)).toBe(2);
    expect(lines.slice(0, 2)).toEqual([
      `Loaded ${good}: {"courses":0,"structuresChanged":0,"users":0,"enrollments":0,"roles":0,"cohorts":0,"completions":1,"learnersMarkedStale":0}`,
      `! ${bad} is not in the bulk-load format:\n` +
        [
          "/completions/0/course_key: Expected required property",
          "/completions/0/block_key: Expected required property",
          "/completions/0/completion: Expected required property",
          "/completions/0/course_key: Expected string",
          "/completions/0/block_key: Expected string",
          "/completions/0/completion: Expected number",
        ].join("\n"),
    ]);
    expect(lines.slice(2)).toEqual(["Recomputed 5 stale record(s).", "! Invalid course key: nope", expect.stringMatching(/^! Usage:/)]);
    expect(await detail("cy")).toEqual(onePage([{ course_key: COURSE, completion: dict(1, 4) }]));
  });
});
