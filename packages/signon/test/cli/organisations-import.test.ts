import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { asc, eq } from "drizzle-orm";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { auditEvents, organisations } from "../../src/db/schema.js";
import { runSignonCli } from "../support/cli.js";
import { openTestDatabase } from "../support/signon.js";

const database = await openTestDatabase();
const folder = await mkdtemp(join(tmpdir(), "organisations-import-"));
afterAll(async () => {
  await database.close();
  await rm(folder, { recursive: true, force: true });
});
beforeEach(() => database.reset());

const signon = (...argv: string[]) => runSignonCli(database.url, argv);
let files = 0;
async function file(name: string, text: string): Promise<string> {
  const path = join(folder, `${++files}-${name}`);
  await writeFile(path, text);
  return path;
}

/** Every organisation as slug, name, parent slug and closed flag, by slug. */
async function stored(): Promise<[string, string, string | null, boolean][]> {
  const rows = await database.db.select().from(organisations).orderBy(asc(organisations.slug));
  const slugs = new Map(rows.map((row) => [row.id, row.slug]));
  return rows.map((row) => [row.slug, row.name, row.parentId === null ? null : (slugs.get(row.parentId) ?? "?"), row.closed]);
}

const csv = [
  "slug,name,parent_slug,closed",
  "unit,Unit,department,",
  'department,"Department, of Things",agency,no',
  "agency,Agency,,",
  "old-office,Old Office,agency,true",
].join("\r\n");

