// The users list's plan chosen from figures alone: each row is a search's shape and figures, and the plan it gets.
import { describe, expect, it } from "vitest";
import {
  chooseSearchPlan,
  countAnswer,
  exactCountLimit,
  needsLargerSample,
  sampleEstimate,
  sampleSettlesOver,
  type SearchFigures,
  type SearchShape,
} from "../../src/user-search/plan.js";

const million = 1_000_000;
const plain: SearchShape = { text: "none", permission: false, organisationAlone: false, oneOrganisation: false };
/** A sample of 5,000 rows of a million with `matches` among them. */
const sample = (matches: number) => ({ rows: 5_000, matches });
const figures = (more: Partial<SearchFigures>): SearchFigures => ({ people: million, sample: sample(5_000), estimatedMatches: million, ...more });

type Row = [string, SearchShape, Partial<SearchFigures>, { text: string; page: string; permission: string; count: string }];

const rows: Row[] = [
  ["everyone", plain, {}, { text: "none", page: "name-order", permission: "none", count: "estimate" }],
  [
    "one organisation alone: its own count",
    { ...plain, organisationAlone: true, oneOrganisation: true },
    { organisationMembers: 108_650, estimatedMatches: 154_000, sample: sample(770) },
    { text: "none", page: "name-order", permission: "none", count: "members" },
  ],
  ["a rare fragment", { ...plain, text: "fragment" }, { textHolders: 12, estimatedMatches: 12, sample: sample(0) }, { text: "trigram", page: "sorted-matches", permission: "none", count: "count" }],
  [
    "a common fragment alone",
    { ...plain, text: "fragment" },
    { textHolders: 250_000, estimatedMatches: 250_000, sample: sample(1_250) },
    { text: "trigram", page: "name-order", permission: "none", count: "estimate" },
  ],
  [
    "a common fragment beside a suspended status in one organisation",
    { ...plain, text: "fragment", oneOrganisation: true },
    { textHolders: 250_000, indexedMatches: 400, estimatedMatches: 100, sample: sample(0), organisationMembers: 9_500 },
    { text: "tested", page: "sorted-matches", permission: "none", count: "count" },
  ],
  [
    "a common fragment beside people without an organisation (the index finds 50,000)",
    { ...plain, text: "fragment" },
    { textHolders: 250_000, indexedMatches: 50_000, estimatedMatches: 12_500, sample: sample(60) },
    { text: "trigram", page: "name-order", permission: "none", count: "too-slow-to-count" },
  ],
  [
    "the same, when the trigram and organisation indexes together find 1,200",
    { ...plain, text: "fragment" },
    { textHolders: 25_000, indexedMatches: 50_000, indexedTextMatches: 1_200, estimatedMatches: 1_200, sample: sample(6) },
    { text: "trigram", page: "sorted-matches", permission: "none", count: "count" },
  ],
  [
    "a whole address someone has",
    { ...plain, text: "address" },
    { addressHeld: true, textHolders: 1, estimatedMatches: 1, sample: sample(0) },
    { text: "exact-address", page: "name-order", permission: "none", count: "count" },
  ],
  [
    "an address nobody has: a fragment",
    { ...plain, text: "address" },
    { addressHeld: false, textHolders: 3, estimatedMatches: 3, sample: sample(0) },
    { text: "trigram", page: "sorted-matches", permission: "none", count: "count" },
  ],
  [
    "two letters few hold",
    { ...plain, text: "short" },
    { shortTextHolders: 40, textHolders: 5_000, estimatedMatches: 5_000, sample: sample(0) },
    { text: "short-grams", page: "sorted-matches", permission: "none", count: "count" },
  ],
  [
    "one letter most hold",
    { ...plain, text: "short" },
    { shortTextHolders: 900_000, textHolders: 900_000, estimatedMatches: 900_000, sample: sample(4_500) },
    { text: "trigram", page: "name-order", permission: "none", count: "estimate" },
  ],
  [
    "a permission 5,000 hold",
    { ...plain, permission: true },
    { permissionHolders: 5_000, estimatedMatches: 5_000, sample: sample(25) },
    { text: "none", page: "permission-holders", permission: "holders", count: "count" },
  ],
  [
    "a permission half hold",
    { ...plain, permission: true },
    { permissionHolders: 500_000, estimatedMatches: 500_000, sample: sample(2_500) },
    { text: "none", page: "name-order", permission: "looked-up", count: "estimate" },
  ],
  [
    "no organisation, suspended, a permission half hold (the indexes find 2,000; 1,000 match)",
    { ...plain, permission: true },
    { permissionHolders: 500_000, indexedMatches: 2_000, estimatedMatches: 1_000, sample: sample(5) },
    { text: "none", page: "sorted-matches", permission: "looked-up", count: "count" },
  ],
  [
    "the same with one letter most hold",
    { ...plain, permission: true, text: "short" },
    { permissionHolders: 500_000, indexedMatches: 2_000, estimatedMatches: 900, shortTextHolders: 900_000, textHolders: 900_000, sample: sample(4) },
    { text: "tested", page: "sorted-matches", permission: "looked-up", count: "count" },
  ],
  [
    "few matches no index finds (2-step required but not set up, active)",
    plain,
    { estimatedMatches: 1_500, sample: sample(7) },
    { text: "none", page: "name-order", permission: "none", count: "too-slow-to-count" },
  ],
];

