import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runMigrations } from "@tessera/db";
import { useTestDatabase } from "@tessera/db/testing";
import { afterAll, describe, expect, it } from "vitest";
import { COMPLETION_MIGRATIONS } from "../src/db/database.js";
import { parseCourseKey } from "../src/domain/keys.js";
import { flattenStructure, visibleCompletableCount } from "../src/ingest/bulk-structure.js";
import { COURSE, COURSE_TREE, OTHER_COURSE, OTHER_TREE } from "./support/data.js";

// A migrations folder holding migrations 0000–0002: the database before courses counted their visible blocks.
const before = mkdtempSync(join(tmpdir(), "completion-migrations-"));
cpSync(COMPLETION_MIGRATIONS.folder, before, { recursive: true });
const journalPath = join(before, "meta", "_journal.json");
const journal = JSON.parse(readFileSync(journalPath, "utf8")) as { entries: unknown[] };
writeFileSync(journalPath, JSON.stringify({ ...journal, entries: journal.entries.slice(0, 3) }));

const database = await useTestDatabase({ migrations: [{ schema: "completion", folder: before }], label: "completion_upgrade" });
afterAll(async () => {
  await database.close();
  rmSync(before, { recursive: true, force: true });
});

const HIDDEN = "course-v1:TesseraX+HIDDEN+2026";
const UNKNOWN = "course-v1:TesseraX+UNKNOWN+2026";

async function storeTree(courseKey: string, tree: typeof COURSE_TREE): Promise<number> {
  const key = parseCourseKey(courseKey);
  if (!key) throw new Error(courseKey);
  const rows = flattenStructure(key, tree);
  await database.pool.query("insert into completion.courses (key, structure_version, structure_hash) values ($1, 1, 'h')", [courseKey]);
  for (const row of rows) {
    await database.pool.query(
      "insert into completion.blocks (course_key, key, type, parent_key, position, mode, visible_to_staff_only) values ($1, $2, $3, $4, $5, $6, $7)",
      [courseKey, row.key, row.type, row.parentKey, row.position, row.mode, row.visibleToStaffOnly],
    );
  }
  return visibleCompletableCount(rows);
}

describe("migration 0003 (courses count their visible completable blocks)", () => {
  it("counts them for courses already stored, as the aggregation does", async () => {
    const expected = {
      [COURSE]: await storeTree(COURSE, COURSE_TREE),
      [OTHER_COURSE]: await storeTree(OTHER_COURSE, OTHER_TREE),
      [HIDDEN]: await storeTree(HIDDEN, {
        type: "course",
        id: "course",
        children: [{ type: "chapter", id: "c", visible_to_staff_only: true, children: [{ type: "problem", id: "p" }] }],
      }),
      [UNKNOWN]: null,
    };
    await database.pool.query("insert into completion.courses (key) values ($1)", [UNKNOWN]);

    const [report] = await runMigrations(database.pool, [COMPLETION_MIGRATIONS]);
    const { rows } = await database.pool.query<{ key: string; visible_completable_blocks: number | null }>(
      "select key, visible_completable_blocks from completion.courses",
    );

    // 0003 and every migration after it.
    expect(report).toMatchObject({ schema: "completion", applied: journal.entries.length - 3 });
    expect(expected).toEqual({ [COURSE]: 4, [OTHER_COURSE]: 1, [HIDDEN]: 0, [UNKNOWN]: null });
    expect(Object.fromEntries(rows.map((row) => [row.key, row.visible_completable_blocks]))).toEqual(expected);
  });
});
