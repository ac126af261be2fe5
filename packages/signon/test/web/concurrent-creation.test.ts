// Two identical forms that create something, posted at once: one creates it, the other gets the form back
// saying it exists (400), never a 500, and nothing is half-written. To make the race certain, another
// transaction holds the new key uncommitted: both requests find it free, then wait on the unique index;
// when the holder gives up, one insert goes through and the other meets it.
import { describe, expect, it, vi } from "vitest";
import { useTestSignon } from "../support/signon.js";
import { textOf } from "./account-support.js";
import { signedInAs } from "./users-support.js";

const { database, signon } = await useTestSignon();
const { app, ctx } = signon;

/** Posts `submit` twice at once while `holderInsert` holds the key; returns both answers once the holder rolled back. */
async function postedTwiceAtOnce<T extends { statusCode: number }>(holderInsert: string, submit: () => Promise<T>): Promise<T[]> {
  const holder = await database.pool.connect();
  try {
    await holder.query("begin");
    await holder.query(holderInsert);
    const answers = Promise.all([submit(), submit()]);
    await vi.waitFor(
      async () => {
        const { rows } = await database.pool.query<{ waiting: number }>(
          "select count(*)::int as waiting from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()",
        );
        expect(rows[0]?.waiting).toBe(2);
      },
      { timeout: 10_000 },
    );
    await holder.query("rollback");
    return await answers;
  } finally {
    await holder.query("rollback").catch(() => undefined);
    holder.release();
  }
}

function byStatus<T extends { statusCode: number }>(answers: T[]): { created: T; refused: T } {
  const sorted = [...answers].sort((a, b) => a.statusCode - b.statusCode);
  expect(sorted.map((answer) => answer.statusCode)).toEqual([303, 400]);
  return { created: sorted[0] as T, refused: sorted[1] as T };
}

async function count(query: string): Promise<number> {
  return (await database.pool.query<{ n: number }>(query)).rows[0]?.n ?? -1;
}

describe("forms that create something, posted twice at once", () => {
  it("POST /api-users/new: one API user, and the other form says the address exists", async () => {
    const { browser } = await signedInAs(app, ctx, "superadmin");
    const answers = await postedTwiceAtOnce(
      "insert into signon.users (uid, name, email, created_at, updated_at) values (gen_random_uuid(), 'Holder', 'robot-twice@example.org', now(), now())",
      () => browser.submit("/api-users/new", "/api-users/new", { name: "Robot", email: "robot-twice@example.org" }),
    );
    const { refused } = byStatus(answers);
    expect(textOf(refused)).toContain("A user with e-mail robot-twice@example.org already exists");
    expect(await count("select count(*)::int as n from signon.users where email = 'robot-twice@example.org'")).toBe(1);
  });

  it("POST /applications/new: one application, and the other form says the name is taken", async () => {
    const { browser } = await signedInAs(app, ctx, "superadmin");
    const answers = await postedTwiceAtOnce(
      "insert into signon.applications (id, name, client_id, client_secret_hash, redirect_uris, supported_permissions, created_at) values (gen_random_uuid(), 'Twice', 'holder-client', 'x', '{https://twice.example/cb}', '{signin}', now())",
      () => browser.submit("/applications/new", "/applications/new", { name: "Twice", redirect_uris: "https://twice.example/cb", home_uri: "", push_base_url: "", permissions: "", delegatable_permissions: "" }),
    );
    const { refused } = byStatus(answers);
    expect(textOf(refused)).toContain("An application named Twice already exists");
    expect(await count("select count(*)::int as n from signon.applications where name = 'Twice'")).toBe(1);
  });

  it("POST /organisations/new: one organisation, and the other form says the slug is taken", async () => {
    const { browser } = await signedInAs(app, ctx, "superadmin");
    const answers = await postedTwiceAtOnce(
      "insert into signon.organisations (id, slug, name, content_id, created_at) values (gen_random_uuid(), 'twice', 'Holder', gen_random_uuid(), now())",
      () => browser.submit("/organisations/new", "/organisations/new", { name: "Twice", slug: "twice", content_id: "" }),
    );
    const { refused } = byStatus(answers);
    expect(textOf(refused)).toContain("Another organisation has the slug twice");
    expect(await count("select count(*)::int as n from signon.organisations where slug = 'twice'")).toBe(1);
  });
});
