import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { checkMigration, checkMigrationFolder, type MigrationExemption } from "@tessera/db";
import { describe, expect, it } from "vitest";

// Every migration of the first kind, of every service, is checked with PostgreSQL's parser: one that would break
// the release before (or stall its requests) fails here, unless check-exemptions.json beside it names it with the
// exact rules it breaks, its SHA-256 and a reason; one released before the check must be the same file as at that
// release's commit.

const root = fileURLToPath(new URL("../../", import.meta.url));

const FOLDERS = ["packages/signon/migrations", "packages/completion/migrations", "packages/signon-client/migrations"];
const POST_DEPLOY_FOLDERS = ["packages/signon/migrations-post-deploy", "packages/completion/migrations-post-deploy"];

const releases = JSON.parse(readFileSync(`${root}releases.json`, "utf8")) as { version: string; commit: string }[];

/** The file at `path` in the commit of release `version`, or undefined without the history (a copy, not a clone). */
function fileAtRelease(version: string, path: string): string | undefined {
  const release = releases.find((candidate) => candidate.version === version);
  expect(release, `release ${version} in releases.json`).toBeDefined();
  try {
    return execFileSync("git", ["show", `${release?.commit ?? ""}:${path}`], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (error) {
    if (/not a git repository/.test(String((error as { stderr?: unknown }).stderr)) && process.env["CI"] !== "true") return undefined;
    throw error;
  }
}

describe.each(FOLDERS)("the migrations of %s", (folder) => {
  it("do nothing that would break the release before, except those named in check-exemptions.json", async () => {
    const checked = await checkMigrationFolder(`${root}${folder}`);
    expect(checked.length).toBeGreaterThan(0);
    for (const migration of checked) {
      const rules = [...new Set(migration.findings.map((finding) => finding.rule))];
      if (migration.exemption === undefined) {
        // The findings themselves, so that the failure says what to change.
        expect(migration.findings, `${folder}/${migration.tag}.sql`).toEqual([]);
        continue;
      }
      expect(rules, `${migration.tag}: the rules its exemption names, exactly`).toEqual(migration.exemption.rules);
      expect(migration.exemption.sha256, `${migration.tag}: an exemption ends when the file changes`).toBe(migration.sha256);
      expect(migration.exemption.reason.length, `${migration.tag}: the reason`).toBeGreaterThan(40);
    }
  });

  it("name in check-exemptions.json only migrations of the journal, and released ones as they were at their release", async () => {
    const path = `${root}${folder}/check-exemptions.json`;
    if (!existsSync(path)) return;
    const exemptions = JSON.parse(readFileSync(path, "utf8")) as Record<string, MigrationExemption>;
    const tags = new Set((await checkMigrationFolder(`${root}${folder}`)).map((migration) => migration.tag));
    for (const [tag, exemption] of Object.entries(exemptions)) {
      expect(tags.has(tag), `${tag} is in the journal`).toBe(true);
      if (exemption.released === undefined) continue;
      const shipped = fileAtRelease(exemption.released, relative(root, `${root}${folder}/${tag}.sql`));
      if (shipped === undefined) continue;
      expect(createHash("sha256").update(shipped).digest("hex"), `${tag}.sql as released in ${exemption.released}`).toBe(exemption.sha256);
    }
  });
});

describe.each(POST_DEPLOY_FOLDERS)("the post-deploy migrations of %s", (folder) => {
  it("have a journal, and each parses as PostgreSQL", async () => {
    const journal = JSON.parse(readFileSync(`${root}${folder}/meta/_journal.json`, "utf8")) as { entries: { tag: string }[] };
    for (const { tag } of journal.entries) {
      await expect(checkMigration(readFileSync(`${root}${folder}/${tag}.sql`, "utf8")), tag).resolves.toBeDefined();
    }
  });
});