describe("signon organisations import", () => {
  it("creates organisations from CSV, parents later in the file included, and is idempotent", async () => {
    const path = await file("organisations.csv", csv);
    const first = await signon("organisations", "import", path, "--json");
    expect(first).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(first.stdout)).toEqual({
      dry_run: false,
      counts: { created: 4, updated: 0, unchanged: 0, invalid: 0 },
      rows: [
        { row: 2, slug: "unit", outcome: "created" },
        { row: 3, slug: "department", outcome: "created" },
        { row: 4, slug: "agency", outcome: "created" },
        { row: 5, slug: "old-office", outcome: "created" },
      ],
    });
    expect(await stored()).toEqual([
      ["agency", "Agency", null, false],
      ["department", "Department, of Things", "agency", false],
      ["old-office", "Old Office", "agency", true],
      ["unit", "Unit", "department", false],
    ]);

    const again = await signon("organisations", "import", path, "--json");
    expect(JSON.parse(again.stdout).counts).toEqual({ created: 0, updated: 0, unchanged: 4, invalid: 0 });
    const events = await database.db.select().from(auditEvents).where(eq(auditEvents.action, "organisations_imported"));
    expect(events.map((event) => event.details)).toEqual([
      { created: 4, updated: 0, unchanged: 0, invalid: 0 },
      { created: 0, updated: 0, unchanged: 4, invalid: 0 },
    ]);
  });

  it("updates names, parents and closed flags from JSON, keeping what a row leaves out", async () => {
    await signon("organisations", "import", await file("organisations.csv", csv));
    const json = JSON.stringify({
      organisations: [
        { slug: "unit", name: "Unit", parent_slug: "agency" },
        { slug: "old-office", name: "Old Office", closed: false },
        { slug: "agency", name: "The Agency" },
        { slug: "new-branch", name: "New Branch", parent_slug: null, closed: true, content_id: "0A1B2C3D-0000-4000-8000-000000000009" },
      ],
    });
    const result = await signon("organisations", "import", await file("changes.json", json));
    expect(result.code).toBe(0);
    expect(result.stdout.split("\n")).toEqual([
      "row 1\tupdated\tunit\tchanged: parent",
      "row 2\tupdated\told-office\tchanged: closed",
      "row 3\tupdated\tagency\tchanged: name",
      "row 4\tcreated\tnew-branch",
      "Created 1, updated 3, left 0 unchanged; 0 invalid.",
      "",
    ]);
    expect(await stored()).toEqual([
      ["agency", "The Agency", null, false],
      ["department", "Department, of Things", "agency", false],
      ["new-branch", "New Branch", null, true],
      ["old-office", "Old Office", "agency", false],
      ["unit", "Unit", "agency", false],
    ]);
    const [branch] = await database.db.select().from(organisations).where(eq(organisations.slug, "new-branch"));
    expect(branch?.contentId).toBe("0a1b2c3d-0000-4000-8000-000000000009");
  });

  it("--dry-run says what would happen and saves nothing", async () => {
    const result = await signon("organisations", "import", await file("organisations.csv", csv), "--dry-run", "--json");
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ dry_run: true, counts: { created: 4, updated: 0, unchanged: 0, invalid: 0 } });
    expect(await stored()).toEqual([]);
    expect(await database.db.select().from(auditEvents)).toEqual([]);
  });

  it("reports each invalid row with its reason, applies the others and exits 1", async () => {
    await signon("organisations", "import", await file("organisations.csv", csv));
    const rows = [
      "slug,name,parent_slug",
      "Bad Slug,Bad,",
      "orphan,Orphan,nowhere",
      "loop-a,Loop A,loop-b",
      "loop-b,Loop B,loop-a",
      "agency,Agency,unit",
      "fine,Fine,agency",
      "fine,Fine again,",
      "child-of-bad,Child,orphan",
      "short,Short",
      "nul,Name\u0000,",
    ].join("\n");
    const result = await signon("organisations", "import", await file("mixed.csv", rows), "--json");
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual({
      dry_run: false,
      counts: { created: 1, updated: 0, unchanged: 0, invalid: 9 },
      rows: [
        { row: 2, slug: "Bad Slug", outcome: "invalid", message: "A slug is up to 100 lower-case letters and digits separated by single hyphens" },
        { row: 3, slug: "orphan", outcome: "invalid", message: "No organisation has the slug nowhere" },
        { row: 4, slug: "loop-a", outcome: "invalid", message: "Its parents form a loop" },
        { row: 5, slug: "loop-b", outcome: "invalid", message: "Its parents form a loop" },
        { row: 6, slug: "agency", outcome: "invalid", message: "That organisation is under this one: choose one that is not, so the tree has no loop" },
        { row: 7, slug: "fine", outcome: "created" },
        { row: 8, slug: "fine", outcome: "invalid", message: "The slug fine is already on row 7" },
        { row: 9, slug: "child-of-bad", outcome: "invalid", message: "Its parent orphan is invalid" },
        { row: 10, slug: null, outcome: "invalid", message: "2 fields where the header has 3" },
        { row: 11, slug: "nul", outcome: "invalid", message: "A name has 1 to 200 characters, without control characters" },
      ],
    });
    expect((await stored()).map((row) => row[0])).toEqual(["agency", "department", "fine", "old-office", "unit"]);
  });

  it("refuses a file it cannot read at all with a plain message and exit code 1, changing nothing", async () => {
    const cases: [string, string, RegExp][] = [
      ["missing-header.csv", "", /empty/],
      ["unknown.csv", "slug,name,colour\na,A,red", /Unknown column "colour"/],
      ["no-name.csv", "slug,parent_slug\na,", /must name the columns slug and name/],
      ["quote.csv", 'slug,name\na,"Unclosed', /Line 2: a quoted field is not closed/],
      ["broken.json", "[{", /not valid JSON/],
      ["shape.json", '{"rows": []}', /list of organisations/],
    ];
    for (const [name, text, message] of cases) {
      const result = await signon("organisations", "import", await file(name, text));
      expect(result.code, name).toBe(1);
      expect(result.stderr, name).toMatch(message);
    }
    const missing = await signon("organisations", "import", join(folder, "does-not-exist.csv"));
    expect(missing).toMatchObject({ code: 1, stderr: expect.stringMatching(/Cannot read .*ENOENT/) });
    expect((await signon("organisations", "import")).code).toBe(2);
    expect(await stored()).toEqual([]);
  });
});
