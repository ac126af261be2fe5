import { describe, expect, it } from "vitest";
import {
  blockKeyIn,
  formatCourseKey,
  mapBlockKeyIntoCourse,
  parseBlockKey,
  parseCourseKey,
  resolveBlockKey,
} from "../src/domain/keys.js";

describe("parseCourseKey", () => {
  it.each([
    ["course-v1:TesseraX+CS101+2026_T1", { org: "TesseraX", course: "CS101", run: "2026_T1", deprecated: false }],
    ["TesseraX/CS101/2026_T1", { org: "TesseraX", course: "CS101", run: "2026_T1", deprecated: true }],
    ["course-v1:edX+Demo.X-1+run~1:a", { org: "edX", course: "Demo.X-1", run: "run~1:a", deprecated: false }],
  ])("parses %s", (text, expected) => {
    expect(parseCourseKey(text)).toEqual(expected);
  });

  it.each([
    [""],
    ["course-v1:"],
    ["course-v1:org+course"],
    ["course-v1:org+course+run+extra"],
    ["course-v1:org++run"],
    ["org/course"],
    ["org/course/run/more"],
    ["org//run"],
    ["course-v2:org+course+run"],
    ["course-v1:org+co urse+run"],
    ["course-v1:org+course+run\n"],
    ["block-v1:org+course+run+type@course+block@course"],
    ["course-v1:örg+course+run"],
  ])("rejects %j", (text) => {
    expect(parseCourseKey(text)).toBeNull();
  });

  it("formats a key in the form it was written", () => {
    for (const text of ["course-v1:a+b+c", "a/b/c"]) expect(formatCourseKey(parseCourseKey(text)!)).toBe(text);
  });
});

describe("parseBlockKey", () => {
  it("parses a block-v1 key", () => {
    expect(parseBlockKey("block-v1:TesseraX+CS101+2026+type@vertical+block@unit_1")).toEqual({
      org: "TesseraX",
      course: "CS101",
      run: "2026",
      type: "vertical",
      id: "unit_1",
    });
  });

  it("parses a legacy i4x key, which has no run", () => {
    expect(parseBlockKey("i4x://TesseraX/CS101/problem/check-1")).toEqual({
      org: "TesseraX",
      course: "CS101",
      run: null,
      type: "problem",
      id: "check-1",
    });
  });

  it.each([
    ["block-v1:TesseraX+CS101+2026+type@vertical"],
    ["block-v1:TesseraX+CS101+type@vertical+block@unit"],
    ["block-v1:TesseraX+CS101+2026+block@unit+type@vertical"],
    ["block-v1:TesseraX+CS101+2026+type@ver.tical+block@unit"],
    ["block-v1:TesseraX+CS101+2026+type@vertical+block@"],
    ["i4x://TesseraX/CS101/problem"],
    ["i4x://TesseraX/CS101/problem/a/b"],
    ["course-v1:TesseraX+CS101+2026"],
    ["not a key"],
  ])("rejects %j", (text) => {
    expect(parseBlockKey(text)).toBeNull();
  });
});

describe("mapping a block key into a course", () => {
  const v1Course = parseCourseKey("course-v1:TesseraX+CS101+2026")!;
  const oldCourse = parseCourseKey("TesseraX/CS101/2026")!;

  it("builds the canonical key of a block in each form of course", () => {
    expect(blockKeyIn(v1Course, "chapter", "week1")).toBe("block-v1:TesseraX+CS101+2026+type@chapter+block@week1");
    expect(blockKeyIn(oldCourse, "chapter", "week1")).toBe("i4x://TesseraX/CS101/chapter/week1");
  });

  it("maps a block of the same course to its canonical key", () => {
    const block = parseBlockKey("block-v1:TesseraX+CS101+2026+type@chapter+block@week1")!;
    expect(mapBlockKeyIntoCourse(block, v1Course)).toBe("block-v1:TesseraX+CS101+2026+type@chapter+block@week1");
    expect(mapBlockKeyIntoCourse(block, oldCourse)).toBe("i4x://TesseraX/CS101/chapter/week1");
  });

  it("maps a legacy key into any run of its org and course", () => {
    const block = parseBlockKey("i4x://TesseraX/CS101/chapter/week1")!;
    expect(mapBlockKeyIntoCourse(block, v1Course)).toBe("block-v1:TesseraX+CS101+2026+type@chapter+block@week1");
    expect(mapBlockKeyIntoCourse(block, oldCourse)).toBe("i4x://TesseraX/CS101/chapter/week1");
  });

  it("refuses a block of another run, course or org", () => {
    for (const text of [
      "block-v1:TesseraX+CS101+2025+type@chapter+block@week1",
      "block-v1:TesseraX+CS102+2026+type@chapter+block@week1",
      "block-v1:Other+CS101+2026+type@chapter+block@week1",
      "i4x://TesseraX/CS102/chapter/week1",
    ]) {
      expect(resolveBlockKey(text, v1Course)).toBeNull();
    }
  });

  it("refuses text that is not a block key", () => {
    expect(resolveBlockKey("course-v1:TesseraX+CS101+2026", v1Course)).toBeNull();
  });
});
