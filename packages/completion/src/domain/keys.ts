/**
 * Course keys and block keys: parsing, validation, canonical forms and mapping a
 * block key into a course. This is the only module that knows key syntax.
 */

/** Characters allowed in the org, course and run parts, and in a block id. */
const ID = String.raw`[\w\-~.:]+`;
/** Characters allowed in a block type. */
const TYPE = String.raw`[\w\-]+`;

const SLASH_COURSE = new RegExp(`^(${ID})/(${ID})/(${ID})$`);
const V1_COURSE = new RegExp(`^course-v1:(${ID})\\+(${ID})\\+(${ID})$`);
const V1_BLOCK = new RegExp(`^block-v1:(${ID})\\+(${ID})\\+(${ID})\\+type@(${TYPE})\\+block@(${ID})$`);
const I4X_BLOCK = new RegExp(`^i4x://(${ID})/(${ID})/(${TYPE})/(${ID})$`);

/** A parsed course key. `deprecated` is the `org/course/run` form. */
export interface CourseKey {
  readonly org: string;
  readonly course: string;
  readonly run: string;
  readonly deprecated: boolean;
}

/** A parsed block key. `run` is null for the legacy `i4x://` form, which has none. */
export interface BlockKey {
  readonly org: string;
  readonly course: string;
  readonly run: string | null;
  readonly type: string;
  readonly id: string;
}

/**
 * Parses `org/course/run` or `course-v1:org+course+run`.
 * Returns null for anything else, so callers choose the HTTP status.
 */
export function parseCourseKey(text: string): CourseKey | null {
  const v1 = V1_COURSE.exec(text);
  if (v1) return { org: v1[1]!, course: v1[2]!, run: v1[3]!, deprecated: false };
  const slash = SLASH_COURSE.exec(text);
  if (slash) return { org: slash[1]!, course: slash[2]!, run: slash[3]!, deprecated: true };
  return null;
}

/** The string form of a course key, in the form it was written. */
export function formatCourseKey(key: CourseKey): string {
  return key.deprecated ? `${key.org}/${key.course}/${key.run}` : `course-v1:${key.org}+${key.course}+${key.run}`;
}

/**
 * Parses `block-v1:org+course+run+type@T+block@ID` or the legacy
 * `i4x://org/course/T/ID`. Returns null for anything else.
 */
export function parseBlockKey(text: string): BlockKey | null {
  const v1 = V1_BLOCK.exec(text);
  if (v1) return { org: v1[1]!, course: v1[2]!, run: v1[3]!, type: v1[4]!, id: v1[5]! };
  const i4x = I4X_BLOCK.exec(text);
  if (i4x) return { org: i4x[1]!, course: i4x[2]!, run: null, type: i4x[3]!, id: i4x[4]! };
  return null;
}

/**
 * The canonical key of block (type, id) in a course: `block-v1:` for
 * `course-v1:` courses, `i4x://` for deprecated `org/course/run` courses
 * (the form Open edX itself uses for each).
 */
export function blockKeyIn(course: CourseKey, type: string, id: string): string {
  return course.deprecated
    ? `i4x://${course.org}/${course.course}/${type}/${id}`
    : `block-v1:${course.org}+${course.course}+${course.run}+type@${type}+block@${id}`;
}

/**
 * Maps a block key into a course: the canonical key of the same block in that
 * course, or null when the block belongs to another course. An `i4x://` key has
 * no run, so it maps into any run of its org and course.
 */
export function mapBlockKeyIntoCourse(block: BlockKey, course: CourseKey): string | null {
  if (block.org !== course.org || block.course !== course.course) return null;
  if (block.run !== null && block.run !== course.run) return null;
  return blockKeyIn(course, block.type, block.id);
}

/** Parses `text` as a block key and maps it into `course`; null when either step fails. */
export function resolveBlockKey(text: string, course: CourseKey): string | null {
  const block = parseBlockKey(text);
  return block === null ? null : mapBlockKeyIntoCourse(block, course);
}

/** Whether a block type or block id is well-formed on its own (used by importers). */
export function isValidBlockPart(part: "type" | "id", text: string): boolean {
  return new RegExp(`^${part === "type" ? TYPE : ID}$`).test(text);
}
