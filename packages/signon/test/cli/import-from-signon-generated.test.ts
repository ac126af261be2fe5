// `signon import from-signon` against Signon rows with generated text (fast-check): NUL characters, quotes,
// backslashes, control characters, right-to-left marks, long values. Whatever Signon holds, the import ends with
// exit 0, brings each person over exactly or lists them as refused with a reason, keeps what PostgreSQL cannot
// store out of it, and finds nothing left to do on a second run. Needs Debian's mariadb-server; skipped without it,
// except under CI=true.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mariadbUnavailable, signonSchemaSql, startMariadb, type MariadbServer } from "@tessera/test-support/signon-database";
import { users } from "../../src/db/schema.js";
import { runSignonCli } from "../support/cli.js";
import { openTestDatabase } from "../support/signon.js";

const missing = mariadbUnavailable();
if (missing !== null && process.env["CI"] === "true") throw new Error(`${missing}; CI must run the import tests`);

/** Characters that have slipped past before, and any other of the Basic Multilingual Plane (MySQL's utf8mb3). */
const hostileCharacter = fc.oneof(
  fc.constantFrom("\u0000", "\t", "\n", "\r", " ", "'", '"', "\\", "%", "_", "|", ",", "\u202e", "\u00e9", "\u00df", "\ufeff"),
  fc.integer({ min: 0x20, max: 0xd7ff }).map((code) => String.fromCharCode(code)),
);
const hostileText = (maxLength: number) => fc.string({ unit: hostileCharacter, minLength: 0, maxLength });

interface GeneratedPerson {
  name: string;
  local: string;
  reason: string;
}

/** An address's local part that Sign-on's policy mostly takes (ASCII), now and then with a NUL or a quote in it. */
const localPart = fc.string({ unit: fc.oneof({ arbitrary: fc.constantFrom("a", "b", "z", "0", "9", ".", "-", "_", "+"), weight: 8 }, fc.constantFrom("\u0000", "'", "%")), minLength: 1, maxLength: 20 });
const person = fc.record({ name: hostileText(220), local: localPart, reason: hostileText(60) });

describe.skipIf(missing !== null)("signon import from-signon with generated Signon rows", () => {
  let mariadb: MariadbServer;
  let database: Awaited<ReturnType<typeof openTestDatabase>>;

  beforeAll(async () => {
    mariadb = await startMariadb();
    database = await openTestDatabase();
  }, 120_000);
  afterAll(async () => {
    await database?.close();
    await mariadb?.stop();
  });

  async function writeSignon(people: GeneratedPerson[], permission: string, message: string): Promise<string> {
    const source = await mariadb.createDatabase("signon_generated");
    await mariadb.run("signon_generated", signonSchemaSql());
    const now = new Date();
    await mariadb.run(
      "signon_generated",
      `insert into organisations (id, slug, name, organisation_type, created_at, updated_at, content_id) values (1, 'org', 'Org', 'Other', ?, ?, '11111111-2222-4333-8444-555555555555');
       insert into oauth_applications (id, name, uid, secret, redirect_uri, created_at, updated_at) values (1, 'App', 'client-id-of-the-app-0123456789abcdefghijk', 'secret', 'https://app.example/auth/gds/callback', ?, ?);
       insert into supported_permissions (id, application_id, name, created_at, updated_at) values (1, 1, 'signin', ?, ?), (2, 1, ?, ?, ?);`,
      [now, now, now, now, now, now, permission, now, now],
    );
    for (const [index, generated] of people.entries()) {
      const id = index + 1;
      await mariadb.run(
        "signon_generated",
        `insert into users (id, name, email, encrypted_password, uid, role, organisation_id, suspended_at, reason_for_suspension, created_at, updated_at)
           values (?, ?, ?, '', ?, 'normal', 1, ?, ?, ?, ?);
         insert into user_application_permissions (user_id, application_id, supported_permission_id, created_at, updated_at) values (?, 1, 1, ?, ?), (?, 1, 2, ?, ?);
         insert into event_logs (uid, created_at, event_id, trailing_message, user_agent_string) values (?, ?, 34, ?, ?)`,
        [
          id, generated.name, `${generated.local}-${id}@dept.example.gov.uk`, `00000000-0000-1000-8000-${String(id).padStart(12, "0")}`,
          generated.reason === "" ? null : now, generated.reason, now, now,
          id, now, now, id, now, now,
          `00000000-0000-1000-8000-${String(id).padStart(12, "0")}`, now, message, message,
        ],
      );
    }
    return source;
  }

  it("brings each person over exactly, or refuses them with a reason, and never fails", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(person, { minLength: 1, maxLength: 4 }), hostileText(40), hostileText(80), async (people, permission, message) => {
        await database.reset();
        const source = await writeSignon(people, permission, message);
        const run = await runSignonCli(database.url, ["import", "from-signon", source, "--json"], { SIGNON_SECRET_KEY: "5e".repeat(32) });
        expect(run.stderr).toBe("");
        expect(run.code).toBe(0);
        const report = JSON.parse(run.stdout) as { refusals: { kind: string; what: string; reason: string }[]; counts: Record<string, { created: number; updated: number; removed: number }> };
        const stored = new Map((await database.db.select().from(users)).map((user) => [user.uid, user]));
        for (const [index, generated] of people.entries()) {
          const uid = `00000000-0000-1000-8000-${String(index + 1).padStart(12, "0")}`;
          const user = stored.get(uid);
          if (user) {
            expect(user.name).toBe(generated.name);
            expect(user.email).toBe(`${generated.local}-${index + 1}@dept.example.gov.uk`.toLowerCase().trim());
            if (generated.reason !== "") expect(user.suspensionReason).toBe(generated.reason.replaceAll("\u0000", "").trim() || "Suspended in Signon (no reason recorded)");
          } else {
            expect(report.refusals.filter((refusal) => refusal.kind === "user").length, JSON.stringify(generated)).toBeGreaterThan(0);
          }
        }
        expect(stored.size + report.refusals.filter((refusal) => refusal.kind === "user").length).toBe(people.length);
        // Nothing left to do the second time.
        const again = await runSignonCli(database.url, ["import", "from-signon", source, "--json"], { SIGNON_SECRET_KEY: "5e".repeat(32) });
        expect(again.code).toBe(0);
        const counts = (JSON.parse(again.stdout) as typeof report).counts;
        expect(Object.entries(counts).filter(([, kind]) => kind.created + kind.updated + kind.removed > 0)).toEqual([]);
      }),
      { numRuns: 15 },
    );
  }, 300_000);
});
