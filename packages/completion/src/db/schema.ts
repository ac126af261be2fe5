import { sql } from "drizzle-orm";
import {
  boolean,
  check,
  doublePrecision,
  index,
  bigint,
  integer,
  numeric,
  pgSchema,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";

/** The completion service owns this PostgreSQL schema and nothing outside it. */
export const completionSchema = pgSchema("completion");

/** Learners: integer id (the `user_ids` of the API), unique username, e-mail and Sign-on uid once linked. */
export const learners = completionSchema.table(
  "learners",
  {
    id: integer("id").primaryKey(),
    username: text("username").notNull().unique(),
    email: text("email").notNull(),
    signonUid: text("signon_uid").unique(),
  },
  (table) => [index("learners_email_lower_idx").on(sql`lower(${table.email})`)],
);

/**
 * Courses. `structureVersion` changes whenever the block tree does; `structureHash` detects a re-import of the same tree;
 * `visibleCompletableBlocks` is the course-level `possible` of the tree (completable blocks a learner can see), null while
 * the structure is unknown.
 */
export const courses = completionSchema.table("courses", {
  key: text("key").primaryKey(),
  mobileAvailable: boolean("mobile_available").notNull().default(false),
  structureVersion: integer("structure_version").notNull().default(0),
  structureHash: text("structure_hash"),
  visibleCompletableBlocks: integer("visible_completable_blocks"),
});

/** The course tree: one row per block, with its parent and position among its siblings. */
export const blocks = completionSchema.table(
  "blocks",
  {
    courseKey: text("course_key")
      .notNull()
      .references(() => courses.key, { onDelete: "cascade" }),
    key: text("key").notNull(),
    type: text("type").notNull(),
    parentKey: text("parent_key"),
    position: integer("position").notNull(),
    mode: text("mode", { enum: ["aggregator", "excluded", "completable"] }).notNull(),
    displayName: text("display_name"),
    start: timestamp("start", { withTimezone: true }),
    visibleToStaffOnly: boolean("visible_to_staff_only").notNull().default(false),
  },
  (table) => [primaryKey({ columns: [table.courseKey, table.key] })],
);

/** Enrollments; only active ones count. The course_* columns are null until the learner has a course aggregate. */
export const enrollments = completionSchema.table(
  "enrollments",
  {
    learnerId: integer("learner_id")
      .notNull()
      .references(() => learners.id, { onDelete: "cascade" }),
    courseKey: text("course_key")
      .notNull()
      .references(() => courses.key, { onDelete: "cascade" }),
    isActive: boolean("is_active").notNull().default(true),
    mode: text("mode").notNull().default("audit"),
    // A copy of the learner's course-level aggregate, written with it, so statistics and means scan one table.
    courseEarned: doublePrecision("course_earned"),
    coursePossible: doublePrecision("course_possible"),
    coursePercent: doublePrecision("course_percent"),
    // Which statistics group the enrollment counts in: the ids of its course's cohorts the learner belongs to, and
    // the learner's course roles, both sorted; kept by triggers on course_roles, cohort_memberships and cohorts.
    statCohorts: integer("stat_cohorts").array().notNull().default(sql`'{}'::integer[]`),
    statRoles: text("stat_roles").array().notNull().default(sql`'{}'::text[]`),
  },
  (table) => [
    primaryKey({ columns: [table.courseKey, table.learnerId] }),
    index("enrollments_learner_idx").on(table.learnerId),
    // The all-users pages walk a course's active learners by id from a bucket's first id (index-only).
    index("enrollments_active_course_learner_idx").on(table.courseKey, table.learnerId).where(sql`${table.isActive}`),
  ],
);

/** Course roles (staff, instructor, beta_testers, ...) held by learners in a course. */
export const courseRoles = completionSchema.table(
  "course_roles",
  {
    courseKey: text("course_key")
      .notNull()
      .references(() => courses.key, { onDelete: "cascade" }),
    learnerId: integer("learner_id")
      .notNull()
      .references(() => learners.id, { onDelete: "cascade" }),
    role: text("role").notNull(),
  },
  (table) => [primaryKey({ columns: [table.courseKey, table.learnerId, table.role] })],
);

/** Cohorts of a course. */
export const cohorts = completionSchema.table(
  "cohorts",
  {
    id: integer("id").primaryKey(),
    courseKey: text("course_key")
      .notNull()
      .references(() => courses.key, { onDelete: "cascade" }),
    name: text("name").notNull(),
  },
  (table) => [uniqueIndex("cohorts_course_name_idx").on(table.courseKey, table.name)],
);

/** Cohort memberships. */
export const cohortMemberships = completionSchema.table(
  "cohort_memberships",
  {
    cohortId: integer("cohort_id")
      .notNull()
      .references(() => cohorts.id, { onDelete: "cascade" }),
    learnerId: integer("learner_id")
      .notNull()
      .references(() => learners.id, { onDelete: "cascade" }),
  },
  (table) => [primaryKey({ columns: [table.cohortId, table.learnerId] })],
);

/** A learner's completion of one block: a value in [0, 1]. */
export const blockCompletions = completionSchema.table(
  "block_completions",
  {
    courseKey: text("course_key")
      .notNull()
      .references(() => courses.key, { onDelete: "cascade" }),
    learnerId: integer("learner_id")
      .notNull()
      .references(() => learners.id, { onDelete: "cascade" }),
    blockKey: text("block_key").notNull(),
    completion: doublePrecision("completion").notNull(),
    modified: timestamp("modified", { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [
    primaryKey({ columns: [table.courseKey, table.learnerId, table.blockKey] }),
    // Unqualified on purpose: a schema-qualified column is not allowed in a CHECK.
    check("block_completions_completion_range", sql`completion >= 0 and completion <= 1`),
  ],
);

/** Stored aggregates per (learner, course, block) for the configured aggregator types. */
export const aggregates = completionSchema.table(
  "aggregates",
  {
    courseKey: text("course_key")
      .notNull()
      .references(() => courses.key, { onDelete: "cascade" }),
    learnerId: integer("learner_id")
      .notNull()
      .references(() => learners.id, { onDelete: "cascade" }),
    blockKey: text("block_key").notNull(),
    aggregationName: text("aggregation_name").notNull(),
    earned: doublePrecision("earned").notNull(),
    possible: doublePrecision("possible").notNull(),
    percent: doublePrecision("percent").notNull(),
    modified: timestamp("modified", { withTimezone: true }).notNull().defaultNow(),
  },
  // Reads go by (course, learner); course-wide figures come from the enrollment's copy, so no second index.
  (table) => [primaryKey({ columns: [table.courseKey, table.learnerId, table.blockKey] })],
);

/** Stale records: a learner's aggregates in a course (or under one block) need recomputing. */
export const staleCompletions = completionSchema.table(
  "stale_completions",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    username: text("username").notNull(),
    courseKey: text("course_key").notNull(),
    blockKey: text("block_key"),
    force: boolean("force").notNull().default(false),
    resolved: boolean("resolved").notNull().default(false),
    created: timestamp("created", { withTimezone: true }).notNull().defaultNow(),
    modified: timestamp("modified", { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [
    index("stale_completions_unresolved_idx")
      .on(table.username, table.courseKey)
      .where(sql`${table.resolved} = false`),
  ],
);

/**
 * Per-course sums of active enrollments for statistics and `mean`, by statistics group (cohort ids, roles): the
 * number of learners, the exact sums of their course earned, possible and percent, and how many have a course
 * aggregate. Rows are deltas appended by the enrollments' triggers in the writing transaction (no row is ever
 * updated in place, so writers never wait for each other here); a course's total is the sum of its rows, and
 * writers fold a course's rows into one per group now and then (`completion.compact_course_sums`).
 */
export const courseStatSums = completionSchema.table(
  "course_stat_sums",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    courseKey: text("course_key").notNull(),
    cohorts: integer("cohorts").array().notNull(),
    roles: text("roles").array().notNull(),
    learners: bigint("learners", { mode: "number" }).notNull(),
    earned: numeric("earned").notNull(),
    possible: numeric("possible").notNull(),
    withPossible: bigint("with_possible", { mode: "number" }).notNull(),
    percent: numeric("percent").notNull(),
  },
  (table) => [index("course_stat_sums_course_idx").on(table.courseKey)],
);

/**
 * How many active learners of a course have ids in each range of 1,024 (`bucket` = id >> 10), as deltas like
 * {@link courseStatSums}: a deep all-users page finds the bucket holding its first row by summing these, then
 * walks at most one bucket of the index.
 */
export const courseLearnerBuckets = completionSchema.table(
  "course_learner_buckets",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    courseKey: text("course_key").notNull(),
    bucket: integer("bucket").notNull(),
    learners: bigint("learners", { mode: "number" }).notNull(),
  },
  (table) => [index("course_learner_buckets_course_idx").on(table.courseKey, table.bucket)],
);
