import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// What CHANGELOG.md promises about versions and releases, checked against the files and the git history.

const root = fileURLToPath(new URL("../../", import.meta.url));

interface Manifest {
  name: string;
  version: string;
  workspaces?: string[];
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

interface Release {
  version: string;
  commit: string;
  date: string;
}

const manifest = (path: string): Manifest => JSON.parse(readFileSync(`${root}${path}`, "utf8")) as Manifest;
const rootManifest = manifest("package.json");
const releases = JSON.parse(readFileSync(`${root}releases.json`, "utf8")) as Release[];
const changelog = readFileSync(`${root}CHANGELOG.md`, "utf8");

const SEMVER = /^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?$/;

/** Semver precedence of two versions (prerelease parts compared as text: enough for `-dev`). */
function compareVersions(a: string, b: string): number {
  const [, ...left] = SEMVER.exec(a) ?? [];
  const [, ...right] = SEMVER.exec(b) ?? [];
  for (let part = 0; part < 3; part++) {
    const difference = Number(left[part]) - Number(right[part]);
    if (difference !== 0) return difference;
  }
  if (left[3] === right[3]) return 0;
  if (left[3] === undefined) return 1;
  if (right[3] === undefined) return -1;
  return left[3] < right[3] ? -1 : 1;
}

/** The workspace package.json files, as git knows them (the root's included). */
function workspaceManifests(): string[] {
  return execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "package.json", "*/package.json"], { cwd: root, encoding: "utf8" })
    .split("\n")
    .filter((path) => path !== "" && !path.includes("node_modules") && !path.includes("/fixtures/"));
}

/** Runs git in the checkout; undefined when this is no git checkout (a copy without history). */
function git(...args: string[]): string | undefined {
  try {
    return execFileSync("git", args, { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
  } catch (error) {
    if ((error as { status?: number }).status === 128 && /not a git repository/.test(String((error as { stderr?: unknown }).stderr))) return undefined;
    throw error;
  }
}

/** The section of CHANGELOG.md under `## <heading>`, up to the next `## `. */
function changelogSection(heading: string): string | undefined {
  const start = changelog.split("\n").findIndex((line) => line.startsWith(`## ${heading}`));
  if (start === -1) return undefined;
  const lines = changelog.split("\n").slice(start + 1);
  const end = lines.findIndex((line) => line.startsWith("## "));
  return lines.slice(0, end === -1 ? undefined : end).join("\n");
}

describe("the version", () => {
  it("is one semver version that every workspace package carries and depends on its siblings at", () => {
    expect(rootManifest.version).toMatch(SEMVER);
    const paths = workspaceManifests();
    expect(paths.length).toBeGreaterThan(10);
    for (const path of paths) {
      const workspace = manifest(path);
      expect(workspace.version, path).toBe(rootManifest.version);
      for (const [name, range] of Object.entries({ ...workspace.dependencies, ...workspace.devDependencies })) {
        if (name.startsWith("@tessera/")) expect(range, `${path}: ${name}`).toBe(rootManifest.version);
      }
    }
  });

  it("is a release's at the commit that cuts it, and a later -dev version on any other", () => {
    const last = releases.at(-1) as Release;
    const head = git("rev-parse", "HEAD");
    if (head === last.commit) {
      expect(rootManifest.version).toBe(last.version);
    } else if (!rootManifest.version.includes("-")) {
      // The commit that cuts a release: newer than every release listed (releases.json names it in the next
      // commit, since a commit cannot hold its own hash), with a dated section of its own in CHANGELOG.md.
      expect(compareVersions(rootManifest.version, last.version)).toBeGreaterThan(0);
      expect(changelog).toMatch(new RegExp(`^## ${rootManifest.version.replaceAll(".", "\\.")} \\(\\d{4}-\\d{2}-\\d{2}\\)$`, "m"));
    } else {
      expect(rootManifest.version).toMatch(/-dev$/);
      expect(compareVersions(rootManifest.version, last.version)).toBeGreaterThan(0);
    }
  });
});

describe("releases.json", () => {
  it("lists releases oldest first, each with a semver version, a full commit hash and a date", () => {
    expect(releases.length).toBeGreaterThan(0);
    for (const release of releases) {
      expect(Object.keys(release).sort()).toEqual(["commit", "date", "version"]);
      expect(release.version).toMatch(SEMVER);
      expect(release.version, "a release is never a -dev version").not.toMatch(/-/);
      expect(release.commit).toMatch(/^[0-9a-f]{40}$/);
      expect(release.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    }
    for (let index = 1; index < releases.length; index++) {
      expect(compareVersions((releases[index] as Release).version, (releases[index - 1] as Release).version)).toBeGreaterThan(0);
      expect((releases[index] as Release).date >= (releases[index - 1] as Release).date).toBe(true);
    }
  });

  it("names commits of this history that carry each release's version and date, so that a test can check one out", () => {
    if (git("rev-parse", "--git-dir") === undefined) {
      // A copy without history cannot be checked; CI always has one.
      expect(process.env["CI"], "CI runs in a git clone with its history").not.toBe("true");
      return;
    }
    for (const release of releases) {
      expect(git("merge-base", "--is-ancestor", release.commit, "HEAD") ?? "", `${release.version} (${release.commit}) is an ancestor of HEAD`).toBe("");
      const shipped = JSON.parse(git("show", `${release.commit}:package.json`) ?? "{}") as Manifest;
      expect(shipped.version, `package.json at ${release.commit}`).toBe(release.version);
      expect(git("show", "-s", "--format=%cs", release.commit)).toBe(release.date);
    }
  });
});

describe("CHANGELOG.md", () => {
  const shapeOf = (section: string) => ({
    upgrade: /^- \*\*Upgrade from\*\*/m.test(section),
    postDeploy: /^- \*\*Post-deploy migrations\*\*: /m.test(section),
    rollback: /^- \*\*Rollback\*\*: /m.test(section),
    changed: /^### What changed$/m.test(section),
    operators: /^### What an operator must do$/m.test(section),
  });
  const complete = { upgrade: true, postDeploy: true, rollback: true, changed: true, operators: true };

  it("says for each release what changed, how to upgrade to it, its post-deploy migrations, rollback, and what an operator must do", () => {
    for (const release of releases) {
      const section = changelogSection(`${release.version} (${release.date})`);
      expect(section, `a section "## ${release.version} (${release.date})"`).toBeDefined();
      expect(shapeOf(section ?? ""), release.version).toEqual(complete);
    }
  });

  it("has an Unreleased section, in the same shape, naming the next version while main carries a -dev one", () => {
    if (!rootManifest.version.endsWith("-dev")) return;
    const next = rootManifest.version.replace(/-dev$/, "");
    const section = changelogSection(`Unreleased (${next})`);
    expect(section, `a section "## Unreleased (${next})"`).toBeDefined();
    expect(shapeOf(section ?? "")).toEqual(complete);
  });
});
