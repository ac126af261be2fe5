import { createDrizzle, createPool } from "@tessera/db";
import { FaultProxy } from "@tessera/db/testing";
import type pg from "pg";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildApp } from "../../src/app.js";
import { SignonCallerResolver } from "../../src/auth/signon-caller-resolver.js";
import { DEFAULT_AGGREGATOR_TYPES } from "../../src/config.js";
import { createContext } from "../../src/context.js";
import * as schema from "../../src/db/schema.js";
import type { FastifyTypeBox } from "../../src/http/fastify-typebox.js";
import { baseData, block, COURSE, COURSE_TREE, load } from "../support/data.js";
import { useHarness } from "../support/harness.js";

// Completion with its primary behind a proxy that can refuse it, and a second pool on the same database standing in
// for a replica (the same rows, as a replica in step has): which pool each request uses is counted.
const h = await useHarness();
const proxy = await FaultProxy.start(h.database.url);
let primary: pg.Pool;
let replica: pg.Pool;
let app: FastifyTypeBox;
const checkouts = { primary: 0, replica: 0 };
const tokens = { ada: "", staff: "" };

beforeAll(async () => {
  primary = createPool({ url: proxy.urlFor(h.database.url), max: 4, connectionTimeoutMs: 2000 });
  replica = createPool({ url: h.database.url, max: 4 });
  primary.on("acquire", () => checkouts.primary++);
  replica.on("acquire", () => checkouts.replica++);
  const replicaDb = createDrizzle(replica, schema);
  const ctx = createContext(
    { aggregatorTypes: DEFAULT_AGGREGATOR_TYPES, rebuildStaleFromScratch: false, preparedStatements: true },
    createDrizzle(primary, schema),
    new SignonCallerResolver({ signonUrl: h.signon.url, clientId: h.signon.clientId, cacheSeconds: 60 }),
    () => new Date("2026-06-01T12:00:00Z"),
    () => replicaDb,
  );
  app = await buildApp(ctx);
  await app.ready();
  tokens.ada = (await h.signon.tokenFor("ada@example.com")).token;
  tokens.staff = (await h.signon.tokenFor("reporting-api@example.com", ["staff"], { apiUser: true })).token;
});
afterAll(async () => {
  await app.close();
  await Promise.all([primary.end(), replica.end()]);
  await proxy.close();
});

beforeEach(async () => {
  await proxy.accept();
  await load(h.ctx, baseData());
  await load(h.ctx, {
    completions: [
      { username: "ada", course_key: COURSE, block_key: block("problem", "p1"), completion: 1 },
      { username: "bob", course_key: COURSE, block_key: block("problem", "p2"), completion: 1 },
    ],
  });
});

async function get(caller: keyof typeof tokens, url: string) {
  const response = await app.inject({ method: "GET", url, headers: { authorization: `Bearer ${tokens[caller]}` } });
  return { status: response.statusCode, body: response.json<{ results: { username?: string; completion: { earned: number; possible: number } }[] }>() };
}

const reads = [
  `/api/completion/v1/course/${COURSE}/`,
  `/api/completion/v1/course/${COURSE}/?username=bob`,
  `/api/completion/v1/stats/${COURSE}/?cohorts=10`,
  "/api/completion/v1/course/?username=ada",
];

describe("Completion's reads with a replica", () => {
  it("sends the list, detail and stats reads to the replica and none to the primary", async () => {
    // The caller's answer from Sign-on is cached first: it is not what is counted.
    for (const url of reads) expect((await get("staff", url)).status).toBe(200);
    Object.assign(checkouts, { primary: 0, replica: 0 });
    for (const url of reads) expect((await get("staff", url)).status).toBe(200);
    expect(checkouts).toEqual({ primary: 0, replica: expect.any(Number) as number });
    expect(checkouts.replica).toBeGreaterThanOrEqual(reads.length);
  });

  it("links a learner reading their own figures for the first time on the primary, and reads the link on the replica after", async () => {
    Object.assign(checkouts, { primary: 0, replica: 0 });
    expect((await get("ada", "/api/completion/v1/course/")).status).toBe(200);
    expect(checkouts.primary).toBeGreaterThan(0);
    Object.assign(checkouts, { primary: 0, replica: 0 });
    expect((await get("ada", "/api/completion/v1/course/")).body.results.map((item) => item.completion.earned)).toEqual([1, 0]);
    expect(checkouts.primary).toBe(0);
  });

  it("recomputes a stale learner on the primary, and reads what it stored there", async () => {
    await load(h.ctx, { courses: [{ course_key: COURSE, structure: changedTree() }] });
    Object.assign(checkouts, { primary: 0, replica: 0 });
    const read = await get("staff", `/api/completion/v1/course/${COURSE}/?username=ada`);
    expect(read).toMatchObject({ status: 200, body: { results: [{ completion: { earned: 1, possible: 5 } }] } });
    expect(checkouts.primary).toBeGreaterThan(0);
  });

  it("keeps answering every read while the primary refuses connections, a stale learner's figures computed on the replica", async () => {
    for (const url of reads) await get("staff", url);
    await load(h.ctx, { courses: [{ course_key: COURSE, structure: changedTree() }] });
    proxy.cutAll();
    await proxy.refuse();
    for (const url of reads) expect((await get("staff", url)).status, url).toBe(200);
    expect(await get("staff", `/api/completion/v1/course/${COURSE}/?username=ada`)).toMatchObject({
      status: 200,
      body: { results: [{ completion: { earned: 1, possible: 5 } }] },
    });
    const batch = await app.inject({
      method: "POST",
      url: "/api/completion/v1/completion-batch",
      headers: { authorization: `Bearer ${tokens.staff}` },
      payload: { username: "ada", course_key: COURSE, blocks: { [block("problem", "p2")]: 1 } },
    });
    expect(batch.statusCode).toBe(503);
  });
});

/** The course tree with one problem more: every learner of the course becomes stale (C14), possible grows from 4 to 5. */
function changedTree(): typeof COURSE_TREE {
  const tree = structuredClone(COURSE_TREE);
  tree.children![0]!.children![0]!.children![1]!.children!.push({ type: "problem", id: "p9" });
  return tree;
}
