/**
 * How the users list reads a search: one pure choice from the figures gathered for it (`figures.ts`). Nothing here
 * reads the database; `repositories/user-search.ts` builds the SQL of the plan chosen, and the bench prints the same
 * plan. Each threshold below says why it is where it is; the figures behind them are from `npm run bench -- scale`
 * on a million generated people (2 cores, PostgreSQL 15, `shared_buffers` 128 MB).
 */

/** Which filters a search has, as far as its plan goes. */
export interface SearchShape {
  /** The search text: none, one that looks like a whole e-mail address, one or two characters, or a longer fragment. */
  text: "none" | "address" | "short" | "fragment";
  permission: boolean;
  /** Filtered to one organisation, with no other filter and every role in scope: its member count is the answer. */
  organisationAlone: boolean;
  /** Filtered to one organisation (alone or not): its member count bounds the count. */
  oneOrganisation: boolean;
}

/** The figures a plan is chosen from. Estimates are PostgreSQL's (EXPLAIN), except the sample's. */
export interface SearchFigures {
  /** People in the list (API users aside), as PostgreSQL last counted the table. */
  people: number;
  /** A sample of the table's pages: the rows read and the people among them matching every filter. */
  sample: SampleFigures;
  /** PostgreSQL's estimate of the people matching every filter. */
  estimatedMatches: number;
  /** People holding the text in their name or address (the trigram indexes' estimate); with a text only. */
  textHolders?: number;
  /** People holding a text of one or two characters, by the index of short texts; with such a text only. */
  shortTextHolders?: number;
  /** Whether a person in scope has the text as their whole address; with a text that looks like one only. */
  addressHeld?: boolean;
  /** People holding the permission filtered by; with a permission only. */
  permissionHolders?: number;
  /**
   * People found by the filters an index of `users` serves (an organisation or none, a role, the scope, a suspended,
   * invited or locked status, 2-step set up or exempt), taken together; absent when the search has none of them.
   */
  indexedMatches?: number;
  /**
   * People found by those filters and a text of three characters or more together, which PostgreSQL reads by
   * combining the trigram indexes with the filters' own (a BitmapAnd); with such a text and such filters only.
   */
  indexedTextMatches?: number;
  /** The exact number of people (API users aside) of the organisation filtered to; with one organisation only. */
  organisationMembers?: number;
}

export interface SampleFigures {
  /** Rows of `users` read (people and API users). */
  rows: number;
  /** People among them matching every filter. */
  matches: number;
}

/**
 * How the text is matched: not at all, a whole address through the unique index on `lower(email)`, the trigram
 * indexes, the index of short texts, or tested on each person the other filters find (no index of the text read).
 */
export type TextPlan = "none" | "exact-address" | "trigram" | "short-grams" | "tested";

/**
 * Where a page's people come from: a walk along the order of names (an index of that order, stopping at a page),
 * every match read through the filters' indexes and sorted, or the permission's holders, each looked up by primary
 * key and sorted.
 */
export type PagePlan = "name-order" | "sorted-matches" | "permission-holders";

/** How a permission filter is tested: through its holders (few), or looked up for each person found otherwise. */
export type PermissionPlan = "none" | "holders" | "looked-up";

/**
 * How many people match: the organisation's own count, the sample's estimate (it proves more than the list counts),
 * counted one by one up to `upTo` within the count's time budget, or, when counting would read more people than the
 * budget allows, a sample's estimate (the first one, or a larger one of `sampleRows` when the first found too few).
 */
export type CountPlan =
  | { kind: "members"; count: number }
  | { kind: "estimate" }
  | { kind: "count"; upTo: number }
  | { kind: "too-slow-to-count"; sampleRows: number | null };

/**
 * How `users.csv` reads everyone who matches, by name: along an index of that order (the first row at once), or the
 * table in its own order, sorted (the first row after the sort, the whole sooner).
 */
export type ExportPlan = "name-order" | "sorted";

export interface SearchPlan {
  text: TextPlan;
  page: PagePlan;
  permission: PermissionPlan;
  count: CountPlan;
  export: ExportPlan;
  /** Why each part was chosen, in words (the bench prints them). */
  reasons: string[];
}

/** Up to this many people are counted one by one; beyond, the list says "about N" (or "more than N", proved). */
export const exactCountLimit = 10_000;

/**
 * Up to this many holders of a permission, a page starts from them: work in proportion to the holders. Walking the
 * order of names instead reads about 50 × people / holders people before a page is found, each probed for the
 * permission: for a rare permission that is the larger (at 1M people and 5,000 holders, some 10,000 against
 * 5,000), for a common one the smaller.
 */
