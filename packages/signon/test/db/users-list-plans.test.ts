import { randomUUID } from "node:crypto";
import { sql, type SQLWrapper } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exactCountLimit, resolvedSearch, usersPerPage, type UserFilters } from "../../src/accounts/user-search.js";
import { allUsersStatement, estimateUsers, inCountTransaction, userCountQuery, userPageQuery } from "../../src/repositories/user-search.js";
import type { PlannedSearch } from "../../src/user-search/read.js";
import type { SignonDatabase } from "../../src/db/database.js";
import type { PagePosition } from "../../src/repositories/keyset.js";
import type { Actor } from "../../src/web/policy.js";
import { generatePeople, type GeneratedPeople } from "../support/generated-people.js";
import { buildTestSignon, openTestDatabase, type TestSignon } from "../support/signon.js";

/**
 * The users list's queries on a generated table of 200,000 people: each
 * reads through an index and never sorts a sequential scan of `users`, so its
 * cost does not grow with the table (the timings are in bench/scale).
 */
const people = 200_000;
const database = await openTestDatabase();
let signon: TestSignon;
let generated: GeneratedPeople;

beforeAll(async () => {
  signon = await buildTestSignon(database);
  generated = await generatePeople(database.db, people);
}, 300_000);
afterAll(async () => {
  await signon.app.close();
  await database.close();
});

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Plan Rows": number;
  Plans?: PlanNode[];
}

