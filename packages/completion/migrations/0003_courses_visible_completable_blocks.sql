ALTER TABLE "completion"."courses" ADD COLUMN "visible_completable_blocks" integer;--> statement-breakpoint
-- Courses stored before this column: count the completable blocks a learner can see, as the aggregation does
-- (an excluded or staff-only block hides its subtree; a completable block's children never count).
WITH RECURSIVE "visible" AS (
  SELECT "course_key", "key", "mode" FROM "completion"."blocks"
    WHERE "parent_key" IS NULL AND "mode" <> 'excluded' AND NOT "visible_to_staff_only"
  UNION ALL
  SELECT "b"."course_key", "b"."key", "b"."mode" FROM "completion"."blocks" "b"
    INNER JOIN "visible" "v" ON "b"."course_key" = "v"."course_key" AND "b"."parent_key" = "v"."key"
    WHERE "v"."mode" = 'aggregator' AND "b"."mode" <> 'excluded' AND NOT "b"."visible_to_staff_only"
)
UPDATE "completion"."courses" "c" SET "visible_completable_blocks" =
  (SELECT count(*) FROM "visible" WHERE "visible"."course_key" = "c"."key" AND "visible"."mode" = 'completable')
  WHERE "c"."structure_hash" IS NOT NULL;
