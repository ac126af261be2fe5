import { describe, expect, it } from "vitest";
import { aggregateTree } from "../src/aggregation/aggregate-tree.js";
import { completionDictionary, percentOf, UNKNOWN_STRUCTURE_COMPLETION } from "../src/aggregation/completion-math.js";
import { blockMode, type BlockMode } from "../src/domain/block-modes.js";
import { buildCourseTree, subtreeOutline, type BlockRecord } from "../src/domain/course-tree.js";

let position = 0;
function block(key: string, type: string, parentKey: string | null, extra: { mode?: BlockMode; staffOnly?: boolean } = {}): BlockRecord {
  position += 1;
  return { key, type, parentKey, position, mode: blockMode(type, extra.mode), visibleToStaffOnly: extra.staffOnly ?? false };
}

const tree = buildCourseTree([
  block("course", "course", null),
  block("ch1", "chapter", "course"),
  block("seq1", "sequential", "ch1"),
  block("v1", "vertical", "seq1"),
  block("p1", "problem", "v1"),
  block("h1", "html", "v1"),
  block("d1", "discussion", "v1"),
  block("v2", "vertical", "seq1"),
  block("p2", "problem", "v2"),
  block("ch2", "chapter", "course"),
  block("empty-seq", "sequential", "ch2"),
  block("ch3", "chapter", "course"),
  block("forum", "vertical", "ch3", { mode: "excluded" }),
  block("p3", "problem", "forum"),
  block("hidden", "vertical", "ch3", { staffOnly: true }),
  block("p4", "problem", "hidden"),
  block("split", "split_test", "ch3"),
  block("p5", "problem", "split"),
])!;

describe("aggregateTree", () => {
  it("sums completable leaves up to the course, at full precision", () => {
    const progress = aggregateTree(tree, new Map([["p1", 0.1], ["h1", 0.2], ["p2", 1], ["p5", 1 / 3]]));
    expect(Object.fromEntries(progress)).toEqual({
      course: { earned: 0.1 + 0.2 + 1 + 1 / 3, possible: 4 },
      ch1: { earned: 0.1 + 0.2 + 1, possible: 3 },
      seq1: { earned: 0.1 + 0.2 + 1, possible: 3 },
      v1: { earned: 0.1 + 0.2, possible: 2 },
      p1: { earned: 0.1, possible: 1 },
      h1: { earned: 0.2, possible: 1 },
      d1: { earned: 0, possible: 0 },
      v2: { earned: 1, possible: 1 },
      p2: { earned: 1, possible: 1 },
      ch2: { earned: 0, possible: 0 },
      "empty-seq": { earned: 0, possible: 0 },
      ch3: { earned: 1 / 3, possible: 1 },
      forum: { earned: 0, possible: 0 },
      p3: { earned: 0, possible: 0 },
      hidden: { earned: 0, possible: 0 },
      p4: { earned: 0, possible: 0 },
      split: { earned: 1 / 3, possible: 1 },
      p5: { earned: 1 / 3, possible: 1 },
    });
    expect(progress.get("v1")!.earned).toBe(0.30000000000000004);
  });

  it("ignores completions of excluded and hidden blocks", () => {
    const progress = aggregateTree(tree, new Map([["p3", 1], ["p4", 1], ["d1", 1]]));
    expect(progress.get("course")).toEqual({ earned: 0, possible: 4 });
  });

  it("counts a completable block's own value, never its children's", () => {
    const withChildren = buildCourseTree([block("c", "course", null), block("lib", "problem", "c"), block("inner", "html", "lib"), block("inner2", "video", "inner")])!;
    const progress = aggregateTree(withChildren, new Map([["lib", 0.25], ["inner", 1], ["inner2", 1]]));
    expect(Object.fromEntries(progress)).toEqual({
      c: { earned: 0.25, possible: 1 },
      lib: { earned: 0.25, possible: 1 },
      inner: { earned: 0, possible: 0 },
      inner2: { earned: 0, possible: 0 },
    });
  });

  it("counts blocks without a completion as 0 earned", () => {
    expect(aggregateTree(tree, new Map()).get("course")).toEqual({ earned: 0, possible: 4 });
  });
});

describe("aggregateTree on a tree stored deeper than the import limit", () => {
  it("builds, walks and aggregates 50,000 levels without overflowing the stack", () => {
    const levels = 50_000;
    const records: BlockRecord[] = [block("l0", "course", null)];
    for (let level = 1; level < levels - 1; level += 1) records.push(block(`l${level}`, "vertical", `l${level - 1}`));
    records.push(block("leaf", "problem", `l${levels - 2}`));
    const deep = buildCourseTree(records)!;
    expect(deep.outline.map((node) => node.key)).toEqual(records.map((record) => record.key));
    expect(subtreeOutline(deep.root)).toHaveLength(levels);
    const progress = aggregateTree(deep, new Map([["leaf", 0.5]]));
    expect([progress.get("l0"), progress.get("leaf")]).toEqual([
      { earned: 0.5, possible: 1 },
      { earned: 0.5, possible: 1 },
    ]);
  });
});

describe("completionDictionary", () => {
  it("carries percent and ratio as the same unrounded number", () => {
    expect(completionDictionary({ earned: 1, possible: 3 })).toEqual({
      earned: 1,
      possible: 3,
      percent: 1 / 3,
      ratio: 1 / 3,
    });
  });

  it("gives an empty container percent 1", () => {
    expect(percentOf({ earned: 0, possible: 0 })).toBe(1);
    expect(completionDictionary({ earned: 0, possible: 0 })).toEqual({ earned: 0, possible: 0, percent: 1, ratio: 1 });
  });

  it("describes an unknown structure as possible null", () => {
    expect(UNKNOWN_STRUCTURE_COMPLETION).toEqual({ earned: 0, possible: null, percent: 0, ratio: 0 });
  });
});
