import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runMigrations } from "@tessera/db";
import { useTestDatabase } from "@tessera/db/testing";
import { afterAll, describe, expect, it } from "vitest";
import type { CompletionContext } from "../src/context.js";
import { COMPLETION_MIGRATIONS } from "../src/db/database.js";
import { courseSumsMismatches } from "./support/consistency.js";

// A migrations folder holding migrations 0000–0003: the database before courses kept statistics sums.
const before = mkdtempSync(join(tmpdir(), "completion-migrations-"));
cpSync(COMPLETION_MIGRATIONS.folder, before, { recursive: true });
const journalPath = join(before, "meta", "_journal.json");
const journal = JSON.parse(readFileSync(journalPath, "utf8")) as { entries: unknown[] };
writeFileSync(journalPath, JSON.stringify({ ...journal, entries: journal.entries.slice(0, 4) }));

const database = await useTestDatabase({ migrations: [{ schema: "completion", folder: before }], label: "completion_upgrade_0004" });
afterAll(async () => {
  await database.close();
  rmSync(before, { recursive: true, force: true });
});

describe("migration 0004 (per-course statistics sums)", () => {
  it("fills the groups and sums of enrollments already stored, and keeps them from then on", async () => {
    const q = (text: string): Promise<unknown> => database.pool.query(text);
    await q(`insert into completion.courses (key) values ('c1'), ('c2')`);
    await q(`insert into completion.learners (id, username, email) select g, 'u' || g, 'u' || g || '@example.com' from generate_series(1, 3000) g`);
    await q(`insert into completion.enrollments (learner_id, course_key, is_active, course_earned, course_possible, course_percent)
             select g, 'c' || (1 + g % 2), g % 7 <> 0, case when g % 3 = 0 then g / 997.0 end, case when g % 3 = 0 then 4 end,
                    case when g % 3 = 0 then g / 3988.0 end
             from generate_series(1, 3000) g`);
    await q(`insert into completion.course_roles values ('c1', 3, 'staff'), ('c1', 3, 'beta_testers'), ('c2', 4, 'staff')`);
    await q(`insert into completion.cohorts (id, course_key, name) values (1, 'c1', 'A'), (2, 'c2', 'B')`);
    await q(`insert into completion.cohort_memberships select 1 + g % 2, g from generate_series(1, 200) g`);

    const [report] = await runMigrations(database.pool, [COMPLETION_MIGRATIONS]);
    const ctx = { db: database.db } as unknown as Pick<CompletionContext, "db">;

    expect(report).toMatchObject({ schema: "completion", applied: journal.entries.length - 4 });
    const { rows } = await database.pool.query<{ learners: string }>(`select sum(learners) as learners from completion.course_stat_sums`);
    expect(Number(rows[0]!.learners)).toBe(3000 - Math.floor(3000 / 7));
    expect(await courseSumsMismatches(ctx)).toEqual([]);
    await q(`update completion.enrollments set is_active = not is_active where learner_id % 5 = 0`);
    await q(`delete from completion.cohorts where id = 1`);
    expect(await courseSumsMismatches(ctx)).toEqual([]);
  });
});