export const fewHoldersLimit = 10_000;

/**
 * Up to this many people holding a text of one or two characters, a page reads them through the index of short
 * texts and sorts them. More hold it, and a walk of the names finds a page sooner (about 50 × people / holders).
 */
export const shortTextIndexLimit = 10_000;

/**
 * From this many people holding a text, it is common: through the trigram indexes, it is a list of most people
 * (at 1M people, the 250,000 addresses holding `example.org` took 56 to 104 ms before any other filter applied).
 */
export const commonTextMatches = 20_000;

/**
 * At most this many people found by the other filters' indexes are tested one by one, each a heap page read at
 * random (at 1M people the 50,000 without an organisation took 600 ms; a walk of the names finds a page among the
 * first thousand people read).
 */
export const testedPeopleLimit = 20_000;

/**
 * A page reads every match and sorts them when at most this many people match (by PostgreSQL's estimate and the
 * sample's): a walk of the names reads about 50 × people / matches people for a page, which for 2,000 matches
 * among 1M is 25,000, each fetched and tested; sorting 2,000 found through an index costs a fraction of that.
 */
export const fewMatchesLimit = 2_000;

/**
 * …and when the indexes that find them read at most this many people. Past it, the sorted page is a read of a large
 * part of the table (a combination of filters no index serves), and the walk of the names is bounded better.
 */
export const sortedReadLimit = 10_000;

/**
 * A sample settles "more than the list counts" when its estimate less this many standard deviations (the square
 * root of its matches, a Poisson count) is still over the limit: at 5,000 rows of 1M, 80 matches (an estimate of
 * 16,000) settle a limit of 10,000, and the limit itself is never settled by the sample.
 */
export const sampleDeviations = 3;

/**
 * A sample's estimate is within about 2× of the truth (two standard deviations) from this many matches; with fewer,
 * a count that ran out of time is answered from what the page proves, or a larger sample.
 */
export const trustedSampleMatches = 16;

/**
 * A count reads at most this many people in its budget (`countBudgetMs`, 100 ms): at 1M people on 2 cores, 18,000
 * people read from an index of those without an organisation took 130 to 145 ms, heap page by heap page. A count
 * that would read more is not started: the sample answers.
 */
export const countedPeopleLimit = 12_000;

/**
 * From this many people matching, `users.csv` reads the table in its own order and sorts them: along the index of
 * names each person is a heap page read at random, and at 1M people the whole export took 9.5 s of the database's
 * time against 7.2 s read in order and sorted (its first row after 1.6 s rather than at once). Below it, the index's
 * first row at once costs little more.
 */
export const sortedExportFrom = 100_000;

/** The sample's estimate of the people matching, scaled from the rows it read to the table, never over `people`. */
export function sampleEstimate(sample: SampleFigures, people: number): number {
  if (sample.rows === 0) return 0;
  return Math.min(people, Math.round((sample.matches / sample.rows) * people));
}

/** Whether a sample proves that more than `limit` people match (see `sampleDeviations`). */
export function sampleSettlesOver(sample: SampleFigures, people: number, limit: number): boolean {
  if (sample.matches === 0) return false;
  const low = sampleEstimate(sample, people) * (1 - sampleDeviations / Math.sqrt(sample.matches));
  return low > limit;
}

/** The plan of a search, from its shape and figures. */
export function chooseSearchPlan(shape: SearchShape, figures: SearchFigures): SearchPlan {
  const reasons: string[] = [];
  const permission = choosePermission(shape, figures, reasons);
  const text = chooseText(shape, figures, permission, reasons);
  const page = choosePage(figures, text, permission, reasons);
  const count = chooseCount(shape, figures, reasons);
  const everyone = text === "exact-address" ? 1 : sampleEstimate(figures.sample, figures.people);
  const exported: ExportPlan = everyone >= sortedExportFrom ? "sorted" : "name-order";
  reasons.push(`export: about ${everyone} people: ${exported === "sorted" ? "the table read in its order and sorted" : "along the index of names"}`);
  return { text, page, permission, count, export: exported, reasons };
}

/**
 * How a permission with this many holders is tested: from its holders (at most `fewHoldersLimit`), or looked up for
 * each person found otherwise. The sample asks too, before the rest of the plan: hashing a few holders costs less than
 * a lookup per sampled person, and a lookup less than hashing many.
 */
export function permissionPlanFor(holders: number): Exclude<PermissionPlan, "none"> {
  return holders <= fewHoldersLimit ? "holders" : "looked-up";
}

