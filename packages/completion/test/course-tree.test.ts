import { describe, expect, it } from "vitest";
import { blockMode } from "../src/domain/block-modes.js";
import { buildCourseTree, CourseTreeError, selfAndAncestors, subtreeOutline, type BlockRecord } from "../src/domain/course-tree.js";

function record(key: string, type: string, parentKey: string | null, position = 0): BlockRecord {
  return { key, type, parentKey, position, mode: blockMode(type), visibleToStaffOnly: false };
}

describe("blockMode", () => {
  it.each([
    ["course", "aggregator"],
    ["chapter", "aggregator"],
    ["sequential", "aggregator"],
    ["vertical", "aggregator"],
    ["library_content", "aggregator"],
    ["split_test", "aggregator"],
    ["conditional", "aggregator"],
    ["discussion", "excluded"],
    ["problem", "completable"],
    ["html", "completable"],
    ["video", "completable"],
  ])("gives %s the mode %s", (type, mode) => {
    expect(blockMode(type)).toBe(mode);
  });

  it("lets an explicit mode win over the type's default", () => {
    expect(blockMode("html", "excluded")).toBe("excluded");
    expect(blockMode("discussion", "completable")).toBe("completable");
    expect(blockMode("vertical", null)).toBe("aggregator");
  });
});

describe("buildCourseTree", () => {
  const records = [
    record("v2", "vertical", "s1", 1),
    record("course", "course", null),
    record("c1", "chapter", "course", 0),
    record("s1", "sequential", "c1", 0),
    record("v1", "vertical", "s1", 0),
    record("p1", "problem", "v1", 0),
    record("c2", "chapter", "course", 1),
  ];

  it("orders blocks in course outline order (pre-order, siblings by position)", () => {
    const tree = buildCourseTree(records)!;
    expect(tree.outline.map((node) => node.key)).toEqual(["course", "c1", "s1", "v1", "p1", "v2", "c2"]);
    expect(tree.root.key).toBe("course");
  });

  it("finds a block's ancestors and subtree", () => {
    const tree = buildCourseTree(records)!;
    expect(selfAndAncestors(tree.byKey.get("p1")!).map((node) => node.key)).toEqual(["p1", "v1", "s1", "c1", "course"]);
    expect(subtreeOutline(tree.byKey.get("s1")!).map((node) => node.key)).toEqual(["s1", "v1", "p1", "v2"]);
  });

  it("returns null for a course without blocks", () => {
    expect(buildCourseTree([])).toBeNull();
  });

  it("refuses two roots, a missing parent, a duplicate and a cycle", () => {
    expect(() => buildCourseTree([record("a", "course", null), record("b", "course", null)])).toThrow(CourseTreeError);
    expect(() => buildCourseTree([record("a", "course", null), record("b", "chapter", "x")])).toThrow(/parent that does not exist/);
    expect(() => buildCourseTree([record("a", "course", null), record("a", "chapter", "a")])).toThrow(/twice/);
    expect(() =>
      buildCourseTree([record("a", "course", null), record("b", "chapter", "c"), record("c", "chapter", "b")]),
    ).toThrow(/cycle/);
  });
});