describe("the users list's plan, from figures", () => {
  it.each(rows)("%s", (_name, shape, given, expected) => {
    const plan = chooseSearchPlan(shape, figures(given));
    expect({ text: plan.text, page: plan.page, permission: plan.permission, count: plan.count.kind }).toEqual(expected);
    // Every part of the plan says why.
    expect(plan.reasons.length).toBeGreaterThanOrEqual(expected.text === "none" && expected.permission === "none" ? 2 : 3);
  });
});

describe("the export the plan reads", () => {
  it("sorts the table read in its order from 100,000 matches, and walks the index of names below", () => {
    expect(chooseSearchPlan(plain, figures({})).export).toBe("sorted");
    expect(chooseSearchPlan(plain, figures({ sample: sample(400), estimatedMatches: 80_000 })).export).toBe("name-order");
    expect(chooseSearchPlan({ ...plain, text: "address" }, figures({ addressHeld: true, sample: sample(5_000) })).export).toBe("name-order");
  });
});

describe("the count the plan answers", () => {
  const ask = { kind: "count" as const, upTo: exactCountLimit };

  it("is the organisation's own count when filtered to it alone", () => {
    expect(countAnswer({ kind: "members", count: 108_650 }, figures({ organisationMembers: 108_650 }))).toEqual({ count: 108_650, exact: true, moreThan: false, tooSlowToCount: false });
  });

  it("is exact up to the limit, and more than the limit when the sample does not prove more", () => {
    expect(countAnswer(ask, figures({ sample: sample(2) }), { counted: 909 })).toEqual({ count: 909, exact: true, moreThan: false, tooSlowToCount: false });
    expect(countAnswer(ask, figures({ sample: sample(40) }), { counted: exactCountLimit + 1 })).toEqual({ count: exactCountLimit, exact: false, moreThan: true, tooSlowToCount: false });
    expect(countAnswer(ask, figures({ sample: sample(70) }), { counted: exactCountLimit + 1 })).toEqual({ count: 14_000, exact: false, moreThan: false, tooSlowToCount: false });
  });

  it("never says more people than there are, nor than the organisation has", () => {
    // A sample of pages holding every row: the estimate is the table, not more.
    expect(countAnswer({ kind: "estimate" }, figures({ people: 1_000_001, sample: { rows: 5_203, matches: 5_203 } })).count).toBe(1_000_001);
    expect(countAnswer({ kind: "estimate" }, figures({ organisationMembers: 108_650, sample: sample(770) })).count).toBe(108_650);
    expect(sampleEstimate({ rows: 5_203, matches: 5_203 }, 1_000_001)).toBe(1_000_001);
  });

  it("gives the larger sample's estimate when counting ran out of time and the first sample found too few", () => {
    expect(needsLargerSample(sample(4))).toBe(true);
    expect(needsLargerSample(sample(16))).toBe(false);
    expect(countAnswer(ask, figures({ sample: sample(4) }), { timedOut: true, sample: { rows: 100_000, matches: 91 } })).toEqual({ count: 910, exact: false, moreThan: false, tooSlowToCount: true });
    expect(countAnswer(ask, figures({ sample: sample(30) }), { timedOut: true })).toEqual({ count: 6_000, exact: false, moreThan: false, tooSlowToCount: true });
  });

  it("reads a larger sample instead of a count that would read too many people, when the first sample found too few", () => {
    const few = chooseSearchPlan(plain, figures({ estimatedMatches: 1_500, sample: sample(7) }));
    expect(few.count).toEqual({ kind: "too-slow-to-count", sampleRows: 100_000 });
    const enough = chooseSearchPlan(plain, figures({ estimatedMatches: 6_000, sample: sample(30) }));
    expect(enough.count).toEqual({ kind: "too-slow-to-count", sampleRows: null });
    expect(countAnswer(enough.count, figures({ sample: sample(30) }))).toEqual({ count: 6_000, exact: false, moreThan: false, tooSlowToCount: true });
    expect(countAnswer(few.count, figures({ sample: sample(7) }), { timedOut: true, sample: { rows: 100_000, matches: 150 } })).toMatchObject({ count: 1_500, tooSlowToCount: true });
  });

  it("lets a sample settle over the limit only when its low end is over it", () => {
    expect(sampleSettlesOver(sample(60), million, exactCountLimit)).toBe(false);
    expect(sampleSettlesOver(sample(80), million, exactCountLimit)).toBe(true);
    expect(sampleSettlesOver(sample(0), million, 0)).toBe(false);
  });
});
