import type { SignonDatabase } from "../db/database.js";
import {
  addressHeld,
  estimatePermissionHolders,
  estimateShortTextHolders,
  estimateTextHolders,
  estimateUsers,
  everyRole,
  indexedFilters,
  organisationPeople,
  sampleUsers,
  shortTextLength,
  type UserSearch,
} from "../repositories/user-search.js";
import { permissionPlanFor, type SearchFigures, type SearchShape } from "./plan.js";

const addressPattern = /^[^\s@]+@[^\s@]+$/;

/** Which filters a search has, as its plan needs to know. */
export function shapeOf(search: UserSearch): SearchShape {
  const text = search.text === undefined || search.text === "" ? "none" : addressPattern.test(search.text) ? "address" : [...search.text].length <= shortTextLength ? "short" : "fragment";
  const oneOrganisation = typeof search.organisationId === "string";
  const everyoneInScope = search.scopeOrganisationIds === undefined && everyRole.every((role) => search.scopeRoles.includes(role));
  const organisationAlone =
    oneOrganisation && everyoneInScope && text === "none" && search.role === undefined && search.status === undefined && search.permission === undefined && search.twoStep === undefined;
  return { text, permission: search.permission !== undefined, organisationAlone, oneOrganisation };
}

/**
 * The figures a search's plan is chosen from, each read only when the shape of the search calls for it: PostgreSQL's
 * estimates (EXPLAIN), a sample of the table, whether a whole address is someone's, and the organisation's own count.
 * The sample, the longest of them (10 to 30 ms at a million people), is read on a connection of its own while the
 * others are read one after another (at most seven, most searches one to three, each a millisecond or two).
 */
export async function gatherFigures(db: SignonDatabase, search: UserSearch, shape: SearchShape): Promise<SearchFigures> {
  // First, as the sample tests a permission the way the plan will read it.
  const permissionHolders = search.permission === undefined ? undefined : await estimatePermissionHolders(db, search.permission);
  const [sample, estimates] = await Promise.all([
    sampleUsers(db, search, permissionHolders === undefined ? undefined : permissionPlanFor(permissionHolders)),
    gatherEstimates(db, search, shape),
  ]);
  return {
    // The table as last analysed, or as the sample read it when that is more (a table not analysed since it grew).
    people: Math.max(sample.tableRows, sample.rows),
    sample: { rows: sample.rows, matches: sample.matches },
    ...estimates,
    ...(permissionHolders !== undefined && !shape.organisationAlone ? { permissionHolders } : {}),
  };
}

/** The figures besides the sample and the permission's holders. */
async function gatherEstimates(db: SignonDatabase, search: UserSearch, shape: SearchShape): Promise<Omit<SearchFigures, "people" | "sample">> {
  const figures: Omit<SearchFigures, "people" | "sample"> = { estimatedMatches: await estimateUsers(db, search) };
  const members = shape.oneOrganisation ? await organisationPeople(db, search.organisationId as string) : undefined;
  if (members !== undefined) figures.organisationMembers = members;
  if (shape.organisationAlone) return figures;
  const narrowed = indexedFilters(search);
  if (narrowed !== null) figures.indexedMatches = await estimateUsers(db, narrowed);
  const text = search.text;
  if (text === undefined || shape.text === "none") return figures;
  if (shape.text === "address") figures.addressHeld = await addressHeld(db, { ...search, text });
  if (shape.text === "short") figures.shortTextHolders = await estimateShortTextHolders(db, text);
  figures.textHolders = await estimateTextHolders(db, text);
  if (narrowed !== null && shape.text === "fragment") figures.indexedTextMatches = await estimateUsers(db, { ...narrowed, text });
  return figures;
}
