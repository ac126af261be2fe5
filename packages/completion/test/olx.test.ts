import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MAX_TREE_DEPTH } from "../src/domain/course-tree.js";
import { OlxError, readOlxCourse } from "../src/ingest/olx.js";

const SMALL_COURSE = join(import.meta.dirname, "fixtures", "olx-small");

describe("readOlxCourse", () => {
  it("reads chapters, sequentials, verticals and leaves from per-type files and inline definitions", async () => {
    expect(await readOlxCourse(SMALL_COURSE)).toEqual({
      courseKey: "course-v1:TesseraX+OLX101+2026",
      structure: {
        type: "course",
        id: "course",
        display_name: "Reading OLX",
        start: "2026-01-05T00:00:00.000Z",
        children: [
          {
            type: "chapter",
            id: "week1",
            display_name: "Week 1",
            children: [
              {
                type: "sequential",
                id: "intro",
                display_name: "Introduction",
                children: [
                  {
                    type: "vertical",
                    id: "intro_unit",
                    display_name: "Welcome",
                    children: [
                      { type: "html", id: "welcome", display_name: "Welcome text" },
                      { type: "problem", id: "first_check", display_name: "First check" },
                      { type: "video", id: "intro_video", display_name: "Intro video" },
                    ],
                  },
                ],
              },
              {
                type: "sequential",
                id: "staff_notes",
                display_name: "Staff notes",
                visible_to_staff_only: true,
                children: [
                  {
                    type: "vertical",
                    id: "staff_unit",
                    children: [{ type: "html", id: "staff_page", display_name: "Staff page" }],
                  },
                ],
              },
            ],
          },
          {
            type: "chapter",
            id: "week2",
            display_name: "Week 2 (inline)",
            children: [
              {
                type: "sequential",
                id: "week2_lesson",
                display_name: "Inline lesson",
                children: [
                  {
                    type: "vertical",
                    id: "week2_unit",
                    children: [
                      { type: "html", id: "week2_notes", display_name: "Notes" },
                      { type: "discussion", id: "week2_forum" },
                    ],
                  },
                ],
              },
            ],
          },
        ],
      },
    });
  });

  it("uses the given course key instead of the one in course.xml", async () => {
    const course = await readOlxCourse(SMALL_COURSE, "TesseraX/OLX101/rerun");
    expect(course.courseKey).toBe("TesseraX/OLX101/rerun");
  });

  it("refuses an invalid course key", async () => {
    await expect(readOlxCourse(SMALL_COURSE, "not a key")).rejects.toThrow(new OlxError("Invalid course key: not a key"));
  });

  describe("with a broken export", () => {
    async function withExport(files: Record<string, string>, check: (directory: string) => Promise<void>): Promise<void> {
      const directory = await mkdtemp(join(tmpdir(), "olx-"));
      try {
        for (const [name, text] of Object.entries(files)) {
          const path = join(directory, name);
          await import("node:fs/promises").then((fs) => fs.mkdir(join(path, ".."), { recursive: true }));
          await writeFile(path, text);
        }
        await check(directory);
      } finally {
        await rm(directory, { recursive: true, force: true });
      }
    }

    it("names a missing referenced file", async () => {
      await withExport(
        { "course.xml": '<course url_name="r" org="o" course="c"/>', "course/r.xml": '<course><chapter url_name="gone"/></course>' },
        async (directory) => {
          await expect(readOlxCourse(directory)).rejects.toThrow(/Cannot read .*chapter\/gone\.xml/);
        },
      );
    });

    it("names a file that is not XML", async () => {
      await withExport({ "course.xml": '<course url_name="r" org="o" course="c"/>', "course/r.xml": "<course><chapter" }, async (directory) => {
        await expect(readOlxCourse(directory)).rejects.toThrow(/course\/r\.xml is not well-formed XML/);
      });
    });

    it("refuses a course.xml without org and course", async () => {
      await withExport({ "course.xml": '<course url_name="r"/>', "course/r.xml": "<course/>" }, async (directory) => {
        await expect(readOlxCourse(directory)).rejects.toThrow(/do not make a valid course key/);
      });
    });

    it(`refuses blocks nested more than ${MAX_TREE_DEPTH} levels deep, inline or through pointer files`, async () => {
      const inline = `<course>${"<vertical>".repeat(MAX_TREE_DEPTH)}${"</vertical>".repeat(MAX_TREE_DEPTH)}</course>`;
      await withExport({ "course.xml": '<course url_name="r" org="o" course="c"/>', "course/r.xml": inline }, async (directory) => {
        await expect(readOlxCourse(directory)).rejects.toThrow(new OlxError(`course/r.xml: <vertical> lies more than ${MAX_TREE_DEPTH} levels deep in the course.`));
      });
      const files: Record<string, string> = { "course.xml": '<course url_name="r" org="o" course="c"/>', "course/r.xml": '<course><vertical url_name="v1"/></course>' };
      for (let level = 1; level <= MAX_TREE_DEPTH; level += 1) files[`vertical/v${level}.xml`] = `<vertical><vertical url_name="v${level + 1}"/></vertical>`;
      await withExport(files, async (directory) => {
        await expect(readOlxCourse(directory)).rejects.toThrow(new OlxError(`vertical/v${MAX_TREE_DEPTH - 1}.xml: <vertical> lies more than ${MAX_TREE_DEPTH} levels deep in the course.`));
      });
    });

    it("refuses a start date outside the years 0001 to 9999", async () => {
      await withExport(
        { "course.xml": '<course url_name="r" org="o" course="c"/>', "course/r.xml": '<course start="&quot;+100000-01-01T00:00:00Z&quot;"/>' },
        async (directory) => {
          await expect(readOlxCourse(directory)).rejects.toThrow(
            new OlxError('course/r.xml: start date ""+100000-01-01T00:00:00Z"" lies outside the years 0001 to 9999 (UTC).'),
          );
        },
      );
    });

    it("refuses a block defined twice", async () => {
      await withExport(
        {
          "course.xml": '<course url_name="r" org="o" course="c"/>',
          "course/r.xml": '<course><chapter url_name="a" display_name="A"/><chapter url_name="a" display_name="B"/></course>',
        },
        async (directory) => {
          await expect(readOlxCourse(directory)).rejects.toThrow(/chapter\/a appears twice/);
        },
      );
    });
  });
});