function choosePermission(shape: SearchShape, figures: SearchFigures, reasons: string[]): PermissionPlan {
  if (!shape.permission) return "none";
  const holders = figures.permissionHolders ?? Infinity;
  const plan = permissionPlanFor(holders);
  reasons.push(
    plan === "holders"
      ? `permission: ${holders} holders (at most ${fewHoldersLimit}): read from them`
      : `permission: ${holders} holders (over ${fewHoldersLimit}): looked up for each person found otherwise`,
  );
  return plan;
}

/** The people the indexes of the filters other than the text find: the narrowest of what serves them. */
function narrowestOtherIndex(figures: SearchFigures, permission: PermissionPlan): number {
  const holders = permission === "holders" ? (figures.permissionHolders ?? Infinity) : Infinity;
  return Math.min(figures.indexedMatches ?? Infinity, holders);
}

function chooseText(shape: SearchShape, figures: SearchFigures, permission: PermissionPlan, reasons: string[]): TextPlan {
  if (shape.text === "none") return "none";
  if (shape.text === "address" && figures.addressHeld === true) {
    reasons.push("text: a whole address someone in scope has: that person only");
    return "exact-address";
  }
  if (shape.text === "short" && (figures.shortTextHolders ?? Infinity) <= shortTextIndexLimit) {
    reasons.push(`text: ${figures.shortTextHolders} hold it (at most ${shortTextIndexLimit}): the index of short texts`);
    return "short-grams";
  }
  const holders = figures.textHolders ?? 0;
  const others = narrowestOtherIndex(figures, permission);
  if (holders >= commonTextMatches && others <= Math.min(testedPeopleLimit, holders / 2)) {
    reasons.push(`text: ${holders} hold it (at least ${commonTextMatches}), the other filters' indexes find ${others}: tested on each of those`);
    return "tested";
  }
  reasons.push(`text: ${holders} hold it: the trigram indexes`);
  return "trigram";
}

function choosePage(figures: SearchFigures, text: TextPlan, permission: PermissionPlan, reasons: string[]): PagePlan {
  if (text === "exact-address") {
    reasons.push("page: the person with that address");
    return "name-order";
  }
  if (permission === "holders") {
    reasons.push("page: the permission's holders, sorted");
    return "permission-holders";
  }
  if (text === "tested") {
    reasons.push("page: what the other filters' indexes find, tested for the text and sorted");
    return "sorted-matches";
  }
  const sampled = sampleEstimate(figures.sample, figures.people);
  const textIndex =
    text === "short-grams" ? (figures.shortTextHolders ?? Infinity) : text === "trigram" ? Math.min(figures.textHolders ?? Infinity, figures.indexedTextMatches ?? Infinity) : Infinity;
  const read = Math.min(narrowestOtherIndex(figures, permission), textIndex);
  // No more match than the narrowest index finds, whatever PostgreSQL estimates of the filters together.
  const estimated = Math.min(figures.estimatedMatches, read);
  if (estimated <= fewMatchesLimit && sampled <= fewMatchesLimit && read <= sortedReadLimit) {
    reasons.push(`page: about ${Math.max(estimated, sampled)} match (at most ${fewMatchesLimit}), found among ${read} through an index: all read and sorted`);
    return "sorted-matches";
  }
  reasons.push(`page: about ${Math.max(estimated, sampled)} match, an index finds ${Number.isFinite(read) ? read : "everyone"}: a walk of the names`);
  return "name-order";
}

function chooseCount(shape: SearchShape, figures: SearchFigures, reasons: string[]): CountPlan {
  if (shape.organisationAlone && figures.organisationMembers !== undefined) {
    reasons.push(`count: the organisation's own count of its people (${figures.organisationMembers})`);
    return { kind: "members", count: figures.organisationMembers };
  }
  if (sampleSettlesOver(figures.sample, figures.people, exactCountLimit)) {
    reasons.push(`count: the sample (${figures.sample.matches} of ${figures.sample.rows} rows) proves over ${exactCountLimit}: its estimate`);
    return { kind: "estimate" };
  }
  const reads = countReads(shape, figures);
  if (reads > countedPeopleLimit) {
    const sampleRows = needsLargerSample(figures.sample) ? largerSampleRows : null;
    reasons.push(
      `count: would read about ${Number.isFinite(reads) ? Math.round(reads) : "everyone"} people (over ${countedPeopleLimit}): ${sampleRows === null ? "the sample's estimate" : `a sample of ${sampleRows} rows`}`,
    );
    return { kind: "too-slow-to-count", sampleRows };
  }
  reasons.push(`count: one by one, up to ${exactCountLimit + 1} (about ${Math.round(reads)} people read)`);
  return { kind: "count", upTo: exactCountLimit };
}

