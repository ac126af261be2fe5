import type { CompletionContext } from "../../src/context.js";
import type { BulkBlock, BulkData } from "../../src/ingest/bulk-format.js";
import { loadBulkData, type BulkLoadSummary } from "../../src/ingest/bulk-load.js";

/** The main course of the scenarios. */
export const COURSE = "course-v1:TesseraX+CS101+2026";
/** A second course that the learners of the scenarios also take. */
export const OTHER_COURSE = "TesseraX/CS102/2026";
/** A course whose structure is not known. */
export const NO_STRUCTURE_COURSE = "course-v1:TesseraX+CS103+2026";

/** The block key of (type, id) in {@link COURSE}. */
export const block = (type: string, id: string): string => `block-v1:TesseraX+CS101+2026+type@${type}+block@${id}`;

/**
 * {@link COURSE}'s outline: four completable blocks (p1, h1, p2, vid1), a
 * discussion and an excluded problem that count 0 of 0, an empty sequential
 * (s2: possible 0, percent 1) and a staff-only vertical.
 */
export const COURSE_TREE: BulkBlock = {
  type: "course",
  id: "course",
  children: [
    {
      type: "chapter",
      id: "ch1",
      children: [
        {
          type: "sequential",
          id: "s1",
          children: [
            {
              type: "vertical",
              id: "v1",
              children: [
                { type: "problem", id: "p1" },
                { type: "html", id: "h1" },
                { type: "discussion", id: "d1" },
              ],
            },
            { type: "vertical", id: "v2", children: [{ type: "problem", id: "p2" }] },
          ],
        },
        { type: "sequential", id: "s2", children: [] },
      ],
    },
    {
      type: "chapter",
      id: "ch2",
      children: [
        {
          type: "sequential",
          id: "s3",
          children: [
            {
              type: "vertical",
              id: "v3",
              children: [
                { type: "video", id: "vid1" },
                { type: "problem", id: "x1", mode: "excluded" },
              ],
            },
            { type: "vertical", id: "v4", visible_to_staff_only: true, children: [{ type: "problem", id: "hidden1" }] },
          ],
        },
      ],
    },
  ],
};

/** A small second course, of the deprecated key form. */
export const OTHER_TREE: BulkBlock = {
  type: "course",
  id: "course",
  children: [{ type: "chapter", id: "only", children: [{ type: "sequential", id: "seq", children: [{ type: "html", id: "page" }] }] }],
};

/** Loads bulk data through the loader that the CLI and the admin endpoint use. */
export function load(ctx: CompletionContext, data: BulkData): Promise<BulkLoadSummary> {
  return loadBulkData(ctx.db, ctx.structures, ctx.settings.aggregatorTypes, data, ctx.now());
}

/** The three courses and learners ada (1), bob (2), cy (3), dee (4, inactive in COURSE) and staffer (5, course role staff). */
export function baseData(): BulkData {
  return {
    courses: [
      { course_key: COURSE, mobile_available: true, structure: COURSE_TREE },
      { course_key: OTHER_COURSE, structure: OTHER_TREE },
      { course_key: NO_STRUCTURE_COURSE },
    ],
    users: [
      { id: 1, username: "ada", email: "ada@example.com" },
      { id: 2, username: "bob", email: "bob@example.com" },
      { id: 3, username: "cy", email: "cy@example.com" },
      { id: 4, username: "dee", email: "dee@example.com" },
      { id: 5, username: "staffer", email: "staffer@example.com" },
    ],
    enrollments: [
      { username: "ada", course_key: COURSE },
      { username: "ada", course_key: NO_STRUCTURE_COURSE },
      { username: "ada", course_key: OTHER_COURSE, is_active: false },
      { username: "bob", course_key: COURSE },
      { username: "bob", course_key: OTHER_COURSE },
      { username: "cy", course_key: COURSE },
      { username: "dee", course_key: COURSE, is_active: false },
      { username: "staffer", course_key: COURSE },
    ],
    roles: [{ username: "staffer", course_key: COURSE, role: "staff" }],
    cohorts: [
      { id: 10, course_key: COURSE, name: "Group A", members: ["ada", "cy"] },
      { id: 11, course_key: COURSE, name: "Group B", members: ["bob"] },
    ],
  };
}
