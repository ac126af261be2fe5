import type { Queryable } from "../db/database.js";
import { aggregateTree } from "../aggregation/aggregate-tree.js";
import type { Progress } from "../aggregation/completion-math.js";
import { findCourse, loadBlockRecords, type CourseRow } from "../repositories/courses.js";
import { buildCourseTree, type CourseTree } from "./course-tree.js";
import { parseCourseKey, type CourseKey } from "./keys.js";

/** A known course with its tree (null when its structure is unknown). */
export interface CourseStructure {
  readonly course: CourseRow;
  readonly key: CourseKey;
  readonly tree: CourseTree | null;
  /** Every block's progress for a learner who has completed nothing. */
  readonly noProgress: ReadonlyMap<string, Progress>;
}

/**
 * Course trees, cached per course and reloaded when the stored tree's digest
 * changes (a digest, not a version number, so a rolled-back import cannot
 * leave a wrong tree cached). Every lookup still reads the course row, so a re-import
 * by another process is seen at once.
 */
export class CourseStructures {
  readonly #cache = new Map<string, CourseStructure>();

  /** The course and its tree, or null when the course is not known. */
  async get(q: Queryable, courseKey: string): Promise<CourseStructure | null> {
    const course = await findCourse(q, courseKey);
    if (!course) return null;
    return this.forCourse(q, course);
  }

  /**
   * The cached structure of a course, without asking the database; undefined
   * when it is not cached. Courses are never deleted, so a cached course
   * exists; the caller must check `course.structureHash` against the stored
   * digest (reads return it alongside their rows) before trusting the tree.
   */
  peek(courseKey: string): CourseStructure | undefined {
    return this.#cache.get(courseKey);
  }

  /** The tree of a course row already read. */
  async forCourse(q: Queryable, course: CourseRow): Promise<CourseStructure> {
    const cached = this.#cache.get(course.key);
    if (cached && cached.course.structureHash === course.structureHash) return cached;
    const key = parseCourseKey(course.key);
    if (!key) throw new Error(`Stored course key does not parse: ${course.key}`);
    const tree = buildCourseTree(await loadBlockRecords(q, course.key));
    const noProgress = tree ? aggregateTree(tree, new Map()) : new Map<string, Progress>();
    const structure: CourseStructure = { course, key, tree, noProgress };
    this.#cache.set(course.key, structure);
    return structure;
  }
}
