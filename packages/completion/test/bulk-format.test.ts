import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkBulkData } from "../src/ingest/bulk-format.js";

describe("checkBulkData", () => {
  it("accepts every section of the format", () => {
    const data = {
      courses: [
        {
          course_key: "course-v1:o+c+r",
          mobile_available: true,
          structure: {
            type: "course",
            id: "course",
            children: [{ type: "chapter", id: "ch", start: "2026-01-01T00:00:00Z", children: [{ type: "html", id: "h", mode: "excluded" }] }],
          },
        },
        { course_key: "o/c/unknown-structure" },
      ],
      users: [{ id: 1, username: "ada", email: "ada@example.com", uid: null }],
      enrollments: [{ username: "ada", course_key: "course-v1:o+c+r", is_active: true, mode: "audit" }],
      roles: [{ username: "ada", course_key: "course-v1:o+c+r", role: "beta_testers" }],
      cohorts: [{ id: 7, course_key: "course-v1:o+c+r", name: "Group A", members: ["ada"] }],
      completions: [{ username: "ada", course_key: "course-v1:o+c+r", block_key: "block-v1:o+c+r+type@html+block@h", completion: 0.5 }],
    };
    expect(checkBulkData(data)).toEqual({ ok: true, data });
  });

  it("names the paths of the problems", () => {
    const result = checkBulkData({
      users: [{ id: 0, username: "ada", email: "a@example.com" }],
      completions: [{ username: "ada", course_key: "o/c/r", block_key: "i4x://o/c/html/h", completion: 1.5 }],
      courses: [{ course_key: "o/c/r", structure: { type: "course", id: "course", children: [{ type: "bad type", id: "x" }] } }],
      extra: true,
    });
    expect(result.ok).toBe(false);
    const errors = result.ok ? [] : result.errors;
    expect(errors).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^\/users\/0\/id: /),
        expect.stringMatching(/^\/completions\/0\/completion: /),
        expect.stringMatching(/^\/courses\/0\/structure/),
      ]),
    );
  });

  it("refuses a start that is not a date-time", () => {
    const result = checkBulkData({ courses: [{ course_key: "o/c/r", structure: { type: "course", id: "course", start: "soon" } }] });
    expect(result.ok).toBe(false);
  });
});

describe("the README's bulk-load example", () => {
  it("is in the format", async () => {
    const readme = await readFile(join(import.meta.dirname, "..", "README.md"), "utf8");
    const example = /```json\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(example).toBeDefined();
    expect(checkBulkData(JSON.parse(example!))).toMatchObject({ ok: true });
  });
});
