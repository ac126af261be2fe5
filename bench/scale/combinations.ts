// Random combinations for the scale bench: the seeded generator and the verdict both parts use, and the users list's draws.
//
// The users list under random combinations of every filter and search, not only the ones the fixed table
// runs: seeded draws of text (none; common, rare or nobody's, of one to three characters or more; a whole or partial
// address; part of the e-mail domain), role, organisation
// (one, or none), status, permission (common or rare) and 2-step state, on the first or the last page. Each
// combination: 3 requests to warm up, then `samples` timed ones over HTTP; the slowest combinations are
// printed with EXPLAIN (ANALYZE, BUFFERS) of their page and count queries.
import { sql, type SQLWrapper } from "drizzle-orm";
import type { UserFilters } from "../../packages/signon/src/accounts/user-search.js";
import type { PagePosition } from "../../packages/signon/src/repositories/keyset.js";

/** One drawn read of the users list. */
export interface Combination {
  filters: Partial<UserFilters>;
  position: PagePosition;
}

/** A small seeded generator (mulberry32): the same seed draws the same combinations on every machine. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** What the generated people offer the draws: their organisations, their application and one address. */
export interface DrawSource {
  organisationIds: readonly string[];
  applicationId: string;
  someEmail: string;
}

/** `count` combinations drawn with `seed`, each filter present or not independently. */
export function drawCombinations(seed: number, count: number, source: DrawSource): Combination[] {
  const random = seededRandom(seed);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)] as T;
  const partialEmail = source.someEmail.replace(/@.*$/, "@");
  // What people type, not only what the generator names: every length from one character to three, texts that
  // match nobody, and parts of the e-mail domain only.
  const texts = [
    ...["smith", "zzzzqx", "ada", "rose", "garden", "person1234", partialEmail, source.someEmail, "example.org"],
    ...["e", "s", "q", "ж", "sm", "jo", "qz", "xq", "ðð", "smi", "ros", "qzx", "zqj"],
    ...["example", "org", ".org", "@example"],
  ];
  const combinations: Combination[] = [];
  for (let n = 0; n < count; n++) {
    const filters: Partial<UserFilters> = {};
    if (random() < 0.5) filters.text = pick(texts);
    if (random() < 0.4) filters.role = pick(["superadmin", "admin", "super_organisation_admin", "organisation_admin", "normal"]);
    if (random() < 0.5) filters.organisation = random() < 0.8 ? pick(source.organisationIds) : "none";
    if (random() < 0.5) filters.status = pick(["active", "suspended", "locked", "invited"]);
    if (random() < 0.5) filters.permission = `${source.applicationId}:${random() < 0.6 ? "signin" : "editor"}`;
    if (random() < 0.4) filters.twoStep = pick(["on", "off", "missing", "exempt"]);
    combinations.push({ filters, position: random() < 0.85 ? { kind: "first" } : { kind: "last" } });
  }
  return combinations;
}

/** A combination as the page's query string says it, for the table. */
export function describeCombination(combination: Combination, organisationIds: readonly string[]): string {
  const { filters } = combination;
  const parts: string[] = [];
  if (filters.text) parts.push(`q=${filters.text}`);
  if (filters.role) parts.push(`role=${filters.role}`);
  if (filters.organisation) parts.push(`organisation=${filters.organisation === "none" ? "none" : `#${organisationIds.indexOf(filters.organisation) + 1}`}`);
  if (filters.status) parts.push(`status=${filters.status}`);
  if (filters.permission) parts.push(`permission=${filters.permission.replace(/^.*:/, "")}`);
  if (filters.twoStep) parts.push(`two_step=${filters.twoStep}`);
  if (combination.position.kind === "last") parts.push("last page");
  return parts.length === 0 ? "no filter" : parts.join(", ");
}

/** EXPLAIN (ANALYZE, BUFFERS) of `query`, as text. */
export async function explainAnalyze(db: { execute: (query: SQLWrapper) => Promise<{ rows: Record<string, unknown>[] }> }, query: SQLWrapper): Promise<string> {
  const rows = (await db.execute(sql`explain (analyze, buffers) ${query}`)).rows as { "QUERY PLAN": string }[];
  return rows.map((row) => row["QUERY PLAN"]).join("\n");
}

/** The last line of a combinations table: whether every combination met the goal; sets exit code 1 when one did not. */
export function verdict(over: number, total: number, goalMs: number, where: string): string {
  if (over === 0) return `Every combination under ${goalMs} ms p99 at ${where}.`;
  process.exitCode = 1;
  return `FAILED: ${over} of ${total} combinations over ${goalMs} ms p99 at ${where}.`;
}