/**
 * About how many people a count reads: those the narrowest index finds (the other filters' indexes, a permission's
 * few holders, a text's trigrams when it has three characters or more), or, when more than the limit match, the
 * share of them it reads before it has counted past the limit.
 */
function countReads(shape: SearchShape, figures: SearchFigures): number {
  const holders = figures.permissionHolders !== undefined && figures.permissionHolders <= fewHoldersLimit ? figures.permissionHolders : Infinity;
  const text = shape.text === "fragment" || shape.text === "address" ? (figures.textHolders ?? Infinity) : shape.text === "short" && (figures.shortTextHolders ?? Infinity) <= shortTextIndexLimit ? (figures.shortTextHolders ?? Infinity) : Infinity;
  const narrowest = Math.min(figures.indexedMatches ?? Infinity, figures.indexedTextMatches ?? Infinity, holders, text, figures.addressHeld === true ? 1 : Infinity);
  const matches = Math.max(Math.min(figures.estimatedMatches, narrowest), sampleEstimate(figures.sample, figures.people));
  if (!Number.isFinite(narrowest)) return matches > exactCountLimit ? (figures.people * (exactCountLimit + 1)) / matches : Infinity;
  return matches > exactCountLimit ? (narrowest * (exactCountLimit + 1)) / matches : narrowest;
}

/** How many people match, as the list says it. */
export interface UserCount {
  /** Exact, the limit counted past, or an estimate. */
  count: number;
  /** Counted one by one (or kept exact on the organisation's row): `count` is the number of people who match. */
  exact: boolean;
  /** Counted one by one up to the limit, and more match: "more than `count`". */
  moreThan: boolean;
  /** The estimate stands in for a count that ran past its time. */
  tooSlowToCount: boolean;
}

/** What running the count found: the people counted (at most `upTo + 1`), or that it ran past its time. */
export type CountOutcome = { counted: number } | { timedOut: true; sample?: SampleFigures };

/** The most people a search can match: the people there are, or the organisation's, when filtered to one. */
function ceiling(figures: SearchFigures): number {
  return Math.min(figures.people, figures.organisationMembers ?? Infinity);
}

/**
 * The count to show from the plan and, for `count`, what counting found. Never more than the people there are (nor
 * than the organisation has): an estimate is held under that ceiling. A count that ran out of time gives the sample's
 * estimate; when the sample found too few to be trusted, the larger sample in the outcome (if one was read) stands in.
 */
export function countAnswer(plan: CountPlan, figures: SearchFigures, outcome?: CountOutcome): UserCount {
  const estimate = (sample: SampleFigures, tooSlowToCount: boolean): UserCount => ({
    count: Math.min(ceiling(figures), sampleEstimate(sample, figures.people)),
    exact: false,
    moreThan: false,
    tooSlowToCount,
  });
  switch (plan.kind) {
    case "members":
      return { count: plan.count, exact: true, moreThan: false, tooSlowToCount: false };
    case "estimate":
      return estimate(figures.sample, false);
    case "too-slow-to-count":
      return estimate(outcome !== undefined && "timedOut" in outcome && outcome.sample !== undefined ? outcome.sample : figures.sample, true);
    case "count": {
      if (outcome === undefined) throw new Error("countAnswer: a count plan needs what the count found");
      if ("timedOut" in outcome) return estimate(outcome.sample ?? figures.sample, true);
      if (outcome.counted <= plan.upTo) return { count: outcome.counted, exact: true, moreThan: false, tooSlowToCount: false };
      const sampled = sampleEstimate(figures.sample, figures.people);
      return sampled > plan.upTo
        ? { count: Math.min(ceiling(figures), sampled), exact: false, moreThan: false, tooSlowToCount: false }
        : { count: plan.upTo, exact: false, moreThan: true, tooSlowToCount: false };
    }
  }
}

/**
 * Rows read by the larger sample, for a count that ran out of time when the first sample found too few matches to
 * trust (`trustedSampleMatches`): twenty times as many, so about 900 people among a million are about 90 matches, an
 * estimate within a third of the truth, read in 20 to 40 ms.
 */
export const largerSampleRows = 100_000;

/** Whether a count that ran out of time should read the larger sample: the first found too few matches to trust. */
export function needsLargerSample(sample: SampleFigures): boolean {
  return sample.matches < trustedSampleMatches;
}