async function planOf(query: SQLWrapper, db: Pick<SignonDatabase, "execute"> = database.db): Promise<PlanNode> {
  const result = await db.execute<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(sql`explain (format json) ${query}`);
  return (result.rows[0] as { "QUERY PLAN": [{ Plan: PlanNode }] })["QUERY PLAN"][0].Plan;
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

function describePlan(plan: PlanNode, depth = 0): string {
  const own = `${"  ".repeat(depth)}${plan["Node Type"]}${plan["Index Name"] ? ` using ${plan["Index Name"]}` : ""}${plan["Relation Name"] ? ` on ${plan["Relation Name"]}` : ""} (rows ${plan["Plan Rows"]})`;
  return [own, ...(plan.Plans ?? []).map((child) => describePlan(child, depth + 1))].join("\n");
}

/** A node and the nodes it sits under, outermost first. */
function withParents(plan: PlanNode, parents: PlanNode[] = []): { node: PlanNode; parents: PlanNode[] }[] {
  return [{ node: plan, parents }, ...(plan.Plans ?? []).flatMap((child) => withParents(child, [...parents, plan]))];
}

/**
 * No sequential scan of users (so no sort over one), and an index of users
 * read. With `stopsEarly` (the count, which stops after 1,001 rows), a scan
 * right under a Limit is allowed: the planner expects it to stop after a few
 * pages of the table.
 */
function expectIndexedPlan(plan: PlanNode, stopsEarly = false): void {
  const all = withParents(plan);
  const shown = describePlan(plan);
  const scans = all.filter(({ node }) => node["Node Type"] === "Seq Scan" && node["Relation Name"] === "users");
  for (const { node, parents } of scans) {
    expect(stopsEarly && parents.at(-1)?.["Node Type"] === "Limit", shown).toBe(true);
    expect(node["Plan Rows"], shown).toBeGreaterThan(exactCountLimit);
  }
  if (scans.length === 0) {
    expect(
      all.some(({ node }) => ["Index Scan", "Index Only Scan", "Bitmap Index Scan"].includes(node["Node Type"]) && (node["Index Name"] ?? "").startsWith("users_")),
      shown,
    ).toBe(true);
  }
  // A sort, if any, sorts what an index found, never the table.
  for (const { node } of all.filter(({ node: one }) => one["Node Type"] === "Sort" || one["Node Type"] === "Incremental Sort")) {
    expect(node["Plan Rows"], shown).toBeLessThan(people / 10);
  }
}

/** The query of a page of a planned search, its plan changed as `changed` says. */
function pageOf(planned: PlannedSearch, position: PagePosition, changed: Partial<PlannedSearch["plan"]> = {}) {
  return userPageQuery(database.db, planned.search, { ...planned.plan, ...changed }, position, usersPerPage + 1);
}

const superadmin: Actor = { uid: randomUUID(), role: "superadmin", organisationId: null };
const none: UserFilters = { text: "", role: "", organisation: "", status: "", permission: "", twoStep: "" };

function filterCases(): [string, Actor, Partial<UserFilters>][] {
  const organisation = generated.organisationIds[7] as string;
  return [
    ["no filter", superadmin, {}],
    ["an admin's list (no superadmins)", { ...superadmin, role: "admin" }, {}],
    ["an organisation admin's list", { uid: randomUUID(), role: "organisation_admin", organisationId: organisation }, {}],
    ["name search smith", superadmin, { text: "smith" }],
    ["e-mail fragment", superadmin, { text: "person1234" }],
    ["exact e-mail", superadmin, { text: generated.someEmail.toUpperCase() }],
    ["role admin", superadmin, { role: "admin" }],
    ["role normal", superadmin, { role: "normal" }],
    ["organisation", superadmin, { organisation }],
    ["no organisation", superadmin, { organisation: "none" }],
    ["status active", superadmin, { status: "active" }],
    ["status suspended", superadmin, { status: "suspended" }],
    ["status locked", superadmin, { status: "locked" }],
    ["status invited", superadmin, { status: "invited" }],
    ["permission signin", superadmin, { permission: `${generated.applicationId}:signin` }],
    ["permission editor", superadmin, { permission: `${generated.applicationId}:editor` }],
    ["2-step on", superadmin, { twoStep: "on" }],
    ["2-step off", superadmin, { twoStep: "off" }],
    ["2-step missing", superadmin, { twoStep: "missing" }],
    ["2-step exempt", superadmin, { twoStep: "exempt" }],
    ["role and organisation", superadmin, { role: "organisation_admin", organisation }],
    ["search and status", superadmin, { text: "smith", status: "suspended" }],
    ["one letter", superadmin, { text: "a" }],
    ["two letters nobody holds", superadmin, { text: "qz" }],
    ["two letters nobody holds, active", superadmin, { text: "qz", status: "active" }],
    ["two letters nobody holds, permission signin", superadmin, { text: "qz", permission: `${generated.applicationId}:signin` }],
    ["two letters and no organisation", superadmin, { text: "sm", organisation: "none" }],
  ];
}

describe("the users list on 200,000 people", () => {
  it("reads every filter's first page, a deep page and the last page through indexes, never sorting a scan of users", async () => {
    const deep: PagePosition = { kind: "after", key: { text: "margaret", uid: "00000000-0000-4000-8000-000000000000" } };
    for (const [name, actor, filters] of filterCases()) {
      const search = await resolvedSearch(signon.ctx, actor, { ...none, ...filters });
      for (const position of [{ kind: "first" }, { kind: "last" }, deep] as PagePosition[]) {
        const plan = await planOf(pageOf(search, position));
        expect(() => expectIndexedPlan(plan), `${name}, ${position.kind}: ${search.plan.reasons.join("; ")}`).not.toThrow();
      }
    }
  });

  it("counts through indexes the people of filters estimated at 1,000 or fewer; larger ones are shown as the estimate", async () => {
    let counted = 0;
    for (const [name, actor, filters] of filterCases()) {
      const search = await resolvedSearch(signon.ctx, actor, { ...none, ...filters });
      if ((await estimateUsers(database.db, search.search)) > exactCountLimit) continue;
      counted++;
      const plan = await inCountTransaction(database.db, 60_000, (tx) => planOf(userCountQuery(tx, search.search, search.plan, exactCountLimit), tx));
      expect(() => expectIndexedPlan(plan, true), name).not.toThrow();
    }
    expect(counted).toBeGreaterThan(3);
  });

  it("finds a whole e-mail address through the unique index on lower(email)", async () => {
    const search = await resolvedSearch(signon.ctx, superadmin, { ...none, text: generated.someEmail.toUpperCase() });
    expect(search.plan.text).toBe("exact-address");
    const plan = await planOf(pageOf(search, { kind: "first" }));
    expect(nodes(plan).map((node) => node["Index Name"]), describePlan(plan)).toContain("users_email_lower_key");
  });

  it("finds a text of one or two characters few people hold through the index of short texts, and the same people as without it", async () => {
    for (const text of ["qz", "Ð", "9x"]) {
      const search = await resolvedSearch(signon.ctx, superadmin, { ...none, text });
      expect(search.plan.text, text).toBe("short-grams");
      const plan = await planOf(pageOf(search, { kind: "first" }));
      expect(nodes(plan).map((node) => node["Index Name"]), describePlan(plan)).toContain("users_short_grams_idx");
      expect(await pageOf(search, { kind: "first" }), text).toEqual(await pageOf(search, { kind: "first" }, { text: "trigram", page: "name-order" }));
    }
    // A letter most people hold walks the order of names instead: a page is found among the first people read.
    const common = await resolvedSearch(signon.ctx, superadmin, { ...none, text: "e" });
    expect(common.plan.text).not.toBe("short-grams");
  });

  it("searches fragments through the trigram indexes of name and e-mail when the fragment is rare", async () => {
    const search = await resolvedSearch(signon.ctx, superadmin, { ...none, text: "person12345@" });
    const plan = await planOf(pageOf(search, { kind: "first" }));
    const indexes = nodes(plan).map((node) => node["Index Name"]);
    expect(indexes, describePlan(plan)).toEqual(expect.arrayContaining(["users_name_trgm_idx", "users_email_trgm_idx"]));
  });

  it("tests a text most addresses hold on each person an organisation's or a status's index finds, sorting them, never walking the order of names", async () => {
    const organisation = generated.organisationIds[7] as string;
    const alone = await resolvedSearch(signon.ctx, superadmin, { ...none, text: "example.org" });
    const narrowed = await resolvedSearch(signon.ctx, superadmin, { ...none, text: "example.org", organisation, status: "suspended" });
    // Beside a filter no index serves, whose matches PostgreSQL may overestimate: a walk along the names could read everyone.
    const withoutIndex = await resolvedSearch(signon.ctx, superadmin, { ...none, text: "example.org", organisation: "none", twoStep: "missing" });
    const rare = await resolvedSearch(signon.ctx, superadmin, { ...none, text: "person12345@", organisation });
    expect([alone, narrowed, withoutIndex, rare].map((search) => search.plan.text)).toEqual(["trigram", "tested", "tested", "trigram"]);
    for (const [search, index] of [
      [narrowed, "users_list_organisation_idx"],
      [withoutIndex, "users_without_organisation_idx"],
    ] as const) {
      const positions: PagePosition[] = [{ kind: "first" }, { kind: "last" }, { kind: "after", key: { text: "margaret", uid: "00000000-0000-4000-8000-000000000000" } }];
      for (const position of positions) {
        const plan = await planOf(pageOf(search, position));
        expectIndexedPlan(plan);
        const indexes = nodes(plan).map((node) => node["Index Name"]);
        expect(indexes, describePlan(plan)).toContain(index);
        for (const other of ["users_email_trgm_idx", "users_name_trgm_idx", "users_list_name_idx"]) expect(indexes, describePlan(plan)).not.toContain(other);
        // The same people as through the trigram indexes.
        expect(await pageOf(search, position), position.kind).toEqual(await pageOf(search, position, { text: "trigram", page: "name-order" }));
      }
    }
  });

  it("reads a page of a permission few people hold from the permission's holders, each looked up by primary key, and walks the names for a common one", async () => {
    const rare = await resolvedSearch(signon.ctx, superadmin, { ...none, permission: `${generated.applicationId}:editor` });
    const common = await resolvedSearch(signon.ctx, superadmin, { ...none, permission: `${generated.applicationId}:signin` });
    expect([rare.plan.permission, rare.plan.page]).toEqual(["holders", "permission-holders"]);
    expect([common.plan.permission, common.plan.page]).toEqual(["looked-up", "name-order"]);
    for (const position of [{ kind: "first" }, { kind: "last" }, { kind: "after", key: { text: "margaret", uid: "00000000-0000-4000-8000-000000000000" } }] as PagePosition[]) {
      const plan = await planOf(pageOf(rare, position));
      const indexes = nodes(plan).map((node) => node["Index Name"]);
      expect(indexes, describePlan(plan)).toEqual(expect.arrayContaining(["user_permissions_application_idx", "users_pkey"]));
      expect(indexes, describePlan(plan)).not.toContain("users_list_name_idx");
    }
    const plan = await planOf(pageOf(common, { kind: "first" }));
    expect(nodes(plan).map((node) => node["Index Name"]), describePlan(plan)).toContain("users_list_name_idx");
  });

  it("reads few matches that the filters' indexes find and sorts them, the same people as a walk of the names; walks the names when no index narrows them", async () => {
    const few = await resolvedSearch(signon.ctx, superadmin, { ...none, text: "smith", organisation: "none", permission: `${generated.applicationId}:signin` });
    // Status active and 2-step missing are served by no index: sorting their matches would mean reading everyone.
    const unindexed = await resolvedSearch(signon.ctx, superadmin, { ...none, status: "active", twoStep: "missing", role: "normal" });
    expect([few.plan.page, unindexed.plan.page]).toEqual(["sorted-matches", "name-order"]);
    const positions: PagePosition[] = [{ kind: "first" }, { kind: "last" }, { kind: "after", key: { text: "margaret", uid: "00000000-0000-4000-8000-000000000000" } }];
    for (const position of positions) {
      const plan = await planOf(pageOf(few, position));
      const indexes = nodes(plan).map((node) => node["Index Name"]);
      expect(indexes, describePlan(plan)).not.toContain("users_list_name_idx");
      expect(nodes(plan).filter((node) => node["Node Type"] === "Seq Scan" && node["Relation Name"] === "users"), describePlan(plan)).toEqual([]);
      const page = await pageOf(few, position);
      expect(page.length, position.kind).toBeGreaterThan(0);
      expect(page, position.kind).toEqual(await pageOf(few, position, { page: "name-order" }));
    }
  });

  it("exports everyone by reading the table in its order and sorting, and few people along the index of names, in the same order either way", async () => {
    const everyone = await resolvedSearch(signon.ctx, superadmin, none);
    const few = await resolvedSearch(signon.ctx, superadmin, { ...none, text: "smith", status: "suspended" });
    expect([everyone.plan.export, few.plan.export]).toEqual(["sorted", "name-order"]);
    const exportPlan = async (planned: PlannedSearch, way: "sorted" | "name-order") => {
      const statement = allUsersStatement(database.db, planned.search, { ...planned.plan, export: way });
      const result = await database.db.$client.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(`explain (format json) ${statement.text}`, statement.values);
      return (result.rows[0] as { "QUERY PLAN": [{ Plan: PlanNode }] })["QUERY PLAN"][0].Plan;
    };
    const sorted = nodes(await exportPlan(everyone, "sorted"));
    expect(sorted.some((node) => node["Node Type"] === "Sort"), describePlan(await exportPlan(everyone, "sorted"))).toBe(true);
    expect(sorted.map((node) => node["Index Name"])).not.toContain("users_list_name_idx");
    expect(nodes(await exportPlan(everyone, "name-order")).map((node) => node["Index Name"])).toContain("users_list_name_idx");
    const rows = async (way: "sorted" | "name-order") => {
      const statement = allUsersStatement(database.db, few.search, { ...few.plan, export: way });
      return (await database.db.$client.query({ text: statement.text, values: statement.values, rowMode: "array" })).rows;
    };
    const walked = await rows("name-order");
    expect(walked.length).toBeGreaterThan(100);
    expect(await rows("sorted")).toEqual(walked);
  });

  it("lists the same people either way a permission filter is read", async () => {
    const rare = await resolvedSearch(signon.ctx, superadmin, { ...none, permission: `${generated.applicationId}:editor`, status: "active" });
    expect(rare.plan.page).toBe("permission-holders");
    for (const position of [{ kind: "first" }, { kind: "last" }, { kind: "after", key: { text: "margaret", uid: "00000000-0000-4000-8000-000000000000" } }] as PagePosition[]) {
      const fromHolders = await pageOf(rare, position);
      expect(fromHolders).toHaveLength(usersPerPage + 1);
      expect(fromHolders, position.kind).toEqual(await pageOf(rare, position, { page: "name-order", permission: "looked-up" }));
      expect(fromHolders, position.kind).toEqual(await pageOf(rare, position, { page: "sorted-matches", permission: "holders" }));
    }
  });
});
