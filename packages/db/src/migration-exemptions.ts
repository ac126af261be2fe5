import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { checkMigration, type MigrationFinding, type MigrationRule } from "./migration-check.js";

/** The file, beside a folder's migrations, that lists the migrations the check lets through and why. */
export const EXEMPTIONS_FILE = "check-exemptions.json";

/**
 * A migration of the first kind that does something the check refuses, let
 * through by name: the rules it breaks, exactly, the SHA-256 of its file (any
 * edit ends the exemption), why it is acceptable, and, for one that was part
 * of a release before the check existed, that release (its file must be the
 * same at the release's commit).
 */
export interface MigrationExemption {
  sha256: string;
  rules: MigrationRule[];
  reason: string;
  released?: string;
}

/** One migration of a folder, checked. */
export interface CheckedMigration {
  tag: string;
  /** Path of its `.sql` file. */
  path: string;
  /** SHA-256 of the file, as the bookkeeping table records it. */
  sha256: string;
  findings: MigrationFinding[];
  exemption: MigrationExemption | undefined;
}

/**
 * Checks every migration of a migrations folder (its journal's order) with
 * {@link checkMigration}, and pairs each with its exemption, if
 * `check-exemptions.json` beside them names it. What to make of the two is the
 * caller's (the test of every service's migrations).
 */
export async function checkMigrationFolder(folder: string): Promise<CheckedMigration[]> {
  const journal = JSON.parse(readFileSync(join(folder, "meta", "_journal.json"), "utf8")) as { entries: { tag: string }[] };
  const exemptionsPath = join(folder, EXEMPTIONS_FILE);
  const exemptions = existsSync(exemptionsPath) ? (JSON.parse(readFileSync(exemptionsPath, "utf8")) as Record<string, MigrationExemption>) : {};
  const checked: CheckedMigration[] = [];
  for (const { tag } of journal.entries) {
    const path = join(folder, `${tag}.sql`);
    const sql = readFileSync(path, "utf8");
    checked.push({
      tag,
      path,
      sha256: createHash("sha256").update(sql).digest("hex"),
      findings: await checkMigration(sql),
      exemption: exemptions[tag],
    });
  }
  return checked;
}
